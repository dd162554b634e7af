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
    _ = observer
  }

  @Test func mapTransformsTheSyncedValue() {
    let holder = ValueHolder(21)
    let received = Recorder<Int>()
    let observer = holder.chain().map { $0 * 2 }.do { received.append($0) }.sync()
    #expect(received.history == [42])
    _ = observer
  }

  @Test func mapCanChangeTheTypeMoreThanOnce() {
    let holder = ValueHolder(3)
    let received = Recorder<Bool>()
    let observer = holder.chain().map { String(repeating: "x", count: $0) }.map { $0.count > 2 }
      .do { received.append($0) }.sync()
    holder.value = 1
    #expect(received.history == [true, false])
    _ = observer
  }

  @Test func mapClosureIsReleasedWithTheObserver() {
    weak var weakToken: Token?
    var observer: Observer?
    do {
      let token = Token()
      weakToken = token
      observer = Notifier<Int>().chain().map { value -> Int in
        _ = token
        return value
      }.end()
    }
    #expect(weakToken != nil)
    observer = nil
    #expect(weakToken == nil)
    _ = observer
  }
}
