import Chaining
import ChainingTesting
import Foundation
import Testing

@Suite struct ThrottleTests {
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func sendsTheFirstAtOnceThenTheLatestAtEachIntervalsEnd() async {
    let clock = TestClock()
    let offset = ValueHolder(0)
    let shown = Recorder<Int>()
    let observer = offset.chain()
      .throttle(for: .milliseconds(100), clock: clock)
      .do { shown.append($0) }
      .end()

    offset.value = 1
    // The first value of an idle throttle goes at once.
    #expect(shown.history == [1])
    await clock.advance(toMilliseconds: 10)
    offset.value = 2
    await clock.advance(toMilliseconds: 20)
    offset.value = 3
    await clock.advance(toMilliseconds: 99)
    #expect(shown.history == [1])
    await clock.advance(toMilliseconds: 100)
    #expect(shown.history == [1, 3])
    await clock.advance(toMilliseconds: 150)
    offset.value = 4
    await clock.advance(toMilliseconds: 200)
    #expect(shown.history == [1, 3, 4])
    // 200 to 300: nothing arrives, so the busy period ends at 300.
    await clock.advance(toMilliseconds: 300)
    #expect(clock.pendingCount == 0)
    await clock.advance(toMilliseconds: 310)
    offset.value = 5
    #expect(shown.history == [1, 3, 4, 5])
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func latestFalseSendsTheFirstValueOfEachInterval() async {
    let clock = TestClock()
    let offset = ValueHolder(0)
    let shown = Recorder<Int>()
    let observer = offset.chain()
      .throttle(for: .milliseconds(100), clock: clock, latest: false)
      .do { shown.append($0) }
      .end()
    for value in 1...4 { offset.value = value }
    await clock.advance(toMilliseconds: 100)
    #expect(shown.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func theFirstValueGoesOnTheSendingThreadBeforeTheWriteReturns() {
    let clock = TestClock()
    let holder = ValueHolder(0)
    let threads = Recorder<Thread>()
    let observer = holder.chain().throttle(for: .seconds(1), clock: clock).do { _ in
      threads.append(Thread.current)
    }.end()
    let inline = Recorder<Bool>()
    spawn {
      holder.value = 1
      let delivered = threads.history
      inline.append(delivered.count == 1 && delivered[0] === Thread.current)
    }.wait()
    #expect(inline.history == [true])
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func theSyncedValueGoesAtOnce() async {
    let clock = TestClock()
    let count = ValueHolder(1)
    let seen = Recorder<Int>()
    let observer = count.chain().throttle(for: .seconds(1), clock: clock).do { seen.append($0) }.sync()
    #expect(seen.history == [1])
    count.value = 2
    await clock.advance(by: .seconds(1))
    #expect(seen.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func invalidateMidIntervalDeliversNothingAndReleasesTheTimer() async {
    await expectInvalidateReleasesTheWaitingValue(deliveredAtOnce: 1) { chain, clock in
      chain.throttle(for: .seconds(1), clock: clock)
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func invalidateReleasesTheClosuresWhileASystemClocksTimerSleeps() {
    // The value goes at once and arms the timer for the interval's end.
    expectInvalidateReleasesTheClosuresWhileTheTimerSleeps { chain in
      chain.throttle(for: .seconds(10))
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func invalidateReleasesTheClosuresWhenTheClockIgnoresCancellation() {
    expectInvalidateReleasesTheClosuresWhileTheTimerSleeps { chain in
      chain.throttle(for: .seconds(10), clock: DeafClock())
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func concurrentSendersGetTheFirstAndTheHoldersLatest() async {
    let clock = TestClock()
    let holder = ValueHolder(-1)
    let seen = Recorder<Int>()
    let observer = holder.chain().throttle(for: .seconds(1), clock: clock).do { seen.append($0) }.end()
    race(threads: 4) { thread in
      for step in 0..<100 { holder.value = thread * 100 + step }
    }
    await clock.advance(by: .seconds(1))
    let history = seen.history
    #expect(history.count == 2)
    #expect(history.last == holder.value)
    await clock.run()
    #expect(seen.history.count == 2)
    withExtendedLifetime(observer) {}
  }
}
