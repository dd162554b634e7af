import Chaining
import Dispatch
import Foundation
import Testing

// Steps built in an actor-isolated context run on that actor. Each closure
// below checks where it runs with a test of its own, independent of the
// library's: the main queue's tag (or the main thread) for the main actor,
// the executor queue's tag for `QueueActor`, and `preconditionIsolated()`
// for a default actor.

/// A view model as a user writes one: plain closures that touch its state.
@MainActor
private final class Screen {
  var titles: [String] = []
  var values: [Int] = []
  /// Closures that ran off the main actor.
  var strays = 0
  var observer: Observer?

  func bind(_ holder: ValueHolder<Int>) {
    observer = holder.chain()
      .map { [unowned self] value in
        check()
        return "#\(value)"
      }
      .do { [unowned self] title in
        check()
        titles.append(title)
      }
      .sync()
  }

  func check() {
    if !isOnMainQueue() { strays += 1 }
  }
}

/// Writes to a holder from inside an actor of its own.
private actor Writer {
  func write(_ range: ClosedRange<Int>, to holder: ValueHolder<Int>) {
    for value in range { holder.value = value }
  }
}

/// The values an actor received, and a wait for a number of them.
private struct Arrivals {
  var values: [Int] = []
  var waiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?

  mutating func append(_ value: Int) {
    values.append(value)
    if let waiter, values.count >= waiter.count {
      self.waiter = nil
      waiter.continuation.resume()
    }
  }
}

/// An actor that records the values a binding of its own sends it.
private protocol Recording: Actor {
  var arrivals: Arrivals { get set }
  /// Ends the actor's binding, whose closure holds the actor.
  func stop()
}

extension Recording {
  var values: [Int] { arrivals.values }

  /// Returns once `count` values in total have been received.
  func waitForValues(_ count: Int) async {
    if values.count >= count { return }
    await withCheckedContinuation { arrivals.waiter = (count, $0) }
  }
}

/// A default actor that binds a holder to its own state.
private actor Counter: Recording {
  var arrivals = Arrivals()
  private var observer: Observer?

  func stop() { observer = nil }

  /// Binds, and returns the values received by the time `sync()` returned.
  func bind(_ holder: ValueHolder<Int>) -> [Int] {
    // The closure holds the actor, which holds the observer: `stop()` ends
    // the cycle. (`[unowned self]` here stops Swift 6.3's region checker.)
    observer = holder.chain().do { value in
      self.preconditionIsolated()
      self.arrivals.append(value)
    }.sync()
    return values
  }
}

/// An actor whose binding's closure does not hold it.
private actor Relay {
  private var observer: Observer?

  func bind(_ holder: ValueHolder<Int>, to recorder: Recorder<Int>) {
    observer = holder.chain().do { recorder.append($0) }.sync()
  }
}

/// A tag on `QueueExecutor`'s queue.
private let executorQueueTag = DispatchSpecificKey<Bool>()

/// An executor that runs its jobs on a serial dispatch queue, tagged so that
/// a closure can tell whether it runs there.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
private final class QueueExecutor: SerialExecutor {
  let queue = DispatchQueue(label: "IsolationTests.QueueExecutor")

  init() {
    queue.setSpecific(key: executorQueueTag, value: true)
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
  }

  func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    UnownedSerialExecutor(ordinary: self)
  }
}

/// An actor on a custom executor, binding a holder to its state.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
private actor QueueActor: Recording {
  private let executor = QueueExecutor()
  nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
  var arrivals = Arrivals()
  private(set) var strays = 0
  private var observer: Observer?

  func stop() { observer = nil }

  func bind(_ holder: ValueHolder<Int>) -> [Int] {
    observer = holder.chain().map { $0 * 2 }.do { value in
      if DispatchQueue.getSpecific(key: executorQueueTag) != true { self.strays += 1 }
      self.arrivals.append(value)
    }.sync()
    return values
  }
}

/// Returns after the main queue has run every block queued before this call.
@MainActor private func mainQueueTurnPassed() async {
  await withCheckedContinuation { done in DispatchQueue.main.async { done.resume() } }
}

@Suite(.serialized) @MainActor struct MainActorIsolationTests {
  @Test func writesFromThreadsTasksAndActorsRunTheClosuresOnTheMainActor() async {
    let holder = ValueHolder(0)
    let screen = Screen()
    screen.bind(holder)
    // `sync()` on the main actor runs at once.
    #expect(screen.titles == ["#0"])

    spawn {
      for value in 1...100 { holder.value = value }
    }.wait()
    // The main actor was blocked in `wait()`: every value is still waiting.
    #expect(screen.titles == ["#0"])

    await Task.detached {
      for value in 101...200 { holder.value = value }
    }.value
    await Writer().write(201...300, to: holder)
    await mainQueueTurnPassed()

    #expect(screen.titles == (0...300).map { "#\($0)" })
    #expect(screen.strays == 0)
  }

