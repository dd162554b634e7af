import Chaining
import Testing

@Suite struct ChainGuardIfEqualTests {
  /// `guardIfEqual` and its other name, `removeDuplicates`: each test runs with both.
  enum Spelling: String, CaseIterable, CustomTestStringConvertible {
    case guardIfEqual
    case removeDuplicates

    var testDescription: String { rawValue }

    func apply<Value: Equatable, Source>(_ chain: consuming Chain<Value, Source>) -> Chain<Value, Source> {
      switch self {
      case .guardIfEqual: chain.guardIfEqual()
      case .removeDuplicates: chain.removeDuplicates()
      }
    }
  }

  /// An `Equatable` object, compared by identity, to watch the step's last value.
  final class Reference: Equatable {
    static func == (lhs: Reference, rhs: Reference) -> Bool { lhs === rhs }
  }

  // MARK: - Flow

  @Test(arguments: Spelling.allCases)
  func guardIfEqualDropsConsecutiveDuplicates(_ spelling: Spelling) {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = spelling.apply(notifier.chain()).do { received.append($0) }.end()
    for value in [1, 1, 2, 2, 2, 1, 3, 3] { notifier.notify(value: value) }
    #expect(received.history == [1, 2, 1, 3])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func nilIsComparedLikeAnyOtherValue(_ spelling: Spelling) {
    let notifier = Notifier<String?>()
    let received = Recorder<String?>()
    let observer = spelling.apply(notifier.chain()).do { received.append($0) }.end()
    for value in [nil, nil, "a", "a", nil] { notifier.notify(value: value) }
    #expect(received.history == [nil, "a", nil])
    withExtendedLifetime(observer) {}
  }

  // MARK: - sync and end

