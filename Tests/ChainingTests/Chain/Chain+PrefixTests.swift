import Chaining
import Testing

@Suite struct ChainPrefixTests {
  /// `first()` and `prefix(1)`, its longer spelling: each one-value test runs with both.
  enum One: String, CaseIterable, CustomTestStringConvertible {
    case first
    case prefixOne

    var testDescription: String { self == .first ? "first()" : "prefix(1)" }

    func apply<Value, Source>(_ chain: consuming Chain<Value, Source>) -> Chain<Value, Source> {
      switch self {
      case .first: chain.first()
      case .prefixOne: chain.prefix(1)
      }
    }
  }

  // MARK: - Flow

  @Test func prefixPassesTheFirstValuesThenStops() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().prefix(2).do { received.append($0) }.end()
    for value in 1...4 { notifier.notify(value: value) }
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func observerIsInvalidatedRightAfterTheNthValue() {
    let notifier = Notifier<Int>()
    let observer = notifier.chain().prefix(2).end()
    notifier.notify(value: 1)
    #expect(!observer.isInvalidated)
    notifier.notify(value: 2)
    #expect(observer.isInvalidated)
  }

  @Test func nthValueRunsThroughTheRestOfTheChainBeforeTheObserverIsInvalidated() {
    let notifier = Notifier<Int>()
    let invalidatedWhileHandling = Recorder<Bool>()
    var observer: Observer?
    observer = notifier.chain().prefix(2).map { $0 * 10 }.do { _ in
      invalidatedWhileHandling.append(observer?.isInvalidated ?? true)
    }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(invalidatedWhileHandling.history == [false, false])
    #expect(observer?.isInvalidated == true)
  }

  @Test(arguments: One.allCases)
  func firstPassesOnlyTheFirstValue(_ one: One) {
    let notifier = Notifier<String>()
    let received = Recorder<String>()
    let observer = one.apply(notifier.chain()).do { received.append($0) }.end()
    #expect(!observer.isInvalidated)
    notifier.notify(value: "a")
    notifier.notify(value: "b")
    #expect(received.history == ["a"])
    #expect(observer.isInvalidated)
  }

  @Test func stepsBeforeThePrefixStopRunningToo() {
    let notifier = Notifier<Int>()
    let before = Recorder<Int>()
    let observer = notifier.chain().do { before.append($0) }.prefix(2).end()
    for value in 1...4 { notifier.notify(value: value) }
    #expect(before.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func prefixAfterEachStopsInTheMiddleOfASequence() {
    let notifier = Notifier<[Int]>()
    let received = Recorder<Int>()
    let observer = notifier.chain().each().prefix(2).do { received.append($0) }.end()
    notifier.notify(value: [1, 2, 3])
    notifier.notify(value: [4])
    #expect(received.history == [1, 2])
    #expect(observer.isInvalidated)
  }

  // MARK: - sync and end

  @Test func syncedValueCountsTowardThePrefix() {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = holder.chain().prefix(2).do { received.append($0) }.sync()
    #expect(received.history == [1])
    #expect(!observer.isInvalidated)
    holder.value = 2
    #expect(observer.isInvalidated)
    holder.value = 3
    #expect(received.history == [1, 2])
  }

  @Test(arguments: One.allCases)
  func firstWithSyncDeliversOnlyTheCurrentValue(_ one: One) {
    let holder = ValueHolder("first")
    let received = Recorder<String>()
    let observer = one.apply(holder.chain()).do { received.append($0) }.sync()
    #expect(received.history == ["first"])
    #expect(observer.isInvalidated)
    holder.value = "second"
    #expect(received.history == ["first"])
  }

  @Test(arguments: One.allCases)
  func firstWithSyncFromAUserHolderDeliversOnlyTheCurrentValue(_ one: One) {
    let holder = IntHolder(5)
    let received = Recorder<Int>()
    let observer = one.apply(holder.chain()).do { received.append($0) }.sync()
    #expect(received.history == [5])
    #expect(observer.isInvalidated)
    holder.value = 6
    #expect(received.history == [5])
  }

