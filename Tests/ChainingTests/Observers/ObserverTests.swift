import Chaining
import Dispatch
import Testing

@Suite struct ObserverTests {
  @Test func invalidatedObserverReceivesNothing() {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.sync()
    observer.invalidate()
    holder.value = 1
    #expect(received.history == [0])
    #expect(observer.isInvalidated)
  }

  @Test func releasingTheLastReferenceInvalidates() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    var observer: Observer? = notifier.chain().do { received.append($0) }.end()
    notifier.notify(value: 1)
    observer = nil
    notifier.notify(value: 2)
    #expect(received.history == [1])
    withExtendedLifetime(observer) {}
  }

  @Test func invalidatingTwiceIsHarmless() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().do { received.append($0) }.end()
    observer.invalidate()
    observer.invalidate()
    notifier.notify(value: 1)
    #expect(received.history.isEmpty)
  }

  @Test func invalidatingOneObserverLeavesTheOthers() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    let a = notifier.chain().do { received.append("a\($0)") }.end()
    let b = notifier.chain().do { received.append("b\($0)") }.end()
    a.invalidate()
    notifier.notify(value: 1)
    #expect(received.history == ["b1"])
    withExtendedLifetime(b) {}
  }

  @Test func observerCanBeStoredAsAnyObserver() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let stored: [any AnyObserver] = [notifier.chain().do { received.append($0) }.end()]
    notifier.notify(value: 1)
    stored[0].invalidate()
    notifier.notify(value: 2)
    #expect(received.history == [1])
  }

  @Test func invalidateWaitsForADeliveryInProgressOnAnotherThread() {
    let notifier = Notifier<Int>()
    let events = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let observer = notifier.chain().do { value in
      events.append("handler started \(value)")
      entered.signal()
      proceed.wait()
      events.append("handler finished \(value)")
    }.end()

    let sender = holdDelivery(of: notifier, entered: entered)
    invalidateWhileHeld(observer, events: events, proceed: proceed, sender: sender)
    notifier.notify(value: 2)
    #expect(events.history == ["handler started 1", "handler finished 1", "invalidate returned"])
  }

  @Test func nothingIsDeliveredAfterInvalidateReturnsWhileAnotherThreadBroadcasts() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().do { received.append($0) }.end()
    let firstDelivered = DispatchSemaphore(value: 0)
    let marker = notifier.chain().do { value in if value == 0 { firstDelivered.signal() } }.end()
    let countWhenInvalidated = invalidate(observer, once: firstDelivered, recorded: received) {
      for value in 0..<20_000 { notifier.notify(value: value) }
    }
    #expect(countWhenInvalidated >= 1)
    // What was delivered is a prefix, in order, without gaps.
    #expect(received.history == Array(0..<countWhenInvalidated))
    withExtendedLifetime(marker) {}
  }

  /// Runs `send` on another thread, invalidates `observer` once
  /// `firstDelivered` is signalled, and returns how many values
  /// `received` had then, checking that none arrived afterwards.
  private func invalidate(
    _ observer: Observer,
    once firstDelivered: DispatchSemaphore,
    recorded received: Recorder<Int>,
    whileSending send: @escaping @Sendable () -> Void
  ) -> Int {
    let sender = spawn(send)
    firstDelivered.wait()
    observer.invalidate()
    let countWhenInvalidated = received.count
    sender.wait()
    #expect(received.count == countWhenInvalidated)
    return countWhenInvalidated
  }

  @Test func handlerCanInvalidateItsOwnObserver() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    nonisolated(unsafe) var observer: Observer?
    observer = notifier.chain().do { value in
      received.append(value)
      observer?.invalidate()
    }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [1])
    #expect(observer?.isInvalidated == true)
  }

  @Test func handlerCanReleaseItsOwnObserver() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    nonisolated(unsafe) var observer: Observer?
    observer = notifier.chain().do { value in
      received.append(value)
      observer = nil
    }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [1])
    #expect(observer == nil)
  }

  @Test func handlersOnTwoThreadsInvalidatingEachOthersObserversDoNotDeadlock() {
    // Each handler waits until the other one is running, then invalidates the
    // other's observer. Waiting inside invalidate() would deadlock here.
    let left = Notifier<Int>()
    let right = Notifier<Int>()
    let bothRunning = DispatchGroup()
    bothRunning.enter()
    bothRunning.enter()
    nonisolated(unsafe) var leftObserver: Observer?
    nonisolated(unsafe) var rightObserver: Observer?
    let received = Recorder<String>()
    leftObserver = left.chain().do { _ in
      bothRunning.leave()
      bothRunning.wait()
      rightObserver?.invalidate()
      received.append("left")
    }.end()
    rightObserver = right.chain().do { _ in
      bothRunning.leave()
      bothRunning.wait()
      leftObserver?.invalidate()
      received.append("right")
    }.end()
    let a = spawn { left.notify(value: 1) }
    let b = spawn { right.notify(value: 1) }
    a.wait()
    b.wait()
    #expect(Set(received.history) == ["left", "right"])
    #expect(leftObserver?.isInvalidated == true)
    #expect(rightObserver?.isInvalidated == true)
  }

  @Test func invalidatesOnManyThreadsAtOnceReleaseWhatTheObserverHeld() {
    // Only the call that closes the gate takes the resources; the others
    // must neither take them again nor return before they are closed.
    for _ in 0..<200 {
      weak var weakSource: Notifier<Int>?
      weak var weakToken: Token?
      let other = Notifier<Int>()
      let observer: Observer
      do {
        let source = Notifier<Int>()
        let token = Token()
        weakSource = source
        weakToken = token
        observer = source.retain().chain().merge(other.chain()).do { _ in withExtendedLifetime(token) {} }.end()
      }
      let closedWhenReturned = Recorder<Bool>()
      race(threads: 4) { _ in
        observer.invalidate()
        closedWhenReturned.append(observer.isInvalidated)
      }
      #expect(closedWhenReturned.history == [true, true, true, true])
      #expect(weakSource == nil)
      #expect(weakToken == nil)
    }
  }

  @Test func releasingAnObserverAHandlerInvalidatedWaitsForItsDeliveryOnAnotherThread() {
    // The handler's invalidate() does not wait (it runs inside a delivery);
    // the release that follows, outside any delivery, must.
    let notifier = Notifier<Int>()
    let other = Notifier<Int>()
    let events = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var observer: Observer? = notifier.chain().merge(other.chain()).do { value in
      events.append("handler started \(value)")
      entered.signal()
      proceed.wait()
      events.append("handler finished \(value)")
    }.end()
    let trigger = Notifier<Void>()
    let invalidator = trigger.chain().do { observer?.invalidate() }.end()

    let sender = holdDelivery(of: notifier, entered: entered)
    trigger.notify()
    #expect(observer?.isInvalidated == true)
    #expect(events.history == ["handler started 1"])
    expectWaitWhileHeld(events: events, proceed: proceed, sender: sender, recording: "release returned") {
      observer = nil
    }
    #expect(events.history == ["handler started 1", "handler finished 1", "release returned"])
    withExtendedLifetime(invalidator) {}
  }

  // A chain whose only source is one sender, and the only observer of that
  // sender, runs without claiming its gate (`DeliveryGate.deliverAlone`);
  // the sender then tells `invalidate()` whether to wait. The test above
  // covers the plain case; these cover the others.

  /// Starts `notify(value: 1)` on another thread and returns once the
  /// first observer's handler holds it: `entered` was signalled.
  private func holdDelivery(of notifier: Notifier<Int>, entered: DispatchSemaphore) -> DispatchGroup {
    holdDelivery(entered: entered) { notifier.notify(value: 1) }
  }

  /// Starts `send` on another thread and returns once a handler holds its
  /// delivery: `entered` was signalled.
  private func holdDelivery(entered: DispatchSemaphore, _ send: @escaping @Sendable () -> Void) -> DispatchGroup {
    let sender = spawn(send)
    entered.wait()
    return sender
  }

  /// A handler that signals `entered`, waits for `proceed`, then records
  /// "handler finished <value>" in `events`.
  private func heldHandler(
    entered: DispatchSemaphore,
    proceed: DispatchSemaphore,
    events: Recorder<String>
  ) -> (Int) -> Void {
    { value in
      entered.signal()
      proceed.wait()
      events.append("handler finished \(value)")
    }
  }

  /// Invalidates `observer` on another thread while the delivery of
  /// `sender` is held in its handler, checks that `invalidate()` is still
  /// waiting, then lets the handler go (`proceed`) and waits for both
  /// threads. `events` gets "invalidate returned" when it returns.
  private func invalidateWhileHeld(
    _ observer: Observer,
    events: Recorder<String>,
    proceed: DispatchSemaphore,
    sender: DispatchGroup
  ) {
    expectWaitWhileHeld(events: events, proceed: proceed, sender: sender, recording: "invalidate returned") {
      observer.invalidate()
    }
  }

  /// Runs `body` on another thread while the delivery of `sender` is held
  /// in its handler, checks that `body` is still waiting, then lets the
  /// handler go (`proceed`) and waits for both threads. `events` gets
  /// `returned` when `body` returns.
  private func expectWaitWhileHeld(
    events: Recorder<String>,
    proceed: DispatchSemaphore,
    sender: DispatchGroup,
    recording returned: String,
    _ body: @escaping @Sendable () -> Void
  ) {
    let waiter = spawn {
      body()
      events.append(returned)
    }
    // `body` must still be waiting for the handler: its thread cannot
    // finish while the handler is held. (A correct implementation always
    // times out here.)
    #expect(waiter.wait(timeout: .now() + .milliseconds(300)) == .timedOut)
    proceed.signal()
    sender.wait()
    waiter.wait()
  }

  @Test func invalidateWaitsForTheOnlyObserverEvenWhenAnotherSubscribedMeanwhile() {
    let notifier = Notifier<Int>()
    let events = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let observer = notifier.chain().do(heldHandler(entered: entered, proceed: proceed, events: events)).end()
    let sender = holdDelivery(of: notifier, entered: entered)
    // Replaces the list the delivering thread claimed.
    let later = notifier.chain().do { events.append("later \($0)") }.end()
    invalidateWhileHeld(observer, events: events, proceed: proceed, sender: sender)
    notifier.notify(value: 2)
    #expect(events.history == ["handler finished 1", "invalidate returned", "later 2"])
    later.invalidate()
  }

  @Test func invalidateDoesNotWaitForTheHandlerOfAChainThatRanAlone() {
    let notifier = Notifier<Int>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let first = notifier.chain().do { _ in
      entered.signal()
      proceed.wait()
    }.end()
    let sender = holdDelivery(of: notifier, entered: entered)
    let second = notifier.chain().do { _ in }.end()
    // The delivering thread runs only the first chain: invalidating the
    // second must not wait for it (it would wait until the handler ends).
    let invalidator = spawn { second.invalidate() }
    let result = invalidator.wait(timeout: .now() + .seconds(30))
    proceed.signal()
    sender.wait()
    #expect(result == .success)
    #expect(second.isInvalidated)
    first.invalidate()
  }

  @Test func invalidateWaitsForTheOnlyObserverWhileValuesAreQueuedBehindIt() {
    let notifier = Notifier<Int>()
    let events = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let observer = notifier.chain().do { value in
      if value == 1 {
        entered.signal()
        proceed.wait()
      }
      events.append("handler finished \(value)")
    }.end()
    let sender = holdDelivery(of: notifier, entered: entered)
    // Queued behind the held value; the delivering thread delivers it after.
    notifier.notify(value: 2)
    invalidateWhileHeld(observer, events: events, proceed: proceed, sender: sender)
    #expect(events.history == ["handler finished 1", "invalidate returned"])
  }

  @Test func invalidateWaitsForTheOnlyObserverOfAHolderWriteHeldInItsHandler() {
    // A holder claims its delivery with a plain store under its lock;
    // invalidate() must see that claim all the same.
    let holder = ValueHolder(0)
    let events = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let observer = holder.chain().do(heldHandler(entered: entered, proceed: proceed, events: events)).end()
    let sender = holdDelivery(entered: entered) { holder.value = 1 }
    invalidateWhileHeld(observer, events: events, proceed: proceed, sender: sender)
    holder.value = 2
    #expect(events.history == ["handler finished 1", "invalidate returned"])
  }

  @Test func nothingReachesTheOnlyObserverAfterInvalidateReturnsWhileAnotherThreadBroadcasts() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let firstDelivered = DispatchSemaphore(value: 0)
    let observer = notifier.chain().do { value in
      received.append(value)
      if value == 0 { firstDelivered.signal() }
    }.end()
    let countWhenInvalidated = invalidate(observer, once: firstDelivered, recorded: received) {
      for value in 0..<20_000 { notifier.notify(value: value) }
    }
    #expect(countWhenInvalidated >= 1)
    #expect(received.history == Array(0..<countWhenInvalidated))
  }

  @Test func nothingReachesTheOnlyObserverOfAHolderAfterInvalidateReturnsWhileAnotherThreadWrites() {
    let holder = ValueHolder(-1)
    let received = Recorder<Int>()
    let firstDelivered = DispatchSemaphore(value: 0)
    let observer = holder.chain().do { value in
      received.append(value)
      if value == 0 { firstDelivered.signal() }
    }.sync()
    let countWhenInvalidated = invalidate(observer, once: firstDelivered, recorded: received) {
      for value in 0..<20_000 { holder.value = value }
    }
    // The fetched -1, then a prefix of the writes, in order.
    #expect(countWhenInvalidated >= 2)
    #expect(received.history == Array(-1..<(countWhenInvalidated - 1)))
  }
}
