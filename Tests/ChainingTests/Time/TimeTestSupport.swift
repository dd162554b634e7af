import Chaining
import ChainingTesting
import Foundation
import Testing

/// A value that is not `Equatable`, so that a holder of it sends every write.
struct Pulse: Swift.Sendable {
  var value: Int
  init(_ value: Int) { self.value = value }
}

@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
extension TestClock {
  /// Moves the clock to `milliseconds` after its start.
  func advance(toMilliseconds milliseconds: Int) async {
    await advance(to: Instant(offset: .milliseconds(milliseconds)))
  }
}

/// Checks a time step's invalidation mid-interval: a value sent before it
/// is never delivered, `invalidate()` releases the waiting value and the
/// timer at once, and the clock has nothing left to run. `step` adds the
/// step with `clock`; `deliveredAtOnce` is how many of the two tokens sent
/// go at once (throttle sends the first of an idle throttle at once).
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
func expectInvalidateReleasesTheWaitingValue(
  deliveredAtOnce: Int = 0,
  _ step: (consuming Chain<Token, Notifier<Token>>, TestClock) -> Chain<Token, Notifier<Token>>
) async {
  let clock = TestClock()
  let notifier = Notifier<Token>()
  let seen = Recorder<Int>()
  weak var weakToken: Token?
  let observer = step(notifier.chain(), clock).do { _ in seen.append(1) }.end()
  notifier.notify(value: Token())
  do {
    let token = Token()
    weakToken = token
    notifier.notify(value: token)
  }
  #expect(seen.history.count == deliveredAtOnce)
  #expect(weakToken != nil)
  observer.invalidate()
  #expect(weakToken == nil)
  #expect(clock.pendingCount == 0)
  await clock.advance(by: .seconds(2))
  #expect(seen.history.count == deliveredAtOnce)
}

/// Checks that `invalidate()` releases a time step's closures before it
/// returns, while the timer's task still sleeps on a clock that is not a
/// `TimerClock`: a token captured by a later step's closure is freed by
/// then. `step` adds the step with an interval far longer than the test;
/// one value is sent first, so that a timer is armed.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
func expectInvalidateReleasesTheClosuresWhileTheTimerSleeps(
  _ step: (consuming Chain<Int, Notifier<Int>>) -> Chain<Int, Notifier<Int>>
) {
  let notifier = Notifier<Int>()
  weak var weakToken: Token?
  let observer: Observer
  do {
    let token = Token()
    weakToken = token
    observer = step(notifier.chain()).do { _ in _ = token }.end()
  }
  notifier.notify(value: 1)
  #expect(weakToken != nil)
  observer.invalidate()
  #expect(weakToken == nil)
}

/// A clock whose `sleep(until:tolerance:)` ignores cancellation, as a clock
/// of a user's may: it waits for a task of its own, which cancelling the
/// sleeping task does not cancel, so it returns only at the deadline. Its
/// time is `ContinuousClock`'s.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
struct DeafClock: Clock {
  var now: ContinuousClock.Instant { ContinuousClock.now }
  var minimumResolution: Duration { ContinuousClock().minimumResolution }

  func sleep(until deadline: ContinuousClock.Instant, tolerance: Duration?) async throws {
    await Task.detached { try? await ContinuousClock().sleep(until: deadline, tolerance: tolerance) }.value
  }
}
