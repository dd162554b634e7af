// MARK: - debounce

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Chain where Value: Swift.Sendable {
  /// Sends a value once `interval` has passed with no newer value: the
  /// last of each burst.
  ///
  /// Search-as-you-type waits for the user to pause:
  ///
  /// ```swift
  /// let query = ValueHolder("")
  /// let observer = query.chain()
  ///   .debounce(for: .milliseconds(300))
  ///   .do { print("search for", $0) }
  ///   .end()
  /// query.value = "s"
  /// query.value = "sw"
  /// query.value = "swift"
  /// // 300 ms after the last write, prints "search for swift"
  /// ```
  ///
  /// Each value restarts the wait; the value sent is the last one, when
  /// the wait ends. The value ``sync()`` sends is timed like the others.
  ///
  /// - Parameters:
  ///   - interval: How long the chain must be quiet, in `clock`'s duration.
  ///     Must not be negative.
  ///   - clock: The clock that measures it: `ContinuousClock()` by default;
  ///     `ChainingTesting`'s `TestClock` in tests.
  /// - Returns: A chain of the values that were not followed by another
  ///   within `interval`.
  ///
  /// The value is delivered on the thread of the clock's timer: a task of
  /// the global executor for a system clock (`sleep(until:)`), the thread
  /// that advances the clock for a ``TimerClock``. It re-enters the chain
  /// through a gate of this step: one value at a time, with the causes it
  /// arrived with. Later steps written on an actor hop back to it. The
  /// finished observer holds the waiting value and the timer; after
  /// `invalidate()` returns, nothing more is delivered, and the timer is
  /// cancelled, releasing both. A value arriving costs a lock and a reading
  /// of the clock; a burst starts one timer.
  @inlinable
  public consuming func debounce<C: Clock>(
    for interval: C.Duration,
    clock: C = ContinuousClock()
  ) -> Chain<Value, Source> {
    appendingTimed("debounce(for:clock:)", interval: interval) { downstream, context in
      let step = Debounce(clock: clock, interval: interval, downstream: downstream, context: context)
      return { value in step.receive(value) }
    }
  }
}

/// One finished chain's `debounce` step.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@usableFromInline
final class Debounce<C: Clock, Value>: TimedStep<C, Value, Debounce.Waiting?>, @unchecked Swift.Sendable {
  // @unchecked: as `TimedStep`; its state is in `state`.
  /// The value waiting to be sent, when it is due, and with its causes.
  @usableFromInline
  struct Waiting {
    @usableFromInline var value: Value
    @usableFromInline var causes: Causes
    @usableFromInline var deadline: C.Instant
    /// Whether the timer is armed (for this deadline or an earlier one).
    @usableFromInline var armed: Bool

    @inlinable
    init(value: Value, causes: Causes, deadline: C.Instant, armed: Bool) {
      self.value = value
      self.causes = causes
      self.deadline = deadline
      self.armed = armed
    }
  }

  @usableFromInline
  init(clock: C, interval: C.Duration, downstream: @escaping (Value) -> Void, context: _ChainContext) {
    super.init(clock: clock, interval: interval, initial: nil, downstream: downstream, context: context)
  }

  /// A value arriving: specialized in the client's module (inlinable), so
  /// that it costs a clock reading and a lock, not generic metadata
  /// lookups.
  @inlinable
  func receive(_ value: Value) {
    let deadline = now.advanced(by: interval)
    let causes = DeliveryContext.current.capture()
    let arms = state.withLock { timed -> Bool in
      let armed = timed.step?.armed ?? false
      timed.step = Waiting(value: value, causes: causes, deadline: deadline, armed: true)
      return !armed
    }
    if arms { arm(at: deadline) }
  }

  /// Sends the waiting value if its deadline has come, or waits again for
  /// a deadline a newer value moved.
  override func firing(at now: C.Instant, _ waiting: inout Waiting?) -> Firing {
    guard let due = waiting else { return Firing() }
    if due.deadline > now { return Firing(next: due.deadline) }
    waiting = nil
    return Firing(values: [(due.value, due.causes)])
  }
}
