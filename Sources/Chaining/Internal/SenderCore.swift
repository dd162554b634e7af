// MARK: - _SenderCore

/// The observer list of one sender and the serializer of its broadcasts.
///
/// Not API: it is public only so that the protocols' underscored requirements
/// can name it. The library's own senders store one; a user's class that
/// adopts ``Sendable`` gets one from the sender registry.
///
/// - Broadcasts are delivered one at a time, each to every observer before
///   the next begins, in the order they were made. A broadcast made while
///   this sender is delivering, from another thread or from a handler on
///   this one, is queued and delivered by the delivering thread right after
///   the current one. So every chain sees the sender's values in the same
///   order, and the last value each sees is the last one broadcast, unless
///   that value is an echo of the chain's own delivery, which it skips.
/// - Removing an observer is O(1): its slot is cleared, and the list is
///   compacted once more than half of it is empty.
///
/// ### The fast path
/// The observers are a `SlotList`, and one atomic word holds both a pointer
/// to it and four flags (a `SenderWord`). A broadcast with nobody else delivering or
/// changing the list claims the delivery with one compare-and-swap, reads
/// the list it claimed without retaining it, and stops with another: no
/// lock, no reference counting. That is safe because the list a delivering
/// thread reads is never changed in place: a subscribe or unsubscribe made
/// meanwhile (under the lock) changes a copy, puts it in the word, and
/// keeps the old list alive until the delivery ends. Everything else (a
/// broadcast that finds the sender delivering, queued broadcasts, releasing
/// old lists) takes the lock.
///
/// A holder's core is claimed only under the lock (`claimsUnderLock`): a
/// holder writes its state and claims the delivery of the change in one
/// locked step. With no lock-free claim to race, the claim of an idle core
/// is then a plain store, which saves an atomic read-modify-write on every
/// holder write.
public final class _SenderCore<Value>: @unchecked Swift.Sendable {
  // @unchecked: `state` is guarded by its lock; `word` is atomic; a list
  // is changed in place only under the lock while no thread reads it
  // unlocked (see the type's discussion).

  /// The storage of `word`, reached only through it: must stay the first
  /// stored property (see `AtomicReference`: "Where the word lives").
  @usableFromInline var wordStorage = SenderWord.empty

