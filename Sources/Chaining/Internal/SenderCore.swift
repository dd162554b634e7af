import Synchronization

// MARK: - _SenderCore

/// The observer list of one sender and the serializer of its broadcasts.
///
/// Not API: it is public only so that the protocols' underscored requirements
/// can name it. The library's own senders store one; a user's class that
/// adopts ``Sendable`` gets one from the sender registry.
///
/// - Observers are kept in subscription order in a copy-on-write array. A
///   broadcast snapshots the array under the lock and calls the observers
///   after unlocking.
/// - Removing an observer is O(1): its slot is cleared, and the array is
///   compacted once more than half of it is empty.
/// - Broadcasts are delivered one at a time, each to every observer before
///   the next begins, in the order they were made. A broadcast made while
///   this sender is delivering, from another thread or from a handler on
///   this one, is queued and delivered by the delivering thread right after
///   the current one. So every chain sees the sender's values in the same
///   order, and the last value each sees is the last one broadcast.
public final class _SenderCore<Value>: @unchecked Swift.Sendable {
  // @unchecked: all mutable state is in `state`, guarded by its lock.

  @usableFromInline
  struct State {
    @usableFromInline var slots: ContiguousArray<Subscription?> = []
    @usableFromInline var live = 0
    /// Broadcasts waiting for the delivering thread, oldest first, each
    /// with the chains it had passed through when it was made, and the
    /// serial of the first subscription that came after it.
    @usableFromInline var pending: [Pending] = []
    /// The serial of the next subscription.
    @usableFromInline var nextSerial: UInt64 = 0

    @usableFromInline
    init() {}
  }

  /// The observers a broadcast is delivered to.
  @usableFromInline typealias Snapshot = ContiguousArray<Subscription?>

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

