import Dispatch

// MARK: - QueueHop

/// Moves the rest of a chain onto a dispatch queue: what ``Chain/receive(on:)`` builds.
///
/// Values go through a private serial queue that targets the given queue,
/// so they run in the order they were sent, even on a concurrent queue. They
/// then enter a gate of their own, which the observer closes on
/// invalidation: a block still in the queue then delivers nothing, and
/// `invalidate()` waits for one already running. The value's causes travel
/// with it, so a binding loop that crosses the queue still settles.
final class QueueHop<Value: Swift.Sendable>: @unchecked Swift.Sendable {
  // @unchecked: all stored properties are constants; `downstream` runs only
  // inside `gate`, one value at a time.
  let gate = DeliveryGate(held: false, handsOff: false)
  private let queue: DispatchQueue
  private let downstream: (Value) -> Void

  init(target: DispatchQueue, downstream: @escaping (Value) -> Void) {
    queue = DispatchQueue(label: "Chaining.receive(on:)", target: target)
    self.downstream = downstream
  }

  func send(_ value: Value) {
    let causes = DeliveryContext.current.capture()
    queue.async { [self] in
      DeliveryContext.current.deliverArrived(value, causes: causes, through: gate, to: downstream)
    }
  }
}

// MARK: - IsolationHop

/// Moves the rest of a chain onto an actor: what a step built in an
/// actor-isolated context (see ``Chain/do(_:isolation:)``),
/// ``Chain/doOnMainActor(_:)`` and ``Chain/sendTo(_:)-lxwb`` build.
///
/// A value sent while the sending code already runs on the actor, and no
/// earlier value is still waiting, runs at once, synchronously; any other
/// value waits in `pending` and runs on the actor later, in the order the
/// values were sent. The actor's turn drains every waiting value, so one
/// hop has at most one turn scheduled at a time whatever the priorities of
/// the senders. Invalidation and causes work as for ``QueueHop``.
final class IsolationHop<Value>: @unchecked Swift.Sendable {
  // @unchecked: `pending` is guarded by its lock, `scheduled` is atomic; the
  // rest are constants. `downstream` runs only on the actor: inside `gate`
  // for a queued value, inside the delivering gate for one that runs at once.
  // A value that is not `Swift.Sendable` crosses to the actor as it would
  // cross threads without the hop: the chain's sender owns it, and the hop
  // only moves it.

  /// The storage of `scheduled`, reached only through it: must stay the
  /// first stored property (see `AtomicReference`: "Where the word lives").
  var scheduledStorage = false

  let gate = DeliveryGate(held: false, handsOff: false)
  /// Weak: the actor's own state usually holds the observer of a chain
  /// written in it, and so this hop; a strong reference would keep the
  /// actor alive for ever. Once it is freed, its values are dropped. Nil
  /// for the main actor, which lives for ever and is never read from here:
  /// a weak reference to it would give it a side table that outlives every
  /// reference and that LeakSanitizer reports.
  private weak var actor: (any Actor)?
  private let isMainActor: Bool
  private let downstream: (Value) -> Void
  /// Values sent while the actor was elsewhere or busy, not yet run, with
  /// their causes.
  private let pending = Protected<[(Value, Causes)]>([])
  /// Whether a turn on the actor is scheduled or running: values sent
  /// meanwhile join `pending`, to run after the earlier ones. Written only
  /// with `pending`'s lock held.
  private var scheduled: AtomicReference<Bool> {
    @inline(__always) get { AtomicReference(in: self) }
  }

  init(to actor: any Actor, downstream: @escaping (Value) -> Void) {
    isMainActor = actor === MainActor.shared
    if !isMainActor { self.actor = actor }
    self.downstream = downstream
  }

  func send(_ value: Value) {
    // The common path takes no lock: a value sent on the actor while no
    // turn is scheduled runs at once. It cannot overtake a queued value:
    // `pending` is empty whenever `scheduled` is false (both change under
    // the lock), and a value queued before this send (one whose queuing
    // happened before it) set `scheduled` with a release store that this
    // acquiring load sees. While a turn is scheduled or running it holds
    // the actor's place in line, so it cannot turn false under a sender
    // that is on the actor: only the turn itself, on the actor, clears it.
    // Checked by IsolationTests (a value sent on the main actor waits
    // behind queued ones; order from every kind of sender) under the thread
    // sanitizer.
    //
    // Such a value runs without the hop's gate: it is inside a delivery
    // through the chain's own gate (or through its only sender's claim,
    // which stands in for the gate; see `DeliveryGate.deliverAlone`) or an
    // earlier hop's gate, which already runs one value at a time, skips
    // echoes, and makes `invalidate()` wait for it. No queued value can run
    // meanwhile: queued values run only on the actor, which this thread is.
    if !scheduled.load(ordering: .acquiring), isOnActor() {
      downstream(value)
      return
    }
    let causes = DeliveryContext.current.capture()
    let startsTurn = pending.withLock { pending -> Bool in
      pending.append((value, causes))
      if scheduled.load(ordering: .relaxed) { return false }
      scheduled.store(true, ordering: .releasing)
      return true
    }
    if startsTurn { scheduleTurn() }
  }

  /// Whether the calling code runs on the actor: false once it is freed.
  private func isOnActor() -> Bool {
    if isMainActor { return isOnMainActor }
    guard let actor else { return false }
    return isCurrentlyIsolated(to: actor, isMainActor: false)
  }

  /// Schedules `drain()` on the actor: a block of the main queue for the
  /// main actor (as `DispatchQueue.main.async` code expects), a task that
  /// enters the actor for any other. Neither runs it before returning.
  private func scheduleTurn() {
    if isMainActor {
      DispatchQueue.main.async { [self] in drain() }
    } else if let actor {
      // The task holds the actor until the turn has run.
      Task { [self] in await Self.drain(self, on: actor) }
    }
  }

  private static func drain(_ hop: IsolationHop, on actor: isolated any Actor) {
    hop.drain()
  }

  /// Runs on the actor: every waiting value, in order, including those
  /// sent while it runs; then lets the next value run at once again.
  private func drain() {
    while true {
      let batch = pending.withLock { pending -> [(Value, Causes)] in
        if pending.isEmpty {
          scheduled.store(false, ordering: .releasing)
          return []
        }
        defer { pending = [] }
        return pending
      }
      if batch.isEmpty { return }
      let context = DeliveryContext.current
      for (value, causes) in batch {
        // Each value a wave of its own, as after a `QueueHop`.
        context.deliverArrived(value, causes: causes, through: gate, to: downstream)
      }
    }
  }
}
