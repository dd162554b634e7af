// MARK: - delay

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Chain where Value: Swift.Sendable {
  /// Sends every value `interval` after it arrives, in order.
  ///
  /// ```swift
  /// let status = ValueHolder("")
  /// let observer = status.chain()
  ///   .delay(for: .seconds(2))
  ///   .do { print("shown:", $0) }
  ///   .end()
  /// status.value = "Saved"
  /// // 2 s later, prints "shown: Saved"
  /// ```
  ///
  /// The value ``sync()`` sends is delayed like the others.
  ///
  /// - Parameters:
  ///   - interval: How long each value waits, in `clock`'s duration. Must
  ///     not be negative.
  ///   - clock: The clock that measures it: `ContinuousClock()` by default;
  ///     `ChainingTesting`'s `TestClock` in tests.
  /// - Returns: A chain of the same values, each `interval` later.
  ///
  /// Values are delivered on the thread of the clock's timer (a task of the
  /// global executor for a system clock, the thread that advances a
  /// ``TimerClock``), through a gate of this step: one value at a time, in
  /// the order they arrived, each with the causes it arrived with. Later
  /// steps written on an actor hop back to it. The finished observer holds
  /// the waiting values and one timer, for the earliest; after
  /// `invalidate()` returns, nothing more is delivered and the timer is
  /// cancelled, releasing them.
  @inlinable
  public consuming func delay<C: Clock>(
    for interval: C.Duration,
    clock: C = ContinuousClock()
  ) -> Chain<Value, Source> {
    appendingTimed("delay(for:clock:)", interval: interval) { downstream, context in
      let step = Delay(clock: clock, interval: interval, downstream: downstream, context: context)
      return { value in step.receive(value) }
    }
  }
}

/// One finished chain's `delay` step.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@usableFromInline
final class Delay<C: Clock, Value>: TimedStep<C, Value, Delay.Waiting>, @unchecked Swift.Sendable {
  // @unchecked: as `TimedStep`; its state is in `state`.

  /// The values waiting, in arrival order (and so in deadline order: the
  /// clock's time only moves on), and whether the timer is armed for the
  /// first.
  @usableFromInline
  struct Waiting {
    @usableFromInline var values: [(value: Value, causes: Causes, deadline: C.Instant)] = []
    @usableFromInline var armed = false

    @usableFromInline
    init() {}
  }

  @usableFromInline
  init(clock: C, interval: C.Duration, downstream: @escaping (Value) -> Void, context: _ChainContext) {
    super.init(clock: clock, interval: interval, initial: Waiting(), downstream: downstream, context: context)
  }

  /// A value arriving: specialized in the client's module (inlinable), as
  /// `Debounce.receive(_:)`.
  @inlinable
  func receive(_ value: Value) {
    let deadline = now.advanced(by: interval)
    let causes = DeliveryContext.current.capture()
    let arms = state.withLock { timed -> Bool in
      timed.step.values.append((value, causes, deadline))
      if timed.step.armed { return false }
      timed.step.armed = true
      return true
    }
    if arms { arm(at: deadline) }
  }

  /// Sends every value that is due, and waits for the next one.
  override func firing(at now: C.Instant, _ waiting: inout Waiting) -> Firing {
    let due = waiting.values.prefix { $0.deadline <= now }
    waiting.values.removeFirst(due.count)
    let next = waiting.values.first?.deadline
    waiting.armed = next != nil
    return Firing(values: due.map { ($0.value, $0.causes) }, next: next)
  }
}
