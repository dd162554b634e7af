import Chaining
import Testing

@Suite struct NotifierTests {
  @Test func notifyBroadcastsTheValue() {
    let notifier = Notifier<String>()
    let received = Recorder<String>()
    let observer = notifier.chain().do { received.append($0) }.end()
    notifier.notify(value: "x")
    notifier.notify(value: "x")
    #expect(received.history == ["x", "x"])
    withExtendedLifetime(observer) {}
  }

  @Test func voidNotifierNotifiesWithoutAValue() {
    let notifier = Notifier<Void>()
    let count = Recorder<Int>()
    let observer = notifier.chain().do { count.append(1) }.end()
    notifier.notify()
    notifier.notify()
    #expect(count.count == 2)
    withExtendedLifetime(observer) {}
  }

  @Test func receivingBroadcastsAgain() {
    let source = Notifier<Int>()
    let relay = Notifier<Int>()
    let received = Recorder<Int>()
    let observers = [
      source.chain().sendTo(relay).end(),
      relay.chain().do { received.append($0) }.end(),
    ]
    source.notify(value: 1)
    relay.receive(value: 2)
    #expect(received.history == [1, 2])
    withExtendedLifetime(observers) {}
  }

  @Test func notifyWithoutChainsDoesNothing() {
    let notifier = Notifier<Int>()
    notifier.notify(value: 1)
    let received = Recorder<Int>()
    let observer = notifier.chain().do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    withExtendedLifetime(observer) {}
  }
}
