import Chaining
import Dispatch
import Testing

/// A main-actor receiver, as a view would be.
@MainActor
private final class TitleLabel: MainActorReceivable {
  var text = ""
  var received: [String] = []
  private var waiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?

  func receive(value: String) {
    text = value
    received.append(value)
    if let waiter, received.count >= waiter.count {
      self.waiter = nil
      waiter.continuation.resume()
    }
  }

  /// Returns once `count` values in total have been received.
  func waitForValues(_ count: Int) async {
    if received.count >= count { return }
    await withCheckedContinuation { waiter = (count, $0) }
  }
}

/// Returns after the main queue has run every block queued before this call.
private func flushMainQueue() async {
  await withCheckedContinuation { continuation in
    DispatchQueue.main.async { continuation.resume() }
  }
}

@Suite(.serialized) @MainActor struct ChainMainActorTests {
  @Test func valueSentOnTheMainActorIsDeliveredAtOnce() {
    let title = ValueHolder("Inbox")
    let label = TitleLabel()
    let observer = title.chain().sendTo(label).sync()
    #expect(label.text == "Inbox")
    title.value = "Sent"
    #expect(label.text == "Sent")
    withExtendedLifetime(observer) {}
  }

  @Test func valuesSentFromAnotherThreadArriveOnTheMainActorInOrder() async {
    let count = ValueHolder(0)
    let label = TitleLabel()
    let observer = count.chain().map { "\($0)" }.sendTo(label).sync()
    spawn {
      for value in 1...100 { count.value = value }
    }.wait()
    await label.waitForValues(101)
    #expect(label.received == (0...100).map { "\($0)" })
    withExtendedLifetime(observer) {}
  }

  @Test func doOnMainActorRunsItsClosureOnTheMainActor() async {
    let notifier = Notifier<Int>()
    let label = TitleLabel()
    let observer = notifier.chain().doOnMainActor { value in
      MainActor.assertIsolated()
      label.receive(value: "got \(value)")
    }.end()
    spawn { notifier.notify(value: 7) }.wait()
    await label.waitForValues(1)
    #expect(label.received == ["got 7"])
    withExtendedLifetime(observer) {}
  }

  @Test func laterStepsRunOnTheMainActorToo() async {
    let notifier = Notifier<Int>()
    let label = TitleLabel()
    let observer = notifier.chain().doOnMainActor { _ in }.map { "after \($0)" }.sendTo(label).end()
    spawn { notifier.notify(value: 3) }.wait()
    await label.waitForValues(1)
    #expect(label.received == ["after 3"])
    withExtendedLifetime(observer) {}
  }

  @Test func queuedValuesAreNotDeliveredAfterInvalidate() async {
    let notifier = Notifier<Int>()
    let label = TitleLabel()
    let observer = notifier.chain().map { "\($0)" }.sendTo(label).end()
    // Queued on the main queue; they cannot run before this test awaits.
    spawn {
      for value in 1...10 { notifier.notify(value: value) }
    }.wait()
    observer.invalidate()
    await flushMainQueue()
    #expect(label.received.isEmpty)
  }

  @Test func aValueOnTheMainActorWaitsForEarlierQueuedValues() async {
    let holder = ValueHolder(0)
    let label = TitleLabel()
    let observer = holder.chain().map { "\($0)" }.sendTo(label).end()
    spawn { holder.value = 1 }.wait()
    // 1 is still queued: 2, sent on the main actor, must not overtake it.
    holder.value = 2
    #expect(label.received.isEmpty)
    await label.waitForValues(2)
    #expect(label.received == ["1", "2"])
    withExtendedLifetime(observer) {}
  }

  @Test func receiverIsHeldWeakly() {
    let title = ValueHolder("a")
    weak var weakLabel: TitleLabel?
    var observer: Observer?
    do {
      let label = TitleLabel()
      weakLabel = label
      observer = title.chain().sendTo(label).sync()
    }
    #expect(weakLabel == nil)
    title.value = "b"  // no crash, nothing to deliver to
    #expect(observer?.isInvalidated == false)
  }
}