  @Test func thePredicateStepsRunTheirClosuresOnTheMainActor() async {
    let holder = ValueHolder(0)
    var strays = 0
    var passed: [Int] = []
    let check = { if !isOnMainQueue() { strays += 1 } }
    let observer = holder.chain()
      .drop { value in
        check()
        return value < 2
      }
      .prefix { value in
        check()
        return value < 8
      }
      .removeDuplicates { previous, value in
        check()
        return previous == value
      }
      .first { value in
        check()
        return value > 4
      }
      .do { passed.append($0) }
      .sync()
    await Task.detached { for value in 1...9 { holder.value = value } }.value
    await mainQueueTurnPassed()
    #expect(passed == [5])
    #expect(strays == 0)
    #expect(observer.isInvalidated)
  }

  @Test func aValueSentOnTheMainActorWaitsBehindQueuedOnes() async {
    let holder = ValueHolder(0)
    let screen = Screen()
    screen.bind(holder)
    holder.value = 1
    #expect(screen.titles == ["#0", "#1"])

    spawn {
      holder.value = 2
      holder.value = 3
    }.wait()
    holder.value = 4
    // 4 was sent on the main actor, but 2 and 3 wait: it waits behind them.
    #expect(screen.titles == ["#0", "#1"])

    await mainQueueTurnPassed()
    #expect(screen.titles == ["#0", "#1", "#2", "#3", "#4"])
    holder.value = 5
    #expect(screen.titles.last == "#5")
    #expect(screen.strays == 0)
  }

  @Test func aStepAfterReceiveOnHopsBackToTheMainActor() async {
    let holder = ValueHolder(0)
    let queue = DispatchQueue(label: "IsolationTests.receiveOn")
    let queueTag = DispatchSpecificKey<Bool>()
    queue.setSpecific(key: queueTag, value: true)
    let ranOnQueue = Recorder<Bool>()
    var values: [Int] = []
    var strays = 0
    let observer = holder.chain()
      .receive(on: queue)
      .doOnQueue { ranOnQueue.append(DispatchQueue.getSpecific(key: queueTag) == true) }
      .do { value in
        if !isOnMainQueue() { strays += 1 }
        values.append(value)
      }
      .sync()
    holder.value = 1
    // Waits for the queue, then for the main queue.
    await withCheckedContinuation { done in queue.async { done.resume() } }
    await mainQueueTurnPassed()
    #expect(values == [0, 1])
    #expect(strays == 0)
    #expect(ranOnQueue.history == [true, true])
    withExtendedLifetime(observer) {}
  }

  @Test func aStepAfterAHopAndReceiveOnHopsBackToTheMainActor() async {
    let holder = ValueHolder(0)
    let queue = DispatchQueue(label: "IsolationTests.afterHop")
    var values: [Int] = []
    var strays = 0
    let observer = holder.chain()
      .map { $0 * 10 }  // the hop to the main actor
      .receive(on: queue)
      .do { value in
        if !isOnMainQueue() { strays += 1 }
        values.append(value)
      }
      .sync()
    await withCheckedContinuation { done in queue.async { done.resume() } }
    await mainQueueTurnPassed()
    #expect(values == [0])
    #expect(strays == 0)
    withExtendedLifetime(observer) {}
  }

  @Test func aTwoWayBindingAcrossTheHopSettles() async {
    let celsius = ValueHolder(Reading(0))
    let fahrenheit = ValueHolder(Reading(32))
    var conversions = 0
    let toFahrenheit = celsius.chain().map { reading in
      conversions += 1
      return Reading(reading.degrees * 9 / 5 + 32)
    }.sendTo(fahrenheit).sync()
    let toCelsius = fahrenheit.chain().map { Reading(($0.degrees - 32) * 5 / 9) }.sendTo(celsius).end()
    #expect(conversions == 1)

    spawn { celsius.value = Reading(100) }.wait()
    await mainQueueTurnPassed()
    // One conversion for the write: the echo back through `toCelsius` is
    // not sent round again, though `Reading` is not `Equatable`.
    #expect(conversions == 2)
    #expect(fahrenheit.value.degrees == 212)
    #expect(celsius.value.degrees == 100)
    withExtendedLifetime((toFahrenheit, toCelsius)) {}
  }

