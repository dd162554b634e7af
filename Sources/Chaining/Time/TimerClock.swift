// MARK: - TimerClock

/// A clock that runs the timers of Chaining's time steps itself.
///
/// ``Chain/debounce(for:clock:)``, ``Chain/throttle(for:clock:latest:)`` and
/// ``Chain/delay(for:clock:)`` take any `Clock`. With most clocks they wait
/// with `clock.sleep(until:tolerance:)` in a task, so a timed value is
/// delivered on a thread of the task's executor. A clock that adopts this
/// protocol runs them instead: `ChainingTesting`'s `TestClock` does, so that
/// `await clock.advance(by:)` returns only once every value due by then has
/// been delivered, on the thread that advances the clock.
///
/// Adopt it for a clock of your own whose time you move, as `TestClock`
/// does. Nothing else in the library calls it.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public protocol TimerClock: Clock {
  /// Calls `fire` once, when the clock reaches `deadline`, unless the
  /// returned handle is cancelled first.
  ///
  /// Called by a time step, on the thread that delivers a value to it (or
  /// that runs its previous timer), with no lock of the library held.
  /// `fire` delivers values: call it with no lock of yours held, on any
  /// thread. Hold `fire` until it has run or the timer is cancelled, then
  /// release it, before the handle's `cancel()` returns: it keeps the
  /// step's state and the later steps' closures alive, which
  /// `invalidate()` promises to release.
  ///
  /// - Parameters:
  ///   - deadline: When to call `fire`. A deadline the clock has already
  ///     reached fires at the clock's next chance, never inside this call.
  ///   - fire: What to run.
  /// - Returns: The handle that cancels the timer.
  func startTimer(at deadline: Instant, _ fire: @escaping @Sendable () -> Void) -> TimerHandle
}

/// Cancels a timer started by ``TimerClock/startTimer(at:_:)``.
public struct TimerHandle: Swift.Sendable {
  private let cancelTimer: @Sendable () -> Void

  /// Makes a handle whose ``cancel()`` calls `cancel`.
  ///
  /// - Parameter cancel: Stops the timer, so that it never fires, and
  ///   releases its closure before returning. Called at most once by the
  ///   library, on any thread, possibly after the timer fired.
  public init(cancel: @escaping @Sendable () -> Void) {
    cancelTimer = cancel
  }

  /// Stops the timer if it has not fired.
  public func cancel() {
    cancelTimer()
  }
}

// MARK: - Timers of any clock

/// Starts timers on `clock`: through ``TimerClock`` when the clock adopts
/// it, otherwise with a task that sleeps until the deadline. Made once per
/// finished chain, so the cast to `TimerClock` is made once. Either way,
/// cancelling a timer releases its closure before `cancel()` returns, as
/// ``TimerClock/startTimer(at:_:)`` asks of a `TimerClock`.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
@usableFromInline
struct ClockTimers<C: Clock>: Swift.Sendable {
  @usableFromInline let clock: C
  private let start: @Sendable (C.Instant, @escaping @Sendable () -> Void) -> TimerHandle

  init(_ clock: C) {
    self.clock = clock
    if let timerClock = clock as? any TimerClock {
      start = Self.starter(of: timerClock)
    } else {
      start = { deadline, fire in
        // The task reaches `fire` through a slot that cancelling empties, so
        // that `fire`, which holds the step and the steps after it, is
        // released before `cancel()` returns. The task itself goes on until
        // its sleep ends, later (a system clock's task is resumed on another
        // thread) or only at the deadline (a clock whose sleep ignores
        // cancellation); it then finds the slot empty and fires nothing.
        let slot = Protected<(@Sendable () -> Void)?>(fire)
        let task = Task {
          do { try await clock.sleep(until: deadline, tolerance: nil) } catch { return }
          slot.withLock { $0.take() }?()
        }
        return TimerHandle {
          // Taken under the lock, released after it: releasing `fire` may
          // run deinitializers of the chain's closures.
          _ = slot.withLock { $0.take() }
          task.cancel()
        }
      }
    }
  }

  /// The start function of a `TimerClock`, opened from the existential.
  /// `T` is `C` itself, so its instants are `C`'s.
  private static func starter<T: TimerClock>(
    of clock: T
  ) -> @Sendable (C.Instant, @escaping @Sendable () -> Void) -> TimerHandle {
    { deadline, fire in
      // swift-format-ignore: NeverForceUnwrap
      clock.startTimer(at: deadline as! T.Instant, fire)
    }
  }

  func startTimer(at deadline: C.Instant, _ fire: @escaping @Sendable () -> Void) -> TimerHandle {
    start(deadline, fire)
  }
}
