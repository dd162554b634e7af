import Chaining
import ChainingTesting
import Foundation
import Testing

@Suite struct DelayTests {
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func sendsEveryValueAnIntervalLaterInOrder() async {
    let clock = TestClock()
    let status = Notifier<String>()
    let shown = Recorder<String>()
    let observer = status.chain().delay(for: .milliseconds(100), clock: clock).do { shown.append($0) }.end()
    status.notify(value: "a")
    await clock.advance(toMilliseconds: 10)
    status.notify(value: "b")
    status.notify(value: "c")
    await clock.advance(toMilliseconds: 99)
    #expect(shown.history == [])
    await clock.advance(toMilliseconds: 100)
    #expect(shown.history == ["a"])
    await clock.advance(toMilliseconds: 110)
    #expect(shown.history == ["a", "b", "c"])
    #expect(clock.pendingCount == 0)
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func theSyncedValueIsDelayedToo() async {
    let clock = TestClock()
    let count = ValueHolder(1)
    let seen = Recorder<Int>()
    let observer = count.chain().delay(for: .seconds(1), clock: clock).do { seen.append($0) }.sync()
    count.value = 2
    #expect(seen.history == [])
    await clock.advance(by: .seconds(1))
    #expect(seen.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func invalidateMidIntervalDeliversNothingAndReleasesTheValues() async {
    await expectInvalidateReleasesTheWaitingValue { chain, clock in
      chain.delay(for: .seconds(1), clock: clock)
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func invalidateReleasesTheClosuresWhileASystemClocksTimerSleeps() {
    expectInvalidateReleasesTheClosuresWhileTheTimerSleeps { chain in
      chain.delay(for: .seconds(10))
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func invalidateReleasesTheClosuresWhenTheClockIgnoresCancellation() {
    expectInvalidateReleasesTheClosuresWhileTheTimerSleeps { chain in
      chain.delay(for: .seconds(10), clock: DeafClock())
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func concurrentSendersKeepEachSendersOrder() async {
    let clock = TestClock()
    let notifier = Notifier<Int>()
    let seen = Recorder<Int>()
    let observer = notifier.chain().delay(for: .seconds(1), clock: clock).do { seen.append($0) }.end()
    race(threads: 4) { thread in
      for step in 0..<100 { notifier.notify(value: thread * 1000 + step) }
    }
    #expect(seen.history == [])
    await clock.advance(by: .seconds(1))
    let history = seen.history
    #expect(history.count == 400)
    for thread in 0..<4 {
      #expect(history.filter { $0 / 1000 == thread } == (0..<100).map { thread * 1000 + $0 })
    }
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func aSystemClockDeliversEveryValueInOrder() async {
    let notifier = Notifier<Int>()
    let delivered = Delivered<Int>()
    let observer = notifier.chain().delay(for: .milliseconds(1)).do { delivered.send($0) }.end()
    for value in 1...5 { notifier.notify(value: value) }
    var received: [Int] = []
    for _ in 1...5 { received.append(await delivered.next()) }
    #expect(received == [1, 2, 3, 4, 5])
    withExtendedLifetime(observer) {}
  }
}
