import Chaining
import ChainingTesting
import Testing

@Suite struct TestClockTests {
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func timeMovesOnlyWhenAdvanced() async {
    let clock = TestClock()
    #expect(clock.now == TestClock.Instant(offset: .zero))
    await clock.advance(by: .seconds(2))
    #expect(clock.now == TestClock.Instant(offset: .seconds(2)))
    await clock.advance(to: TestClock.Instant(offset: .seconds(5)))
    #expect(clock.now.offset == .seconds(5))
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func timersRunInDeadlineOrderWithTheTimeAtTheirDeadline() async {
    let clock = TestClock()
    let fired = Recorder<String>()
    let at = { (milliseconds: Int) in TestClock.Instant(offset: .milliseconds(milliseconds)) }
    _ = clock.startTimer(at: at(30)) { fired.append("c at \(clock.now.offset)") }
    _ = clock.startTimer(at: at(10)) { fired.append("a at \(clock.now.offset)") }
    _ = clock.startTimer(at: at(10)) { fired.append("b at \(clock.now.offset)") }
    let cancelled = clock.startTimer(at: at(20)) { fired.append("cancelled") }
    cancelled.cancel()
    await clock.advance(by: .milliseconds(25))
    #expect(fired.history == ["a at 0.01 seconds", "b at 0.01 seconds"])
    #expect(clock.now == at(25))
    await clock.run()
    #expect(fired.history == ["a at 0.01 seconds", "b at 0.01 seconds", "c at 0.03 seconds"])
    #expect(clock.pendingCount == 0)
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func aTimerStartedByARunningTimerRunsWhenDue() async {
    let clock = TestClock()
    let fired = Recorder<Int>()
    _ = clock.startTimer(at: TestClock.Instant(offset: .seconds(1))) {
      fired.append(1)
      _ = clock.startTimer(at: clock.now.advanced(by: .seconds(1))) { fired.append(2) }
    }
    await clock.advance(by: .seconds(2))
    #expect(fired.history == [1, 2])
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func sleepReturnsOnceTheTimeIsReached() async throws {
    let clock = TestClock()
    let sleeper = Task {
      try await clock.sleep(until: TestClock.Instant(offset: .seconds(1)))
      return clock.now
    }
    await clock.waitForPending(1)
    await clock.advance(by: .seconds(1))
    #expect(try await sleeper.value == TestClock.Instant(offset: .seconds(1)))
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func aCancelledSleepThrowsAndLeavesNothingWaiting() async {
    let clock = TestClock()
    let sleeper = Task { try await clock.sleep(until: TestClock.Instant(offset: .seconds(1))) }
    await clock.waitForPending(1)
    sleeper.cancel()
    await #expect(throws: CancellationError.self) { try await sleeper.value }
    #expect(clock.pendingCount == 0)
  }
}
