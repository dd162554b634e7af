import Chaining
import Dispatch
import Foundation
import Testing

/// Every `invalidate()` and every release from outside a delivery waits for
/// a run of the chain in progress on another thread, whichever call came
/// first and whichever path that run took.
///
/// A chain that is its sender's only observer runs without claiming its
/// gate; these tests hold such a run in its handler and check each caller
/// against it, with a second observer on the sender as the control (the
/// run then claims the gate).
@Suite(.serialized) struct InvalidateWaitsTests {
  /// How the chain under test is bound.
  enum Shape: String, CaseIterable, CustomTestStringConvertible {
    /// A `Notifier`'s only chain.
    case notifier
    /// A `ValueHolder`'s only chain (its core is claimed under its lock).
    case holder
    /// The only chain of a user class that adopts `Sendable`.
    case userSendable
    /// A `Notifier` with a second chain: the run claims the gate.
    case twoObservers

    var testDescription: String { rawValue }
  }

  /// How to send to a chain bound as a `Shape` says, and what else to keep.
  struct Sender: @unchecked Swift.Sendable {
    // @unchecked: the senders are thread-safe; the array is never changed.
    let send: @Sendable (Int) -> Void
    let kept: [AnyObject]
  }

  /// A chain bound as `shape` whose handler, on the value 1, signals
  /// `entered` and waits for `proceed`; `events` gets "handler finished".
  private func heldChain(
    _ shape: Shape,
    events: Recorder<String>
  ) -> (observer: Observer, sender: Sender, entered: DispatchSemaphore, proceed: DispatchSemaphore) {
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let handler = { (value: Int) in
      guard value == 1 else { return }
      entered.signal()
      proceed.wait()
      events.append("handler finished")
    }
    switch shape {
    case .notifier:
      let notifier = Notifier<Int>()
      let sender = Sender(send: { notifier.notify(value: $0) }, kept: [])
      return (notifier.chain().do(handler).end(), sender, entered, proceed)
    case .holder:
      let holder = ValueHolder(0)
      let sender = Sender(send: { holder.value = $0 }, kept: [])
      return (holder.chain().do(handler).end(), sender, entered, proceed)
    case .userSendable:
      // IntNotifier has no state of its own: broadcasting from any thread is safe.
      nonisolated(unsafe) let user = IntNotifier()
      let sender = Sender(send: { user.notify(value: $0) }, kept: [user])
      return (user.chain().do(handler).end(), sender, entered, proceed)
    case .twoObservers:
      let notifier = Notifier<Int>()
      let other = notifier.chain().do { _ in }.end()
      let sender = Sender(send: { notifier.notify(value: $0) }, kept: [other])
      return (notifier.chain().do(handler).end(), sender, entered, proceed)
    }
  }

  /// Runs `body` on another thread while the handler is held, checks that
  /// it is still waiting, then lets the handler go and waits for both.
  /// `events` gets `returned` when `body` returns.
  private func expectWaits(
    _ returned: String,
    events: Recorder<String>,
    proceed: DispatchSemaphore,
    sender: DispatchGroup,
    _ body: @escaping @Sendable () -> Void
  ) {
    let waiter = spawn {
      body()
      events.append(returned)
    }
    // A correct implementation always times out here: the handler is held.
    #expect(waiter.wait(timeout: .now() + .milliseconds(300)) == .timedOut, "\(returned) did not wait")
    proceed.signal()
    sender.wait()
    waiter.wait()
  }

  /// Calls `invalidate()` from inside the handler of another chain on this
  /// thread: that call closes the gate but may not wait.
  private func invalidateFromAHandler(_ observer: Observer) {
    let trigger = Notifier<Void>()
    let invalidator = trigger.chain().do { observer.invalidate() }.end()
    trigger.notify()
    withExtendedLifetime(invalidator) {}
  }

  /// Waits until another thread's `invalidate()` has closed the gate.
  private func awaitClosed(_ observer: Observer) {
    // Polls a condition that the other thread makes true without waiting
    // for anything: not a guess at timing.
    while !observer.isInvalidated { usleep(100) }
  }

