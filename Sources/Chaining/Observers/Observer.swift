// MARK: - Observer

/// Keeps one finished chain alive until it is invalidated or released.
///
/// ``Chain/end()`` and ``Chain/sync()`` return an observer. Keep it for as
/// long as the binding should last:
///
/// ```swift
/// final class ViewModel {
///   let name = ValueHolder("")
///   private var observer: Observer?
///   init(label: Label) {
///     observer = name.chain().sendTo(label).sync()
///   }
/// }
/// ```
///
/// ### Lifetime
/// - Releasing the last reference invalidates the observer.
/// - The observer holds the chain's closures, the receivers passed as
///   `retain()`, and the source when the chain started from `retain()`;
///   invalidating it releases all of them. It holds nothing else: a source or
///   receiver released elsewhere just stops the binding, without a crash or
///   a leak.
///
/// ### Thread safety
/// An observer may be invalidated and released on any thread. After
/// ``invalidate()`` returns, no value is delivered through the chain any more,
/// including one that another thread was about to deliver: a delivery in
/// progress on another thread is waited for. The one exception avoids a
/// deadlock: called from inside a handler, `invalidate()` stops every later
/// delivery but does not wait for one already running on another thread.
/// Called from inside this observer's own chain, it lets the value being
/// delivered finish the chain's remaining steps.
///
/// To wait, `invalidate()` blocks until the other thread's handler returns;
/// do not call it while holding a lock that a handler of this chain takes.
public final class Observer: AnyObserver, @unchecked Swift.Sendable {
  // @unchecked: the resources below are guarded by the observer's
  // ParkingLot stripe; `gate` is a constant.

  /// The gate values enter the chain through.
  let gate = DeliveryGate(held: true)

  // The resources, guarded by the observer's ParkingLot stripe. A stripe
  // rather than a lock of its own: they change only while the chain is
  // built and when it is invalidated, and an observer is the object a
  // program has most of.

  /// The first subscription to undo, kept inline: most chains have one source.
  @exclusivity(unchecked) private var firstSubscription: SubscriptionBase?
  /// The rest, allocated only for a chain that needs them.
  @exclusivity(unchecked) private var extras: Extras?

  /// What `sync()` runs, in source order. Touched only by the thread
  /// finishing the chain, before the gate opens (see `_ChainContext`).
  @exclusivity(unchecked) var fetches: [() -> Void] = []
  /// How many subscriptions the chain made. Touched only by the thread
  /// finishing the chain.
  @exclusivity(unchecked) var subscriptionCount: Int32 = 0

  /// What an observer holds beyond its first subscription.
  private final class Extras {
    /// The other subscriptions to undo.
    var subscriptions: [SubscriptionBase] = []
    /// Objects kept alive until invalidated.
    var retained: [AnyObject] = []
    /// The gates of steps that hop to another thread. Kept after
    /// invalidation: every `invalidate()` call closes them all, so that a
    /// second caller also returns only once no hop delivers any more.
    var hopGates: [DeliveryGate] = []

    /// Moves out what `invalidate()` releases, and copies the hop gates.
    func take() -> (hopGates: [DeliveryGate], subscriptions: [SubscriptionBase], retained: [AnyObject]) {
      var subscriptions: [SubscriptionBase] = []
      var retained: [AnyObject] = []
      swap(&subscriptions, &self.subscriptions)
      swap(&retained, &self.retained)
      return (hopGates, subscriptions, retained)
    }
  }

  @usableFromInline
  init() {}

  /// The extras, created on first use. Call under the stripe's lock.
  private func makeExtras() -> Extras {
    if let extras { return extras }
    let created = Extras()
    extras = created
    return created
  }

  /// Makes the observer close a hop's gate when it is invalidated; closes
  /// it at once if already invalidated.
  func addHopGate(_ hopGate: DeliveryGate) {
    ParkingLot.withLock(self) { makeExtras().hopGates.append(hopGate) }
    if gate.isClosed { hopGate.close() }
  }

  /// Takes over a subscription; undoes it at once if already invalidated.
  /// Called by the thread finishing the chain.
  func add(_ subscription: SubscriptionBase) {
    subscriptionCount += 1
    let accepted = ParkingLot.withLock(self) { () -> Bool in
      // `invalidate()` closes the gate before it takes the resources, under
      // this lock: a closed gate means they were taken, or are about to be.
      if gate.isClosed { return false }
      if firstSubscription == nil {
        firstSubscription = subscription
      } else {
        makeExtras().subscriptions.append(subscription)
      }
      return true
    }
    if !accepted { subscription.detach() }
  }

  /// Keeps `object` alive until invalidated; drops it at once if already invalidated.
  @usableFromInline
  func retain(_ object: AnyObject) {
    let accepted = ParkingLot.withLock(self) { () -> Bool in
      if gate.isClosed { return false }
      makeExtras().retained.append(object)
      return true
    }
    _ = accepted  // when refused, `object` is released here, outside the lock
  }

  deinit {
    invalidate()
  }

  /// Whether ``invalidate()`` has been called (or the observer released).
  public var isInvalidated: Bool { gate.isClosed }

  /// Ends the binding and releases what the observer holds.
  ///
  /// After this returns, nothing more is delivered through the chain (see
  /// the type's discussion of threads). Calling it again does nothing.
  public func invalidate() {
    gate.close()
    // Moved out rather than copied: most observers have no extras, and
    // then this costs no reference counting beyond the subscription's.
    // The retained objects go with `taken`, after the lock is dropped.
    let (first, taken) = ParkingLot.withLock(self) { (firstSubscription.take(), extras?.take()) }
    for hopGate in taken?.hopGates ?? [] {
      hopGate.close()
    }
    if let first {
      // The gate does not see runs its sender made without claiming it.
      if gate.isAlone { first.owner.awaitDeliveryAlone(to: first) }
      first.detach()
    }
    for subscription in taken?.subscriptions ?? [] {
      subscription.detach()
    }
  }
}
