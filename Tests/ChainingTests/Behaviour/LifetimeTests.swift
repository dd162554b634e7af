import Chaining
import Testing

/// A view model that owns its bindings, the usual shape in an app.
private final class Screen {
  let title = ValueHolder("")
  let label = RecordingReceiver<String>()
  private let pool = ObserverPool()

  init(model: ValueHolder<String>) {
    model.chain().sendTo(title).sync().addTo(pool)
    title.chain().map { [weak self] in "\($0) (\(self?.title.value.count ?? 0))" }.sendTo(label).sync()
      .addTo(pool)
  }
}

@Suite struct LifetimeTests {
  @Test func everythingIsReleasedWhenTheUserDropsIt() {
    weak var weakSender: ValueHolder<Int>?
    weak var weakReceiver: RecordingReceiver<Int>?
    weak var weakToken: Token?
    weak var weakObserver: Observer?
    do {
      let sender = ValueHolder(1)
      let receiver = RecordingReceiver<Int>()
      let token = Token()
      let observer = sender.chain().do { _ in _ = token }.map { $0 + 1 }.sendTo(receiver).sync()
      weakSender = sender
      weakReceiver = receiver
      weakToken = token
      weakObserver = observer
      #expect(receiver.history == [2])
    }
    #expect(weakSender == nil)
    #expect(weakReceiver == nil)
    #expect(weakToken == nil)
    #expect(weakObserver == nil)
  }

  @Test func aScreenOwningItsPoolIsReleasedWithItsBindings() {
    let model = ValueHolder("Inbox")
    weak var weakScreen: Screen?
    weak var weakLabel: RecordingReceiver<String>?
    do {
      let screen = Screen(model: model)
      weakScreen = screen
      weakLabel = screen.label
      #expect(screen.label.history == ["Inbox (5)"])
      model.value = "Sent"
      #expect(screen.label.history == ["Inbox (5)", "Sent (4)"])
    }
    #expect(weakScreen == nil)
    #expect(weakLabel == nil)
    model.value = "Drafts"  // no crash, nothing delivered
  }

  @Test func chainWhoseSourceDiedIsInertAndCanStillBeInvalidated() {
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let notifier = Notifier<Int>()
      observer = notifier.chain().do { received.append($0) }.end()
      notifier.notify(value: 1)
    }
    #expect(received.history == [1])
    #expect(observer?.isInvalidated == false)
    observer?.invalidate()
    #expect(observer?.isInvalidated == true)
  }

  @Test func userSenderIsReleasedWhileItsObserverLives() {
    weak var weakNotifier: IntNotifier?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let notifier = IntNotifier()
      weakNotifier = notifier
      observer = notifier.chain().do { received.append($0) }.end()
      notifier.notify(value: 1)
    }
    #expect(weakNotifier == nil)
    #expect(received.history == [1])
    #expect(observer?.isInvalidated == false)
  }

  @Test func receiverDyingMidStreamStopsOnlyItsStep() {
    let holder = ValueHolder(1)
    let after = Recorder<Int>()
    var receiver: RecordingReceiver<Int>? = RecordingReceiver<Int>()
    let observer = holder.chain().sendTo(receiver!).do { after.append($0) }.sync()
    holder.value = 2
    #expect(receiver?.history == [1, 2])
    receiver = nil
    holder.value = 3
    #expect(after.history == [1, 2, 3])
    withExtendedLifetime(observer) {}
  }

  @Test func twoWayBoundHoldersAreReleasedWithTheirObservers() {
    weak var weakA: ValueHolder<Int>?
    weak var weakB: ValueHolder<Int>?
    do {
      let a = ValueHolder(1)
      let b = ValueHolder(2)
      weakA = a
      weakB = b
      let observers = [a.chain().sendTo(b).sync(), b.chain().sendTo(a).end()]
      withExtendedLifetime(observers) {}
    }
    #expect(weakA == nil)
    #expect(weakB == nil)
  }
}