  /// Makes the first call that `ending` gives on another thread while the
  /// handler is held, waits until it has closed the gate, and checks that
  /// a second call waits too.
  private func expectSecondCallWaitsWhileTheFirstWaits(_ shape: Shape, _ ending: Ending) {
    let events = Recorder<String>()
    let (observer, bound, entered, proceed) = heldChain(shape, events: events)
    let invalidate = ending(observer)
    let sender = spawn { bound.send(1) }
    entered.wait()
    let first = spawn {
      invalidate()
      events.append("first returned")
    }
    awaitClosed(observer)
    expectWaits("second returned", events: events, proceed: proceed, sender: sender, invalidate)
    first.wait()
    #expect(events.history.first == "handler finished")
    #expect(Set(events.history) == ["handler finished", "first returned", "second returned"])
    withExtendedLifetime(bound.kept) {}
  }

  /// Makes the call that `ending` gives from inside another chain's
  /// handler while the handler is held (it may not wait), and checks that
  /// a later call from outside waits.
  private func expectCallAfterOneFromAHandlerWaits(_ shape: Shape, _ ending: Ending) {
    let events = Recorder<String>()
    let (observer, bound, entered, proceed) = heldChain(shape, events: events)
    let invalidate = ending(observer)
    let sender = spawn { bound.send(1) }
    entered.wait()
    let trigger = Notifier<Void>()
    let invalidator = trigger.chain().do { invalidate() }.end()
    trigger.notify()
    #expect(observer.isInvalidated)
    expectWaits("invalidate returned", events: events, proceed: proceed, sender: sender, invalidate)
    #expect(events.history == ["handler finished", "invalidate returned"])
    withExtendedLifetime(invalidator) {}
    withExtendedLifetime(bound.kept) {}
  }

  @Test(arguments: Shape.allCases)
  func aSecondInvalidateWaitsWhileTheFirstWaits(_ shape: Shape) {
    expectSecondCallWaitsWhileTheFirstWaits(shape, Self.invalidateObserver)
  }

  @Test(arguments: Shape.allCases)
  func anInvalidateAfterOneFromAHandlerWaits(_ shape: Shape) {
    expectCallAfterOneFromAHandlerWaits(shape, Self.invalidateObserver)
  }

  @Test(arguments: Shape.allCases)
  func aReleaseAfterAnInvalidateFromAHandlerWaits(_ shape: Shape) {
    let events = Recorder<String>()
    nonisolated(unsafe) var observer: Observer?
    let bound: Sender
    let entered: DispatchSemaphore
    let proceed: DispatchSemaphore
    do {
      let made = heldChain(shape, events: events)
      (observer, bound, entered, proceed) = (made.observer, made.sender, made.entered, made.proceed)
    }
    let sender = spawn { bound.send(1) }
    entered.wait()
    invalidateFromAHandler(observer!)
    // The last reference is the one the waiter drops.
    expectWaits("release returned", events: events, proceed: proceed, sender: sender) {
      observer = nil
    }
    #expect(events.history == ["handler finished", "release returned"])
    withExtendedLifetime(bound.kept) {}
  }

  /// How a test ends the binding: given the observer under test, before
  /// the delivery is held, it returns the call to make.
  typealias Ending = @Sendable (Observer) -> @Sendable () -> Void

  /// `observer.invalidate()`.
  private static let invalidateObserver: Ending = { observer in { observer.invalidate() } }

  /// `pool.invalidate()`, on a pool that holds the observer.
  private static let invalidatePool: Ending = { observer in
    let pool = ObserverPool()
    pool.add(observer)
    return { pool.invalidate() }
  }

  @Test(arguments: Shape.allCases)
  func aPoolInvalidateWaitsWhileAnotherThreadInvalidatesThePool(_ shape: Shape) {
    expectSecondCallWaitsWhileTheFirstWaits(shape, Self.invalidatePool)
  }

  @Test(arguments: Shape.allCases)
  func aPoolInvalidateAfterOneFromAHandlerWaits(_ shape: Shape) {
    expectCallAfterOneFromAHandlerWaits(shape, Self.invalidatePool)
  }
}
