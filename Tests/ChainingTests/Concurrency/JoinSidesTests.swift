import Chaining
import Dispatch
import Testing

/// Joins whose sides run under different gates (one side crosses a hop)
/// still run what follows them one value at a time. Before the join had a
/// gate of its own, the thread sanitizer reported these as races; `scan`'s
/// unlocked running total would also lose values.
@Suite struct JoinSidesTests {
  private static let writes = 2_000

  /// Writes 1...writes to `first` and to `second` from two threads.
  private func writeBoth(_ first: ValueHolder<Int>, _ second: ValueHolder<Int>) {
    race(threads: 2) { thread in
      for value in 1...Self.writes {
        if thread == 0 { first.value = value } else { second.value = value }
      }
    }
  }

  /// Builds a join of `first` and `second` with a hop on one side and a
  /// `scan` totalling every value after it, writes both from two threads,
  /// and checks that the total lost nothing.
  private func expectEveryValueTotalled(
    _ build: (ValueHolder<Int>, ValueHolder<Int>, DispatchQueue, Recorder<Int>) -> Observer
  ) {
    let first = ValueHolder(0)
    let second = ValueHolder(0)
    let queue = DispatchQueue(label: "JoinSidesTests.totals")
    let totals = Recorder<Int>()
    let observer = build(first, second, queue, totals)
    writeBoth(first, second)
    queue.sync {}
    #expect(totals.count == 2 * Self.writes)
    #expect(totals.history.last == Self.writes * (Self.writes + 1))
    withExtendedLifetime(observer) {}
  }

  @Test func mergeWithAHopOnOneSideRunsOneValueAtATime() {
    expectEveryValueTotalled { first, second, queue, totals in
      first.chain().receive(on: queue).merge(second.chain())
        .scan(0) { $0 + $1 }
        .do { totals.append($0) }.end()
    }
  }

  @Test func tupleWithAHopOnOneSideRunsOneValueAtATime() {
    expectEveryValueTotalled { first, second, queue, totals in
      first.chain().tuple(second.chain().receive(on: queue))
        .scan(0) { $0 + ($1.0 ?? 0) + ($1.1 ?? 0) }
        .do { totals.append($0) }.end()
    }
  }

  @Test func combineWithAHopOnOneSideRunsOneValueAtATime() {
    let first = ValueHolder(0)
    let second = ValueHolder(0)
    let queue = DispatchQueue(label: "JoinSidesTests.combine")
    let received = Recorder<(Int, Int)>()
    let observer = first.chain().receive(on: queue).combine(second.chain()).do { received.append($0) }.sync()
    writeBoth(first, second)
    queue.sync {}
    let history = received.history
    // Each side's values arrive in order, so neither side ever goes back.
    #expect(zip(history, history.dropFirst()).allSatisfy { $0.0 <= $1.0 && $0.1 <= $1.1 })
    #expect(history.last.map { [$0.0, $0.1] } == [Self.writes, Self.writes])
    withExtendedLifetime(observer) {}
  }

  @Test func nothingRunsAfterInvalidateReturns() {
    let first = ValueHolder(0)
    let second = ValueHolder(0)
    let queue = DispatchQueue(label: "JoinSidesTests.invalidate")
    let received = Recorder<Int>()
    let observer = first.chain().receive(on: queue).merge(second.chain()).do { received.append($0) }.end()
    race(threads: 3) { thread in
      for value in 1...Self.writes {
        switch thread {
        case 0: first.value = value
        case 1: second.value = value
        default: if value == Self.writes / 2 { observer.invalidate() }
        }
      }
    }
    let countAfterInvalidate = received.count
    first.value = -1
    second.value = -1
    queue.sync {}
    #expect(received.count == countAfterInvalidate)
    #expect(!received.history.contains(-1))
  }

  @Test func aJoinWithAHopReleasesItsClosures() {
    weak var weakTarget: Recorder<Int>?
    let first = ValueHolder(0)
    let second = ValueHolder(0)
    let queue = DispatchQueue(label: "JoinSidesTests.release")
    do {
      let target = Recorder<Int>()
      weakTarget = target
      let observer = first.chain().receive(on: queue).merge(second.chain()).do { target.append($0) }.sync()
      first.value = 1
      second.value = 2
      queue.sync {}
      #expect(target.history.sorted() == [0, 0, 1, 2])
      observer.invalidate()
    }
    #expect(weakTarget == nil)
  }
}
