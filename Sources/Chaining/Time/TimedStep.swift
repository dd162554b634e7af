// MARK: - TimedStep

/// What the time steps share: the gate that timed values re-enter the chain
/// through, one timer at a time on the step's clock, and the end of both
/// when the observer is invalidated.
///
/// A subclass keeps its own `State` in `state`, decides under its lock when
/// to arm the timer and what a firing sends, and sends with `send(_:)`,
/// never with the lock held. Values re-enter through `gate`, one at a time,
/// in the order they are sent, each with the causes it arrived with, so a
/// two-way binding through a time step still settles. The observer closes
/// the gate when it is invalidated (nothing is delivered after
/// `invalidate()` returns), then calls `end()`, which drops the waiting
/// values and cancels the timer, releasing what it captured.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@usableFromInline
class TimedStep<C: Clock, Value, State>: @unchecked Swift.Sendable {
  // @unchecked: `state` is guarded by its lock; the rest are constants.
  // `downstream` runs only inside `gate`.
  @usableFromInline let gate = DeliveryGate(held: false, handsOff: false)
  @usableFromInline let timers: ClockTimers<C>
  @usableFromInline let interval: C.Duration
  @usableFromInline let downstream: (Value) -> Void
  private let initial: State
  @usableFromInline let state: Protected<Timed>

  /// The step's state, with the timer's.
  @usableFromInline
  struct Timed {
    @usableFromInline var step: State
    /// The handle of the timer last armed, to cancel at the end.
    var handle: TimerHandle?
    /// Counts the timers armed, so that a handle stored late (the timer
    /// fired and armed the next one first) does not replace a newer one.
    var generation = 0
    /// Set once the observer is invalidated: nothing is armed any more.
    var ended = false
  }

  @usableFromInline
  init(
    clock: C,
    interval: C.Duration,
    initial: State,
    downstream: @escaping (Value) -> Void,
    context: _ChainContext
  ) {
    timers = ClockTimers(clock)
    self.interval = interval
    self.initial = initial
    self.downstream = downstream
    state = Protected(Timed(step: initial))
    context.addHopGate(gate)
    context.addInvalidationHandler { [self] in end() }
  }

  @inlinable
  var now: C.Instant { timers.clock.now }

  /// Arms the timer for `deadline`. Called with no lock held, once the
  /// subclass has decided under the lock that no timer is armed.
  @usableFromInline
  final func arm(at deadline: C.Instant) {
    let generation = state.withLock { timed -> Int? in
      if timed.ended { return nil }
      timed.generation += 1
      return timed.generation
    }
    guard let generation else { return }
    let handle = timers.startTimer(at: deadline) { [self] in fire() }
    let cancels = state.withLock { timed -> Bool in
      if timed.ended { return true }
      if timed.generation == generation { timed.handle = handle }
      return false
    }
    if cancels { handle.cancel() }
  }

  /// What a firing does: the values to send, in order, and the deadline
  /// to arm the timer for next, if any.
  struct Firing {
    var values: [(Value, Causes)] = []
    var next: C.Instant?
  }

  /// Decides, under the lock, what the timer firing at `now` does, and
  /// updates the step's state. Overridden by each step.
  func firing(at now: C.Instant, _ step: inout State) -> Firing {
    Firing()
  }

  /// Runs when the armed timer fires, on the clock's thread: sends what
  /// `firing(at:_:)` decided, then arms the next timer. Sending first keeps
  /// the order: the next firing cannot start before these values are in.
  private func fire() {
    let now = self.now
    let decided = state.withLock { timed -> Firing in
      if timed.ended { return Firing() }
      return self.firing(at: now, &timed.step)
    }
    for (value, causes) in decided.values {
      send(value, causes: causes)
    }
    if let next = decided.next { arm(at: next) }
  }

  /// Sends `value` down the chain through the step's gate, with `causes`
  /// installed: the causes the value arrived with.
  private func send(_ value: Value, causes: Causes) {
    // A timer's delivery starts a wave of its own.
    DeliveryContext.current.deliverArrived(value, causes: causes, through: gate, to: downstream)
  }

  /// Sends `value` at once, on the calling thread, inside the delivery that
  /// brought it (throttle's first value).
  @usableFromInline
  final func sendNow(_ value: Value) {
    gate.deliver(value, to: downstream, in: DeliveryContext.current)
  }

  /// The observer was invalidated: drops the waiting values and cancels the
  /// timer. The gate is already closed, so a firing that races with this
  /// delivers nothing.
  private func end() {
    let handle = state.withLock { timed -> TimerHandle? in
      timed.ended = true
      timed.step = initial
      return timed.handle.take()
    }
    handle?.cancel()
  }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Chain where Value: Swift.Sendable {
  /// Returns the chain with a time step: `makeStep` builds the step's
  /// receiving function for each finished chain. `call` names the public
  /// step for the message when `interval` is negative. Timed values come on
  /// the clock's thread, so no actor is known for them afterwards.
  @usableFromInline
  consuming func appendingTimed<Duration: DurationProtocol>(
    _ call: String,
    interval: Duration,
    _ makeStep: @escaping (_ downstream: @escaping (Value) -> Void, _ context: _ChainContext) -> (Value) -> Void
  ) -> Chain<Value, Source> {
    precondition(interval >= .zero, "Chain.\(call): the interval \(interval) is negative")
    return appending(makeStep).onAnyThread()
  }
}
