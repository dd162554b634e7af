import Chaining
import Testing

/// `map`, `filter` and `compactMap` steps from the source on are composed
/// into one function; these tests walk every way into and out of that
/// composition, checking values and their order.
@Suite struct ChainComposedStepsTests {
  /// Sends 1 through 6 through `notifier`.
  private func notifyOneToSix(_ notifier: Notifier<Int>) {
    for value in 1...6 { notifier.notify(value: value) }
  }

  @Test func filterThenMap() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    let observer = notifier.chain().filter { $0.isMultiple(of: 2) }.map { "v\($0)" }
      .do { received.append($0) }.end()
    notifyOneToSix(notifier)
    #expect(received.history == ["v2", "v4", "v6"])
    withExtendedLifetime(observer) {}
  }

  @Test func filterThenFilter() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().filter { $0 > 1 }.filter { $0 < 5 }
      .do { received.append($0) }.end()
    notifyOneToSix(notifier)
    #expect(received.history == [2, 3, 4])
    withExtendedLifetime(observer) {}
  }

  @Test func filterThenCompactMap() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().filter { $0 > 2 }.compactMap { $0 == 4 ? nil : $0 * 10 }
      .do { received.append($0) }.end()
    notifyOneToSix(notifier)
    #expect(received.history == [30, 50, 60])
    withExtendedLifetime(observer) {}
  }

  @Test func compactMapFirstThenMapAndFilter() {
    let notifier = Notifier<Int>()
    let first = Recorder<String>()
    let then = Recorder<String>()
    let one = notifier.chain().compactMap { $0.isMultiple(of: 3) ? nil : String($0) }
      .do { first.append($0) }.end()
    let two = notifier.chain().compactMap { $0.isMultiple(of: 3) ? nil : String($0) }
      .map { $0 + "!" }.filter { $0 != "4!" }
      .do { then.append($0) }.end()
    notifyOneToSix(notifier)
    #expect(first.history == ["1", "2", "4", "5"])
    #expect(then.history == ["1!", "2!", "5!"])
    _ = (one, two)
  }

  @Test func mapThenCompactMap() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().map { $0 * 2 }.compactMap { $0 > 6 ? $0 : nil }
      .do { received.append($0) }.end()
    notifyOneToSix(notifier)
    #expect(received.history == [8, 10, 12])
    withExtendedLifetime(observer) {}
  }

  @Test func mapThenFilterThenFilterThenMap() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    let observer = notifier.chain().map { $0 * 3 }.filter { $0 > 3 }.filter { $0 < 18 }
      .map { "\($0)" }
      .do { received.append($0) }.end()
    notifyOneToSix(notifier)
    #expect(received.history == ["6", "9", "12", "15"])
    withExtendedLifetime(observer) {}
  }

  @Test func stepsAfterAnotherKindOfStep() {
    let notifier = Notifier<Int>()
    let seen = Recorder<Int>()
    let received = Recorder<String>()
    let observer = notifier.chain().do { seen.append($0) }
      .map { $0 * 2 }.filter { $0 != 4 }.compactMap { $0 > 10 ? nil : "\($0)" }
      .do { received.append($0) }.end()
    notifyOneToSix(notifier)
    #expect(received.history == ["2", "6", "8", "10"])
    #expect(seen.history == [1, 2, 3, 4, 5, 6])
    withExtendedLifetime(observer) {}
  }

  @Test func composedStepsRunWhenNothingFollowsThem() {
    let notifier = Notifier<Int>()
    let filtered = Recorder<Int>()
    let compacted = Recorder<Int>()
    let one = notifier.chain().filter { $0 > 4 }.filter { value in
      filtered.append(value)
      return true
    }.end()
    let two = notifier.chain().map { $0 * 10 }.compactMap { value -> Int? in
      compacted.append(value)
      return nil
    }.end()
    notifyOneToSix(notifier)
    #expect(filtered.history == [5, 6])
    #expect(compacted.history == [10, 20, 30, 40, 50, 60])
    _ = (one, two)
  }

  @Test func syncPassesTheFetchedValueThroughComposedSteps() {
    let holder = ValueHolder(3)
    let filtered = Recorder<Int>()
    let compacted = Recorder<String>()
    let one = holder.chain().filter { $0 > 2 }.do { filtered.append($0) }.sync()
    let two = holder.chain().filter { $0 != 4 }.compactMap { $0 > 1 ? "\($0)" : nil }
      .do { compacted.append($0) }.sync()
    holder.value = 1
    holder.value = 4
    holder.value = 5
    #expect(filtered.history == [3, 4, 5])
    #expect(compacted.history == ["3", "5"])
    _ = (one, two)
  }

  @Test func filterDropsTheFetchedValueOnSync() {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = holder.chain().filter { $0 > 2 }.do { received.append($0) }.sync()
    #expect(received.history.isEmpty)
    holder.value = 3
    #expect(received.history == [3])
    withExtendedLifetime(observer) {}
  }

  @Test func composedClosuresAreReleasedWithTheObserver() {
    weak var weakFilter: Token?
    weak var weakCompactMap: Token?
    var observer: Observer?
    do {
      let filterToken = Token()
      let compactMapToken = Token()
      weakFilter = filterToken
      weakCompactMap = compactMapToken
      observer = Notifier<Int>().chain()
        .filter { _ in
          withExtendedLifetime(filterToken) {}
          return true
        }
        .compactMap { value -> Int? in
          withExtendedLifetime(compactMapToken) {}
          return value
        }
        .do { _ in }.end()
    }
    #expect(weakFilter != nil && weakCompactMap != nil)
    observer?.invalidate()
    #expect(weakFilter == nil)
    #expect(weakCompactMap == nil)
    withExtendedLifetime(observer) {}
  }
}