    @usableFromInline
    init(value: Value, causes: Causes, limit: UInt64) {
      self.value = value
      self.causes = causes
      self.limit = limit
    }
  }

  /// What a thread has to do with a value after `claim(_:in:)`.
  @usableFromInline
  enum Claim {
    /// Nothing: there is no observer, or the delivering thread will deliver it.
    case none
    /// Deliver to `Snapshot`, then the queued values, with `finish()`.
    case deliver(Snapshot)
  }

  @usableFromInline let state = Protected(State())

  /// Set while a thread delivers this sender's broadcasts.
  @usableFromInline static var delivering: Int { 1 }
  /// Set while `State.pending` has broadcasts: the delivering thread must
  /// not simply stop.
  @usableFromInline static var queued: Int { 2 }

  /// The two flags above. Set only under `state`'s lock; the delivering
  /// thread clears them, without the lock when nothing is queued, so that
  /// a broadcast costs one lock rather than two.
  @usableFromInline let flags = Atomic<Int>(0)

  /// Creates an empty core.
  public init() {}

  /// Whether any observer is subscribed.
  var hasObservers: Bool { state.withLock { $0.live > 0 } }

  // MARK: Broadcasting

  /// Delivers `value` to every subscribed observer (see the type's ordering rules).
  @inlinable @inline(__always)
  func broadcast(_ value: Value) {
    let claim = state.withLock { self.claim(value, in: &$0) }
    run(claim, value)
  }

  /// Decides, under the lock the caller already holds, how `value` is delivered.
  ///
  /// Holders call this from inside their own storage lock so that the order
  /// of broadcasts matches the order of their writes.
  @inlinable
  func claim(_ value: Value, in state: inout State) -> Claim {
    if state.live == 0 { return .none }
    if claimDelivery() { return .deliver(state.slots) }
    state.pending.append(Pending(value: value, causes: DeliveryContext.current.capture(), limit: state.nextSerial))
    return .none
  }

  /// Under the lock: makes the calling thread the delivering one and returns
  /// true, or, when another thread delivers, marks a broadcast queued.
  @inlinable @inline(__always)
  func claimDelivery() -> Bool {
    // Only the delivering thread's lock-free stop can change the flags
    // meanwhile; after it, the delivery is free to claim.
    var current = flags.load(ordering: .relaxed)
    while true {
      let claims = current & Self.delivering == 0
      let desired = claims ? Self.delivering : current | Self.queued
      let (exchanged, original) = flags.compareExchange(
        expected: current,
        desired: desired,
        ordering: .acquiringAndReleasing
      )
      if exchanged { return claims }
      current = original
    }
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
        // The rest are queued behind the first: make sure the delivering
        // thread (this one) looks at the queue before it stops.
        flags.bitwiseOr(Self.queued, ordering: .relaxed)
      }
      let causes = DeliveryContext.current.capture()
      let limit = state.nextSerial
      state.pending.append(contentsOf: values.dropFirst().map { Pending(value: $0, causes: causes, limit: limit) })
    }
    return claim
  }

  /// Carries out a `Claim` outside every lock.
  @inlinable @inline(__always)
  func run(_ claim: Claim, _ value: Value) {
    guard case .deliver(let snapshot) = claim else { return }
    Self.deliver(value, to: snapshot)
    finish()
  }

  /// Delivers what was queued meanwhile, then stops delivering.
  @inlinable @inline(__always)
  func finish() {
    if !flags.compareExchange(expected: Self.delivering, desired: 0, ordering: .releasing).exchanged {
      deliverQueued()
    }
  }

  /// Delivers the queued broadcasts, batch after batch, then stops delivering.
  @usableFromInline
  func deliverQueued() {
    let context = DeliveryContext.current
    while true {
      let (batch, snapshot) = state.withLock { state -> ([Pending], Snapshot) in
        if state.pending.isEmpty {
          flags.store(0, ordering: .releasing)
          return ([], [])
        }
        flags.store(Self.delivering, ordering: .relaxed)
        defer { state.pending = [] }
        return (state.pending, state.slots)
      }
      if batch.isEmpty { return }
      for pending in batch {
        context.run(with: pending.causes) {
          Self.deliver(pending.value, to: snapshot, below: pending.limit, in: context)
        }
      }
    }
  }

  /// Delivers a queued value to the subscriptions made before it.
  @usableFromInline
  static func deliver(_ value: Value, to snapshot: Snapshot, below limit: UInt64, in context: DeliveryContext) {
    snapshot.withUnsafeBufferPointer { slots in
      for index in slots.indices {
        unmanaged(slots, index)?._withUnsafeGuaranteedRef { subscription in
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

  /// Delivers a value to every subscription of `snapshot`.
  @inlinable @inline(__always)
  static func deliver(_ value: Value, to snapshot: Snapshot) {
    let context = DeliveryContext.current
    snapshot.withUnsafeBufferPointer { slots in
      for index in slots.indices {
        unmanaged(slots, index)?._withUnsafeGuaranteedRef { subscription in
          subscription.gate.deliver(value, to: subscription.handler, dropsEchoes: subscription.dropsEchoes, in: context)
        }
      }
    }
  }

  /// The subscription in `slots[index]`, for borrowing without a retain.
  ///
  /// The snapshot keeps every subscription alive, and each keeps its gate
  /// and handler. Borrowing them, rather than copying each reference out of
  /// the array, saves three retain/release pairs per observer per value.
  @inlinable @inline(__always)
  static func unmanaged(_ slots: UnsafeBufferPointer<Subscription?>, _ index: Int) -> Unmanaged<Subscription>? {
    // A `Subscription?` is a nullable reference.
    let reference = UnsafeRawPointer(slots.baseAddress.unsafelyUnwrapped + index).load(as: UnsafeRawPointer?.self)
    return reference.map { Unmanaged.fromOpaque($0) }
  }

  // MARK: Subscribing

  /// Adds an observer at the end of the list.
  func subscribe(
    gate: DeliveryGate,
    dropsEchoes: Bool = true,
    handler: @escaping (Value) -> Void
  ) -> Subscription {
    state.withLock { subscribe(gate: gate, dropsEchoes: dropsEchoes, handler: handler, in: &$0) }
  }

  /// Adds an observer at the end of the list, under the lock the caller holds.
  func subscribe(
    gate: DeliveryGate,
    dropsEchoes: Bool = true,
    handler: @escaping (Value) -> Void,
    in state: inout State
  ) -> Subscription {
    let subscription = Subscription(core: self, gate: gate, dropsEchoes: dropsEchoes, handler: handler)
    subscription.index = state.slots.count
    subscription.serial = state.nextSerial
    state.nextSerial += 1
    state.slots.append(subscription)
    state.live += 1
    return subscription
  }

  /// Removes an observer in O(1) amortized time. Removing twice does nothing.
  func unsubscribe(_ subscription: Subscription) {
    state.withLock { state in
      let index = subscription.index
      guard index >= 0, index < state.slots.count, state.slots[index] === subscription else { return }
      state.slots[index] = nil
      subscription.index = -1
      state.live -= 1
      let empty = state.slots.count - state.live
      if empty > 32, empty > state.live {
        Self.compact(&state)
      }
    }
  }

  private static func compact(_ state: inout State) {
    var compacted = ContiguousArray<Subscription?>()
    compacted.reserveCapacity(state.live)
    for case let subscription? in state.slots {
      subscription.index = compacted.count
      compacted.append(subscription)
    }
    state.slots = compacted
  }

  // MARK: - Subscription

  /// One observer's entry in a core.
  @usableFromInline
  final class Subscription: Detachable, Swift.Sendable {
    @usableFromInline let gate: DeliveryGate
    /// Whether the chain skips values it caused (see `DeliveryGate.deliver`).
    @usableFromInline let dropsEchoes: Bool
    @usableFromInline nonisolated(unsafe) let handler: (Value) -> Void
    /// The slot in `State.slots`, or -1 once removed. Guarded by the core's lock.
    nonisolated(unsafe) var index = -1
    /// The order of subscription; set under the core's lock before the
    /// subscription is visible, then constant.
    @usableFromInline nonisolated(unsafe) var serial: UInt64 = 0
    /// Weak: when the sender and its core are gone there is nothing to remove from.
    weak let core: _SenderCore?

    init(core: _SenderCore, gate: DeliveryGate, dropsEchoes: Bool, handler: @escaping (Value) -> Void) {
      self.core = core
      self.gate = gate
      self.dropsEchoes = dropsEchoes
      self.handler = handler
    }

    func detach() {
      core?.unsubscribe(self)
    }
  }
}

/// Something an observer undoes when it is invalidated.
protocol Detachable: AnyObject, Swift.Sendable {
  func detach()
}
