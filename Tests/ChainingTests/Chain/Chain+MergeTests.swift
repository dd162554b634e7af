import Chaining
import Testing

/// A source that is only `Fetchable`: it has a value for `sync()` when `value` is set, and never broadcasts.
private final class Slot: Fetchable {
  typealias ChainValue = Int
  var value: Int?
  init(_ value: Int?) { self.value = value }
  func canFetch() -> Bool { value != nil }
  func fetchedValue() -> Int { value! }
}

@Suite struct ChainMergeTests {
  // MARK: - Flow

  @Test func mergeDeliversTheValuesOfBothChainsInArrivalOrder() {
    let first = Notifier<Int>()
    let second = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = first.chain().merge(second.chain()).do { received.append($0) }.end()
    first.notify(value: 1)
    second.notify(value: 2)
    second.notify(value: 3)
    first.notify(value: 4)
    #expect(received.history == [1, 2, 3, 4])
    withExtendedLifetime(observer) {}
  }

  @Test func mergeCalledAgainJoinsAThirdChain() {
    let first = Notifier<Int>()
    let second = Notifier<Int>()
    let third = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = first.chain().merge(second.chain()).merge(third.chain()).do { received.append($0) }.end()
    third.notify(value: 3)
    first.notify(value: 1)
    second.notify(value: 2)
    #expect(received.history == [3, 1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func stepsBeforeMergeApplyOnlyToTheirOwnChainAndStepsAfterToBoth() {
    let numbers = Notifier<Int>()
    let words = Notifier<String>()
    let received = Recorder<String>()
    let observer = numbers.chain().map { "#\($0)" }
      .merge(words.chain().map { $0.uppercased() })
      .map { "<\($0)>" }
      .do { received.append($0) }
      .end()
    numbers.notify(value: 1)
    words.notify(value: "a")
    numbers.notify(value: 2)
    #expect(received.history == ["<#1>", "<A>", "<#2>"])
    withExtendedLifetime(observer) {}
  }

  @Test func mergeJoinsSourcesOfDifferentKinds() {
    let holder = ValueHolder(0)
    let notifier = IntNotifier()
    let userHolder = IntHolder(0)
    let received = Recorder<Int>()
    let observer = holder.chain().merge(notifier.chain()).merge(userHolder.chain()).do { received.append($0) }.end()
    userHolder.value = 3
    holder.value = 1
    notifier.notify(value: 2)
    #expect(received.history == [3, 1, 2])
    withExtendedLifetime(observer) {}
  }

  // MARK: - sync and end

