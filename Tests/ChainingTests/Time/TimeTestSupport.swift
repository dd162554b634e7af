import Chaining
import ChainingTesting
import Foundation
import Testing

/// A value that is not `Equatable`, so that a holder of it sends every write.
struct Pulse: Swift.Sendable {
  var value: Int
  init(_ value: Int) { self.value = value }
}

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
