import Testing

@testable import Chaining

@Suite struct SendableTests {
  @Test func classWithOnlyATypealiasBroadcastsToItsChains() {
    let notifier = IntNotifier()
    let received = Recorder<Int>()
    let observer = notifier.chain().do { received.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func issueExampleCompilesAsWritten() {
    // The exact lines from the issue: a temporary notifier, a printing chain.
    let observer = IntNotifier().chain().do { print($0) }.end()
    #expect(!observer.isInvalidated)
  }

  @Test func broadcastReachesEveryLiveChainInTheOrderTheyWereFinished() {
    let notifier = IntNotifier()
    let received = Recorder<String>()
    let first = notifier.chain().do { received.append("first \($0)") }.end()
    let second = notifier.chain().do { received.append("second \($0)") }.end()
    let third = notifier.chain().do { received.append("third \($0)") }.end()
    second.invalidate()
    notifier.notify(value: 5)
    #expect(received.history == ["first 5", "third 5"])
    _ = (first, third)
  }

  @Test func broadcastWithoutChainsCreatesNoRegistryEntry() {
    let notifier = IntNotifier()
    notifier.notify(value: 1)
    #expect(notifier._senderCore(creating: false) == nil)
  }

  @Test func eachObjectHasItsOwnObservers() {
    let a = IntNotifier()
    let b = IntNotifier()
    let received = Recorder<String>()
    let observers = [
      a.chain().do { received.append("a\($0)") }.end(),
      b.chain().do { received.append("b\($0)") }.end(),
    ]
    a.notify(value: 1)
    b.notify(value: 2)
    #expect(received.history == ["a1", "b2"])
    withExtendedLifetime(observers) {}
  }

  @Test func newObjectAtADeadObjectsAddressDoesNotReachTheDeadObjectsChains() {
    let received = Recorder<Int>()
    var observers: [Observer] = []
    var deadAddresses: Set<ObjectIdentifier> = []
    var reused = 0
    for round in 0..<200 {
      // The dead objects' memory, out of the address sanitizer's quarantine.
      releaseQuarantinedMemory()
      let fresh = IntNotifier()
      if deadAddresses.contains(ObjectIdentifier(fresh)) { reused += 1 }
      // The fresh object has no chains: nothing may be delivered.
      fresh.notify(value: round)
      observers.append(fresh.chain().do { received.append($0) }.end())
      deadAddresses.insert(ObjectIdentifier(fresh))
    }
    #expect(received.history.isEmpty)
    // The allocator does reuse addresses, so the check above was exercised.
    #expect(reused > 0)
    withExtendedLifetime(observers) {}
  }

  @Test func registryEntriesOfDeadObjectsAreSwept() {
    for _ in 0..<1_000 {
      let notifier = IntNotifier()
      let observer = notifier.chain().do { _ in }.end()
      notifier.notify(value: 1)
      observer.invalidate()
    }
    // Sweeps happen each time the table doubles, so at most 2x the live
    // entries (plus the minimum table size) remain. Other suites may add a
    // few live entries while this runs.
    #expect(SenderRegistry.count < 256)
  }
}

@Suite struct WaitForObserversTests {
  @Test func observerCountFollowsSubscriptions() {
    let notifier = Notifier<Int>()
    #expect(notifier.observerCount == 0)
    let first = notifier.chain().end()
    let second = notifier.chain().end()
    #expect(notifier.observerCount == 2)
    first.invalidate()
    #expect(notifier.observerCount == 1)
    second.invalidate()
    #expect(notifier.observerCount == 0)
    let user = IntNotifier()
    #expect(user.observerCount == 0)
    let third = user.chain().end()
    #expect(user.observerCount == 1)
    withExtendedLifetime(third) {}
  }

  @Test func waitingReturnsOnceAValuesLoopHasSubscribed() async {
    let notifier = Notifier<Int>()
    let consumer = Task {
      var seen: [Int] = []
      for await value in notifier.chain().values {
        seen.append(value)
        if seen.count == 3 { break }
      }
      return seen
    }
    await notifier.waitForObservers()
    for value in 1...3 { notifier.notify(value: value) }
    #expect(await consumer.value == [1, 2, 3])
  }

  @Test func waitingForSeveralObserversReturnsWhenTheLastSubscribes() async {
    let holder = ValueHolder(0)
    let waiter = Task { await holder.waitForObservers(2) }
    let first = holder.chain().end()
    #expect(holder.observerCount == 1)
    let second = holder.chain().end()
    await waiter.value
    #expect(holder.observerCount == 2)
    withExtendedLifetime((first, second)) {}
  }

  @Test func waitingReturnsAtOnceWhenEnoughAreSubscribed() async {
    let user = IntNotifier()
    let observer = user.chain().end()
    await user.waitForObservers(1)
    #expect(user.observerCount == 1)
    withExtendedLifetime(observer) {}
  }

  @Test func cancellingTheTaskEndsTheWait() async {
    let notifier = Notifier<Int>()
    let waiter = Task { await notifier.waitForObservers() }
    waiter.cancel()
    await waiter.value
    #expect(notifier.observerCount == 0)
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func aCountBelowOneStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      await Notifier<Int>().waitForObservers(0)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Sendable.waitForObservers(_:): count must be at least 1, got 0"))
  }
  #endif
}
