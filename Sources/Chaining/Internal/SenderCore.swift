import Dispatch

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
/// to it and the flags below. A broadcast with nobody else delivering or
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
  @usableFromInline var wordStorage: UInt = 0

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
    case deliver(Unmanaged<SlotList>, claimed: UInt)
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
  /// and the flags below, atomic.
  @usableFromInline var word: AtomicReference<UInt> {
    @inline(__always) get { AtomicReference(in: self) }
  }

  /// Set while a thread delivers; the list it claimed stays unchanged.
  @usableFromInline static var delivering: UInt { 1 }
  /// Set, under the lock, while the list is changed in place: keeps the
  /// lock-free claim out.
  @usableFromInline static var changing: UInt { 2 }
  /// Set while broadcasts are queued: the delivering thread must not just stop.
  @usableFromInline static var queued: UInt { 4 }
  /// Set while delivering when no thread reads the current list unlocked
  /// (it replaced the one being read): it may be changed in place.
  @usableFromInline static var unshared: UInt { 8 }
  /// The bits of the word that are not the pointer.
  @usableFromInline static var flags: UInt { 15 }

  /// Whether every claim is made under the lock: true for a holder's core,
  /// whose ``broadcast(_:)`` then takes the lock too. An idle core is then
  /// claimed with a plain store (see the type's discussion).
  @usableFromInline let claimsUnderLock: Bool

  /// The class of this core's entries, looked up once: a generic class's
  /// metadata is otherwise looked up in the runtime's cache (some 300
  /// instructions) on every subscription.
  private let subscriptionClass = Subscription.self

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

  #if CHAINING_INTERNAL_CHECKS
  /// The rules that hold whenever the lock is free (Verification/SenderCore.pml
  /// checks the same word and lists across threads): the live count is the
  /// list's occupied slots, with no list when it is 0; queued broadcasts, a
  /// hand-over, the limit and `finishLocked()` all belong to a delivery,
  /// so the word says `delivering`; no thread is changing the list in
  /// place. Called with the lock held.
  func _invariantCheck(_ state: State) {
    let current = word.load(ordering: .acquiring)
    let occupied = Self.list(in: current).map { list in
      list._withUnsafeGuaranteedRef { list in (0..<list.count).count { list[$0] != nil } }
    }
    precondition(
      occupied ?? 0 == state.live,
      "_SenderCore: live is \(state.live), the list has \(occupied ?? 0) observers"
    )
    precondition(current & Self.changing == 0, "_SenderCore: the list is being changed outside the lock")
    let delivering = current & Self.delivering != 0
    precondition(delivering || state.pending.isEmpty, "_SenderCore: broadcasts queued with nobody delivering")
    precondition(delivering || state.carried.isEmpty, "_SenderCore: a carried batch with nobody delivering")
    precondition(delivering || !state.handedOver, "_SenderCore: handed over with nobody delivering")
    precondition(delivering || !state.finishing, "_SenderCore: finishing with nobody delivering")
    precondition(delivering || !state.overLimit, "_SenderCore: over the limit with nobody delivering")
  }
  #endif

  deinit {
    #if CHAINING_INTERNAL_CHECKS
    state.invariant = nil
    #endif
    Self.list(in: word.load(ordering: .acquiring))?.release()
    state.withLock { $0.spare.take() }?.release()
    // Set only by a thread that holds this core, so read after its last
    // release without the graph's lock.
    rankLinks?.end()
  }

  /// The list that `word` points at, unretained.
  @inlinable @inline(__always)
  static func list(in word: UInt) -> Unmanaged<SlotList>? {
    UnsafeRawPointer(bitPattern: word & ~flags).map { Unmanaged.fromOpaque($0) }
  }

  /// Whether any observer is subscribed.
  var hasObservers: Bool { state.withLock { $0.live > 0 } }

  /// How many observers are subscribed.
  var observerCount: Int { state.withLock { $0.live } }

  /// Suspends until at least `count` observers are subscribed, or the task
  /// is cancelled.
  func waitForObservers(_ count: Int) async {
    let key = state.withLock { state -> UInt64 in
      defer { state.nextWait += 1 }
      return state.nextWait
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let ready = state.withLock { state -> Bool in
          if state.live >= count || state.cancelledWaits.remove(key) != nil { return true }
          state.observerWaiters[key] = (count, continuation)
          return false
        }
        if ready { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
        guard let waiter = state.observerWaiters.removeValue(forKey: key) else {
          state.cancelledWaits.insert(key)
          return nil
        }
        return waiter.continuation
      }
      waiter?.resume()
    }
  }

  /// Resumes the waits that `live` observers satisfy. Under the lock:
  /// resuming a continuation only schedules its task, and runs no user
  /// code.
  private func resumeObserverWaiters(in state: inout State) {
    for (key, waiter) in state.observerWaiters where state.live >= waiter.count {
      state.observerWaiters[key] = nil
      waiter.continuation.resume()
    }
  }

  // MARK: Broadcasting

  /// Delivers `value` to every subscribed observer (see the type's ordering rules).
  @inlinable @inline(__always)
  func broadcast(_ value: Value) {
    // Relaxed: it only decides whether to try. The compare-and-swap below
    // (sequentially consistent, so acquiring) is the read that makes the
    // list it claims visible; a subscription this load misses was made
    // concurrently, unordered with this broadcast.
    let current = word.load(ordering: .relaxed)
    if current == 0 { return }  // no observer
    // Sequentially consistent, as every claim: see `deliversAlone(to:in:)`.
    if current & Self.flags == 0, !claimsUnderLock,
      word.compareExchange(
        expected: current,
        desired: current | Self.delivering,
        ordering: .sequentiallyConsistent
      ).exchanged
    {
      // One wave: this delivery, and what it causes on this thread (the
      // broadcasts queued meanwhile, which `finish` delivers, included).
      let context = DeliveryContext.current
      context.beginWave()
      Self.deliver(value, to: Self.list(in: current).unsafelyUnwrapped, in: context)
      finish(claimed: current)
      context.endWave()
    } else {
      broadcastLocked(value)
    }
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
      guard let list = Self.list(in: current) else { return .none }
      if current & Self.delivering == 0 {
        // Relaxed: under the lock, which every writer of the word holds
        // except the delivering thread's stop, and nobody delivers; a
        // holder's core has no lock-free claim (`claimsUnderLock`).
        word.store(current | Self.delivering, ordering: .relaxed)
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
      if Self.list(in: current) == nil { return nil }
      return current | (current & Self.delivering == 0 ? Self.delivering : Self.queued)
    }
    guard let list = Self.list(in: original) else { return .none }
    if original & Self.delivering == 0 { return .deliver(list, claimed: original) }
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
        word.bitwiseOr(Self.queued, ordering: .relaxed)
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
  func finish(claimed: UInt) {
    if !word.compareExchange(expected: claimed | Self.delivering, desired: claimed, ordering: .releasing).exchanged {
      finishLocked()
    }
  }

  /// Delivers the queued broadcasts, batch after batch, then releases the
  /// lists replaced meanwhile and stops delivering.
  ///
  /// Past `DeliveryGate.handOffLimit` broadcasts of other threads, hands
  /// the delivery over to a thread waiting for its turn (`awaitTurn()`)
  /// as soon as one does, and returns, still `delivering`: a thread is
  /// never held by another thread's endless writes to the same sender.
  /// The taker goes on exactly where this thread stopped (the same
  /// function, in a wave of its own), so the order of the broadcasts, the
  /// lists retired meanwhile and the wakes of `awaitRunAlone(of:)` are
  /// handled as if this thread had gone on; and since `delivering` never
  /// clears in between, no other thread claims the delivery meanwhile.
  @usableFromInline
  func finishLocked() {
    let context = DeliveryContext.current
    var othersDelivered = 0
    while true {
      typealias Next = (
        batch: ArraySlice<Pending>, list: Unmanaged<SlotList>?, retired: [SlotList], wakes: Bool
      )
      let (batch, list, retired, wakes) = state.withLock { state -> Next in
        // This thread no longer reads the lists it delivered from, nor
        // runs a chain without claiming its gate.
        let retired = state.retired
        state.retired = []
        let wakes = state.aloneWaiting
        state.aloneWaiting = false
        // Relaxed: under the lock. This thread delivers, so no lock-free
        // claim can change the word, and every other change holds the lock.
        let current = word.load(ordering: .relaxed)
        let pointer = current & ~Self.flags
        if state.pending.isEmpty, state.carried.isEmpty {
          state.overLimit = false
          state.finishing = false
          word.store(pointer, ordering: .releasing)
          return ([], nil, retired, wakes)
        }
        state.finishing = true
        // Still delivering, from the current list: it is shared again.
        // Relaxed: under the lock, and only the flags change; readers of
        // the list either hold the lock or claim, which fails while
        // `delivering` is set.
        word.store(pointer | Self.delivering, ordering: .relaxed)
        if !state.carried.isEmpty {
          defer { state.carried = [] }
          return (state.carried, Self.list(in: current), retired, wakes)
        }
        defer { state.pending = [] }
        return (state.pending[...], Self.list(in: current), retired, wakes)
      }
      _ = consume retired  // released outside the lock
      if wakes {
        // Under the stripe's lock, which the waiter holds from its check
        // until it sleeps: a wake sent in between would be lost.
        ParkingLot.shared.withLock(self) { ParkingLot.shared.wakeAll(self) }
      }
      if batch.isEmpty { return }
      guard let list else { continue }  // no observer left
      for index in batch.indices {
        let pending = batch[index]
        if pending.sender != context.runner {
          if othersDelivered >= DeliveryGate.handOffLimit {
            let handsOver = state.withLock { state -> Bool in
              state.overLimit = true
              if state.waiters == 0 { return false }
              state.carried = batch[index...]
              state.handedOver = true
              return true
            }
            if handsOver { return }
          }
          othersDelivered += 1
        }
        context.run(with: pending.causes) {
          Self.deliver(pending.value, to: list, below: pending.limit, in: context)
        }
      }
    }
  }

  /// For a thread whose broadcast was queued while the delivering thread
  /// was past `DeliveryGate.handOffLimit`: waits, yielding its processor,
  /// until that thread hands the delivery over (this thread then goes on
  /// with `finishLocked()`), until the queue has been emptied, or for
  /// `DeliveryGate.turnWait` at most (then the delivering thread delivers
  /// the value, as before; the bound is what keeps a lock this thread
  /// holds from deadlocking a handler).
  ///
  /// Why no broadcast is left behind: the delivering thread hands over
  /// only when it finds a waiter under the lock, and every waiter looks
  /// for a hand-over under the lock before it leaves, so one of them
  /// takes it. Checked by `HandOffTests` and `JoinLivenessTests`.
  @usableFromInline
  func awaitTurn() {
    let start = DispatchTime.now().uptimeNanoseconds
    while true {
      let timedOut = DispatchTime.now().uptimeNanoseconds &- start >= turnWait
      // 0: wait on; 1: take the delivery; 2: leave.
      let step = state.withLock { state -> Int in
        if state.handedOver {
          state.handedOver = false
          state.waiters -= 1
          return 1
        }
        if !state.overLimit || timedOut {
          state.waiters -= 1
          return 2
        }
        return 0
      }
      if step == 1 {
        DeliveryContext.current.inWave { finishLocked() }
        return
      }
      if step == 2 { return }
      yieldProcessor()
    }
  }

  /// Delivers a queued value to the subscriptions made before it.
  @usableFromInline
  static func deliver(_ value: Value, to list: Unmanaged<SlotList>, below limit: UInt64, in context: DeliveryContext) {
    list._withUnsafeGuaranteedRef { list in
      for index in 0..<list.count {
        subscription(in: list, at: index)?._withUnsafeGuaranteedRef { subscription in
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
    list._withUnsafeGuaranteedRef { list in
      if list.count == 1 {
        subscription(in: list, at: 0)?._withUnsafeGuaranteedRef { subscription in
          subscription.gate.deliverAlone(
            value,
            to: subscription.handler,
            dropsEchoes: subscription.dropsEchoes,
            in: context
          )
        }
        return
      }
      for index in 0..<list.count {
        subscription(in: list, at: index)?._withUnsafeGuaranteedRef { subscription in
          subscription.gate.deliver(value, to: subscription.handler, dropsEchoes: subscription.dropsEchoes, in: context)
        }
      }
    }
  }

  /// The subscription in slot `index` of `list`, unretained. Every entry
  /// of this core's lists is one of its `Subscription`s.
  @inlinable @inline(__always)
  static func subscription(in list: SlotList, at index: Int) -> Unmanaged<Subscription>? {
    list.unmanaged(at: index).map { Unmanaged.fromOpaque($0.toOpaque()) }
  }

  // MARK: Subscribing

  /// Adds an observer at the end of the list.
  ///
  /// Returns the entry as its non-generic base, so that callers need no
  /// generic metadata for it.
  func subscribe(
    gate: DeliveryGate,
    dropsEchoes: Bool = true,
    handler: consuming @escaping (Value) -> Void
  ) -> SubscriptionBase {
    // Made before taking the lock: the allocation needs no lock, and the
    // handler moves into the entry rather than being copied into a closure.
    let subscription = makeSubscription(gate: gate, dropsEchoes: dropsEchoes, handler: handler)
    state.withLock { insert(subscription, in: &$0) }
    return subscription
  }

  /// An entry for `handler`, not yet in the list: hand it to
  /// `insert(_:in:)`.
  func makeSubscription(
    gate: DeliveryGate,
    dropsEchoes: Bool = true,
    handler: consuming @escaping (Value) -> Void
  ) -> SubscriptionBase {
    subscriptionClass.init(core: self, gate: gate, dropsEchoes: dropsEchoes, handler: handler)
  }

  /// Adds an entry made by `makeSubscription` at the end of the list,
  /// under the lock the caller holds.
  func insert(_ subscription: SubscriptionBase, in state: inout State) {
    subscription.serial = state.nextSerial
    state.nextSerial += 1
    state.live += 1
    if !state.observerWaiters.isEmpty { resumeObserverWaiters(in: &state) }
    change(&state) { list in
      subscription.index = Int32(list.count)
      list.append(subscription)
    }
  }

  /// Removes an observer in O(1) amortized time, under the lock the
  /// caller holds. Removing twice does nothing.
  private func remove(_ subscription: SubscriptionBase, in state: inout State) {
    // Holds nothing whose release runs user code (see `watchEnd`).
    if !state.endWatchers.isEmpty { state.endWatchers[ObjectIdentifier(subscription)] = nil }
    let index = Int(subscription.index)
    // Relaxed: under the lock, and the pointer changes only under it.
    guard let list = Self.list(in: word.load(ordering: .relaxed)),
      list._withUnsafeGuaranteedRef({ index >= 0 && index < $0.count && $0[index] === subscription })
    else { return }
    state.live -= 1
    let live = state.live
    change(&state) { list in
      list[index] = nil
      subscription.index = -1
      let empty = list.count - live
      if empty > 32, empty > live {
        list.compact()
      }
    }
  }

  /// Applies `body` to the current list, under the lock the caller holds.
  ///
  /// In place when no thread reads the list unlocked; otherwise on a copy
  /// that replaces it, the old list being kept until the delivery ends.
  /// With no observer left the list is dropped, so that a broadcast then
  /// costs one atomic load. `body` may run twice, the first time on a copy
  /// that is thrown away.
  private func change(_ state: inout State, _ body: (SlotList) -> Void) {
    // Relaxed: under the lock. The pointer changes only under it; the
    // flags may change (a claim, a stop), and each branch below either
    // checks them with a compare-and-swap or relies on `unshared`, while
    // which the word changes only under the lock (the stop then fails its
    // compare-and-swap and takes the lock in `finishLocked()`).
    var current = word.load(ordering: .relaxed)
    while true {
      if current & Self.delivering == 0 {
        // Idle: keep the lock-free claim out while changing in place.
        let (exchanged, original) = word.compareExchange(
          expected: current,
          desired: current | Self.changing,
          ordering: .acquiring
        )
        if !exchanged {
          current = original
          continue
        }
        word.store(changeInPlace(current, &state, body), ordering: .releasing)
        return
      }
      if current & Self.unshared != 0 {
        // Nobody reads the list unlocked, and the word cannot change
        // meanwhile: the delivering thread stops under this lock.
        let pointer = changeInPlace(current, &state, body)
        word.store(pointer | (current & Self.flags), ordering: .releasing)
        return
      }
      // The delivering thread reads the current list: change a copy.
      let old = Self.list(in: current)
      let copy = old?._withUnsafeGuaranteedRef { SlotList(copying: $0) } ?? SlotList(capacity: 0)
      body(copy)
      let pointer = state.live > 0 ? UInt(bitPattern: Unmanaged.passUnretained(copy).toOpaque()) : 0
      let (exchanged, original) = word.compareExchange(
        expected: current,
        desired: pointer | (current & Self.flags) | Self.unshared,
        ordering: .acquiringAndReleasing
      )
      if !exchanged {
        // The delivery ended meanwhile: start over.
        current = original
        continue
      }
      if pointer != 0 { _ = Unmanaged.passRetained(copy) }
      if let old { state.retired.append(old.takeRetainedValue()) }
      return
    }
  }

  /// Applies `body` to the list `current` points at, in place, taking the
  /// spare one when there is none. Returns the word's new pointer: 0, the
  /// list becoming the spare, when no observer is left.
  private func changeInPlace(_ current: UInt, _ state: inout State, _ body: (SlotList) -> Void) -> UInt {
    let list: Unmanaged<SlotList>
    if let existing = Self.list(in: current) {
      list = existing
    } else {
      list = state.spare.take() ?? Unmanaged.passRetained(SlotList(capacity: 0))
    }
    list._withUnsafeGuaranteedRef(body)
    if state.live > 0 { return UInt(bitPattern: list.toOpaque()) }
    list._withUnsafeGuaranteedRef { $0.removeAll() }
    // A spare may be there already: a change made while a delivery runs
    // from no list (`finishLocked()` delivering a queued batch after every
    // observer left) copies from nothing rather than take it, so the word
    // gets a list while the spare is kept. Release that one, empty (so its
    // release runs no user code under the lock), rather than lose it.
    // Found and checked by Verification/SenderCore.pml (issue #20).
    state.spare.take()?.release()
    state.spare = list
    return 0
  }

  // MARK: - Subscription

  /// One observer's entry in a core: the handler, on top of what the list
  /// needs.
  @usableFromInline
  final class Subscription: SubscriptionBase, @unchecked Swift.Sendable {
    @usableFromInline nonisolated(unsafe) let handler: (Value) -> Void

    init(core: _SenderCore, gate: DeliveryGate, dropsEchoes: Bool, handler: consuming @escaping (Value) -> Void) {
      self.handler = handler
      super.init(owner: core, gate: gate, dropsEchoes: dropsEchoes)
    }
  }
}

extension _SenderCore: Ranked {
  /// A core is written at once: it takes the level of what writes it.
  var joinsWave: Bool { false }

  var rankLevel: Int { rankLinks?.level ?? 0 }

  func raise(to level: Int) -> Bool { links.raise(to: level) }
}

extension _SenderCore: SubscriptionOwner {
  /// Removes `subscription`; first, when `awaitingAlone`, waits until this
  /// core no longer runs its chain without claiming its gate. Called by the
  /// `invalidate()` call that closed the gate.
  ///
  /// Such a run happens only while a thread delivers, before
  /// `finishLocked()`, from a list of that chain alone: the list it claimed
  /// is then the current one or, when it was replaced meanwhile, the first
  /// one retired. So this waits only for that chain's own handler, never
  /// for another chain's. Like `DeliveryGate.close()`, it does not wait
  /// when called from inside a delivery. With no such run, which is the
  /// common case, the check and the removal take the lock once.
  ///
  /// Returns whether no such run is in progress any more (none was, or
  /// this waited for it): false only from inside a delivery that did not
  /// wait for one.
  @discardableResult
  func unsubscribe(_ subscription: SubscriptionBase, awaitingAlone: Bool) -> Bool {
    let removed = state.withLock { state in
      if awaitingAlone, deliversAlone(to: subscription.gate, in: state) { return false }
      remove(subscription, in: &state)
      return true
    }
    if removed { return true }
    let waits = DeliveryContext.current.depth == 0
    if waits {
      awaitRunAlone(of: subscription.gate)
    }
    state.withLock { remove(subscription, in: &$0) }
    return waits
  }

  /// Whether a thread is delivering from a list whose only entry is a
  /// chain with `gate`, and may run it without claiming the gate. Under
  /// the lock.
  ///
  /// Keyed by the gate rather than the entry, so that a later
  /// `invalidate()` call, which no longer has the entry, can ask too. The
  /// list a delivering thread claimed is never changed in place while it
  /// reads it (see `change(_:_:)`), so the entry stays in it until that
  /// delivery ends, even once removed from the current list.
  ///
  /// The claim and this check pair up, so that either the delivering
  /// thread sees the gate closed and skips the chain, or this sees the
  /// delivery:
  /// - A lock-free claim is a sequentially consistent read-modify-write,
  ///   after which the delivering thread reads the gate; the closer changed
  ///   the gate (another) before this sequentially consistent load.
  /// - A claim under the lock (a holder's) is ordered by the lock: when it
  ///   comes first this sees it; when this comes first, the delivering
  ///   thread's read of the gate comes after the closer's change.
  private func deliversAlone(to gate: DeliveryGate, in state: State) -> Bool {
    let current = word.load(ordering: .sequentiallyConsistent)
    if current & Self.delivering == 0 || state.finishing { return false }
    let claimed =
      current & Self.unshared != 0
      ? state.retired.first.map { Unmanaged.passUnretained($0) } : Self.list(in: current)
    guard let claimed else { return false }
    return claimed._withUnsafeGuaranteedRef { $0.count == 1 && $0[0]?.gate === gate }
  }

  /// Runs `onEnd` once, when the sender ends (`senderEnded()`), unless
  /// `subscription` is removed first; at once when it has already ended.
  /// `onEnd` must capture nothing whose release runs user code: it may be
  /// dropped under the lock.
  func watchEnd(of subscription: SubscriptionBase, _ onEnd: @escaping @Sendable () -> Void) {
    let endedAlready = state.withLock { state -> Bool in
      if state.ended { return true }
      state.endWatchers[ObjectIdentifier(subscription)] = onEnd
      return false
    }
    if endedAlready { onEnd() }
  }

  /// Called by a library sender's `deinit`: no value will ever come from
  /// it again. Runs what `watchEnd(of:_:)` registered, after unlocking.
  func senderEnded() {
    let watchers = state.withLock { state -> [@Sendable () -> Void] in
      state.ended = true
      defer { state.endWatchers = [:] }
      return Array(state.endWatchers.values)
    }
    for onEnd in watchers { onEnd() }
  }

  /// Waits until no thread runs the chain with `gate` without claiming it
  /// (until `deliversAlone(to:in:)` turns false). Called by every
  /// `invalidate()` of such a chain from outside a delivery, once its gate
  /// is closed: no such run starts afterwards.
  func awaitRunAlone(of gate: DeliveryGate) {
    ParkingLot.shared.wait(for: self) {
      state.withLock { state in
        guard deliversAlone(to: gate, in: state) else { return true }
        // Make the delivering thread stop through `finishLocked()`, which
        // wakes this one; unless its lock-free stop came first.
        let original = word.update { $0 & Self.delivering != 0 ? $0 | Self.queued : nil }
        if original & Self.delivering == 0 { return true }
        state.aloneWaiting = true
        return false
      }
    }
  }
}

// MARK: - SubscriptionBase

/// What a sender core's list and removal need of an observer's entry.
///
/// Not generic, so that the list and removal need no generic metadata; the
/// core's `Subscription` adds the typed handler.
@usableFromInline
class SubscriptionBase: @unchecked Swift.Sendable {
  // @unchecked: `index` is guarded by the owner's lock; `serial` is set
  // under it before the entry is visible, then constant; the rest are
  // constants.

  @usableFromInline let gate: DeliveryGate
  /// The order of subscription; set under the core's lock before the
  /// subscription is visible, then constant.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var serial: UInt64 = 0
  /// The slot in the current list, or -1 once removed. Guarded by the core's lock.
  @exclusivity(unchecked) nonisolated(unsafe) var index: Int32 = -1
  /// Whether the chain skips values it caused (see `DeliveryGate.deliver`).
  @usableFromInline let dropsEchoes: Bool
  /// Strong, though the owner's list holds this entry too: the cycle ends
  /// when the entry is removed, which its observer always does, at the
  /// latest when it is released. A weak reference would cost an atomic
  /// operation on the owner's side table to make, load and destroy.
  let owner: any SubscriptionOwner

  init(owner: any SubscriptionOwner, gate: DeliveryGate, dropsEchoes: Bool) {
    self.owner = owner
    self.gate = gate
    self.dropsEchoes = dropsEchoes
  }

  /// Removes this entry from its owner's list; called by the observer
  /// when it is invalidated. Removing twice does nothing.
  ///
  /// With `awaitingAlone` (the observer's gate is `alone`), first waits for
  /// a run of the chain that the owner made without claiming the gate, and
  /// returns whether no such run is in progress any more (see
  /// `_SenderCore.unsubscribe(_:awaitingAlone:)`).
  @discardableResult
  func detach(awaitingAlone: Bool = false) -> Bool {
    owner.unsubscribe(self, awaitingAlone: awaitingAlone)
  }
}

/// A sender core, as its subscriptions see it.
protocol SubscriptionOwner: Ranked, Swift.Sendable {
  /// Removes `subscription`; first, when `awaitingAlone`, waits for a run
  /// of its chain made without claiming its gate, if one is in progress on
  /// another thread; returns whether no such run is in progress any more.
  @discardableResult
  func unsubscribe(_ subscription: SubscriptionBase, awaitingAlone: Bool) -> Bool

  /// Waits for a run of the chain with `gate` made without claiming the
  /// gate, if one is in progress on another thread. The gate must be
  /// closed.
  func awaitRunAlone(of gate: DeliveryGate)

  /// Runs `onEnd` once the sender has ended, unless `subscription` is
  /// removed first.
  func watchEnd(of subscription: SubscriptionBase, _ onEnd: @escaping @Sendable () -> Void)
}

// MARK: - SlotList

/// The observers, in subscription order; `nil` for a removed one.
///
/// Its own storage rather than an array, so that a delivering thread can
/// walk it with plain loads: reading an array out of an object would
/// retain and release its buffer on every broadcast.
@usableFromInline
final class SlotList {
  // Not generic, so that code working on it needs no generic metadata.
  /// `count` initialized slots, room for `capacity`.
  @usableFromInline @exclusivity(unchecked) var base: UnsafeMutablePointer<SubscriptionBase?>
  @usableFromInline @exclusivity(unchecked) var count = 0
  @exclusivity(unchecked) private var capacity: Int

  init(capacity: Int) {
    self.capacity = max(capacity, 4)
    base = .allocate(capacity: self.capacity)
  }

  /// A list with the same slots as `other`.
  convenience init(copying other: SlotList) {
    self.init(capacity: other.count + other.count / 2)
    base.initialize(from: other.base, count: other.count)
    count = other.count
  }

  deinit {
    base.deinitialize(count: count)
    base.deallocate()
  }

  subscript(index: Int) -> SubscriptionBase? {
    get { base[index] }
    set { base[index] = newValue }
  }

  func append(_ subscription: SubscriptionBase) {
    if count == capacity {
      capacity *= 2
      let grown = UnsafeMutablePointer<SubscriptionBase?>.allocate(capacity: capacity)
      grown.moveInitialize(from: base, count: count)
      base.deallocate()
      base = grown
    }
    (base + count).initialize(to: subscription)
    count += 1
  }

  /// Empties a list that has no observer left.
  func removeAll() {
    base.deinitialize(count: count)
    count = 0
  }

  /// Moves the observers to the front, in order, updating their indexes.
  func compact() {
    var kept = 0
    for index in 0..<count {
      guard let subscription = base[index] else { continue }
      subscription.index = Int32(kept)
      base[kept] = subscription
      kept += 1
    }
    (base + kept).deinitialize(count: count - kept)
    count = kept
  }

  /// The subscription in slot `index`, for borrowing without a retain.
  ///
  /// The list keeps every subscription alive, and each keeps its gate
  /// and handler. Borrowing them, rather than copying each reference out,
  /// saves three retain/release pairs per observer per value.
  @inlinable @inline(__always)
  func unmanaged(at index: Int) -> Unmanaged<SubscriptionBase>? {
    // A `SubscriptionBase?` is a nullable reference.
    UnsafeRawPointer(base + index).load(as: UnsafeRawPointer?.self).map { Unmanaged.fromOpaque($0) }
  }
}
