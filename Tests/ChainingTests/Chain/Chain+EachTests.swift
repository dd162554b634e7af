import Chaining
import Testing

@Suite struct ChainEachTests {
  // MARK: - Flow

  @Test func eachPassesEveryElementInOrder() {
    let notifier = Notifier<[String]>()
    let received = Recorder<String>()
    let observer = notifier.chain().each().do { received.append($0) }.end()
    notifier.notify(value: ["a", "b"])
    notifier.notify(value: ["c"])
    #expect(received.history == ["a", "b", "c"])
    withExtendedLifetime(observer) {}
  }

  @Test func emptySequencePassesNothing() {
    let notifier = Notifier<[Int]>()
    let received = Recorder<Int>()
    let observer = notifier.chain().each().do { received.append($0) }.end()
    notifier.notify(value: [])
    #expect(received.history.isEmpty)
    notifier.notify(value: [1])
    notifier.notify(value: [])
    #expect(received.history == [1])
    withExtendedLifetime(observer) {}
  }

  @Test func eachWorksOnAnySequence() {
    let text = Notifier<String>()
    let range = Notifier<ClosedRange<Int>>()
    let characters = Recorder<Character>()
    let numbers = Recorder<Int>()
    let observers = [
      text.chain().each().do { characters.append($0) }.end(),
      range.chain().each().do { numbers.append($0) }.end(),
    ]
    text.notify(value: "hi")
    range.notify(value: 3...5)
    #expect(characters.history == ["h", "i"])
    #expect(numbers.history == [3, 4, 5])
    withExtendedLifetime(observers) {}
  }

  @Test func everyElementRunsThroughTheLaterSteps() {
    let notifier = Notifier<[Int]>()
    let received = Recorder<String>()
    let observer = notifier.chain().each().guard { $0 > 0 }.map { "#\($0)" }.do { received.append($0) }.end()
    notifier.notify(value: [1, -2, 3])
    #expect(received.history == ["#1", "#3"])
    withExtendedLifetime(observer) {}
  }

  // MARK: - sync and end

  @Test func syncPassesEveryElementOfTheCurrentValue() {
    let holder = ValueHolder([1, 2, 3])
    let received = Recorder<Int>()
    let observer = holder.chain().each().do { received.append($0) }.sync()
    #expect(received.history == [1, 2, 3])
    holder.value = [4, 5]
    #expect(received.history == [1, 2, 3, 4, 5])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOfAnEmptyCurrentValuePassesNothing() {
    let holder = ValueHolder([Int]())
    let received = Recorder<Int>()
    let observer = holder.chain().each().do { received.append($0) }.sync()
    #expect(received.history.isEmpty)
    holder.value = [6]
    #expect(received.history == [6])
    withExtendedLifetime(observer) {}
  }

  @Test func syncFromAUserHolderPassesEveryElement() {
    let holder = IntHolder(3)
    let received = Recorder<Int>()
    let observer = holder.chain().map { Array(1...$0) }.each().do { received.append($0) }.sync()
    #expect(received.history == [1, 2, 3])
    holder.value = 1
    #expect(received.history == [1, 2, 3, 1])
    withExtendedLifetime(observer) {}
  }

  @Test func endSendsNothingUntilABroadcast() {
    let holder = ValueHolder([1, 2])
    let notifier = IntNotifier()
    let received = Recorder<Int>()
    let observers = [
      holder.chain().each().do { received.append($0) }.end(),
      notifier.chain().map { [$0, $0 * 10] }.each().do { received.append($0) }.end(),
    ]
    #expect(received.history.isEmpty)
    notifier.notify(value: 4)
    holder.value = [7]
    #expect(received.history == [4, 40, 7])
    withExtendedLifetime(observers) {}
  }

  // MARK: - Lifetime

  @Test func invalidatedEachDeliversNothingMore() {
    let notifier = Notifier<[Int]>()
    let received = Recorder<Int>()
    let observer = notifier.chain().each().do { received.append($0) }.end()
    notifier.notify(value: [1, 2])
    observer.invalidate()
    notifier.notify(value: [3, 4])
    #expect(received.history == [1, 2])
  }

  @Test func invalidatingFromAHandlerLetsTheCurrentSequenceFinish() {
    // Documented: invalidating from inside the observer's own chain lets the
    // value being delivered finish the chain's remaining steps. For `each`
    // that value is the whole sequence, so its later elements still arrive.
    let notifier = Notifier<[Int]>()
    let received = Recorder<Int>()
    var observer: Observer?
    observer = notifier.chain().each().do { value in
      received.append(value)
      if value == 2 { observer?.invalidate() }
    }.end()
    notifier.notify(value: [1, 2, 3])
    notifier.notify(value: [4])
    #expect(received.history == [1, 2, 3])
    #expect(observer?.isInvalidated == true)
  }

  @Test func eachStopsQuietlyWhenItsSourceIsReleased() {
    weak var weakSource: ValueHolder<[Int]>?
    weak var weakToken: Token?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let source = ValueHolder([1])
      let token = Token()
      weakSource = source
      weakToken = token
      observer = source.chain().each().do { value in
        withExtendedLifetime(token) {}
        received.append(value)
      }.sync()
      source.value = [2, 3]
    }
    #expect(weakSource == nil)
    #expect(received.history == [1, 2, 3])
    #expect(observer?.isInvalidated == false)
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
  }

  // MARK: - Reentrancy

  @Test func allElementsOfAValuePassBeforeAValueNotifiedDuringThem() {
    let notifier = Notifier<[Int]>()
    let own = Recorder<Int>()
    let other = Recorder<Int>()
    let observers = [
      notifier.chain().each().do { value in
        own.append(value)
        if value == 1 { notifier.notify(value: [9]) }
      }.end(),
      notifier.chain().each().do { other.append($0) }.end(),
    ]
    notifier.notify(value: [1, 2])
    // The nested value waits for [1, 2] to reach every chain; the chain that
    // notified it skips it as its own echo.
    #expect(own.history == [1, 2])
    #expect(other.history == [1, 2, 9])
    withExtendedLifetime(observers) {}
  }

  @Test func elementsFeedingAnotherHolderEachReachItsChains() {
    let batch = Notifier<[Int]>()
    let total = ValueHolder(0)
    let seen = Recorder<Int>()
    let observers = [
      batch.chain().each().do { total.value += $0 }.end(),
      total.chain().do { seen.append($0) }.end(),
    ]
    batch.notify(value: [1, 2, 3])
    #expect(total.value == 6)
    #expect(seen.history == [1, 3, 6])
    withExtendedLifetime(observers) {}
  }
}
