import Chaining
// Foundation for `NSLock`: the thread sanitizer understands its pthread
// mutex on every platform.
import Foundation

// MARK: - TestClock

/// A clock whose time moves only when told: the way to test code that uses
/// Chaining's time steps, with no sleeping.
///
/// Pass it as the `clock` of `debounce(for:clock:)`,
/// `throttle(for:clock:latest:)` or
/// `delay(for:clock:)`, then move its time:
///
/// ```swift
/// import Chaining
/// import ChainingTesting
///
/// let clock = TestClock()
/// let query = ValueHolder("")
/// var searches: [String] = []
/// let observer = query.chain()
///   .debounce(for: .milliseconds(300), clock: clock)
///   .do { searches.append($0) }
///   .end()
/// query.value = "sw"
/// query.value = "swift"
/// await clock.advance(by: .milliseconds(299))
/// // searches == []
/// await clock.advance(by: .milliseconds(1))
/// // searches == ["swift"]
/// ```
///
/// `advance(by:)`, `advance(to:)` and `run()` return only once every value
/// due by then has been delivered: the time steps hand their timers to the
/// clock (it adopts `TimerClock`), and the clock runs them, in
/// deadline order, on the thread that advances it, with its time set to
/// each timer's deadline while it runs. A test reads its results right
/// after, with no sleeping and no yielding loops.
///
/// It is also a `Clock` for other code: `sleep(until:tolerance:)` suspends
/// until the time is advanced past the deadline (or the task is
/// cancelled). Such a sleeper is resumed by the advance, but runs after it,
/// in its own task.
///
/// Thread-safe: time may be read, timers started and cancelled from any
/// thread. Advance it from one task at a time.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public final class TestClock: Clock, TimerClock, @unchecked Swift.Sendable {
  // @unchecked: `state` is guarded by `lock`.

  /// A point in a test clock's time: how long after its start.
  public struct Instant: InstantProtocol, CustomStringConvertible {
    /// The time since the clock's start.
    public var offset: Swift.Duration

    /// The instant `offset` after the clock's start.
    public init(offset: Swift.Duration) {
      self.offset = offset
    }

    /// The instant `duration` later (earlier, when negative).
    public func advanced(by duration: Swift.Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    /// The time from this instant to `other`.
    public func duration(to other: Instant) -> Swift.Duration {
      other.offset - offset
    }

    /// Whether `lhs` comes before `rhs`.
    public static func < (lhs: Instant, rhs: Instant) -> Bool {
      lhs.offset < rhs.offset
    }

    /// "start + " and the offset, as in "start + 2.0 seconds".
    public var description: String { "start + \(offset)" }
  }

  /// A timer or a sleeper, due at `deadline`; `order` keeps the start order
  /// of those due at the same time.
  private struct Waiter {
    let deadline: Instant
    let order: Int
    let wake: @Sendable () -> Void
  }

  private struct State {
    var now: Instant
    var waiters: [Int: Waiter] = [:]
    var nextOrder = 0
    /// Tasks in `waitForPending(_:)`, with the count each waits for.
    var countWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let lock = NSLock()
  private var state: State

  /// A clock whose time starts at `now`.
  ///
  /// - Parameter now: The clock's time at first: its start by default.
  public init(now: Instant = Instant(offset: .zero)) {
    state = State(now: now)
  }

  /// The clock's time. It moves only when `advance(by:)`, `advance(to:)`
  /// or `run()` moves it.
  public var now: Instant {
    lock.withLock { state.now }
  }

  /// Zero: any duration can be advanced by.
  public var minimumResolution: Swift.Duration { .zero }

  /// How many timers and sleepers wait for a time the clock has not reached.
  public var pendingCount: Int {
    lock.withLock { state.waiters.count }
  }

  /// Returns once at least `count` timers and sleepers wait, such as a
  /// task that has reached its `sleep(until:)`: the way to know, without
  /// yielding in a loop, that another task is waiting before advancing.
  ///
  /// - Parameter count: How many waiters to wait for.
  public func waitForPending(_ count: Int) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = lock.withLock { () -> Bool in
        if state.waiters.count >= count { return true }
        state.countWaiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  // MARK: Timers and sleepers

  /// Runs `fire` when the clock is advanced to `deadline` or past it; see
  /// `TimerClock`. A deadline already reached fires at the next
  /// advance, even by zero.
  public func startTimer(at deadline: Instant, _ fire: @escaping @Sendable () -> Void) -> TimerHandle {
    let order = add(Waiter(deadline: deadline, order: 0, wake: fire))
    return TimerHandle { [weak self] in self?.remove(order) }
  }

  /// Suspends until the clock is advanced to `deadline` or past it.
  ///
  /// Returns at once when the clock is there already. Throws
  /// `CancellationError` when the task is cancelled while it waits.
  public func sleep(until deadline: Instant, tolerance: Swift.Duration? = nil) async throws {
    if deadline <= now { return }
    let order = ReservedOrder()
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
        let resumed = ResumeOnce(continuation)
        let number = add(Waiter(deadline: deadline, order: 0) { resumed.resume(throwing: nil) })
        if !order.set(number) {
          // Cancelled before the waiter was added.
          remove(number)
          resumed.resume(throwing: CancellationError())
        } else {
          order.onCancel = { [weak self] in
            self?.remove(number)
            resumed.resume(throwing: CancellationError())
          }
        }
      }
    } onCancel: {
      order.cancel()
    }
  }

  /// Adds `waiter` and returns its number (its start order).
  private func add(_ waiter: Waiter) -> Int {
    let (order, ready) = lock.withLock { () -> (Int, [CheckedContinuation<Void, Never>]) in
      let order = state.nextOrder
      state.nextOrder += 1
      state.waiters[order] = Waiter(deadline: waiter.deadline, order: order, wake: waiter.wake)
      let count = state.waiters.count
      let ready = state.countWaiters.filter { $0.count <= count }.map(\.continuation)
      state.countWaiters.removeAll { $0.count <= count }
      return (order, ready)
    }
    for continuation in ready { continuation.resume() }
    return order
  }

  private func remove(_ order: Int) {
    // Released outside the lock: a timer's closure may hold the last
    // reference to what its step captured.
    let removed = lock.withLock { state.waiters.removeValue(forKey: order) }
    _ = removed
  }

  // MARK: Moving time

  /// Moves the clock's time on by `duration`, running every timer due by
  /// then, in deadline order, and returns once they have run.
  ///
  /// - Parameter duration: How far to move. Must not be negative.
  public func advance(by duration: Swift.Duration) async {
    precondition(duration >= .zero, "TestClock.advance(by:): the duration \(duration) is negative")
    await advance(to: now.advanced(by: duration))
  }

  /// Moves the clock's time to `deadline`, running every timer due by then,
  /// in deadline order (start order for equal deadlines), with the time set
  /// to each one's deadline while it runs, and returns once they have run.
  /// A timer that a running timer starts runs too when it is due by
  /// `deadline`.
  ///
  /// - Parameter deadline: The time to move to. Must not be before `now`.
  public func advance(to deadline: Instant) async {
    let start = now
    precondition(
      deadline >= start,
      "TestClock.advance(to:): \(deadline) is before the clock's time, \(start)"
    )
    while let due = nextWaiter(dueBy: deadline) {
      due.wake()
    }
    lock.withLock { state.now = max(state.now, deadline) }
  }

  /// Advances the clock to each waiting timer's deadline in turn until none
  /// waits, and returns once they have run.
  ///
  /// A timer that keeps starting new ones (a `throttle` that keeps
  /// receiving values from its own handler) would run forever: `run()`
  /// stops with a precondition failure after `limit` timers.
  ///
  /// - Parameter limit: The most timers to run. 100_000 by default.
  public func run(limit: Int = 100_000) async {
    var count = 0
    while let next = lock.withLock({ state.waiters.values.min(by: Self.runsFirst)?.deadline }) {
      count += 1
      precondition(
        count <= limit,
        "TestClock.run(limit:): more than \(limit) timers ran; a timer keeps starting new ones"
      )
      await advance(to: max(next, now))
    }
  }

  /// Takes the first waiter due by `deadline`, setting the time to its
  /// deadline; nil when none is due.
  private func nextWaiter(dueBy deadline: Instant) -> Waiter? {
    lock.withLock {
      guard let first = state.waiters.values.min(by: Self.runsFirst), first.deadline <= deadline else {
        return nil
      }
      state.waiters.removeValue(forKey: first.order)
      state.now = max(state.now, first.deadline)
      return first
    }
  }

  private static func runsFirst(_ one: Waiter, _ other: Waiter) -> Bool {
    (one.deadline, one.order) < (other.deadline, other.order)
  }
}

