import Chaining
import Testing

@Suite struct ChainMapTests {
  @Test func mapTransformsEachBroadcastValue() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    let observer = notifier.chain().map { "#\($0)" }.do { received.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == ["#1", "#2"])
    withExtendedLifetime(observer) {}
  }

  @Test func mapTransformsTheSyncedValue() {
    let holder = ValueHolder(21)
    let received = Recorder<Int>()
    let observer = holder.chain().map { $0 * 2 }.do { received.append($0) }.sync()
    #expect(received.history == [42])
    withExtendedLifetime(observer) {}
  }

  @Test func mapCanChangeTheTypeMoreThanOnce() {
    let holder = ValueHolder(3)
    let received = Recorder<Bool>()
    let observer = holder.chain().map { String(repeating: "x", count: $0) }.map { $0.count > 2 }
      .do { received.append($0) }.sync()
    holder.value = 1
    #expect(received.history == [true, false])
    withExtendedLifetime(observer) {}
  }

  @Test func consecutiveMapsApplyInOrder() {
    let notifier = Notifier<String>()
    let received = Recorder<String>()
    let observer = notifier.chain().map { $0 + "a" }.map { $0 + "b" }.map { $0 + "c" }
      .do { received.append($0) }.end()
    notifier.notify(value: "x")
    #expect(received.history == ["xabc"])
    withExtendedLifetime(observer) {}
  }

  @Test func mapsBeforeAndAfterOtherStepsApplyInOrder() {
    let holder = ValueHolder("x")
    let received = Recorder<String>()
    let observer = holder.chain().map { $0 + "a" }.map { $0 + "b" }
      .filter { $0.count < 4 }
      .map { $0 + "c" }.map { $0 + "d" }
      .do { received.append($0) }.sync()
    holder.value = "yy"
    holder.value = "z"
    #expect(received.history == ["xabcd", "zabcd"])
    withExtendedLifetime(observer) {}
  }

  @Test func mapsRunWhenNothingFollowsThem() {
    let notifier = Notifier<Int>()
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    let one = notifier.chain().map { first.append($0) }.end()
    let two = notifier.chain().map { $0 * 10 }.map { second.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(first.history == [1, 2])
    #expect(second.history == [10, 20])
    _ = (one, two)
  }

  @Test func mapsOnEachSideOfAMergeApply() {
    let first = Notifier<Int>()
    let second = Notifier<Int>()
    let received = Recorder<String>()
    let observer = first.chain().map { $0 * 2 }.map { "a\($0)" }
      .merge(second.chain().map { $0 + 1 }.map { "b\($0)" })
      .map { $0 + "!" }
      .do { received.append($0) }.end()
    first.notify(value: 1)
    second.notify(value: 1)
    #expect(received.history == ["a2!", "b2!"])
    withExtendedLifetime(observer) {}
  }

  @Test func mapClosureIsReleasedWithTheObserver() {
    weak var weakToken: Token?
    var observer: Observer?
    do {
      let token = Token()
      weakToken = token
      observer = Notifier<Int>().chain().map { value -> Int in
        withExtendedLifetime(token) {}
        return value
      }.end()
    }
    #expect(weakToken != nil)
    observer = nil
    #expect(weakToken == nil)
    withExtendedLifetime(observer) {}
  }

  @Test func consecutiveMapClosuresAreReleasedWithTheObserver() {
    weak var weakFirst: Token?
    weak var weakSecond: Token?
    var observer: Observer?
    do {
      let first = Token()
      let second = Token()
      weakFirst = first
      weakSecond = second
      observer = Notifier<Int>().chain()
        .map { value -> Int in
          withExtendedLifetime(first) {}
          return value
        }
        .map { value -> Int in
          withExtendedLifetime(second) {}
          return value
        }
        .do { _ in }.end()
    }
    #expect(weakFirst != nil && weakSecond != nil)
    observer?.invalidate()
    #expect(weakFirst == nil)
    #expect(weakSecond == nil)
    withExtendedLifetime(observer) {}
  }
}
