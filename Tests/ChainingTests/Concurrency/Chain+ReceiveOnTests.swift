import Chaining
import Dispatch
import Testing

/// A queue that can tell whether code runs on it.
private final class TaggedQueue: Swift.Sendable {
  let queue: DispatchQueue
  private let key = DispatchSpecificKey<Int>()

  init(_ label: String, attributes: DispatchQueue.Attributes = []) {
    queue = DispatchQueue(label: label, attributes: attributes)
    queue.setSpecific(key: key, value: 1)
  }

  var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == 1 }
}

@Suite(.serialized) struct ChainReceiveOnTests {
  @Test func laterStepsRunOnTheQueueInOrder() {
    let tagged = TaggedQueue("receive-on")
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let onQueue = Recorder<Bool>()
    let done = DispatchSemaphore(value: 0)
    let observer = holder.chain().receive(on: tagged.queue).do { value in
      onQueue.append(tagged.isCurrent)
      received.append(value)
      if value == 1_000 { done.signal() }
    }.sync()
    for value in 1...1_000 { holder.value = value }
    done.wait()
    #expect(received.history == Array(0...1_000))
    #expect(onQueue.history.allSatisfy { $0 })
    #expect(onQueue.count == 1_001)
    withExtendedLifetime(observer) {}
  }

  @Test func stepsBeforeTheHopRunOnTheSendingThread() {
    let tagged = TaggedQueue("receive-on-before")
    let notifier = Notifier<Int>()
    let before = Recorder<Bool>()
    let done = DispatchSemaphore(value: 0)
    let observer = notifier.chain()
      .do { _ in before.append(tagged.isCurrent) }
      .receive(on: tagged.queue)
      .do { _ in done.signal() }
      .end()
    notifier.notify(value: 1)
    done.wait()
    #expect(before.history == [false])
    withExtendedLifetime(observer) {}
  }

  @Test func aConcurrentQueueStillReceivesValuesInOrder() {
    let concurrent = DispatchQueue(label: "receive-on-concurrent", attributes: .concurrent)
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let done = DispatchSemaphore(value: 0)
    let observer = notifier.chain().receive(on: concurrent).do { value in
      received.append(value)
      if value == 2_000 { done.signal() }
    }.end()
    for value in 1...2_000 { notifier.notify(value: value) }
    done.wait()
    #expect(received.history == Array(1...2_000))
    withExtendedLifetime(observer) {}
  }

  @Test func valuesFromManyThreadsArriveExactlyOnceInPerThreadOrder() {
    let queue = DispatchQueue(label: "receive-on-threads")
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().receive(on: queue).do { received.append($0) }.end()
    race(threads: 4) { thread in
      for index in 0..<2_500 { notifier.notify(value: thread * 10_000 + index) }
    }
    // Every value was handed to the queue before race returned; a block
    // queued after them runs after them.
    queue.sync {}
    let history = received.history
    #expect(history.count == 10_000)
    for thread in 0..<4 {
      let fromThread = history.filter { $0 / 10_000 == thread }
      #expect(fromThread == Array(thread * 10_000..<thread * 10_000 + 2_500))
    }
    withExtendedLifetime(observer) {}
  }

  @Test func valuesStillQueuedWhenInvalidatedAreNeverDelivered() {
    let queue = DispatchQueue(label: "receive-on-invalidate")
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().receive(on: queue).do { received.append($0) }.end()
    // Hold the queue so that the values pile up behind this block.
    let hold = DispatchSemaphore(value: 0)
    queue.async { hold.wait() }
    for value in 1...100 { notifier.notify(value: value) }
    observer.invalidate()
    hold.signal()
    queue.sync {}
    #expect(received.history.isEmpty)
  }

  @Test func invalidateWaitsForAValueRunningOnTheQueue() {
    let queue = DispatchQueue(label: "receive-on-running")
    let notifier = Notifier<Int>()
    let events = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let observer = notifier.chain().receive(on: queue).do { value in
      events.append("started \(value)")
      entered.signal()
      proceed.wait()
      events.append("finished \(value)")
    }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    entered.wait()
    let invalidator = spawn {
      observer.invalidate()
      events.append("invalidate returned")
    }
    // A correct invalidate() is still waiting for the running handler.
    #expect(invalidator.wait(timeout: .now() + .milliseconds(300)) == .timedOut)
    proceed.signal()
    invalidator.wait()
    queue.sync {}
    #expect(events.history == ["started 1", "finished 1", "invalidate returned"])
  }

  @Test func everyConcurrentInvalidateWaitsForAValueRunningOnTheQueue() {
    let queue = DispatchQueue(label: "receive-on-two-invalidators")
    let notifier = Notifier<Int>()
    let events = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let observer = notifier.chain().receive(on: queue).do { value in
      entered.signal()
      proceed.wait()
      events.append("finished \(value)")
    }.end()
    notifier.notify(value: 1)
    entered.wait()
    let first = spawn {
      observer.invalidate()
      events.append("first returned")
    }
    let second = spawn {
      observer.invalidate()
      events.append("second returned")
    }
    // Neither call may return while the handler still runs, whichever of
    // them took the observer's resources.
    #expect(first.wait(timeout: .now() + .milliseconds(300)) == .timedOut)
    #expect(second.wait(timeout: .now() + .milliseconds(100)) == .timedOut)
    proceed.signal()
    first.wait()
    second.wait()
    #expect(events.history.first == "finished 1")
    #expect(Set(events.history.dropFirst()) == ["first returned", "second returned"])
  }

  @Test func syncSendsTheFetchedValueThroughTheQueue() {
    let tagged = TaggedQueue("receive-on-sync")
    let holder = ValueHolder("now")
    let received = Recorder<String>()
    let onQueue = Recorder<Bool>()
    let observer = holder.chain().receive(on: tagged.queue).do { value in
      onQueue.append(tagged.isCurrent)
      received.append(value)
    }.sync()
    tagged.queue.sync {}
    #expect(received.history == ["now"])
    #expect(onQueue.history == [true])
    withExtendedLifetime(observer) {}
  }

  @Test func twoWayBindingThroughQueuesSettles() {
    let queue = DispatchQueue(label: "receive-on-loop")
    let a = ValueHolder(Box(number: 0))
    let b = ValueHolder(Box(number: 0))
    let crossings = Recorder<String>()
    let observers = [
      a.chain().receive(on: queue).do { crossings.append("a→b \($0.number)") }.sendTo(b).end(),
      b.chain().receive(on: queue).do { crossings.append("b→a \($0.number)") }.sendTo(a).end(),
    ]
    a.value = Box(number: 1)
    // Drain: each crossing may queue one more block; three rounds are more
    // than a settled loop needs, and an endless one would keep growing.
    for _ in 0..<3 { queue.sync {} }
    #expect(crossings.history == ["a→b 1", "b→a 1"])
    #expect(b.value.number == 1)
    withExtendedLifetime(observers) {}
  }

  @Test func releasingTheObserverReleasesTheLaterSteps() {
    let queue = DispatchQueue(label: "receive-on-release")
    let notifier = Notifier<Int>()
    weak var weakToken: Token?
    var observer: Observer?
    do {
      let token = Token()
      weakToken = token
      observer = notifier.chain().receive(on: queue).do { _ in _ = token }.end()
    }
    notifier.notify(value: 1)
    queue.sync {}
    #expect(weakToken != nil)
    #expect(observer?.isInvalidated == false)
    observer = nil
    queue.sync {}
    #expect(weakToken == nil)
  }
}
