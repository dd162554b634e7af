import Chaining
import Dispatch
import Testing

@Suite struct ObserverTests {
  @Test func invalidatedObserverReceivesNothing() {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.sync()
    observer.invalidate()
    holder.value = 1
    #expect(received.history == [0])
    #expect(observer.isInvalidated)
  }

  @Test func releasingTheLastReferenceInvalidates() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    var observer: Observer? = notifier.chain().do { received.append($0) }.end()
    notifier.notify(value: 1)
    observer = nil
    notifier.notify(value: 2)
    #expect(received.history == [1])
    _ = observer
  }

  @Test func invalidatingTwiceIsHarmless() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().do { received.append($0) }.end()
    observer.invalidate()
    observer.invalidate()
    notifier.notify(value: 1)
    #expect(received.history.isEmpty)
  }

  @Test func invalidatingOneObserverLeavesTheOthers() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    let a = notifier.chain().do { received.append("a\($0)") }.end()
    let b = notifier.chain().do { received.append("b\($0)") }.end()
    a.invalidate()
    notifier.notify(value: 1)
    #expect(received.history == ["b1"])
    _ = b
  }

  @Test func observerCanBeStoredAsAnyObserver() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let stored: [any AnyObserver] = [notifier.chain().do { received.append($0) }.end()]
    notifier.notify(value: 1)
    stored[0].invalidate()
    notifier.notify(value: 2)
    #expect(received.history == [1])
  }

  @Test func invalidateWaitsForADeliveryInProgressOnAnotherThread() {
    let notifier = Notifier<Int>()
    let events = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let observer = notifier.chain().do { value in
      events.append("handler started \(value)")
      entered.signal()
      proceed.wait()
      events.append("handler finished \(value)")
    }.end()

    let sender = spawn { notifier.notify(value: 1) }
    entered.wait()
    let invalidator = spawn {
      observer.invalidate()
      events.append("invalidate returned")
    }
    // invalidate() must still be waiting for the handler: its thread cannot
    // finish while the handler is held. (A correct implementation always
    // times out here.)
    #expect(invalidator.wait(timeout: .now() + .milliseconds(300)) == .timedOut)
    proceed.signal()
    sender.wait()
    invalidator.wait()
    notifier.notify(value: 2)
    #expect(events.history == ["handler started 1", "handler finished 1", "invalidate returned"])
  }

  @Test func nothingIsDeliveredAfterInvalidateReturnsWhileAnotherThreadBroadcasts() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().do { received.append($0) }.end()
    let firstDelivered = DispatchSemaphore(value: 0)
    let marker = notifier.chain().do { value in if value == 0 { firstDelivered.signal() } }.end()
    let sender = spawn {
      for value in 0..<20_000 { notifier.notify(value: value) }
    }
    firstDelivered.wait()
    observer.invalidate()
    let countWhenInvalidated = received.count
    sender.wait()
    #expect(received.count == countWhenInvalidated)
    #expect(countWhenInvalidated >= 1)
    // What was delivered is a prefix, in order, without gaps.
    #expect(received.history == Array(0..<countWhenInvalidated))
    _ = marker
  }

  @Test func handlerCanInvalidateItsOwnObserver() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    nonisolated(unsafe) var observer: Observer?
    observer = notifier.chain().do { value in
      received.append(value)
      observer?.invalidate()
    }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [1])
    #expect(observer?.isInvalidated == true)
  }

  @Test func handlerCanReleaseItsOwnObserver() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    nonisolated(unsafe) var observer: Observer?
    observer = notifier.chain().do { value in
      received.append(value)
      observer = nil
    }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [1])
    #expect(observer == nil)
  }

  @Test func handlersOnTwoThreadsInvalidatingEachOthersObserversDoNotDeadlock() {
    // Each handler waits until the other one is running, then invalidates the
    // other's observer. Waiting inside invalidate() would deadlock here.
    let left = Notifier<Int>()
    let right = Notifier<Int>()
    let bothRunning = DispatchGroup()
    bothRunning.enter()
    bothRunning.enter()
    nonisolated(unsafe) var leftObserver: Observer?
    nonisolated(unsafe) var rightObserver: Observer?
    let received = Recorder<String>()
    leftObserver = left.chain().do { _ in
      bothRunning.leave()
      bothRunning.wait()
      rightObserver?.invalidate()
      received.append("left")
    }.end()
    rightObserver = right.chain().do { _ in
      bothRunning.leave()
      bothRunning.wait()
      leftObserver?.invalidate()
      received.append("right")
    }.end()
    let a = spawn { left.notify(value: 1) }
    let b = spawn { right.notify(value: 1) }
    a.wait()
    b.wait()
    #expect(Set(received.history) == ["left", "right"])
    #expect(leftObserver?.isInvalidated == true)
    #expect(rightObserver?.isInvalidated == true)
  }
}
