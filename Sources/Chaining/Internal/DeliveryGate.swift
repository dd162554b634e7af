import Synchronization

// MARK: - DeliveryGate

/// Serializes the deliveries into one finished chain and makes invalidation final.
///
/// Every value that enters a chain, from any of its sources or from `sync()`,
/// passes through the chain's gate:
/// - A value that has already passed through this chain (an echo coming back
///   through a binding loop, on this thread or another) is dropped. This is
///   what lets two-way bindings settle, whatever the value type.
/// - Otherwise, when nobody is running the chain, the calling thread runs it
///   at once.
/// - When the chain is running (on another thread, or further up this
///   thread's stack), the value is queued and run right after the values
///   before it. The sending thread never blocks, so chains feeding each
///   other from several threads cannot deadlock.
///
/// `close()` makes sure no run starts afterwards and, unless that could
/// deadlock, waits for a run in progress on another thread to finish.
///
/// The common path takes no lock: a value claims the gate with one atomic
/// compare-and-swap and releases it with another. A thread that finds the
/// gate running, a closer that must wait, and a runner that finds values
/// queued meet under the lock of the gate's ``ParkingLot`` stripe.
///
/// A chain whose only source is one sender core needs neither: that core
/// already delivers one value at a time. Such a gate is marked `alone` when
/// the chain starts, and the core, when its list has this chain alone, runs
/// it without claiming the gate (`deliverAlone`). The core then tells
/// `invalidate()` whether to wait (`_SenderCore.unsubscribe(_:awaitingAlone:)`).
@usableFromInline
final class DeliveryGate: @unchecked Swift.Sendable {
  // @unchecked: `pending` is guarded by the gate's ParkingLot stripe; the
  // thread that set `running` in `word` is the only one running the chain.

  /// Set while a thread runs the chain.
  @usableFromInline static let running = 1
  /// Set while `pending` has runs: the runner must not simply stop.
  @usableFromInline static let queued = 2
  /// Set while a `close()` waits for the run to end.
  @usableFromInline static let waiting = 4
  /// Set once by `close()`; no run starts afterwards.
  @usableFromInline static let closed = 8
  /// Set when the chain starts, when its only source is one sender core:
  /// that core's deliveries may then run it without claiming (see the
  /// type's discussion). Never cleared.
  @usableFromInline static let alone = 16

  /// The flags above. Changes other than the two fast ones (claiming an
  /// idle gate, `0 → running`, and releasing a gate nobody waits for,
  /// `running → 0`, each keeping `alone`) are made under the stripe's lock.
  @usableFromInline let word: Atomic<Int>

  /// Runs queued while the chain was running. Guarded by the stripe's lock.
  @usableFromInline @exclusivity(unchecked) var pending: [Queued] = []

  @usableFromInline
  struct Queued {
    @usableFromInline let causes: Causes
    @usableFromInline let run: () -> Void

    @usableFromInline
    init(causes: Causes, run: @escaping () -> Void) {
      self.causes = causes
      self.run = run
    }
  }

  /// Creates a gate.
  ///
  /// - Parameter held: Whether the creating thread holds it until
  ///   `start(with:)`: true for a chain's main gate, so that nothing runs
  ///   before `sync()`'s fetched values; false for a hop's.
  init(held: Bool) {
    word = Atomic(held ? Self.running : 0)
  }

  /// Whether `close()` has been called.
  var isClosed: Bool { word.load(ordering: .acquiring) & Self.closed != 0 }

  /// Runs `body(value)` under the gate's rules (see the type's discussion).
  ///
  /// With `dropsEchoes` false, a value this chain caused is run too (after
  /// the current one): for commands to the chain itself, such as a
  /// suspender's changes. `context` is the calling thread's.
  @inlinable @inline(__always)
  func deliver<Value>(
    _ value: Value,
    to body: @escaping (Value) -> Void,
    dropsEchoes: Bool = true,
    in context: DeliveryContext
  ) {
    if dropsEchoes, context.isCaused(by: self) { return }
    let idle = word.load(ordering: .relaxed) & Self.alone
    let (claimed, original) = word.compareExchange(
      expected: idle,
      desired: idle | Self.running,
      ordering: .acquiring
    )
    if claimed {
      run(value, body, releasing: idle | Self.running, to: idle, in: context)
    } else if original & Self.closed == 0, queue(value, body, in: context) {
      let idle = original & Self.alone
      run(value, body, releasing: idle | Self.running, to: idle, in: context)
    }
  }

  /// Runs `body(value)` without claiming the gate, when it is `alone` and
  /// open; otherwise like `deliver`.
  ///
  /// Only for a sender core delivering from a list that has this chain
  /// alone, while it holds its delivery: nothing else can run the chain
  /// then, and the core's claim, made before, pairs with `close()` (see
  /// `_SenderCore.deliversAlone(to:in:)`).
  @inlinable @inline(__always)
  func deliverAlone<Value>(
    _ value: Value,
    to body: @escaping (Value) -> Void,
    dropsEchoes: Bool,
    in context: DeliveryContext
  ) {
    // Sequentially consistent: this load comes after the core's claim, as
    // `close()`'s load of the core comes after its change of this word.
    guard word.load(ordering: .sequentiallyConsistent) == Self.alone else {
      deliver(value, to: body, dropsEchoes: dropsEchoes, in: context)
      return
    }
    if dropsEchoes, context.isCaused(by: self) { return }
    context.enter(self)
    body(value)
    context.popCause()
    context.leave()
  }

