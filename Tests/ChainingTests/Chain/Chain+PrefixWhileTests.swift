import Chaining
import Testing

/// `prefix(while:)`, `first(where:)`, `drop(while:)` and
/// `removeDuplicates(by:)`, against the sequences of Combine's own
/// documentation examples for the operators of the same names (RxSwift's
/// `take(while:)`, `skip(while:)` and `distinctUntilChanged(_:)` give the
/// same).
@Suite struct ChainPrefixWhileTests {
  // MARK: - prefix(while:)

  @Test func prefixWhilePassesValuesUntilTheFirstRejectedOneThenEnds() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let tested = Recorder<Int>()
    let observer = notifier.chain().prefix { value in
      tested.append(value)
      return value < 5
    }.do { received.append($0) }.end()
    for value in 0...10 { notifier.notify(value: value) }
    #expect(received.history == [0, 1, 2, 3, 4])
    #expect(tested.history == [0, 1, 2, 3, 4, 5])  // never asked again
    #expect(observer.isInvalidated)
    #expect(notifier.observerCount == 0)
  }

  @Test func prefixWhileEndsAtOnceWhenTheSyncedValueIsRejected() {
    let holder = ValueHolder(7)
    let received = Recorder<Int>()
    let observer = holder.chain().prefix { $0 < 5 }.do { received.append($0) }.sync()
    #expect(received.history == [])
    #expect(observer.isInvalidated)
    holder.value = 1
    #expect(received.history == [])
  }

  @Test func prefixWhileReleasesItsClosureWhenItEnds() {
    let notifier = Notifier<Int>()
    weak var weakToken: Token?
    let observer: Observer
    do {
      let token = Token()
      weakToken = token
      observer = notifier.chain().prefix { _ in withExtendedLifetime(token) { false } }.end()
    }
    #expect(weakToken != nil)
    notifier.notify(value: 1)
    #expect(observer.isInvalidated)
    #expect(weakToken == nil)
  }

  // MARK: - first(where:)

  @Test func firstWherePassesTheFirstMatchingValueThenEnds() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let tested = Recorder<Int>()
    let observer = notifier.chain().first { value in
      tested.append(value)
      return value > 0
    }.do { received.append($0) }.end()
    for value in [-10, -5, 0, 5, 10] { notifier.notify(value: value) }
    #expect(received.history == [5])
    #expect(tested.history == [-10, -5, 0, 5])
    #expect(observer.isInvalidated)
  }

  @Test func firstWhereTakesAMatchingSyncedValue() {
    let holder = ValueHolder("ready")
    let received = Recorder<String>()
    let observer = holder.chain().first { !$0.isEmpty }.do { received.append($0) }.sync()
    holder.value = "later"
    #expect(received.history == ["ready"])
    #expect(observer.isInvalidated)
  }

  @Test func firstWhereWaitsPastANonMatchingSyncedValue() {
    let holder = ValueHolder("")
    let received = Recorder<String>()
    let observer = holder.chain().first { !$0.isEmpty }.do { received.append($0) }.sync()
    #expect(!observer.isInvalidated)
    holder.value = "typed"
    holder.value = "more"
    #expect(received.history == ["typed"])
    #expect(observer.isInvalidated)
  }

  // MARK: - drop(while:)

  @Test func dropWhileSkipsUntilTheFirstRejectedValueThenPassesEverything() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let tested = Recorder<Int>()
    let observer = notifier.chain().drop { value in
      tested.append(value)
      return value <= 0
    }.do { received.append($0) }.end()
    for value in [-40, -10, 0, 10, 0, 100, -5] { notifier.notify(value: value) }
    #expect(received.history == [10, 0, 100, -5])
    #expect(tested.history == [-40, -10, 0, 10])  // never asked again
    withExtendedLifetime(observer) {}
  }

  @Test func dropWhileTestsTheSyncedValue() {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = holder.chain().drop { $0 == 0 }.do { received.append($0) }.sync()
    #expect(received.history == [])
    holder.value = 2
    holder.value = 0
    #expect(received.history == [2, 0])
    withExtendedLifetime(observer) {}
  }

  // MARK: - removeDuplicates(by:)

  struct Point: Equatable {
    let x: Int
    let y: Int
  }

  @Test func removeDuplicatesByComparesWithTheLastValuePassedOn() {
    let notifier = Notifier<Point>()
    let received = Recorder<Point>()
    let observer = notifier.chain()
      .removeDuplicates { previous, current in previous.x == current.x }
      .do { received.append($0) }
      .end()
    for (x, y) in [(0, 0), (0, 1), (1, 1), (2, 1)] { notifier.notify(value: Point(x: x, y: y)) }
    #expect(received.history == [Point(x: 0, y: 0), Point(x: 1, y: 1), Point(x: 2, y: 1)])
    withExtendedLifetime(observer) {}
  }

  @Test func aDroppedValueIsNotTheNextComparison() {
    // Each value is compared with the last one passed on, not the last
    // one received: 2 is dropped as close to 1, and 3 is then compared
    // with 1, and passes.
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().removeDuplicates { abs($1 - $0) <= 1 }.do { received.append($0) }.end()
    for value in [1, 2, 3, 10, 11, 13] { notifier.notify(value: value) }
    #expect(received.history == [1, 3, 10, 13])
    withExtendedLifetime(observer) {}
  }

  @Test func removeDuplicatesByPassesTheSyncedValueFirst() {
    let holder = ValueHolder("a")
    let received = Recorder<String>()
    let observer = holder.chain().removeDuplicates { $0.lowercased() == $1.lowercased() }.do { received.append($0) }
      .sync()
    holder.value = "A"
    holder.value = "b"
    #expect(received.history == ["a", "b"])
    withExtendedLifetime(observer) {}
  }
}