  @Test func nothingQueuedRunsAfterInvalidate() async {
    let holder = ValueHolder(0)
    let screen = Screen()
    screen.bind(holder)
    spawn {
      for value in 1...10 { holder.value = value }
    }.wait()
    screen.observer?.invalidate()
    await mainQueueTurnPassed()
    #expect(screen.titles == ["#0"])
  }

  @Test func theHopReleasesTheClosuresOnceInvalidatedAndRun() async {
    weak var weakToken: Token?
    let holder = ValueHolder(0)
    let observer: Observer
    do {
      let token = Token()
      weakToken = token
      // Written on the main actor: the closure, and the token it holds,
      // wait in the hop for the main queue.
      observer = holder.chain().do { _ in withExtendedLifetime(token) {} }.end()
    }
    spawn { holder.value = 1 }.wait()
    observer.invalidate()
    #expect(weakToken != nil)  // the queued turn still holds the hop
    await mainQueueTurnPassed()
    #expect(weakToken == nil)
  }

  @Test func anActorThatOwnsItsBindingIsFreed() async {
    // The hop holds the actor weakly: an actor that keeps the observer of a
    // chain written in it, whose closures do not hold it, is freed.
    weak var weakRelay: Relay?
    let holder = ValueHolder(0)
    let seen = Recorder<Int>()
    do {
      let relay = Relay()
      weakRelay = relay
      await relay.bind(holder, to: seen)
    }
    #expect(weakRelay == nil)
    holder.value = 1
    #expect(seen.history == [0])
  }

  @Test func mainActorReceiversAndDoOnMainActorAddNoSecondHop() async {
    let notifier = Notifier<Int>()
    var order: [String] = []
    let observer = notifier.chain()
      .doOnMainActor { order.append("doOnMainActor \($0)") }
      .do { order.append("do \($0)") }
      .end()
    spawn { notifier.notify(value: 1) }.wait()
    #expect(order.isEmpty)
    await mainQueueTurnPassed()
    #expect(order == ["doOnMainActor 1", "do 1"])
    withExtendedLifetime(observer) {}
  }
}

@Suite(.serialized) struct ActorIsolationTests {
  /// Writes 1...400 to `holder`, in order, from a thread, a task, another
  /// actor and the main actor, in turn.
  private func writeFromEverywhere(to holder: ValueHolder<Int>) async {
    spawn {
      for value in 1...100 { holder.value = value }
    }.wait()
    await Task.detached {
      for value in 101...200 { holder.value = value }
    }.value
    await Writer().write(201...300, to: holder)
    await MainActor.run {
      for value in 301...400 { holder.value = value }
    }
  }

  @Test func aDefaultActorsClosureRunsOnTheActor() async {
    let holder = ValueHolder(0)
    let counter = Counter()
    // `sync()` inside the actor runs at once.
    #expect(await counter.bind(holder) == [0])
    await writeFromEverywhere(to: holder)
    await counter.waitForValues(401)
    #expect(await counter.values == Array(0...400))
    await counter.stop()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func anActorOnACustomExecutorRunsItsClosuresThere() async {
    let holder = ValueHolder(0)
    let actor = QueueActor()
    #expect(await actor.bind(holder) == [0])
    await writeFromEverywhere(to: holder)
    await actor.waitForValues(401)
    #expect(await actor.values == (0...400).map { $0 * 2 })
    #expect(await actor.strays == 0)
    await actor.stop()
  }

  @Test func aNonisolatedChainRunsOnTheSendingThreadAsBefore() {
    let holder = ValueHolder(0)
    let threads = Recorder<Thread>()
    let observer = holder.chain().map { $0 + 1 }.do { _ in threads.append(Thread.current) }.end()
    let deliveredInline = Recorder<Bool>()
    spawn {
      holder.value = 1
      // Delivered before the write returned, on this thread.
      let delivered = threads.history
      deliveredInline.append(delivered.count == 1 && delivered[0] === Thread.current)
    }.wait()
    #expect(deliveredInline.history == [true])
    withExtendedLifetime(observer) {}
  }
}

/// A value that is not `Equatable`: a holder of it sends every write.
private struct Reading: Swift.Sendable {
  var degrees: Int
  init(_ degrees: Int) { self.degrees = degrees }
}

extension Chain {
  /// A nonisolated `do`, for a step that must run where the value is.
  fileprivate consuming func doOnQueue(_ body: @escaping () -> Void) -> Chain<Value, Source> {
    self.do({ _ in body() }, isolation: nil)
  }
}