  @Test(arguments: One.allCases)
  func endOnAFetchableSourceDoesNotUseUpTheCount(_ one: One) {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = one.apply(holder.chain()).do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    #expect(!observer.isInvalidated)
    holder.value = 2
    holder.value = 3
    #expect(received.history == [2])
    #expect(observer.isInvalidated)
  }

  @Test func endOnANonFetchableSourceWaitsForBroadcasts() {
    let notifier = IntNotifier()
    let received = Recorder<Int>()
    let observer = notifier.chain().prefix(2).do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    #expect(!observer.isInvalidated)
    for value in 1...3 { notifier.notify(value: value) }
    #expect(received.history == [1, 2])
    #expect(observer.isInvalidated)
  }

  // MARK: - Count of zero and below

  @Test func prefixZeroPassesNothingAndTheFirstValueInvalidates() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().prefix(0).do { received.append($0) }.end()
    #expect(!observer.isInvalidated)
    notifier.notify(value: 1)
    #expect(observer.isInvalidated)
    notifier.notify(value: 2)
    #expect(received.history.isEmpty)
  }

  @Test func prefixZeroWithSyncIsInvalidatedAtOnce() {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = holder.chain().prefix(0).do { received.append($0) }.sync()
    #expect(observer.isInvalidated)
    holder.value = 2
    #expect(received.history.isEmpty)
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func negativeCountStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = Notifier<Int>().chain().prefix(-1)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Chain.prefix(_:): count must not be negative, got -1"))
  }
  #endif

  // MARK: - State per chain

  @Test func eachFinishedChainCountsItsOwnValues() {
    let notifier = Notifier<Int>()
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    func firstTwo(into recorder: Recorder<Int>) -> Observer {
      notifier.chain().prefix(2).do { recorder.append($0) }.end()
    }
    let firstObserver = firstTwo(into: first)
    notifier.notify(value: 1)
    let secondObserver = firstTwo(into: second)
    notifier.notify(value: 2)
    notifier.notify(value: 3)
    #expect(first.history == [1, 2])
    #expect(second.history == [2, 3])
    #expect(firstObserver.isInvalidated)
    #expect(secondObserver.isInvalidated)
  }

  // MARK: - Lifetime

  @Test func invalidatedBeforeTheNthValuePrefixDeliversNothingMore() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().prefix(3).do { received.append($0) }.end()
    notifier.notify(value: 1)
    observer.invalidate()
    notifier.notify(value: 2)
    notifier.notify(value: 3)
    #expect(received.history == [1])
  }

  @Test func prefixStopsQuietlyWhenItsSourceIsReleasedBeforeTheNthValue() {
    weak var weakSource: Notifier<Int>?
    weak var weakToken: Token?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let source = Notifier<Int>()
      let token = Token()
      weakSource = source
      weakToken = token
      observer = source.chain().prefix(3).do { value in
        withExtendedLifetime(token) {}
        received.append(value)
      }.end()
      source.notify(value: 1)
    }
    #expect(weakSource == nil)
    #expect(received.history == [1])
    #expect(observer?.isInvalidated == false)
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
  }

  @Test func closuresAreReleasedAfterTheNthValueWhileTheObserverLives() {
    let notifier = Notifier<Int>()
    weak var weakToken: Token?
    let observer: Observer
    do {
      let token = Token()
      weakToken = token
      observer = notifier.chain().prefix(2).do { _ in _ = token }.end()
    }
    notifier.notify(value: 1)
    #expect(weakToken != nil)
    notifier.notify(value: 2)
    #expect(weakToken == nil)
    withExtendedLifetime(observer) {}
  }

  @Test func retainedSourceIsReleasedAfterTheNthValue() {
    weak var weakSource: Notifier<Int>?
    let received = Recorder<Int>()
    let observer: Observer
    do {
      let source = Notifier<Int>()
      weakSource = source
      observer = source.retain().chain().prefix(2).do { received.append($0) }.end()
    }
    #expect(weakSource != nil)
    weakSource?.notify(value: 1)
    #expect(weakSource != nil)
    weakSource?.notify(value: 2)
    #expect(weakSource == nil)
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: One.allCases)
  func firstSyncedFromARetainedHolderReleasesEverythingAtOnce(_ one: One) {
    weak var weakSource: ValueHolder<Int>?
    weak var weakReceiver: RecordingReceiver<Int>?
    weak var weakToken: Token?
    let observer: Observer
    do {
      let source = ValueHolder(1)
      let receiver = RecordingReceiver<Int>()
      let token = Token()
      weakSource = source
      weakReceiver = receiver
      weakToken = token
      observer = one.apply(source.retain().chain()).do { _ in _ = token }.sendTo(receiver.retain()).sync()
      #expect(receiver.history == [1])
    }
    #expect(observer.isInvalidated)
    #expect(weakSource == nil)
    #expect(weakReceiver == nil)
    #expect(weakToken == nil)
    withExtendedLifetime(observer) {}
  }

  // MARK: - Reentrancy

  @Test func echoOfTheChainsOwnHandlerDoesNotCountTowardThePrefix() {
    let notifier = Notifier<Int>()
    let own = Recorder<Int>()
    let other = Recorder<Int>()
    let observers = [
      notifier.chain().prefix(2).do { value in
        own.append(value)
        if value == 1 { notifier.notify(value: 5) }
      }.end(),
      notifier.chain().do { other.append($0) }.end(),
    ]
    notifier.notify(value: 1)
    #expect(own.history == [1])
    #expect(other.history == [1, 5])
    #expect(!observers[0].isInvalidated)
    notifier.notify(value: 2)
    #expect(own.history == [1, 2])
    #expect(observers[0].isInvalidated)
  }

  @Test func handlerInvalidatingItsOwnObserverBeforeTheNthValueStopsTheChain() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    var observer: Observer?
    observer = notifier.chain().prefix(3).do { value in
      received.append(value)
      if value == 1 { observer?.invalidate() }
    }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [1])
    #expect(observer?.isInvalidated == true)
  }

  @Test func nthHandlerWritingItsOwnHolderLeavesOtherChainsOnTheLatestValue() {
    let holder = ValueHolder(0)
    let later = Recorder<Int>()
    let observers = [
      holder.chain().first().do { holder.value = $0 + 1 }.end(),
      holder.chain().do { later.append($0) }.end(),
    ]
    holder.value = 10
    #expect(holder.value == 11)
    #expect(later.history == [10, 11])
    #expect(observers[0].isInvalidated)
    withExtendedLifetime(observers) {}
  }

  // MARK: - Concurrency

  @Test func prefixUnderConcurrentBroadcastsDeliversExactlyK() {
    let threads = 4
    let perThread = 1_000
    let limit = 100
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().prefix(limit).do { received.append($0) }.end()
    race(threads: threads) { thread in
      for index in 0..<perThread { notifier.notify(value: thread * perThread + index) }
    }
    let history = received.history
    #expect(history.count == limit)
    #expect(Set(history).count == limit)
    // Each thread's values arrive in the order it sent them.
    for thread in 0..<threads {
      let fromThread = history.filter { $0 / perThread == thread }
      #expect(fromThread == fromThread.sorted())
    }
    #expect(observer.isInvalidated)
    notifier.notify(value: -1)
    #expect(received.count == limit)
  }

  @Test func manyPrefixChainsUnderConcurrentBroadcastsEachDeliverExactlyK() {
    let threads = 4
    let perThread = 500
    let limits = [1, 7, 50, 300]
    let holder = ValueHolder(0)
    let recorders = limits.map { _ in Recorder<Int>() }
    let observers = zip(limits, recorders).map { limit, recorder in
      holder.chain().prefix(limit).do { recorder.append($0) }.end()
    }
    race(threads: threads) { thread in
      for index in 1...perThread { holder.value = thread * perThread + index }
    }
    #expect(recorders.map(\.count) == limits)
    #expect(observers.allSatisfy { $0.isInvalidated })
  }
}
