import Chaining
import Testing

/// A receiver that is nothing but `Receivable`.
private final class Sink: Receivable {
  var values: [String] = []
  func receive(value: String) { values.append(value) }
}

@Suite struct ReceivableTests {
  @Test func anyReceivableClassCanBeTheTargetOfSendTo() {
    let sink = Sink()
    let notifier = Notifier<String>()
    let observer = notifier.chain().sendTo(sink).end()
    notifier.notify(value: "a")
    notifier.notify(value: "b")
    #expect(sink.values == ["a", "b"])
    withExtendedLifetime(observer) {}
  }

  @Test func libraryHoldersAreReceivable() {
    let source = ValueHolder(1)
    let target = ValueHolder(0)
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observers = [
      source.chain().sendTo(target).sync(),
      target.chain().sendTo(notifier).end(),
      notifier.chain().do { received.append($0) }.end(),
    ]
    source.value = 2
    #expect(target.value == 2)
    #expect(received.history == [2])
    withExtendedLifetime(observers) {}
  }
}