  @usableFromInline
  struct State {
    /// How many observers the current list has.
    @usableFromInline var live = 0
    /// Broadcasts waiting for the delivering thread, oldest first, each
    /// with the chains it had passed through when it was made, and the
    /// serial of the first subscription that came after it.
    @usableFromInline var pending: [Pending] = []
    /// The rest of a batch of `pending` that a delivering thread stopped at
    /// when it handed the delivery over: delivered before `pending`, by the
    /// thread that takes it.
    var carried: ArraySlice<Pending> = []
    /// Set by the delivering thread once it has delivered
    /// `DeliveryGate.handOffLimit` broadcasts of other threads and found
    /// more; cleared when the queue is emptied. While it is set, a thread
    /// from outside every delivery whose broadcast is queued waits for its
    /// turn (`awaitTurn()`).
    var overLimit = false
    /// The broadcasting threads waiting in `awaitTurn()`.
    var waiters = 0
    /// Set when the delivering thread has stopped for a waiter, leaving
    /// `delivering` set: the first waiter to see it takes the delivery.
    var handedOver = false
    /// The serial of the next subscription.
    @usableFromInline var nextSerial: UInt64 = 0
    /// Lists replaced while a thread was delivering from them; released
    /// when that delivery ends.
    @usableFromInline var retired: [SlotList] = []
    /// The list dropped when the last observer left, kept for the next one;
    /// owned (+1) like the word's list, so that moving it between the two
    /// costs no reference counting.
    var spare: Unmanaged<SlotList>?
    /// Set while the delivering thread runs `finishLocked()`: it is past
    /// the delivery it claimed, and claims every gate from now on.
    var finishing = false
    /// Set while an `awaitRunAlone(of:)` waits: the delivering thread
    /// wakes it when it stops or starts `finishLocked()`.
    var aloneWaiting = false
    /// What to run when the sender ends, by subscription: see
    /// `watchEnd(of:_:)`. Empty but for the chains of `values`.
    var endWatchers: [ObjectIdentifier: @Sendable () -> Void] = [:]
    /// Set by `senderEnded()`.
    var ended = false
    /// Tasks in `waitForObservers(_:)`, by key: how many observers each
    /// waits for.
    var observerWaiters: [UInt64: (count: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
    /// Keys of waits cancelled before they were registered.
    var cancelledWaits: Set<UInt64> = []
    /// The key of the next wait.
    var nextWait: UInt64 = 0

    @usableFromInline
    init() {}
  }

  /// A broadcast waiting for the delivering thread.
  ///
  /// It goes only to the subscriptions made before it (serial below
  /// `limit`): a chain subscribed later has already seen its effect, in the
  /// state a holder hands out as the chain subscribes.
  @usableFromInline
  struct Pending {
    @usableFromInline let value: Value
    @usableFromInline let causes: Causes
    @usableFromInline let limit: UInt64
    /// The broadcasting thread's `DeliveryContext.runner`: a thread's own
    /// broadcasts (its handlers' writes) are not counted against
    /// `DeliveryGate.handOffLimit`.
    @usableFromInline let sender: Int

    @usableFromInline
    init(value: Value, causes: Causes, limit: UInt64, sender: Int) {
      self.value = value
      self.causes = causes
      self.limit = limit
      self.sender = sender
    }
  }

  /// What a thread has to do with a value after `claim(_:in:)`.
  @usableFromInline
  enum Claim {
    /// Nothing: there is no observer, or the delivering thread will deliver it.
    case none
    /// Deliver to the list, then stop with `finish(claimed:)`, passing the
    /// word as it was claimed.
    case deliver(Unmanaged<SlotList>, claimed: SenderWord)
    /// Queued, while the delivering thread is past
    /// `DeliveryGate.handOffLimit`: wait for the turn (`awaitTurn()`).
    case awaitTurn
  }

  @usableFromInline let state = Protected(State())

  /// `DeliveryGate.turnWait`, which only tests change (before any value
  /// is broadcast), so that a waiter outlasts a thread that the machine's
  /// load holds back.
  @exclusivity(unchecked) var turnWait = DeliveryGate.turnWait

  /// The current list (a retained pointer, or 0 when there is no observer)
  /// and the flags, atomic: see `SenderWord` for the flags and the
  /// transitions.
  @usableFromInline var word: AtomicReference<SenderWord> {
    @inline(__always) get { AtomicReference(in: self) }
  }

  /// Whether every claim is made under the lock: true for a holder's core,
  /// whose ``broadcast(_:)`` then takes the lock too. An idle core is then
  /// claimed with a plain store (see the type's discussion).
  @usableFromInline let claimsUnderLock: Bool

  /// The class of this core's entries, looked up once: a generic class's
  /// metadata is otherwise looked up in the runtime's cache (some 300
  /// instructions) on every subscription.
  let subscriptionClass = Subscription.self

  /// This core's place in the graph of ranks (its links and its level),
  /// once a chain that writes it or reads it into a join is built (see
  /// `RankGraph`). Under `RankGraph.lock`.
  @exclusivity(unchecked) var rankLinks: RankLinks?

  /// Creates an empty core, claimed without the lock when it is idle.
  public init() {
    claimsUnderLock = false
    checkInvariants()
  }

  /// Creates an empty core for a holder: every claim is made under the lock.
  init(claimsUnderLock: Bool) {
    self.claimsUnderLock = claimsUnderLock
    checkInvariants()
  }

  /// In builds with `CHAINING_INTERNAL_CHECKS`, checks `_invariantCheck`
  /// at the end of every section under the lock; nothing otherwise.
  @inline(__always)
  private func checkInvariants() {
    #if CHAINING_INTERNAL_CHECKS
    // Unowned, unsafe: the lock is this core's, and `deinit` drops the
    // check before its own section under the lock.
    state.invariant = { [unowned(unsafe) self] in _invariantCheck($0) }
    #endif
  }

  deinit {
    #if CHAINING_INTERNAL_CHECKS
    state.invariant = nil
    #endif
    word.load(ordering: .acquiring).list?.release()
    state.withLock { $0.spare.take() }?.release()
    // Set only by a thread that holds this core, so read after its last
    // release without the graph's lock.
    rankLinks?.end()
  }

  /// Whether any observer is subscribed.
  var hasObservers: Bool { state.withLock { $0.live > 0 } }

  /// How many observers are subscribed.
  var observerCount: Int { state.withLock { $0.live } }

  // MARK: Broadcasting

  /// Delivers `value` to every subscribed observer (see the type's ordering rules).
  @inlinable @inline(__always)
  func broadcast(_ value: Value) {
    // Relaxed: it only decides whether to try. The compare-and-swap below
    // (sequentially consistent, so acquiring) is the read that makes the
    // list it claims visible; a subscription this load misses was made
    // concurrently, unordered with this broadcast.
    let current = word.load(ordering: .relaxed)
    if current == .empty { return }  // no observer
    if claimsIdle(current) {
      // One wave: this delivery, and what it causes on this thread (the
      // broadcasts queued meanwhile, which `finish` delivers, included).
      let context = DeliveryContext.current
      context.beginWave()
      Self.deliver(value, to: current.list.unsafelyUnwrapped, in: context)
      finish(claimed: current)
      context.endWave()
    } else {
      broadcastLocked(value)
    }
  }

  /// The first half of `broadcast(_:)`: claims the delivery of `value`,
  /// or queues it behind the thread delivering, and returns what the
  /// caller does with it through `run(_:_:)`. For a broadcaster whose
  /// values must be delivered in the order of its own lock's holds (a
  /// computed value's refresh, `ComputedBox.refresh()`): it claims inside
  /// such a hold, and runs the claim after giving the lock back, so
  /// claims, and with them deliveries, come in the order of the holds.
  /// The slow path takes this core's lock inside the caller's: nothing
  /// under this core's lock takes another lock or runs user code (a
  /// release under it runs none, see `watchEnd(of:_:)`).
  @inline(__always)
  func claimBroadcast(_ value: Value) -> Claim {
    // As in `broadcast(_:)`.
    let current = word.load(ordering: .relaxed)
    if current == .empty { return .none }
    if claimsIdle(current) { return .deliver(current.list.unsafelyUnwrapped, claimed: current) }
    return state.withLock { claim(value, in: &$0) }
  }

  /// The lock-free claim of `broadcast(_:)` and `claimBroadcast(_:)`:
  /// claims the delivery from `current`, the word just loaded (not
  /// empty), when it has no flag and the core allows a claim without the
  /// lock (`claimsUnderLock` is false). False when the caller must take
  /// the lock.
  @inlinable @inline(__always)
  func claimsIdle(_ current: SenderWord) -> Bool {
    // Sequentially consistent, as every claim: see `deliversAlone(to:in:)`.
    current.hasNoFlag && !claimsUnderLock
      && word.compareExchange(
        expected: current,
        desired: current.claimed,
        ordering: .sequentiallyConsistent
      ).exchanged
  }

  /// The slow path of `broadcast(_:)`: claims or queues under the lock.
  @usableFromInline
  func broadcastLocked(_ value: Value) {
    let claim = state.withLock { self.claim(value, in: &$0) }
    run(claim, value)
  }

  /// Decides, under the lock the caller already holds, how `value` is delivered.
  ///
  /// Holders call this from inside their storage lock (the same lock) so
  /// that the order of broadcasts matches the order of their writes.
  @inlinable @inline(__always)
  func claim(_ value: Value, in state: inout State) -> Claim {
    if claimsUnderLock {
      // Idle, nothing can change the word before this store: only a thread
      // holding the lock may claim it, and nobody delivers, so nobody stops.
      // The lock orders the claim and an `invalidate()`'s check (see
      // `deliversAlone(to:in:)`). Acquiring, not relaxed: the delivery
      // before stopped with a releasing compare-and-swap outside the lock,
      // and its handlers must happen before this delivery's.
      let current = word.load(ordering: .acquiring)
      guard let list = current.list else { return .none }
      if !current.isDelivering {
        // Relaxed: under the lock, which every writer of the word holds
        // except the delivering thread's stop, and nobody delivers; a
        // holder's core has no lock-free claim (`claimsUnderLock`).
        word.store(current.claimed, ordering: .relaxed)
        return .deliver(list, claimed: current)
      }
    }
    return claimShared(value, in: &state)
  }

  /// `claim(_:in:)` when the word may change meanwhile: for a core claimed
  /// without the lock too, or a holder's core that is delivering.
  @usableFromInline
  func claimShared(_ value: Value, in state: inout State) -> Claim {
    // `changing` is only set under the lock, so it is clear here; only the
    // delivering thread's lock-free stop can change the word meanwhile.
    // Sequentially consistent, as every claim: see `deliversAlone(to:in:)`.
    let original = word.update(sequentiallyConsistent: true) { current in
      current.list == nil ? nil : current.claimedOrQueued
    }
    guard let list = original.list else { return .none }
    if !original.isDelivering { return .deliver(list, claimed: original) }
    let context = DeliveryContext.current
    state.pending.append(
      Pending(value: value, causes: context.capture(), limit: state.nextSerial, sender: context.runner)
    )
    // Only a thread outside every delivery waits: the delivering thread's
    // own broadcasts come from its handlers, inside a delivery.
    if state.overLimit, context.depth == 0 {
      state.waiters += 1
      return .awaitTurn
    }
    return .none
  }

  /// Decides, under the lock, how a run of values is delivered: one after
  /// the other, with no other broadcast in between.
  ///
  /// When the caller gets `.deliver`, it delivers `values.first` with
  /// `run(_:_:)`; the rest wait at the head of the queue.
  @usableFromInline
  func claim(contentsOf values: [Value], in state: inout State) -> Claim {
    guard let first = values.first else { return .none }
    let claim = self.claim(first, in: &state)
    if values.count > 1, state.live > 0 {
      if case .deliver = claim {
        // The rest are queued behind the first: make the delivering thread
        // (this one) look at the queue before it stops.
        // Relaxed: read by this same thread's stop (program order), or
        // under the lock.
        word.set(SenderWord.queued, ordering: .relaxed)
      }
      let context = DeliveryContext.current
      let causes = context.capture()
      let limit = state.nextSerial
      let sender = context.runner
      state.pending.append(
        contentsOf: values.dropFirst().map { Pending(value: $0, causes: causes, limit: limit, sender: sender) }
      )
    }
    return claim
  }

  /// Carries out a `Claim` outside every lock.
  @inlinable @inline(__always)
  func run(_ claim: Claim, _ value: Value) {
    guard case .deliver(let list, let claimed) = claim else {
      if case .awaitTurn = claim { awaitTurn() }
      return
    }
    // One wave, as in `broadcast(_:)`.
    let context = DeliveryContext.current
    context.beginWave()
    Self.deliver(value, to: list, in: context)
    finish(claimed: claimed)
    context.endWave()
  }

  /// Stops delivering, or first delivers what was queued meanwhile.
  @inlinable @inline(__always)
  func finish(claimed: SenderWord) {
    if !word.compareExchange(expected: claimed.claimed, desired: claimed, ordering: .releasing).exchanged {
      finishLocked()
    }
  }

  /// Delivers a queued value to the subscriptions made before it.
  @usableFromInline
  static func deliver(_ value: Value, to list: Unmanaged<SlotList>, below limit: UInt64, in context: DeliveryContext) {
    list._withUnsafeGuaranteedRef { list in
      list.forEachEntry { entry in
        subscription(entry)._withUnsafeGuaranteedRef { subscription in
          if subscription.serial < limit {
            subscription.gate.deliver(
              value,
              to: subscription.handler,
              dropsEchoes: subscription.dropsEchoes,
              in: context
            )
          }
        }
      }
    }
  }

  /// Delivers a value to every subscription of a list the caller claimed.
  ///
  /// A list of one runs its chain without claiming the chain's gate when
  /// the gate allows it (see `DeliveryGate.deliverAlone`): this delivery
  /// already runs one value at a time, and `awaitRunAlone(of:)` lets every
  /// `invalidate()` call wait for it.
  @inlinable @inline(__always)
  static func deliver(_ value: Value, to list: Unmanaged<SlotList>, in context: DeliveryContext) {
    // The alone path, part 2 of 4 (Internals.md, "The alone path"):
    // 1. `Observer.start(fetching:)` marks the gate `alone`;
    // 2. `_SenderCore.deliver(_:to:in:)` runs a list of one;
    // 3. `DeliveryGate.deliverAlone` runs the chain unclaimed;
    // 4. `Observer.invalidate()` waits for such a run
    //    (`_SenderCore.awaitRunAlone(of:)`).
    list._withUnsafeGuaranteedRef { list in
      if list.count == 1 {
        if let head = list.head {
          subscription(head)._withUnsafeGuaranteedRef { subscription in
            subscription.gate.deliverAlone(
              value,
              to: subscription.handler,
              dropsEchoes: subscription.dropsEchoes,
              in: context
            )
          }
        }
        return
      }
      list.forEachEntry { entry in
        subscription(entry)._withUnsafeGuaranteedRef { subscription in
          subscription.gate.deliver(value, to: subscription.handler, dropsEchoes: subscription.dropsEchoes, in: context)
        }
      }
    }
  }

  /// `entry`, one of this core's `Subscription`s, as its typed self.
  @inlinable @inline(__always)
  static func subscription(_ entry: Unmanaged<SubscriptionBase>) -> Unmanaged<Subscription> {
    Unmanaged.fromOpaque(entry.toOpaque())
  }
}
