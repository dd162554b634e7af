import Chaining
import Testing

@Suite struct ChainGuardTests {
  /// `guard` and its other name, `filter`: each test runs with both.
  enum Spelling: String, CaseIterable, CustomTestStringConvertible {
    case `guard`
    case filter

    var testDescription: String { rawValue }

    func apply<Source>(
      _ chain: consuming Chain<Int, Source>,
      _ isIncluded: @escaping (Int) -> Bool
    ) -> Chain<Int, Source> {
      switch self {
      case .guard: chain.guard(isIncluded)
      case .filter: chain.filter(isIncluded)
      }
    }
  }

  // MARK: - Flow

  @Test(arguments: Spelling.allCases)
  func guardPassesOnlyValuesThatPass(_ spelling: Spelling) {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = spelling.apply(notifier.chain()) { $0 % 2 == 0 }.do { received.append($0) }.end()
    for value in 1...6 { notifier.notify(value: value) }
    #expect(received.history == [2, 4, 6])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func guardIsAskedOnceAboutEveryValueInOrder(_ spelling: Spelling) {
    let notifier = Notifier<Int>()
    let asked = Recorder<Int>()
    let observer = spelling.apply(notifier.chain()) { value in
      asked.append(value)
      return value > 1
    }.end()
    notifier.notify(value: 3)
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(asked.history == [3, 1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func stepsAfterAFailedGuardDoNotRun(_ spelling: Spelling) {
    let notifier = Notifier<Int>()
    let before = Recorder<Int>()
    let after = Recorder<String>()
    let upstream = notifier.chain().do { before.append($0) }
    let observer = spelling.apply(upstream) { $0 > 0 }.map { "+\($0)" }.do { after.append($0) }.end()
    notifier.notify(value: -1)
    notifier.notify(value: 5)
    notifier.notify(value: 0)
    #expect(before.history == [-1, 5, 0])
    #expect(after.history == ["+5"])
    withExtendedLifetime(observer) {}
  }

  // MARK: - sync and end

  @Test(arguments: Spelling.allCases)
  func syncedValueThatPassesTheGuardIsDelivered(_ spelling: Spelling) {
    let holder = ValueHolder(2)
    let received = Recorder<Int>()
    let observer = spelling.apply(holder.chain()) { $0 % 2 == 0 }.do { received.append($0) }.sync()
    #expect(received.history == [2])
    holder.value = 3
    holder.value = 4
    #expect(received.history == [2, 4])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func syncedValueThatFailsTheGuardIsNotDelivered(_ spelling: Spelling) {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = spelling.apply(holder.chain()) { $0 % 2 == 0 }.do { received.append($0) }.sync()
    #expect(received.history.isEmpty)
    holder.value = 2
    #expect(received.history == [2])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func syncFromAUserHolderRunsItsValueThroughTheGuard(_ spelling: Spelling) {
    let failing = IntHolder(3)
    let passing = IntHolder(4)
    let received = Recorder<Int>()
    let observers = [
      spelling.apply(failing.chain()) { $0 % 2 == 0 }.do { received.append($0) }.sync(),
      spelling.apply(passing.chain()) { $0 % 2 == 0 }.do { received.append($0 * 100) }.sync(),
    ]
    #expect(received.history == [400])
    failing.value = 6
    #expect(received.history == [400, 6])
    withExtendedLifetime(observers) {}
  }

  @Test(arguments: Spelling.allCases)
  func endOnAFetchableSourceDeliversNothingUntilAChange(_ spelling: Spelling) {
    let holder = ValueHolder(2)
    let received = Recorder<Int>()
    let observer = spelling.apply(holder.chain()) { $0 % 2 == 0 }.do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    holder.value = 4
    #expect(received.history == [4])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: Spelling.allCases)
  func endOnANonFetchableSourceDeliversOnlyBroadcastsThatPass(_ spelling: Spelling) {
    let notifier = IntNotifier()
    let received = Recorder<Int>()
    let observer = spelling.apply(notifier.chain()) { $0 % 2 == 0 }.do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    notifier.notify(value: 3)
    notifier.notify(value: 8)
    #expect(received.history == [8])
    withExtendedLifetime(observer) {}
  }

  // MARK: - Lifetime

  @Test(arguments: Spelling.allCases)
  func invalidatedGuardIsNeitherAskedNorDelivers(_ spelling: Spelling) {
    let notifier = Notifier<Int>()
    let asked = Recorder<Int>()
    let received = Recorder<Int>()
    let observer = spelling.apply(notifier.chain()) { value in
      asked.append(value)
      return true
    }.do { received.append($0) }.end()
    notifier.notify(value: 1)
    observer.invalidate()
    notifier.notify(value: 2)
    notifier.notify(value: 3)
    #expect(asked.history == [1])
    #expect(received.history == [1])
    #expect(observer.isInvalidated)
  }

  @Test(arguments: Spelling.allCases)
  func guardStopsQuietlyWhenItsSourceIsReleased(_ spelling: Spelling) {
    weak var weakSource: ValueHolder<Int>?
    weak var weakToken: Token?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let source = ValueHolder(1)
      let token = Token()
      weakSource = source
      weakToken = token
      observer = spelling.apply(source.chain()) { value in
        withExtendedLifetime(token) {}
        return value > 0
      }.do { received.append($0) }.sync()
      source.value = -2
      source.value = 3
    }
    #expect(weakSource == nil)
    #expect(received.history == [1, 3])
    #expect(observer?.isInvalidated == false)
    // The observer still holds the guard's closure, until it is invalidated.
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
    #expect(received.history == [1, 3])
  }

  @Test(arguments: Spelling.allCases)
  func guardClosureIsReleasedWithTheObserver(_ spelling: Spelling) {
    let notifier = Notifier<Int>()
    weak var weakToken: Token?
    var observer: Observer?
    do {
      let token = Token()
      weakToken = token
      observer = spelling.apply(notifier.chain()) { value in
        withExtendedLifetime(token) {}
        return value > 0
      }.end()
    }
    #expect(weakToken != nil)
    observer = nil
    #expect(weakToken == nil)
    withExtendedLifetime(observer) {}
  }

  // MARK: - Reentrancy

  @Test(arguments: Spelling.allCases)
  func guardInAnotherChainSeesAValueAHandlerWroteBack(_ spelling: Spelling) {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observers = [
      holder.chain().do { if $0 == 1 { holder.value = 12 } }.end(),
      spelling.apply(holder.chain()) { $0 > 10 }.do { received.append($0) }.end(),
    ]
    holder.value = 1
    #expect(holder.value == 12)
    #expect(received.history == [12])
    withExtendedLifetime(observers) {}
  }

  @Test(arguments: Spelling.allCases)
  func guardedHandlerWritingItsOwnHolderDoesNotSeeItsWrite(_ spelling: Spelling) {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = spelling.apply(holder.chain()) { $0 % 2 == 1 }.do { value in
      received.append(value)
      if value < 5 { holder.value = value + 2 }
    }.end()
    holder.value = 1
    // The write-back of 3 passes the guard, but it is an echo of this chain.
    #expect(received.history == [1])
    #expect(holder.value == 3)
    withExtendedLifetime(observer) {}
  }
}