  /// Whether deliveries may run the chain without claiming the gate.
  var isAlone: Bool { word.load(ordering: .relaxed) & Self.alone != 0 }

  /// Runs `body(value)` on the thread that claimed the gate, then releases
  /// it from `claimed` to `idle` (0, or `alone`).
  @inlinable @inline(__always)
  func run<Value>(
    _ value: Value,
    _ body: (Value) -> Void,
    releasing claimed: Int,
    to idle: Int,
    in context: DeliveryContext
  ) {
    context.enter(self)
    body(value)
    context.popCause()
    release(claimed, to: idle, in: context)
    context.leave()
  }

  /// Releases the claimed gate, from `claimed` to `idle`: at once when
  /// nothing is queued and nobody waits, otherwise after running what was
  /// queued.
  @inlinable @inline(__always)
  func release(_ claimed: Int, to idle: Int, in context: DeliveryContext) {
    if !word.compareExchange(expected: claimed, desired: idle, ordering: .releasing).exchanged {
      runPending(leaving: idle, in: context)
    }
  }

  /// The slow path of `deliver`: claims the gate if it turns out idle
  /// (returns true), otherwise queues the run or, when closed, drops it.
  @usableFromInline
  func queue<Value>(_ value: Value, _ body: @escaping (Value) -> Void, in context: DeliveryContext) -> Bool {
    ParkingLot.shared.withLock(self) {
      let original = word.update { current in
        if current & Self.closed != 0 { return nil }
        return current | (current & Self.running == 0 ? Self.running : Self.queued)
      }
      if original & Self.closed != 0 { return false }
      let claims = original & Self.running == 0
      if !claims {
        pending.append(Queued(causes: context.capture()) { body(value) })
      }
      return claims
    }
  }

  /// Opens the gate once the chain is finished: runs `first` (the fetches of
  /// `sync()`, in order), then what arrived while the chain was being
  /// finished, then lets values in, marking the gate `alone` when `alone`.
  ///
  /// Called once, by the thread that finished the chain, which holds the gate.
  func start(with first: [() -> Void], alone: Bool) {
    let idle = alone ? Self.alone : 0
    // Nothing to fetch and nothing arrived: just let values in.
    if first.isEmpty, word.compareExchange(expected: Self.running, desired: idle, ordering: .releasing).exchanged {
      return
    }
    run(
      (),
      { _ in for fetch in first where !isClosed { fetch() } },
      releasing: Self.running,
      to: idle,
      in: .current
    )
  }

  /// Runs what was queued meanwhile, until the queue is empty, then releases
  /// the gate to `idle` (keeping `closed`) and wakes a waiting `close()`.
  @usableFromInline
  func runPending(leaving idle: Int, in context: DeliveryContext) {
    while true {
      let batch = ParkingLot.shared.withLock(self) { () -> [Queued] in
        if pending.isEmpty {
          let released = (word.load(ordering: .relaxed) & Self.closed) | idle
          let original = word.exchange(released, ordering: .acquiringAndReleasing)
          if original & Self.waiting != 0 { ParkingLot.shared.wakeAll(self) }
          return []
        }
        word.bitwiseAnd(~Self.queued, ordering: .relaxed)
        defer { pending = [] }
        return pending
      }
      if batch.isEmpty { return }
      for queued in batch where !isClosed {
        context.run(with: queued.causes, adding: self, queued.run)
      }
    }
  }

  /// Stops all further runs.
  ///
  /// After `close()` returns no run starts. A run in progress on another
  /// thread is waited for, except when the calling thread is itself inside
  /// a delivery: two handlers closing each other's chains from two threads
  /// would otherwise wait for each other forever. A run that did not claim
  /// the gate (`deliverAlone`) is not waited for here: the observer then
  /// asks the sender core (see `Observer.invalidate()`).
  ///
  /// Returns whether this call closed the gate, rather than an earlier one.
  @discardableResult
  func close() -> Bool {
    // Not running: nothing is pending and nobody waits, so the stripe's
    // lock is not needed. Acquiring: a run that ended before is ordered
    // before the return. Sequentially consistent: see `deliverAlone`.
    var current = word.load(ordering: .acquiring)
    while current & Self.running == 0 {
      if current & Self.closed != 0 { return false }
      let (exchanged, original) = word.compareExchange(
        expected: current,
        desired: current | Self.closed,
        ordering: .sequentiallyConsistent
      )
      if exchanged { return true }
      current = original
    }
    return closeRunning()
  }

  /// `close()` while a run may be in progress.
  private func closeRunning() -> Bool {
    let waits = DeliveryContext.current.depth == 0
    let (original, dropped) = ParkingLot.shared.withLock(self) { () -> (Int, [Queued]) in
      // Only the two fast changes can happen meanwhile. Sequentially
      // consistent: see `deliverAlone`.
      let original = word.update(sequentiallyConsistent: true) { current in
        let running = current & Self.running != 0
        return (current | Self.closed | (running && waits ? Self.waiting : 0)) & ~Self.queued
      }
      defer { pending = [] }
      return (original, pending)
    }
    _ = consume dropped  // released here, outside the lock
    if original & Self.running != 0, waits {
      ParkingLot.shared.wait(for: self) { word.load(ordering: .acquiring) & Self.running == 0 }
    }
    return original & Self.closed == 0
  }
}
