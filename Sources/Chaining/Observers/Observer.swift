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
/// progress on another thread is waited for, by every call (a second
/// `invalidate()`, or the release of the last reference after one, waits as
/// the first did). The one exception avoids a deadlock: called from inside
/// a handler, `invalidate()` stops every later delivery but does not wait
/// for one already running on another thread; a later call from outside
/// any delivery does.
/// Called from inside this observer's own chain, it lets the value being
/// delivered finish the chain's remaining steps.
///
/// To wait, `invalidate()` blocks until the other thread's handler returns;
/// do not call it while holding a lock that a handler of this chain takes.
public final class Observer: AnyObserver, @unchecked Swift.Sendable {
  // @unchecked: the resources below are set by the thread finishing the
  // chain, before anyone else can reach the observer, and then taken only
  // by the `invalidate()` call that closes the gate; `aloneSource` stays
  // constant once set, and `gate` is a constant.

  /// The gate values enter the chain through.
  @usableFromInline let gate = DeliveryGate(held: true)

  // The resources. No lock guards them: they are added while the chain is
  // built, when only the finishing thread knows the observer (handing it to
  // another thread afterwards orders those writes before that thread's
  // reads), and only the one `invalidate()` call that closes the gate takes
  // them.

  /// The first subscription to undo, kept inline: most chains have one source.
  @exclusivity(unchecked) private var firstSubscription: SubscriptionBase?
  /// The sender core of a chain whose only source it is, which may run the
  /// chain without claiming its gate (see `DeliveryGate.deliverAlone`);
  /// nil otherwise. Set before the gate opens, then constant until the
  /// observer is freed: every `invalidate()` call, not only the one that
  /// closes the gate, asks it whether such a run is in progress.
  @exclusivity(unchecked) var aloneSource: (any SubscriptionOwner)?
  /// The rest, allocated only for a chain that needs them.
  @exclusivity(unchecked) private var extras: Extras?

  /// What `sync()` runs, in source order. Touched only by the thread
  /// finishing the chain, before the gate opens (see `_ChainContext`).
  @exclusivity(unchecked) var fetches: [() -> Void] = []
  /// How many subscriptions the chain made. Touched only by the thread
  /// finishing the chain.
  @exclusivity(unchecked) var subscriptionCount: Int32 = 0
  /// Whether the gate is settled: closed, and an `invalidate()` call
  /// found no run made without claiming it in progress, or waited for it
  /// (`DeliveryGate.settled`): none can start afterwards, so later calls
  /// need not ask `aloneSource` again. A bit of the gate's `requests` word,
  /// not a word of the observer's: an atomic of the observer's own would
  /// keep the optimizer from allocating an observer that never escapes on
  /// the stack.
  var isSettled: Bool {
    gate.requests.load(ordering: .acquiring) & DeliveryGate.settled != 0
  }

  /// Records the gate settled (see `isSettled`).
  func settle() {
    gate.requests.bitwiseOr(DeliveryGate.settled, ordering: .releasing)
  }

  /// What an observer holds beyond its first subscription.
  private final class Extras {
    /// The other subscriptions to undo.
    var subscriptions: [SubscriptionBase] = []
    /// Objects kept alive until invalidated.
    var retained: [AnyObject] = []
    /// The gates of steps that hop to another thread. Constant once the
    /// chain is built, and kept after invalidation: every `invalidate()`
    /// call closes them all, so that a second caller also returns only once
    /// no hop delivers any more.
    var hopGates: [DeliveryGate] = []
    /// What steps run when the observer is invalidated (cancel timers, end
    /// inner chains), once, by the call that closes the gate.
    var invalidationHandlers: [() -> Void] = []
  }

  @usableFromInline
  init() {}

  /// The extras, created on first use. Called by the thread finishing the chain.
  private func makeExtras() -> Extras {
    if let extras { return extras }
    let created = Extras()
    extras = created
    return created
  }

  // These four are called by the thread finishing the chain, before its
  // gate opens: no value runs through the chain yet, so nothing can have
  // invalidated the observer.

  /// Makes the observer close a hop's gate when it is invalidated.
  func addHopGate(_ hopGate: DeliveryGate) {
    makeExtras().hopGates.append(hopGate)
  }

  /// How many hop gates the chain has so far. A step that joins chains
  /// compares it before and after building them, to learn whether their
  /// values can arrive under other gates than this chain's.
  @usableFromInline
  var hopGateCount: Int { extras?.hopGates.count ?? 0 }

  /// Makes the observer run `handler` once when it is invalidated, after
  /// its gates are closed (no value of the chain runs afterwards), on the
  /// thread of the call that closes them. For steps that hold work of their
  /// own: timers to cancel, inner chains to end.
  func addInvalidationHandler(_ handler: @escaping () -> Void) {
    makeExtras().invalidationHandlers.append(handler)
  }

