import Chaining
import Testing

@Suite struct ChainSuspendTests {
  // MARK: - Flow

  @Test func valuesPassWhileNotSuspended() {
    let notifier = Notifier<Int>()
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observer = notifier.chain().suspend(suspender).do { received.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func valuesStopWhileSuspendedAndResumeSendsTheLatestHeldValueOfAHolder() {
    let holder = ValueHolder(0)
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observer = holder.chain().suspend(suspender).do { received.append($0) }.sync()
    suspender.suspend()
    holder.value = 1
    holder.value = 2
    holder.value = 3
    #expect(received.history == [0])
    suspender.resume()
    #expect(received.history == [0, 3])
    holder.value = 4
    #expect(received.history == [0, 3, 4])
    withExtendedLifetime(observer) {}
  }

  @Test func resumeReplaysAHeldValueOnlyOnce() {
    let holder = ValueHolder(0)
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observer = holder.chain().suspend(suspender).do { received.append($0) }.sync()
    suspender.suspend()
    holder.value = 1
    suspender.resume()
    suspender.suspend()
    suspender.resume()
    #expect(received.history == [0, 1])
    withExtendedLifetime(observer) {}
  }

  @Test func resumeWithNothingHeldSendsNothing() {
    let holder = ValueHolder(0)
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observer = holder.chain().suspend(suspender).do { received.append($0) }.sync()
    suspender.suspend()
    suspender.resume()
    #expect(received.history == [0])
    withExtendedLifetime(observer) {}
  }

  @Test func notifierValuesSentWhileSuspendedAreNotReplayed() {
    let notifier = Notifier<Int>()
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observer = notifier.chain().suspend(suspender).do { received.append($0) }.end()
    notifier.notify(value: 1)
    suspender.suspend()
    notifier.notify(value: 2)
    notifier.notify(value: 3)
    suspender.resume()
    #expect(received.history == [1])
    notifier.notify(value: 4)
    #expect(received.history == [1, 4])
    withExtendedLifetime(observer) {}
  }

  @Test func stepsBeforeSuspendKeepRunningWhileSuspended() {
    let holder = ValueHolder(0)
    let suspender = Suspender()
    let before = Recorder<Int>()
    let after = Recorder<Int>()
    let observer = holder.chain().do { before.append($0) }.suspend(suspender).do { after.append($0) }.sync()
    suspender.suspend()
    holder.value = 1
    holder.value = 2
    suspender.resume()
    #expect(before.history == [0, 1, 2])
    #expect(after.history == [0, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func mergedChainReplaysWhenAnyOfItsSourcesIsFetchable() {
    let holder = ValueHolder(0)
    let notifier = Notifier<Int>()
    let otherNotifier = Notifier<Int>()
    let suspender = Suspender()
    let fromHolderFirst = Recorder<Int>()
    let fromNotifierFirst = Recorder<Int>()
    let fromNotifiersOnly = Recorder<Int>()
    let observers = [
      holder.chain().merge(notifier.chain()).suspend(suspender).do { fromHolderFirst.append($0) }.end(),
      notifier.chain().merge(holder.chain()).suspend(suspender).do { fromNotifierFirst.append($0) }.end(),
      notifier.chain().merge(otherNotifier.chain()).suspend(suspender).do { fromNotifiersOnly.append($0) }.end(),
    ]
    suspender.suspend()
    holder.value = 1
    notifier.notify(value: 2)
    suspender.resume()
    // A chain with a fetchable source catches up with the latest value, from
    // either source; a chain of notifiers only replays nothing.
    #expect(fromHolderFirst.history == [2])
    #expect(fromNotifierFirst.history == [2])
    #expect(fromNotifiersOnly.history == [])
    withExtendedLifetime(observers) {}
  }

  // MARK: - sync and end

  @Test func syncWhileNotSuspendedSendsTheValueAtOnce() {
    let holder = ValueHolder(5)
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observer = holder.chain().suspend(suspender).do { received.append($0) }.sync()
    #expect(received.history == [5])
    withExtendedLifetime(observer) {}
  }

  @Test func syncWhileSuspendedHoldsTheFetchedValueBackUntilResume() {
    let holder = ValueHolder(5)
    let suspender = Suspender(isSuspended: true)
    let received = Recorder<Int>()
    let observer = holder.chain().suspend(suspender).do { received.append($0) }.sync()
    #expect(received.history == [])
    suspender.resume()
    #expect(received.history == [5])
    withExtendedLifetime(observer) {}
  }

  @Test func syncWhileSuspendedIsReplacedByALaterValue() {
    let holder = ValueHolder(5)
    let suspender = Suspender(isSuspended: true)
    let received = Recorder<Int>()
    let observer = holder.chain().suspend(suspender).do { received.append($0) }.sync()
    holder.value = 6
    suspender.resume()
    #expect(received.history == [6])
    withExtendedLifetime(observer) {}
  }

  @Test func endWhileSuspendedHasNothingToSendOnResume() {
    let holder = ValueHolder(5)
    let suspender = Suspender(isSuspended: true)
    let received = Recorder<Int>()
    let observer = holder.chain().suspend(suspender).do { received.append($0) }.end()
    suspender.resume()
    #expect(received.history == [])
    holder.value = 6
    #expect(received.history == [6])
    withExtendedLifetime(observer) {}
  }

  @Test func chainOnANotifierStartedWhileSuspendedPassesValuesOnlyAfterResume() {
    let notifier = Notifier<Int>()
    let suspender = Suspender(isSuspended: true)
    let received = Recorder<Int>()
    let observer = notifier.chain().suspend(suspender).do { received.append($0) }.end()
    notifier.notify(value: 1)
    suspender.resume()
    notifier.notify(value: 2)
    #expect(received.history == [2])
    withExtendedLifetime(observer) {}
  }

  // MARK: - Shared suspender

  @Test func suspenderSharedByTwoChainsHoldsBackBoth() {
    let holder = ValueHolder("a")
    let notifier = Notifier<String>()
    let suspender = Suspender()
    let fromHolder = Recorder<String>()
    let fromNotifier = Recorder<String>()
    let observers = [
      holder.chain().suspend(suspender).do { fromHolder.append($0) }.sync(),
      notifier.chain().suspend(suspender).do { fromNotifier.append($0) }.end(),
    ]
    suspender.suspend()
    holder.value = "b"
    notifier.notify(value: "x")
    #expect(fromHolder.history == ["a"])
    #expect(fromNotifier.history == [])
    suspender.resume()
    #expect(fromHolder.history == ["a", "b"])
    #expect(fromNotifier.history == [])
    holder.value = "c"
    notifier.notify(value: "y")
    #expect(fromHolder.history == ["a", "b", "c"])
    #expect(fromNotifier.history == ["y"])
    withExtendedLifetime(observers) {}
  }

  @Test func invalidatingOneChainOfASharedSuspenderLeavesTheOtherWorking() {
    let holder = ValueHolder(0)
    let suspender = Suspender()
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    let firstObserver = holder.chain().suspend(suspender).do { first.append($0) }.sync()
    let secondObserver = holder.chain().suspend(suspender).do { second.append($0) }.sync()
    suspender.suspend()
    holder.value = 1
    firstObserver.invalidate()
    suspender.resume()
    #expect(first.history == [0])
    #expect(second.history == [0, 1])
    withExtendedLifetime(secondObserver) {}
  }

  // MARK: - Lifetime

  @Test func invalidatingWhileSuspendedDropsTheHeldValue() {
    let holder = ValueHolder(0)
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observer = holder.chain().suspend(suspender).do { received.append($0) }.sync()
    suspender.suspend()
    holder.value = 1
    observer.invalidate()
    suspender.resume()
    holder.value = 2
    #expect(received.history == [0])
    #expect(observer.isInvalidated)
  }

  @Test func heldValueIsSentOnResumeAfterItsSourceIsReleased() {
    let suspender = Suspender()
    let received = Recorder<Int>()
    weak var weakHolder: ValueHolder<Int>?
    var holder: ValueHolder<Int>? = ValueHolder(0)
    weakHolder = holder
    let observer = holder!.chain().suspend(suspender).do { received.append($0) }.sync()
    suspender.suspend()
    holder?.value = 1
    holder = nil
    #expect(weakHolder == nil)
    suspender.resume()
    #expect(received.history == [0, 1])
    withExtendedLifetime(observer) {}
  }

  @Test func observerKeepsTheSuspenderAliveUntilInvalidated() {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    weak var weakSuspender: Suspender?
    var observer: Observer?
    do {
      let suspender = Suspender()
      weakSuspender = suspender
      observer = holder.chain().suspend(suspender).do { received.append($0) }.sync()
    }
    // suspend(_:): "The finished observer keeps it alive."
    #expect(weakSuspender != nil)
    weakSuspender?.suspend()
    holder.value = 1
    weakSuspender?.resume()
    #expect(received.history == [0, 1])
    observer?.invalidate()
    #expect(weakSuspender == nil)
    withExtendedLifetime(observer) {}
  }

  @Test func invalidatingReleasesTheClosuresAroundTheSuspendStep() {
    let suspender = Suspender()
    weak var weakBeforeToken: Token?
    weak var weakAfterToken: Token?
    weak var weakHolder: ValueHolder<Int>?
    var observer: Observer?
    do {
      let holder = ValueHolder(0)
      let beforeToken = Token()
      let afterToken = Token()
      weakHolder = holder
      weakBeforeToken = beforeToken
      weakAfterToken = afterToken
      observer = holder.retain().chain().do { _ in _ = beforeToken }.suspend(suspender).do { _ in _ = afterToken }
        .sync()
    }
    #expect(weakHolder != nil)
    #expect(weakBeforeToken != nil)
    #expect(weakAfterToken != nil)
    observer?.invalidate()
    #expect(weakHolder == nil)
    #expect(weakBeforeToken == nil)
    #expect(weakAfterToken == nil)
    withExtendedLifetime(observer) {}
  }

  // MARK: - Reentrancy

  @Test func anotherChainSuspendingDuringADeliveryHoldsBackTheSameValue() {
    let holder = ValueHolder(0)
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observers = [
      holder.chain().do { if $0 == 1 { suspender.suspend() } }.end(),
      holder.chain().suspend(suspender).do { received.append($0) }.sync(),
    ]
    holder.value = 1
    #expect(received.history == [0])
    suspender.resume()
    #expect(received.history == [0, 1])
    withExtendedLifetime(observers) {}
  }

  @Test func handlerOfAnotherChainResumingReleasesTheHeldValue() {
    let holder = ValueHolder(0)
    let trigger = Notifier<Void>()
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observers = [
      holder.chain().suspend(suspender).do { received.append($0) }.sync(),
      trigger.chain().do { suspender.resume() }.end(),
    ]
    suspender.suspend()
    holder.value = 1
    trigger.notify()
    #expect(received.history == [0, 1])
    withExtendedLifetime(observers) {}
  }

  @Test func handlerSuspendingItsOwnChainHoldsBackLaterValues() {
    let holder = ValueHolder(0)
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observer = holder.chain().suspend(suspender).do { value in
      received.append(value)
      if value == 1 { suspender.suspend() }
    }.sync()
    holder.value = 1
    #expect(suspender.isSuspended)
    holder.value = 2
    // While `suspender.isSuspended` is true, values stop at the suspend step.
    #expect(received.history == [0, 1])
    suspender.resume()
    #expect(received.history == [0, 1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func stepBeforeSuspendResumingTheChainReleasesTheValueOnceItIsHeld() {
    let holder = ValueHolder(0)
    let suspender = Suspender(isSuspended: true)
    let received = Recorder<Int>()
    let observer = holder.chain().do { if $0 == 2 { suspender.resume() } }.suspend(suspender)
      .do { received.append($0) }.sync()
    holder.value = 1
    #expect(received.history == [])
    // The resume takes effect after 2 has reached the suspend step, which
    // holds it; the resume then sends the latest held value, 2.
    holder.value = 2
    #expect(!suspender.isSuspended)
    #expect(received.history == [2])
    holder.value = 3
    #expect(received.history == [2, 3])
    withExtendedLifetime(observer) {}
  }

  @Test func valueWrittenByAnotherHandlerWhileSuspendedReplacesTheHeldValue() {
    let holder = ValueHolder(0)
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observers = [
      holder.chain().suspend(suspender).do { received.append($0) }.sync(),
      holder.chain().do { if $0 == 1 { holder.value = 2 } }.end(),
    ]
    suspender.suspend()
    holder.value = 1
    #expect(holder.value == 2)
    suspender.resume()
    // The chain held 1, then 2 replaced it; the latest is sent once.
    #expect(received.history == [0, 2])
    withExtendedLifetime(observers) {}
  }

  // MARK: - Concurrency

  @Test func valuesNeverGoBackwardsWhileAnotherThreadTogglesTheSuspender() {
    let writes = 20_000
    let holder = ValueHolder(-1)
    let suspender = Suspender()
    let received = Recorder<Int>()
    let observer = holder.chain().suspend(suspender).do { received.append($0) }.sync()

    race(threads: 2) { thread in
      if thread == 0 {
        for value in 0..<writes { holder.value = value }
      } else {
        for _ in 0..<2_000 {
          suspender.suspend()
          suspender.resume()
        }
      }
    }

    let history = received.history
    #expect(history.first == -1)
    #expect(history.last == writes - 1)
    #expect(zip(history, history.dropFirst()).allSatisfy { $0 < $1 })
    withExtendedLifetime(observer) {}
  }
}
