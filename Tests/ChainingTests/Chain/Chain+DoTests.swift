import Chaining
import Testing

@Suite struct ChainDoTests {
  @Test func doRunsItsClosureAndPassesTheValueOn() {
    let notifier = Notifier<Int>()
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    let observer = notifier.chain().do { first.append($0) }.do { second.append($0 * 2) }.end()
    notifier.notify(value: 3)
    #expect(first.history == [3])
    #expect(second.history == [6])
    withExtendedLifetime(observer) {}
  }

  @Test func doRunsForTheSyncedValue() {
    let holder = ValueHolder("a")
    let received = Recorder<String>()
    let observer = holder.chain().do { received.append($0) }.sync()
    #expect(received.history == ["a"])
    withExtendedLifetime(observer) {}
  }

  @Test func doClosureIsReleasedWhenTheObserverIsInvalidated() {
    weak var weakToken: Token?
    let notifier = Notifier<Int>()
    var observer: Observer?
    do {
      let token = Token()
      weakToken = token
      observer = notifier.chain().do { _ in _ = token }.end()
    }
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
    withExtendedLifetime(observer) {}
  }
}
