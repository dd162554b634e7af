import Chaining
import Testing

@Suite struct ChainReplaceTests {
  // MARK: - Flow

  @Test func replaceSendsTheConstantForEveryValue() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    let observer = notifier.chain().replace("tick").do { received.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    notifier.notify(value: 2)
    #expect(received.history == ["tick", "tick", "tick"])
    withExtendedLifetime(observer) {}
  }

  @Test func replaceGivesVoidValuesAType() {
    let tapped = Notifier<Void>()
    let received = Recorder<Int>()
    let observer = tapped.chain().replace(42).do { received.append($0) }.end()
    tapped.notify()
    tapped.notify()
    #expect(received.history == [42, 42])
    withExtendedLifetime(observer) {}
  }

  @Test func replaceSendsTheSameInstanceEveryTime() {
    let notifier = Notifier<Int>()
    let token = Token()
    let received = Recorder<Token>()
    let observer = notifier.chain().replace(token).do { received.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.count == 2)
    #expect(received.history.allSatisfy { $0 === token })
    withExtendedLifetime(observer) {}
  }

  @Test func replaceWithVoidSendsOneVoidPerValue() {
    let notifier = Notifier<String>()
    let received = Recorder<Void>()
    let observer = notifier.chain().replaceWithVoid().do { received.append($0) }.end()
    notifier.notify(value: "a")
    notifier.notify(value: "b")
    notifier.notify(value: "b")
    #expect(received.count == 3)
    withExtendedLifetime(observer) {}
  }

  // MARK: - sync and end

  @Test func syncSendsTheReplacementForTheCurrentValue() {
    let holder = ValueHolder(1)
    let received = Recorder<String>()
    let observer = holder.chain().replace("changed").do { received.append($0) }.sync()
    #expect(received.history == ["changed"])
    holder.value = 2
    #expect(received.history == ["changed", "changed"])
    withExtendedLifetime(observer) {}
  }

  @Test func replaceWithVoidSendsOnceOnSyncFromAUserHolder() {
    let holder = IntHolder(3)
    let received = Recorder<Void>()
    let observer = holder.chain().replaceWithVoid().do { received.append($0) }.sync()
    #expect(received.count == 1)
    holder.value = 4
    #expect(received.count == 2)
    withExtendedLifetime(observer) {}
  }

  @Test func replaceSendsOnceOnSyncFromAUserHolder() {
    let holder = IntHolder(3)
    let received = Recorder<String>()
    let observer = holder.chain().replace("set").do { received.append($0) }.sync()
    #expect(received.history == ["set"])
    holder.value = 5
    #expect(received.history == ["set", "set"])
    withExtendedLifetime(observer) {}
  }

  @Test func endOnAFetchableSourceSendsNothingUntilAChange() {
    let holder = ValueHolder("Ann")
    let replaced = Recorder<Int>()
    let voided = Recorder<Void>()
    let observers = [
      holder.chain().replace(1).do { replaced.append($0) }.end(),
      holder.chain().replaceWithVoid().do { voided.append($0) }.end(),
    ]
    #expect(replaced.history.isEmpty)
    #expect(voided.count == 0)
    holder.value = "Bob"
    #expect(replaced.history == [1])
    #expect(voided.count == 1)
    withExtendedLifetime(observers) {}
  }

  @Test func endOnANonFetchableSourceSendsOnlyOnBroadcasts() {
    let notifier = IntNotifier()
    let replaced = Recorder<String>()
    let voided = Recorder<Void>()
    let observers = [
      notifier.chain().replace("x").do { replaced.append($0) }.end(),
      notifier.chain().replaceWithVoid().do { voided.append($0) }.end(),
    ]
    #expect(replaced.history.isEmpty)
    #expect(voided.count == 0)
    notifier.notify(value: 1)
    notifier.notify(value: 1)
    #expect(replaced.history == ["x", "x"])
    #expect(voided.count == 2)
    withExtendedLifetime(observers) {}
  }

  // MARK: - Lifetime

  @Test func invalidatedReplaceSendsNothingMore() {
    let notifier = Notifier<Int>()
    let replaced = Recorder<String>()
    let voided = Recorder<Void>()
    let observers = [
      notifier.chain().replace("x").do { replaced.append($0) }.end(),
      notifier.chain().replaceWithVoid().do { voided.append($0) }.end(),
    ]
    notifier.notify(value: 1)
    for observer in observers { observer.invalidate() }
    notifier.notify(value: 2)
    #expect(replaced.history == ["x"])
    #expect(voided.count == 1)
  }

  @Test func replaceStopsQuietlyWhenItsSourceIsReleased() {
    weak var weakSource: Notifier<Int>?
    weak var weakToken: Token?
    let replaced = Recorder<String>()
    let voided = Recorder<Void>()
    var observers: [Observer] = []
    do {
      let source = Notifier<Int>()
      let token = Token()
      weakSource = source
      weakToken = token
      observers = [
        source.chain().replace("x").do { value in
          withExtendedLifetime(token) {}
          replaced.append(value)
        }.end(),
        source.chain().replaceWithVoid().do { voided.append($0) }.end(),
      ]
      source.notify(value: 1)
    }
    #expect(weakSource == nil)
    #expect(replaced.history == ["x"])
    #expect(voided.count == 1)
    #expect(observers.allSatisfy { !$0.isInvalidated })
    #expect(weakToken != nil)
    for observer in observers { observer.invalidate() }
    #expect(weakToken == nil)
  }

  @Test func replacementIsHeldUntilTheObserverIsInvalidated() {
    let notifier = Notifier<Int>()
    weak var weakToken: Token?
    var observer: Observer?
    do {
      let token = Token()
      weakToken = token
      observer = notifier.chain().replace(token).end()
    }
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
    withExtendedLifetime(observer) {}
  }

  // MARK: - Reentrancy

  @Test func replaceSendingBackToItsOwnHolderResetsItWithoutLooping() {
    let holder = ValueHolder(0)
    let seen = Recorder<Int>()
    let observers = [
      holder.chain().replace(0).sendTo(holder).end(),
      holder.chain().do { seen.append($0) }.end(),
    ]
    holder.value = 5
    #expect(holder.value == 0)
    holder.value = 7
    #expect(holder.value == 0)
    // Each write reaches the watcher, then the reset; the reset's echo is
    // skipped by the resetting chain.
    #expect(seen.history == [5, 0, 7, 0])
    withExtendedLifetime(observers) {}
  }

  @Test func replaceWithVoidHandlerNotifyingItsOwnSourceReachesOnlyOtherChains() {
    let notifier = Notifier<Int>()
    let own = Recorder<Void>()
    let other = Recorder<Int>()
    let observers = [
      notifier.chain().replaceWithVoid().do {
        own.append($0)
        if own.count == 1 { notifier.notify(value: 99) }
      }.end(),
      notifier.chain().do { other.append($0) }.end(),
    ]
    notifier.notify(value: 1)
    #expect(own.count == 1)
    #expect(other.history == [1, 99])
    withExtendedLifetime(observers) {}
  }
}
