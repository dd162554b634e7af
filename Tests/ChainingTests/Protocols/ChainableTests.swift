import Chaining
import Testing

/// A source that is only `Chainable`: chains can start from it, but it sends nothing.
private final class Silent: Chainable {
  typealias ChainValue = Int
}

@Suite struct ChainableTests {
  @Test func chainFromAPlainChainableIsInert() {
    let received = Recorder<Int>()
    let observer = Silent().chain().do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    #expect(!observer.isInvalidated)
  }

  @Test func observerDoesNotKeepItsSourceAlive() {
    weak var weakHolder: ValueHolder<Int>?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let holder = ValueHolder(1)
      weakHolder = holder
      observer = holder.chain().do { received.append($0) }.sync()
    }
    #expect(weakHolder == nil)
    #expect(observer?.isInvalidated == false)
    observer?.invalidate()
    #expect(received.history == [1])
  }

  @Test func retainedSourceLivesUntilTheObserverIsInvalidated() {
    weak var weakHolder: ValueHolder<Int>?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let holder = ValueHolder(1)
      weakHolder = holder
      observer = holder.retain().chain().do { received.append($0) }.sync()
    }
    #expect(weakHolder != nil)
    weakHolder?.value = 2
    #expect(received.history == [1, 2])
    observer?.invalidate()
    #expect(weakHolder == nil)
    withExtendedLifetime(observer) {}
  }

  @Test func retainedSourceIsReleasedWithTheObserver() {
    weak var weakNotifier: Notifier<Int>?
    var observer: Observer? = {
      let notifier = Notifier<Int>()
      weakNotifier = notifier
      return notifier.retain().chain().do { _ in }.end()
    }()
    #expect(weakNotifier != nil)
    observer = nil
    #expect(weakNotifier == nil)
    withExtendedLifetime(observer) {}
  }
}