  @Test(arguments: Spelling.allCases)
  func syncedValueAlwaysPassesAndBecomesTheLastValue(_ spelling: Spelling) {
    let holder = ValueHolder(12)
    let received = Recorder<Int>()
    let observer = spelling.apply(holder.chain().map { $0 / 10 }).do { received.append($0) }.sync()
    #expect(received.history == [1])
    holder.value = 15  // 1 again: dropped
    holder.value = 23
    holder.value = 19
    #expect(received.history == [1, 2, 1])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func syncedValueFromAUserHolderBecomesTheLastValue(_ spelling: Spelling) {
    let holder = IntHolder(12)
    let received = Recorder<Int>()
    let observer = spelling.apply(holder.chain().map { $0 / 10 }).do { received.append($0) }.sync()
    #expect(received.history == [1])
    holder.value = 17
    holder.value = 20
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func endLeavesNoLastValueSoTheFirstBroadcastPasses(_ spelling: Spelling) {
    let holder = ValueHolder(12)
    let received = Recorder<Int>()
    let observer = spelling.apply(holder.chain().map { $0 / 10 }).do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    holder.value = 15  // equal to the mapped current value, but nothing was fetched
    holder.value = 16
    #expect(received.history == [1])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func endOnANonFetchableSourceDeliversOnlyChangedBroadcasts(_ spelling: Spelling) {
    let notifier = IntNotifier()
    let received = Recorder<Int>()
    let observer = spelling.apply(notifier.chain()).do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    for value in [5, 5, 6, 6, 5] { notifier.notify(value: value) }
    #expect(received.history == [5, 6, 5])
    withExtendedLifetime(observer) {}
  }

  // MARK: - State per chain

  @Test(arguments: Spelling.allCases)
  func eachFinishedChainHasItsOwnLastValue(_ spelling: Spelling) {
    let notifier = Notifier<Int>()
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    func distinct(into recorder: Recorder<Int>) -> Observer {
      spelling.apply(notifier.chain()).do { recorder.append($0) }.end()
    }
    let firstObserver = distinct(into: first)
    notifier.notify(value: 1)
    let secondObserver = distinct(into: second)
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(first.history == [1, 2])
    #expect(second.history == [1, 2])
    _ = (firstObserver, secondObserver)
  }

  @Test(arguments: Spelling.allCases)
  func aValueDroppedInOneChainStillReachesAnother(_ spelling: Spelling) {
    let holder = ValueHolder(0)
    let tens = Recorder<Int>()
    let units = Recorder<Int>()
    let observers = [
      spelling.apply(holder.chain().map { $0 / 10 }).do { tens.append($0) }.end(),
      spelling.apply(holder.chain().map { $0 % 10 }).do { units.append($0) }.end(),
    ]
    for value in [11, 12, 22, 32] { holder.value = value }
    #expect(tens.history == [1, 2, 3])
    #expect(units.history == [1, 2])
    withExtendedLifetime(observers) {}
  }

  // MARK: - Lifetime

  @Test(arguments: Spelling.allCases)
  func invalidatedGuardIfEqualDeliversNothingMore(_ spelling: Spelling) {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = spelling.apply(notifier.chain()).do { received.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    observer.invalidate()
    notifier.notify(value: 3)
    notifier.notify(value: 1)
    #expect(received.history == [1, 2])
    #expect(observer.isInvalidated)
  }

  @Test(arguments: Spelling.allCases)
  func guardIfEqualStopsQuietlyWhenItsSourceIsReleased(_ spelling: Spelling) {
    weak var weakSource: ValueHolder<Int>?
    weak var weakToken: Token?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let source = ValueHolder(1)
      let token = Token()
      weakSource = source
      weakToken = token
      observer = spelling.apply(source.chain()).do { value in
        withExtendedLifetime(token) {}
        received.append(value)
      }.sync()
      source.value = 2
    }
    #expect(weakSource == nil)
    #expect(received.history == [1, 2])
    #expect(observer?.isInvalidated == false)
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
  }

  @Test(arguments: Spelling.allCases)
  func lastValueIsKeptUntilTheObserverIsInvalidated(_ spelling: Spelling) {
    let notifier = Notifier<Reference>()
    weak var weakLast: Reference?
    let observer = spelling.apply(notifier.chain()).end()
    do {
      let reference = Reference()
      weakLast = reference
      notifier.notify(value: reference)
    }
    #expect(weakLast != nil)
    observer.invalidate()
    #expect(weakLast == nil)
  }

  // MARK: - Reentrancy

  @Test(arguments: Spelling.allCases)
  func duplicateBroadcastFromAnotherChainsHandlerIsDropped(_ spelling: Spelling) {
    let notifier = Notifier<Int>()
    let arrived = Recorder<Int>()
    let received = Recorder<Int>()
    var resent = false
    let observers = [
      notifier.chain().do { value in
        if value == 1, !resent {
          resent = true
          notifier.notify(value: 1)
        }
      }.end(),
      spelling.apply(notifier.chain().do { arrived.append($0) }).do { received.append($0) }.end(),
    ]
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(arrived.history == [1, 1, 2])
    #expect(received.history == [1, 2])
    withExtendedLifetime(observers) {}
  }

  @Test(arguments: Spelling.allCases)
  func handlerWritingBackIntoItsOwnHolderDoesNotSeeItsWrite(_ spelling: Spelling) {
    // A clamp: values above 10 are written back as 10.
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = spelling.apply(holder.chain()).do { value in
      received.append(value)
      if value > 10 { holder.value = 10 }
    }.sync()
    holder.value = 15
    #expect(holder.value == 10)
    // The write-back is an echo of this chain, so the chain never sees 10:
    // its last value stays 15.
    #expect(received.history == [0, 15])
    holder.value = 10  // the holder already holds 10: no broadcast
    holder.value = 9
    #expect(received.history == [0, 15, 9])
    holder.value = 15
    #expect(received.history == [0, 15, 9, 15])
    #expect(holder.value == 10)
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func writeBackThatRepeatsTheLastValueIsNotSeenAgain(_ spelling: Spelling) {
    // Documents an interaction of two rules: a chain does not see its own
    // write-back, and this step compares with the last value it passed. A
    // clamp whose write-back is hidden therefore ignores the same
    // out-of-range value written a second time.
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = spelling.apply(holder.chain()).do { value in
      received.append(value)
      if value > 10 { holder.value = 10 }
    }.end()
    holder.value = 15
    #expect(holder.value == 10)
    holder.value = 15  // a real change from 10, equal to the step's last value
    #expect(received.history == [15])
    #expect(holder.value == 15)
    withExtendedLifetime(observer) {}
  }

  // MARK: - Concurrency

  @Test(arguments: Spelling.allCases)
  func sameValueFromManyThreadsPassesOnce(_ spelling: Spelling) {
    let threads = 4
    let perThread = 2_000
    let notifier = Notifier<Int>()
    let arrived = Recorder<Int>()
    let received = Recorder<Int>()
    let observer = spelling.apply(notifier.chain().do { arrived.append($0) }).do { received.append($0) }.end()
    race(threads: threads) { _ in
      for _ in 0..<perThread { notifier.notify(value: 7) }
    }
    #expect(arrived.count == threads * perThread)
    #expect(received.history == [7])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func outputUnderConcurrentBroadcastsIsTheInputWithoutConsecutiveDuplicates(_ spelling: Spelling) {
    let threads = 4
    let perThread = 2_000
    let notifier = Notifier<Int>()
    let arrived = Recorder<Int>()
    let received = Recorder<Int>()
    let observer = spelling.apply(notifier.chain().do { arrived.append($0) }).do { received.append($0) }.end()
    race(threads: threads) { thread in
      // Runs of two equal values, different on each thread.
      for index in 0..<perThread { notifier.notify(value: thread * 10 + index / 2 % 3) }
    }
    let input = arrived.history
    #expect(input.count == threads * perThread)
    var expected: [Int] = []
    for value in input where value != expected.last { expected.append(value) }
    #expect(received.history == expected)
    withExtendedLifetime(observer) {}
  }
}
