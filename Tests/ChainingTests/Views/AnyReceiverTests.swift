import Chaining
import Testing

/// A receiver of the user's own that only counts.
private final class Counter: Receivable {
  var total = 0
  func receive(value: Int) { total += value }
}

@Suite struct AnyReceiverTests {
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func anyReceivableArrayOfMixedReceiversAllGetAValue() {
    let holder = ValueHolder(0)
    let notifier = Notifier<Int>()
    let recorder = Recorder<Int>()
    let notified = notifier.chain().do { recorder.append($0) }.end()
    let counter = Counter()
    let recording = RecordingReceiver<Int>()
    let receivers: [any Receivable<Int>] = [holder, notifier, counter, recording, AnyReceiver(counter)]
    for receiver in receivers { receiver.receive(value: 5) }
    #expect(holder.value == 5)
    #expect(recorder.history == [5])
    #expect(counter.total == 10)
    #expect(recording.history == [5])
    notified.invalidate()
  }

  @Test func chainSendsToAnExistentialReceiver() {
    let source = ValueHolder(1)
    let target = ValueHolder(0)
    let sink: any Receivable<Int> = target
    let observer = source.chain().sendTo(sink).sync()
    #expect(target.value == 1)
    source.value = 2
    #expect(target.value == 2)
    observer.invalidate()
  }

  @Test func sendOnlyViewSendsIntoAHolder() {
    let count = ValueHolder(0)
    let input = count.sendOnly
    input.receive(value: 3)
    #expect(count.value == 3)
  }

  @Test func sendOnlyViewIsASendToTarget() {
    let source = Notifier<String>()
    let target = ValueHolder("")
    let input = AnyReceiver(target)
    let observer = source.chain().sendTo(input).end()
    source.notify(value: "tap")
    #expect(target.value == "tap")
    observer.invalidate()
  }

  @Test func sendOnlyViewCannotBeCastBackToItsTarget() {
    let input: AnyObject = ValueHolder(0).sendOnly
    #expect(!(input is ValueHolder<Int>))
    #expect(!(input is any Chainable))
  }

  @Test func sendOnlyViewHoldsItsTargetStrongly() {
    weak var weakHolder: ValueHolder<Int>?
    var input: AnyReceiver<Int>?
    do {
      let holder = ValueHolder(0)
      weakHolder = holder
      input = holder.sendOnly
    }
    #expect(weakHolder != nil)
    input?.receive(value: 4)
    #expect(weakHolder?.value == 4)
    input = nil
    #expect(weakHolder == nil)
  }

  @Test func viewOfAViewSendsStraightToTheTarget() {
    weak var weakInner: AnyReceiver<Int>?
    let holder = ValueHolder(0)
    var outer: AnyReceiver<Int>?
    do {
      let inner = holder.sendOnly
      weakInner = inner
      outer = AnyReceiver(inner)
    }
    #expect(weakInner == nil)
    outer?.receive(value: 9)
    #expect(holder.value == 9)
  }

  @Test func sendOnlyViewCannotSubscribeOrRead() throws {
    let failing = try CompileCheck.typecheck(
      """
      let input = ValueHolder(0).sendOnly
      let observer = input.chain().end()
      """
    )
    #expect(!failing.succeeded)
    let reading = try CompileCheck.typecheck(
      """
      let input = ValueHolder(0).sendOnly
      print(input.value)
      """
    )
    #expect(!reading.succeeded)
    let control = try CompileCheck.typecheck(
      """
      let input = ValueHolder(0).sendOnly
      input.receive(value: 1)
      """,
      warningsAsErrors: true
    )
    #expect(control.succeeded, "\(control.diagnostics)")
  }

  @Test @MainActor func mainActorReceivableHasAPrimaryAssociatedType() {
    let label: any MainActorReceivable<String> = MainLabel()
    label.receive(value: "Inbox")
    #expect((label as? MainLabel)?.text == "Inbox")
  }

  @Test @MainActor func chainSendsToAnExistentialMainActorReceiver() {
    let title = ValueHolder("Inbox")
    let label = MainLabel()
    let sink: any MainActorReceivable<String> = label
    let observer = title.chain().sendTo(sink).sync()
    #expect(label.text == "Inbox")
    title.value = "Sent"
    #expect(label.text == "Sent")
    observer.invalidate()
  }
}

@MainActor
private final class MainLabel: MainActorReceivable {
  var text = ""
  func receive(value: String) { text = value }
}
