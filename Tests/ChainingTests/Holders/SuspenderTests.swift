import Chaining
import Testing

@Suite struct SuspenderTests {
  // MARK: - State

  @Test func suspenderStartsResumedByDefault() {
    let suspender = Suspender()
    #expect(!suspender.isSuspended)
    #expect(!suspender.fetchedValue())
  }

  @Test func suspenderCanStartSuspended() {
    let suspender = Suspender(isSuspended: true)
    #expect(suspender.isSuspended)
    #expect(suspender.fetchedValue())
  }

  @Test func suspendAndResumeSetIsSuspended() {
    let suspender = Suspender()
    suspender.suspend()
    #expect(suspender.isSuspended)
    suspender.resume()
    #expect(!suspender.isSuspended)
    suspender.isSuspended = true
    #expect(suspender.fetchedValue())
  }

  @Test func receiveSetsIsSuspended() {
    let suspender = Suspender()
    suspender.receive(value: true)
    #expect(suspender.isSuspended)
    suspender.receive(value: false)
    #expect(!suspender.isSuspended)
  }

  // MARK: - As a source

  @Test func chainOfASuspenderSyncsItsStateAndBroadcastsEachChange() {
    let suspender = Suspender()
    let received = Recorder<Bool>()
    let observer = suspender.chain().do { received.append($0) }.sync()
    #expect(received.history == [false])
    suspender.suspend()
    suspender.resume()
    suspender.isSuspended = true
    #expect(received.history == [false, true, false, true])
    withExtendedLifetime(observer) {}
  }

  @Test func settingTheStateItAlreadyHasBroadcastsNothing() {
    let suspender = Suspender(isSuspended: true)
    let received = Recorder<Bool>()
    let observer = suspender.chain().do { received.append($0) }.end()
    suspender.suspend()
    suspender.receive(value: true)
    #expect(received.history == [])
    suspender.resume()
    suspender.resume()
    #expect(received.history == [false])
    withExtendedLifetime(observer) {}
  }

  @Test func invalidatedChainOfASuspenderReceivesNothing() {
    let suspender = Suspender()
    let received = Recorder<Bool>()
    let observer = suspender.chain().do { received.append($0) }.sync()
    observer.invalidate()
    suspender.suspend()
    #expect(received.history == [false])
  }

  @Test func suspenderIsReleasedWhileAChainOfItLives() {
    weak var weakSuspender: Suspender?
    var observer: Observer?
    do {
      let suspender = Suspender()
      weakSuspender = suspender
      observer = suspender.chain().end()
    }
    #expect(weakSuspender == nil)
    #expect(observer?.isInvalidated == false)
  }

  // MARK: - As a receiver

  @Test func suspenderBoundFromAHolderHoldsBackAChainWhileTheHolderIsTrue() {
    let isEditing = ValueHolder(false)
    let suspender = Suspender()
    let title = ValueHolder("Draft")
    let received = Recorder<String>()
    let observers = [
      isEditing.chain().sendTo(suspender).sync(),
      title.chain().suspend(suspender).do { received.append($0) }.sync(),
    ]
    #expect(received.history == ["Draft"])
    isEditing.value = true
    #expect(suspender.isSuspended)
    title.value = "Dra"
    title.value = "Drafts"
    #expect(received.history == ["Draft"])
    isEditing.value = false
    #expect(!suspender.isSuspended)
    #expect(received.history == ["Draft", "Drafts"])
    withExtendedLifetime(observers) {}
  }

  @Test func syncOfABindingFromASuspendedHolderSuspendsAtOnce() {
    let isEditing = ValueHolder(true)
    let suspender = Suspender()
    let observer = isEditing.chain().sendTo(suspender).sync()
    #expect(suspender.isSuspended)
    withExtendedLifetime(observer) {}
  }

  @Test func suspenderBoundToAHolderMirrorsItsState() {
    let suspender = Suspender()
    let mirror = ValueHolder(true)
    let observer = suspender.chain().sendTo(mirror).sync()
    #expect(mirror.value == false)
    suspender.suspend()
    #expect(mirror.value == true)
    withExtendedLifetime(observer) {}
  }

  // MARK: - Shared

  @Test func oneSuspenderPausesEveryChainThatUsesIt() {
    let first = ValueHolder(1)
    let second = ValueHolder(10)
    let events = Notifier<Int>()
    let suspender = Suspender()
    let received = Recorder<String>()
    let observers = [
      first.chain().suspend(suspender).do { received.append("first \($0)") }.sync(),
      second.chain().suspend(suspender).do { received.append("second \($0)") }.sync(),
      events.chain().suspend(suspender).do { received.append("event \($0)") }.end(),
    ]
    suspender.suspend()
    first.value = 2
    second.value = 20
    second.value = 30
    events.notify(value: 100)
    #expect(received.history == ["first 1", "second 10"])
    suspender.resume()
    // Chains are resumed in the order they subscribed to the suspender.
    #expect(received.history == ["first 1", "second 10", "first 2", "second 30"])
    withExtendedLifetime(observers) {}
  }

  // MARK: - Concurrency

  @Test func suspenderFlippedFromManyThreadsBroadcastsEveryChangeInOrder() {
    let suspender = Suspender()
    let received = Recorder<Bool>()
    let observer = suspender.chain().do { received.append($0) }.sync()

    race(threads: 4) { thread in
      for _ in 0..<2_000 {
        if thread.isMultiple(of: 2) {
          suspender.suspend()
          suspender.resume()
        } else {
          suspender.receive(value: true)
          suspender.receive(value: false)
        }
      }
    }

    let history = received.history
    #expect(!suspender.isSuspended)
    #expect(history.first == false)
    #expect(history.last == false)
    // Only changes are broadcast, so consecutive values always differ.
    #expect(zip(history, history.dropFirst()).allSatisfy { $0 != $1 })
    withExtendedLifetime(observer) {}
  }
}
