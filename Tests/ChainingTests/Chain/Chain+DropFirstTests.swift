import Chaining
import Dispatch
import Testing

@Suite struct ChainDropFirstTests {
  @Test func dropFirstSkipsOneValueByDefault() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().dropFirst().do { received.append($0) }.end()
    for value in 1...4 { notifier.notify(value: value) }
    #expect(received.history == [2, 3, 4])
    withExtendedLifetime(observer) {}
  }

  @Test func dropFirstSkipsTheGivenCount() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().dropFirst(3).map { $0 * 10 }.do { received.append($0) }.end()
    for value in 1...5 { notifier.notify(value: value) }
    #expect(received.history == [40, 50])
    withExtendedLifetime(observer) {}
  }

  @Test func dropFirstOfZeroPassesEverything() {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = holder.chain().dropFirst(0).do { received.append($0) }.sync()
    holder.value = 2
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func theSyncedValueCountsAsTheFirst() {
    let age = ValueHolder(29)
    let received = Recorder<Int>()
    let observer = age.chain().dropFirst().do { received.append($0) }.sync()
    #expect(received.history.isEmpty)
    age.value = 30
    age.value = 31
    #expect(received.history == [30, 31])
    withExtendedLifetime(observer) {}
  }

  @Test func aSyncedCombineThatDropsItsFirstValueSendsOnTheFirstChangeOfEitherSide() {
    // The migration of Combine's `dropFirst()` on a `CurrentValueSubject`:
    // `end()` would wait until both sides had changed.
    let name = ValueHolder("Ann")
    let age = ValueHolder(29)
    let received = Recorder<String>()
    let synced = name.chain().combine(age.chain()).dropFirst().do { received.append("\($0) \($1)") }.sync()
    let ended = Recorder<String>()
    let unsynced = name.chain().combine(age.chain()).do { ended.append("\($0) \($1)") }.end()
    age.value = 30
    #expect(received.history == ["Ann 30"])
    #expect(ended.history.isEmpty)
    withExtendedLifetime((synced, unsynced)) {}
  }

  @Test func eachFinishedChainCountsItsOwnValues() {
    let notifier = Notifier<Int>()
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    let early = notifier.chain().dropFirst().do { first.append($0) }.end()
    notifier.notify(value: 1)
    let late = notifier.chain().dropFirst().do { second.append($0) }.end()
    notifier.notify(value: 2)
    notifier.notify(value: 3)
    #expect(first.history == [2, 3])
    #expect(second.history == [3])
    withExtendedLifetime((early, late)) {}
  }

  @Test func anEchoIsNotCounted() {
    // A handler writes back to its own source: the echo never reaches the step.
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = holder.chain().dropFirst().do { value in
      received.append(value)
      holder.value = value + 100
    }.end()
    holder.value = 1  // dropped by the step
    holder.value = 2  // passes; its write of 102 is an echo
    #expect(received.history == [2])
    #expect(holder.value == 102)
    withExtendedLifetime(observer) {}
  }

  @Test func exactlyCountValuesAreSkippedWhileSeveralThreadsSend() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().dropFirst(100).do { received.append($0) }.end()
    race(threads: 4) { thread in
      for value in 0..<1_000 { notifier.notify(value: thread * 1_000 + value) }
    }
    #expect(received.count == 3_900)
    #expect(Set(received.history).count == 3_900)
    withExtendedLifetime(observer) {}
  }

  @Test func releasingTheObserverReleasesTheChain() {
    weak var weakToken: Token?
    let notifier = Notifier<Int>()
    var observer: Observer?
    do {
      let token = Token()
      weakToken = token
      observer = notifier.chain().dropFirst().do { _ in withExtendedLifetime(token) {} }.end()
    }
    #expect(weakToken != nil)
    observer = nil
    #expect(weakToken == nil)
    withExtendedLifetime(observer) {}
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func negativeCountStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Notifier<Int>().chain().dropFirst(-1)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Chain.dropFirst(_:): count must not be negative, got -1"))
  }
  #endif
}