// MARK: - Sleeping support

/// Resumes a continuation once, whichever of the wake-up and the
/// cancellation comes first.
private final class ResumeOnce: @unchecked Swift.Sendable {
  // @unchecked: `continuation` is taken under `lock`.
  private let lock = NSLock()
  private var continuation: CheckedContinuation<Void, Error>?

  init(_ continuation: CheckedContinuation<Void, Error>) {
    self.continuation = continuation
  }

  func resume(throwing error: Error?) {
    let taken = lock.withLock { () -> CheckedContinuation<Void, Error>? in
      defer { continuation = nil }
      return continuation
    }
    if let error { taken?.resume(throwing: error) } else { taken?.resume() }
  }
}

/// The number of a sleeper's waiter, set once it is added, and what a
/// cancellation does: the cancellation handler may run before or after.
private final class ReservedOrder: @unchecked Swift.Sendable {
  // @unchecked: every property is guarded by `lock`.
  private let lock = NSLock()
  private var number: Int?
  private var cancelled = false
  private var cancelAction: (@Sendable () -> Void)?

  /// Records the waiter's number; false when the task was cancelled first.
  func set(_ number: Int) -> Bool {
    lock.withLock {
      self.number = number
      return !cancelled
    }
  }

  var onCancel: (@Sendable () -> Void)? {
    get { lock.withLock { cancelAction } }
    set {
      let runNow = lock.withLock { () -> Bool in
        cancelAction = newValue
        return cancelled
      }
      if runNow { newValue?() }
    }
  }

  func cancel() {
    let action = lock.withLock { () -> (@Sendable () -> Void)? in
      cancelled = true
      return cancelAction
    }
    action?()
  }
}