  @Test func syncSendsTheValueOfEachHolderInMergeOrder() {
    let first = ValueHolder(1)
    let second = ValueHolder(2)
    let received = Recorder<Int>()
    let observer = second.chain().merge(first.chain()).do { received.append($0) }.sync()
    #expect(received.history == [2, 1])
    first.value = 3
    #expect(received.history == [2, 1, 3])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOfThreeMergedHoldersSendsThreeValuesInMergeOrder() {
    let first = ValueHolder("a")
    let second = ValueHolder("b")
    let third = ValueHolder("c")
    let received = Recorder<String>()
    let observer = first.chain().merge(second.chain()).merge(third.chain()).do { received.append($0) }.sync()
    #expect(received.history == ["a", "b", "c"])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOfAHolderMergedWithANotifierSendsOnlyTheHoldersValue() {
    let holder = ValueHolder(1)
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = holder.chain().merge(notifier.chain()).do { received.append($0) }.sync()
    #expect(received.history == [1])
    notifier.notify(value: 2)
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func syncFetchesAHolderMergedAfterANotifier() {
    let first = ValueHolder(1)
    let notifier = Notifier<Int>()
    let last = ValueHolder(3)
    let received = Recorder<Int>()
    let observer = first.chain().merge(notifier.chain()).merge(last.chain()).do { received.append($0) }.sync()
    #expect(received.history == [1, 3])
    withExtendedLifetime(observer) {}
  }

  @Test func syncFetchesAFetchOnlySourceAndSkipsOneThatCannotFetch() {
    let holder = ValueHolder(1)
    let empty = Slot(nil)
    let filled = Slot(5)
    let received = Recorder<Int>()
    let observer = holder.chain().merge(empty.chain()).merge(filled.chain()).do { received.append($0) }.sync()
    #expect(received.history == [1, 5])
    withExtendedLifetime(observer) {}
  }

  @Test func endSendsNothingUntilASourceBroadcasts() {
    let first = ValueHolder(1)
    let second = ValueHolder(2)
    let received = Recorder<Int>()
    let observer = first.chain().merge(second.chain()).do { received.append($0) }.end()
    #expect(received.history == [])
    second.value = 5
    #expect(received.history == [5])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOnAMergeStartingFromANotifierFetchesTheHolder() {
    // SwiftChaining allowed it: the fetchable side decides.
    let notifier = Notifier<Int>()
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = notifier.chain().merge(holder.chain()).do { received.append($0) }.sync()
    #expect(received.history == [1])
    notifier.notify(value: 2)
    holder.value = 3
    #expect(received.history == [1, 2, 3])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOnAMergeOfFetchableSourcesFetchesEachInSourceOrder() {
    let notifier = Notifier<Int>()
    let first = ValueHolder(1)
    let second = ValueHolder(2)
    let received = Recorder<Int>()
    let observer = notifier.chain().merge(first.chain()).merge(notifier.chain()).merge(second.chain())
      .do { received.append($0) }.sync()
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOnAMergeWithNoFetchableSourceDoesNotCompile() throws {
    let result = try CompileCheck.typecheck(
      """
      let observer = Notifier<Int>().chain().merge(Notifier<Int>().chain()).sync()
      """
    )
    #expect(!result.succeeded)
    #expect(result.diagnostics.contains("Fetchable"), "\(result.diagnostics)")
    let control = try CompileCheck.typecheck(
      """
      let holder = ValueHolder(1)
      let observer = Notifier<Int>().chain().merge(holder.chain()).sync()
      """
    )
    #expect(control.succeeded, "\(control.diagnostics)")
  }

  // MARK: - Lifetime

  @Test func invalidatedObserverReceivesNothingFromEitherSource() {
    let first = Notifier<Int>()
    let second = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = first.chain().merge(second.chain()).do { received.append($0) }.end()
    first.notify(value: 1)
    second.notify(value: 2)
    observer.invalidate()
    first.notify(value: 3)
    second.notify(value: 4)
    #expect(received.history == [1, 2])
    #expect(observer.isInvalidated)
  }

  @Test func releasedObserverReceivesNothingFromEitherSource() {
    let first = ValueHolder(1)
    let second = ValueHolder(2)
    let received = Recorder<Int>()
    var observer: Observer? = first.chain().merge(second.chain()).do { received.append($0) }.sync()
    #expect(received.history == [1, 2])
    observer = nil
    first.value = 3
    second.value = 4
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func secondSourceDyingDoesNotBreakTheFirst() {
    let first = ValueHolder(1)
    weak var weakSecond: Notifier<Int>?
    var second: Notifier<Int>? = Notifier<Int>()
    weakSecond = second
    let received = Recorder<Int>()
    let observer = first.chain().merge(second!.chain()).do { received.append($0) }.sync()
    second?.notify(value: 2)
    second = nil
    #expect(weakSecond == nil)
    first.value = 3
    #expect(received.history == [1, 2, 3])
    #expect(!observer.isInvalidated)
    withExtendedLifetime(observer) {}
  }

  @Test func firstSourceDyingDoesNotBreakTheSecond() {
    weak var weakFirst: ValueHolder<Int>?
    var first: ValueHolder<Int>? = ValueHolder(1)
    weakFirst = first
    let second = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = first!.chain().merge(second.chain()).do { received.append($0) }.sync()
    first = nil
    #expect(weakFirst == nil)
    second.notify(value: 2)
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func mergeDoesNotRetainItsSources() {
    weak var weakFirst: ValueHolder<Int>?
    weak var weakSecond: Notifier<Int>?
    var observer: Observer?
    do {
      let first = ValueHolder(1)
      let second = Notifier<Int>()
      weakFirst = first
      weakSecond = second
      observer = first.chain().merge(second.chain()).end()
    }
    #expect(weakFirst == nil)
    #expect(weakSecond == nil)
    #expect(observer?.isInvalidated == false)
  }

  @Test func invalidatingReleasesEveryClosureAndEveryRetainedSource() {
    expectJoinedChainReleasesEverythingOnInvalidate(
      join: { $0.merge($1) },
      describe: { "\($0)" },
      expected: ["1", "2"]
    )
  }

  // MARK: - Reentrancy

  @Test func handlerSendingIntoBothSourcesReachesOnlyTheOtherChains() {
    let first = Notifier<Int>()
    let second = Notifier<Int>()
    let log = Recorder<String>()
    let observers = [
      first.chain().merge(second.chain()).do { value in
        log.append("merged \(value)")
        if value == 1 {
          first.notify(value: 2)
          second.notify(value: 3)
        }
      }.end(),
      first.chain().do { log.append("first \($0)") }.end(),
      second.chain().do { log.append("second \($0)") }.end(),
    ]
    first.notify(value: 1)
    // `first` is delivering 1, so its 2 waits until 1 has reached every
    // chain; `second` is idle, so its 3 is delivered at once. The merged
    // chain caused both and skips them.
    #expect(log.history == ["merged 1", "second 3", "first 1", "first 2"])
    second.notify(value: 4)
    #expect(log.history == ["merged 1", "second 3", "first 1", "first 2", "merged 4", "second 4"])
    withExtendedLifetime(observers) {}
  }

  @Test func handlerWritingBothHolderSourcesLeavesThemOnTheWrittenValues() {
    let first = ValueHolder(0)
    let second = ValueHolder(0)
    let log = Recorder<String>()
    let observers = [
      first.chain().merge(second.chain()).do { value in
        log.append("merged \(value)")
        if value == 1 {
          second.value = 2
          first.value = 3
        }
      }.end(),
      first.chain().do { log.append("first \($0)") }.end(),
      second.chain().do { log.append("second \($0)") }.end(),
    ]
    first.value = 1
    #expect(first.value == 3)
    #expect(second.value == 2)
    #expect(log.history == ["merged 1", "second 2", "first 1", "first 3"])
    second.value = 5
    #expect(log.history == ["merged 1", "second 2", "first 1", "first 3", "merged 5", "second 5"])
    withExtendedLifetime(observers) {}
  }

  @Test func anotherChainSendingIntoTheSecondSourceDuringADeliveryReachesTheMergedChain() {
    let first = Notifier<Int>()
    let second = Notifier<Int>()
    let received = Recorder<Int>()
    let observers = [
      first.chain().merge(second.chain()).do { received.append($0) }.end(),
      first.chain().do { second.notify(value: $0 * 10) }.end(),
    ]
    first.notify(value: 1)
    #expect(received.history == [1, 10])
    withExtendedLifetime(observers) {}
  }

  // MARK: - Concurrency

  @Test func concurrentBroadcastsToBothSourcesAllArriveInPerThreadOrder() {
    let perThread = 5_000
    let first = Notifier<Int>()
    let second = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = first.chain().merge(second.chain()).do { received.append($0) }.end()

    race(threads: 4) { thread in
      let source = thread < 2 ? first : second
      for index in 0..<perThread {
        source.notify(value: thread * perThread + index)
      }
    }

    let history = received.history
    #expect(history.count == 4 * perThread)
    #expect(Set(history).count == 4 * perThread)
    for thread in 0..<4 {
      let fromThread = history.filter { $0 / perThread == thread }
      #expect(fromThread == Array(thread * perThread..<(thread + 1) * perThread))
    }
    withExtendedLifetime(observer) {}
  }
}
