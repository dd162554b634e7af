import Chaining
import Dispatch
import Testing

/// `Chain.combine(_:_:)`: the combine of any number of chains (issue #36).
@Suite struct ChainCombineManyTests {
  @Test func syncSendsOneArrayAndEachChangeSendsTheLatestValues() {
    let prices = [ValueHolder(3), ValueHolder(4), ValueHolder(5)]
    let received = Recorder<[Int]>()
    let observer = Chain.combine(prices) { $0.chain() }.do { received.append($0) }.sync()
    #expect(received.history == [[3, 4, 5]])
    prices[1].value = 10
    prices[2].value = 1
    #expect(received.history == [[3, 4, 5], [3, 10, 5], [3, 10, 1]])
    observer.invalidate()
    prices[0].value = 7
    #expect(received.count == 3)
  }

  @Test func nothingIsSentUntilEveryChainHasSent() {
    let taps = [Notifier<String>(), Notifier<String>(), Notifier<String>()]
    let received = Recorder<[String]>()
    let observer = Chain.combine(taps) { $0.chain() }.do { received.append($0) }.end()
    taps[0].notify(value: "a")
    taps[2].notify(value: "c")
    taps[0].notify(value: "A")
    #expect(received.history == [])
    taps[1].notify(value: "b")
    #expect(received.history == [["A", "b", "c"]])
    observer.invalidate()
  }

  @Test func eachChainKeepsItsSteps() {
    let names = [ValueHolder("ann"), ValueHolder("bo")]
    let received = Recorder<[Int]>()
    let observer = Chain.combine(names) { $0.chain().map(\.count) }.do { received.append($0) }.sync()
    names[0].value = "anna"
    #expect(received.history == [[3, 2], [4, 2]])
    observer.invalidate()
  }

  /// Glitch-free, as `combine`: three chains of one source send one array
  /// per write, from every chain's final value.
  @Test func aWaveThatChangesSeveralChainsSendsOneArray() {
    let source = ValueHolder(1)
    let factors = [1, 10, 100]
    let received = Recorder<[Int]>()
    let observer = Chain.combine(factors) { factor in source.chain().map { $0 * factor } }
      .do { received.append($0) }
      .sync()
    source.value = 2
    source.value = 3
    #expect(received.history == [[1, 10, 100], [2, 20, 200], [3, 30, 300]])
    observer.invalidate()
  }

  @Test func aBatchOfWritesSendsOneArray() {
    let holders = (0..<4).map { ValueHolder($0) }
    let received = Recorder<[Int]>()
    let observer = Chain.combine(holders) { $0.chain() }.do { received.append($0) }.sync()
    withBatchedUpdates {
      for holder in holders { holder.value += 10 }
    }
    #expect(received.history == [[0, 1, 2, 3], [10, 11, 12, 13]])
    observer.invalidate()
  }

  /// A mux of 100 holders: one array per write, each with the new value.
  @Test func aHundredHoldersSendOneArrayPerWrite() {
    let holders = (0..<100).map { _ in ValueHolder(0) }
    let totals = Recorder<Int>()
    let observer = Chain.combine(holders) { $0.chain() }.map { $0.reduce(0, +) }.do { totals.append($0) }.sync()
    for (index, holder) in holders.enumerated() { holder.value = index + 1 }
    #expect(totals.count == 101)
    #expect(totals.history.last == 5050)
    observer.invalidate()
  }

  /// A chain that crosses a hop still runs one value at a time with the
  /// others, and its values join the array on the hop's queue.
  @Test func aChainAfterAHopJoinsTheOthers() {
    let queue = DispatchQueue(label: "ChainCombineManyTests")
    let left = ValueHolder(0)
    let right = ValueHolder(0)
    let received = Recorder<[Int]>()
    let sides = [true, false]
    let observer = Chain.combine(sides) { hops in
      hops ? left.chain().receive(on: queue) : right.chain().receive(on: queue)
    }
    .do { received.append($0) }
    .end()
    DispatchQueue.concurrentPerform(iterations: 2) { side in
      for value in 1...200 {
        if side == 0 { left.value = value } else { right.value = value }
      }
    }
    queue.sync {}
    #expect(received.history.last == [200, 200])
    observer.invalidate()
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func noElementsIsAPreconditionFailure() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holders: [ValueHolder<Int>] = []
      _ = Chain.combine(holders) { $0.chain() }.end()
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Chain.combine(_:_:): elements must not be empty, got an empty Array<ValueHolder<Int>>"))
  }
  #endif
}