  /// Takes over a subscription, to undo it when invalidated.
  func add(_ subscription: consuming SubscriptionBase) {
    #if CHAINING_INTERNAL_CHECKS
    // `subscriptionCount` is the finishing thread's alone: it holds the gate.
    gate._checkRunner("a subscription added")
    #endif
    subscriptionCount += 1
    if firstSubscription == nil {
      firstSubscription = subscription
    } else {
      makeExtras().subscriptions.append(subscription)
    }
  }

  /// The sender core of subscription number `index`, in the order they
  /// were made. Called by the thread finishing the chain.
  func subscriptionOwner(at index: Int) -> any SubscriptionOwner {
    index == 0 ? firstSubscription.unsafelyUnwrapped.owner : extras.unsafelyUnwrapped.subscriptions[index - 1].owner
  }

  /// The sender core of the first subscription. Called by the thread
  /// finishing the chain.
  var firstSubscriptionOwner: (any SubscriptionOwner)? { firstSubscription?.owner }

  /// Makes the observer invalidate itself once every sender its chain
  /// subscribed to has ended (a library sender was freed): no value can
  /// come any more. For `values`, whose iteration then finishes. Called by
  /// the thread finishing the chain, before its gate opens.
  ///
  /// A class of yours that adopts ``Sendable`` never tells that it ended,
  /// so a chain from one is not ended this way.
  func invalidateWhenSendersEnd() {
    var subscriptions = extras?.subscriptions ?? []
    if let firstSubscription { subscriptions.insert(firstSubscription, at: 0) }
    guard !subscriptions.isEmpty else { return }
    let countdown = Countdown(subscriptions.count)
    for subscription in subscriptions {
      subscription.owner.watchEnd(of: subscription) { [weak self] in
        if countdown.decrement() { self?.invalidate() }
      }
    }
  }

  /// Keeps `object` alive until invalidated.
  @usableFromInline
  func retain(_ object: AnyObject) {
    makeExtras().retained.append(object)
  }

  deinit {
    invalidate()
  }

  /// Whether ``invalidate()`` has been called (or the observer released).
  public var isInvalidated: Bool { gate.isClosed }

  /// Ends the binding and releases what the observer holds.
  ///
  /// After this returns, nothing more is delivered through the chain (see
  /// the type's discussion of threads). Calling it again releases nothing
  /// more, and waits as the first call did for a run in progress on
  /// another thread.
  public func invalidate() {
    // Every call closes the gates, which waits for a run that claimed one.
    let closedHere = gate.close()
    if let hopGates = extras?.hopGates {
      for hopGate in hopGates { hopGate.close() }
    }
    guard closedHere else {
      // A later call. The gate does not see a run its only sender made
      // without claiming it, and the call that closed the gate may not
      // have waited for one (it may be inside a delivery) or may still be
      // waiting: unless a call has already waited, this one asks the
      // sender itself.
      // Acquiring and releasing: each pairs with the other, so that the
      // run the setting call waited for happens before this call returns.
      // (Checked in this order so that the common case, a release after
      // an `invalidate()` that settled, copies no reference.)
      // The alone path, part 4 of 4 (Internals.md, "The alone path"):
      // 1. `Observer.start(fetching:)` marks the gate `alone`;
      // 2. `_SenderCore.deliver(_:to:in:)` runs a list of one;
      // 3. `DeliveryGate.deliverAlone` runs the chain unclaimed;
      // 4. `Observer.invalidate()` waits for such a run
      //    (`_SenderCore.awaitRunAlone(of:)`).
      if aloneSource != nil, !isSettled, DeliveryContext.current.depth == 0 {
        aloneSource?.awaitRunAlone(of: gate)
        settle()
      }
      return
    }
    // Only the call that closed the gate takes the resources: moved out
    // rather than copied, which costs no reference counting beyond the
    // subscription's.
    if let first = firstSubscription.take() {
      let alone = aloneSource != nil
      // Only a chain run without claiming its gate has anything to settle.
      if first.detach(awaitingAlone: alone), alone {
        settle()
      }
    }
    guard let extras else { return }
    var subscriptions: [SubscriptionBase] = []
    var retained: [AnyObject] = []
    var handlers: [() -> Void] = []
    swap(&subscriptions, &extras.subscriptions)
    swap(&retained, &extras.retained)
    swap(&handlers, &extras.invalidationHandlers)
    for subscription in subscriptions {
      subscription.detach()
    }
    for handler in handlers {
      handler()
    }
    _ = consume retained  // released last, after the chain is detached
  }
}

/// Counts the senders of a chain that have not ended yet.
final class Countdown: @unchecked Swift.Sendable {
  // @unchecked: `remainingStorage` is reached only atomically, through `remaining`.
  /// The storage of `remaining`, its only stored property.
  var remainingStorage: Int

  /// The senders left, atomic.
  private var remaining: AtomicReference<Int> { AtomicReference(in: self) }

  init(_ count: Int) {
    remainingStorage = count
  }

  /// Counts one down; true for the call that reaches zero. Each sender
  /// ends once, on any thread: the count is an atomic read-modify-write.
  func decrement() -> Bool {
    remaining.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0
  }
}
