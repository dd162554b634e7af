import Chaining
import Testing

@Suite struct ReentrancyTests {
  @Test func twoWayBindingOfEquatableHoldersSettles() {
    let a = ValueHolder(1)
    let b = ValueHolder(0)
    let received = Recorder<String>()
    let observers = [
      a.chain().do { received.append("a→b \($0)") }.sendTo(b).sync(),
      b.chain().do { received.append("b→a \($0)") }.sendTo(a).end(),
    ]
    #expect(b.value == 1)
    b.value = 5
    #expect(a.value == 5)
    // sync() ran before the b→a chain existed; 5 then goes b→a, and a's
    // change goes a→b, where b already holds 5 and broadcasts nothing.
    #expect(received.history == ["a→b 1", "b→a 5", "a→b 5"])
    withExtendedLifetime(observers) {}
  }

  @Test func twoWayBindingOfNonEquatableValuesSettles() {
    let a = ValueHolder(Box(number: 1))
    let b = ValueHolder(Box(number: 0))
    let received = Recorder<String>()
    let observers = [
      a.chain().do { received.append("a→b \($0.number)") }.sendTo(b).sync(),
      b.chain().do { received.append("b→a \($0.number)") }.sendTo(a).end(),
    ]
    a.value = Box(number: 2)
    #expect(b.value.number == 2)
    // 2 goes a→b, then b→a; a broadcasts it again (no equality to stop it),
    // but the a→b chain is still delivering 2 on this thread and skips it.
    #expect(received.history == ["a→b 1", "a→b 2", "b→a 2"])
    withExtendedLifetime(observers) {}
  }

  @Test func twoWayBindingOfUserHoldersWorksAsInTheIssue() {
    let a = IntHolder(0)
    let b = IntHolder(1)
    let observers = [a.chain().sendTo(b).sync(), b.chain().sendTo(a).end()]
    #expect(b.value == 0)
    b.value = 3
    #expect(a.value == 3)
    a.value = 4
    #expect(b.value == 4)
    withExtendedLifetime(observers) {}
  }

  @Test func handlerBroadcastingToItsOwnSourceReachesOnlyOtherChains() {
    let notifier = Notifier<Int>()
    let own = Recorder<Int>()
    let other = Recorder<Int>()
    let observers = [
      notifier.chain().do { value in
        own.append(value)
        if value < 3 { notifier.notify(value: value + 10) }
      }.end(),
      notifier.chain().do { other.append($0) }.end(),
    ]
    notifier.notify(value: 1)
    #expect(own.history == [1])
    // The nested broadcast waits until the outer value has reached every
    // chain, so the other chain sees the values in broadcast order.
    #expect(other.history == [1, 11])
    withExtendedLifetime(observers) {}
  }

  @Test func handlerWritingItsOwnHolderLeavesEveryChainOnTheLatestValue() {
    let holder = ValueHolder(0)
    let later = Recorder<Int>()
    let mirror = ValueHolder(-1)
    let observers = [
      holder.chain().do { if $0 == 1 { holder.value = 2 } }.end(),
      holder.chain().do { later.append($0) }.sendTo(mirror).end(),
    ]
    holder.value = 1
    #expect(holder.value == 2)
    #expect(later.history == [1, 2])
    #expect(mirror.value == 2)
    withExtendedLifetime(observers) {}
  }

  @Test func echoOfANonEquatableTwoWayBindingReachesOtherChainsAfterTheOriginal() {
    let a = ValueHolder(Box(number: 0))
    let b = ValueHolder(Box(number: 0))
    let watcher = Recorder<Int>()
    let observers = [
      a.chain().sendTo(b).end(),
      b.chain().sendTo(a).end(),
      a.chain().do { watcher.append($0.number) }.end(),
    ]
    a.value = Box(number: 7)
    // The b→a chain writes 7 back into a (a real write, broadcast to a's
    // chains); only the a→b chain, where the echo started, skips it.
    #expect(watcher.history == [7, 7])
    #expect(b.value.number == 7)
    withExtendedLifetime(observers) {}
  }

  @Test func handlerCanSetAnotherHolder() {
    let source = ValueHolder(0)
    let doubled = ValueHolder(0)
    let observer = source.chain().do { doubled.value = $0 * 2 }.sync()
    source.value = 4
    #expect(doubled.value == 8)
    withExtendedLifetime(observer) {}
  }

  @Test func handlerCanAddObserversWhichSeeOnlyLaterValues() {
    let notifier = Notifier<Int>()
    let added = Recorder<Int>()
    var inner: [Observer] = []
    let outer = notifier.chain().do { _ in
      if inner.isEmpty {
        inner.append(notifier.chain().do { added.append($0) }.end())
      }
    }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(added.history == [2])
    withExtendedLifetime(outer) {}
  }

  @Test func handlerCanInvalidateAnObserverLaterInTheList() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    var later: Observer?
    let first = notifier.chain().do { value in
      received.append("first \(value)")
      later?.invalidate()
    }.end()
    later = notifier.chain().do { received.append("later \($0)") }.end()
    notifier.notify(value: 1)
    #expect(received.history == ["first 1"])
    withExtendedLifetime(first) {}
  }

  @Test func syncInsideAHandlerDeliversToTheNewChain() {
    let holder = ValueHolder(1)
    let received = Recorder<String>()
    var inner: Observer?
    let outer = holder.chain().do { value in
      if value == 2 {
        inner = holder.chain().do { received.append("inner \($0)") }.sync()
      }
    }.end()
    holder.value = 2
    holder.value = 3
    #expect(received.history == ["inner 2", "inner 3"])
    _ = (outer, inner)
  }

  @Test func aValueQueuedBeforeAChainSubscribedDoesNotReachIt() {
    // Threading.md, "One value at a time per sender": a queued value goes
    // to the chains subscribed when it was broadcast.
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    nonisolated(unsafe) var late: Observer?  // touched on this thread only
    let shown = notifier.chain().do { received.append("shown \($0)") }.end()
    let notifying = notifier.chain().do { value in
      if value == 1 {
        notifier.notify(value: 2)
        late = notifier.chain().do { received.append("late \($0)") }.end()
      }
    }.end()
    notifier.notify(value: 1)
    #expect(received.history == ["shown 1", "shown 2"])
    notifier.notify(value: 3)
    #expect(received.history == ["shown 1", "shown 2", "shown 3", "late 3"])
    #expect(late != nil)
    withExtendedLifetime((shown, notifying, late)) {}
  }
}
