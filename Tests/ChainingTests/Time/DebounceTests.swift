import Chaining
import ChainingTesting
import Foundation
import Testing

@Suite struct DebounceTests {
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func sendsTheLastValueOfABurstOnceTheChainIsQuiet() async {
    let clock = TestClock()
    let query = ValueHolder("")
    let searches = Recorder<String>()
    let observer = query.chain()
      .debounce(for: .milliseconds(300), clock: clock)
      .do { searches.append($0) }
      .end()

    query.value = "s"
    await clock.advance(toMilliseconds: 100)
    query.value = "sw"
    await clock.advance(toMilliseconds: 200)
    query.value = "swift"
    await clock.advance(toMilliseconds: 499)
    #expect(searches.history == [])
    await clock.advance(toMilliseconds: 500)
    #expect(searches.history == ["swift"])

    // A second burst.
    query.value = "swifty"
    await clock.advance(toMilliseconds: 799)
    #expect(searches.history == ["swift"])
    await clock.advance(toMilliseconds: 800)
    #expect(searches.history == ["swift", "swifty"])
    #expect(clock.pendingCount == 0)
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func theSyncedValueIsTimedLikeTheOthers() async {
    let clock = TestClock()
    let count = ValueHolder(1)
    let seen = Recorder<Int>()
    let observer = count.chain().debounce(for: .seconds(1), clock: clock).do { seen.append($0) }.sync()
    #expect(seen.history == [])
    await clock.advance(by: .seconds(1))
    #expect(seen.history == [1])
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func invalidateMidIntervalDeliversNothingAndReleasesTheTimer() async {
    await expectInvalidateReleasesTheWaitingValue { chain, clock in
      chain.debounce(for: .seconds(1), clock: clock)
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func invalidateReleasesTheClosuresWhileASystemClocksTimerSleeps() {
    expectInvalidateReleasesTheClosuresWhileTheTimerSleeps { chain in
      chain.debounce(for: .seconds(10))
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func invalidateReleasesTheClosuresWhenTheClockIgnoresCancellation() {
    expectInvalidateReleasesTheClosuresWhileTheTimerSleeps { chain in
      chain.debounce(for: .seconds(10), clock: DeafClock())
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func concurrentSendersGetOneValueTheHoldersLatest() async {
    let clock = TestClock()
    let holder = ValueHolder(-1)
    let seen = Recorder<Int>()
    let observer = holder.chain().debounce(for: .seconds(1), clock: clock).do { seen.append($0) }.end()
    race(threads: 4) { thread in
      for step in 0..<100 { holder.value = thread * 100 + step }
    }
    await clock.advance(by: .seconds(1))
    #expect(seen.history == [holder.value])
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func aTwoWayBindingThroughDebounceSettles() async {
    let clock = TestClock()
    let celsius = ValueHolder(Pulse(0))
    let mirror = ValueHolder(Pulse(0))
    let sent = Recorder<Int>()
    let forward = celsius.chain()
      .debounce(for: .milliseconds(10), clock: clock)
      .do { sent.append($0.value) }
      .sendTo(mirror)
      .end()
    let backward = mirror.chain().sendTo(celsius).end()
    celsius.value = Pulse(5)
    await clock.advance(by: .milliseconds(10))
    // The echo from `mirror` back to `celsius` is not sent round again.
    await clock.run()
    #expect(sent.history == [5])
    #expect(mirror.value.value == 5)
    withExtendedLifetime((forward, backward)) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func aSystemClockDeliversOnItsOwn() async {
    let holder = ValueHolder(0)
    let delivered = Delivered<Int>()
    let observer = holder.chain().debounce(for: .zero).do { delivered.send($0) }.end()
    holder.value = 7
    #expect(await delivered.next() == 7)
    withExtendedLifetime(observer) {}
  }
}

/// Hands the values a chain delivers on another thread to a test that
/// awaits them one by one, without sleeping.
final class Delivered<Value: Swift.Sendable>: @unchecked Swift.Sendable {
  // @unchecked: every property is guarded by `lock`.
  private let lock = NSLock()
  private var values: [Value] = []
  private var waiter: CheckedContinuation<Value, Never>?

  func send(_ value: Value) {
    let resumed = lock.withLock { () -> CheckedContinuation<Value, Never>? in
      if let waiter {
        self.waiter = nil
        return waiter
      }
      values.append(value)
      return nil
    }
    resumed?.resume(returning: value)
  }

  func next() async -> Value {
    await withCheckedContinuation { continuation in
      let value = lock.withLock { () -> Value? in
        if values.isEmpty {
          waiter = continuation
          return nil
        }
        return values.removeFirst()
      }
      if let value { continuation.resume(returning: value) }
    }
  }
}
