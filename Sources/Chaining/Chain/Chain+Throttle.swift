// MARK: - throttle

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension Chain where Value: Swift.Sendable {
  /// Sends at most one value per `interval`: the first at once, then one at
  /// the end of each interval in which values arrived.
  ///
  /// Scrolling and sensors send faster than a view needs:
  ///
  /// ```swift
  /// let offset = ValueHolder(0.0)
  /// let observer = offset.chain()
  ///   .throttle(for: .milliseconds(100))
  ///   .do { print("offset", $0) }
  ///   .end()
  /// offset.value = 1  // prints "offset 1.0" at once
  /// offset.value = 2
  /// offset.value = 3
  /// // 100 ms after the first, prints "offset 3.0"
  /// ```
  ///
  /// - The first value of an idle throttle goes at once, synchronously, on
  ///   the sending thread, and starts an interval.
  /// - A value arriving during an interval waits for its end: at the end,
  ///   the latest one that arrived (`latest: true`) or the first
  ///   (`latest: false`) is sent, and the next interval starts.
  /// - An interval in which nothing arrived ends the busy period: the next
  ///   value goes at once again.
  ///
  /// The value ``sync()`` sends is timed like the others: the first value
  /// of an idle throttle, it goes at once.
  ///
  /// - Parameters:
  ///   - interval: The shortest time between two values sent, in `clock`'s
  ///     duration. Must not be negative.
  ///   - clock: The clock that measures it: `ContinuousClock()` by default;
  ///     `ChainingTesting`'s `TestClock` in tests.
  ///   - latest: Whether an interval's end sends the latest value that
  ///     arrived during it (`true`, the default) or the first.
  /// - Returns: A chain of at most one value per interval.
  ///
  /// A value sent at an interval's end is delivered on the thread of the
  /// clock's timer (a task of the global executor for a system clock, the
  /// thread that advances a ``TimerClock``), through a gate of this step:
  /// one value at a time, in order, with the causes it arrived with. Later
  /// steps written on an actor hop back to it. The finished observer holds
  /// the waiting value and the timer; after `invalidate()` returns, nothing
  /// more is delivered and the timer is cancelled, releasing both.
  @inlinable
  public consuming func throttle<C: Clock>(
    for interval: C.Duration,
    clock: C = ContinuousClock(),
    latest: Bool = true
  ) -> Chain<Value, Source> {
    appendingTimed("throttle(for:clock:latest:)", interval: interval) { downstream, context in
      let step = Throttle(
        clock: clock,
        interval: interval,
        latest: latest,
        downstream: downstream,
        context: context
      )
      return { value in step.receive(value) }
    }
  }
}

/// One finished chain's `throttle` step.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@usableFromInline
final class Throttle<C: Clock, Value>: TimedStep<C, Value, Throttle.Interval?>, @unchecked Swift.Sendable {
  // @unchecked: as `TimedStep`; its state is in `state`, `latest` is a constant.
  @usableFromInline let latest: Bool

  /// The interval running: when it ends, and the value waiting for its end.
  @usableFromInline
  struct Interval {
    @usableFromInline var end: C.Instant
    @usableFromInline var waiting: (Value, Causes)?

    @inlinable
    init(end: C.Instant, waiting: (Value, Causes)? = nil) {
      self.end = end
      self.waiting = waiting
    }
  }

  @usableFromInline
  init(
    clock: C,
    interval: C.Duration,
    latest: Bool,
    downstream: @escaping (Value) -> Void,
    context: _ChainContext
  ) {
    self.latest = latest
    super.init(clock: clock, interval: interval, initial: nil, downstream: downstream, context: context)
  }

  /// A value arriving: specialized in the client's module (inlinable), as
  /// `Debounce.receive(_:)`.
  @inlinable
  func receive(_ value: Value) {
    let end = now.advanced(by: interval)
    let starts = state.withLock { timed -> Bool in
      guard timed.step != nil else {
        timed.step = Interval(end: end)
        return true
      }
      if latest || timed.step?.waiting == nil {
        timed.step?.waiting = (value, DeliveryContext.current.capture())
      }
      return false
    }
    guard starts else { return }
    sendNow(value)
    arm(at: end)
  }

  /// At an interval's end: sends the value that waited and starts the next
  /// interval, or ends the busy period when none did.
  override func firing(at now: C.Instant, _ interval: inout Interval?) -> Firing {
    guard let ended = interval else { return Firing() }
    guard let waiting = ended.waiting else {
      interval = nil
      return Firing()
    }
    let next = ended.end.advanced(by: self.interval)
    interval = Interval(end: next)
    return Firing(values: [waiting], next: next)
  }
}
