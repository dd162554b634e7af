import Chaining
import Dispatch
import Observation
import Testing

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class Profile: @unchecked Swift.Sendable {
  // @unchecked: the tests write and read it on one queue, or say otherwise.
  var first = "Ann"
  var last = "Lee"
  var useLast = false
  var age = 30
}

/// An `@Observable`-style model safe to write from any thread: each write,
/// its `willSet` included, and each read hold one lock, as `ObservedValue`
/// asks of a model written from other threads.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class LockedCounter: Observable, Swift.Sendable {
  private let registrar = ObservationRegistrar()
  private let lock = Locked(0)

  var value: Int {
    get {
      registrar.access(self, keyPath: \.value)
      return lock.withLock { $0 }
    }
    set {
      lock.withLock { stored in
        registrar.withMutation(of: self, keyPath: \.value) { stored = newValue }
      }
    }
  }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor @Observable final class MainActorModel {
  var title = "a"
}

/// Returns once the main queue has run what was queued on it before.
@MainActor func mainQueueTurn() async {
  await withCheckedContinuation { done in DispatchQueue.main.async { done.resume() } }
}

@Suite struct ObservedValueTests {
  let queue = DispatchQueue(label: "ObservedValueTests")

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func syncSendsTheCurrentValueAndChangesFollowOnTheQueue() {
    let profile = Profile()
    let name = ObservedValue(on: queue) { "\(profile.first) \(profile.last)" }
    let received = Recorder<String>()
    let observer = name.chain().do { received.append($0) }.sync()
    #expect(received.history == ["Ann Lee"])
    queue.sync { profile.first = "Bea" }
    queue.sync {}
    #expect(received.history == ["Ann Lee", "Bea Lee"])
    queue.sync {
      profile.first = "Cy"
      profile.last = "Mo"
    }
    queue.sync {}
    // Two writes in one turn of the queue: one read, of both.
    #expect(received.history == ["Ann Lee", "Bea Lee", "Cy Mo"])
    #expect(name.value == "Cy Mo")
    observer.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aValueIsReadAfterItIsStoredNotBefore() {
    let profile = Profile()
    let age = ObservedValue(on: queue) { profile.age }
    let received = Recorder<Int>()
    let observer = age.chain().do { received.append($0) }.end()
    for value in 31...35 {
      queue.sync { profile.age = value }
      queue.sync {}
    }
    #expect(received.history == [31, 32, 33, 34, 35])
    observer.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func anEqualResultSendsNothing() {
    let profile = Profile()
    let initial = ObservedValue(on: queue) { profile.first.prefix(1) == "A" }
    let received = Recorder<Bool>()
    let observer = initial.chain().do { received.append($0) }.end()
    queue.sync { profile.first = "Al" }
    queue.sync {}
    queue.sync { profile.first = "Bo" }
    queue.sync {}
    #expect(received.history == [false])
    observer.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func itFollowsWhatTheClosureReadLastTime() {
    // An implicit switch: after `useLast` flips, `first` is no longer read.
    let profile = Profile()
    let shown = ObservedValue(on: queue) { profile.useLast ? profile.last : profile.first }
    let received = Recorder<String>()
    let observer = shown.chain().do { received.append($0) }.sync()
    queue.sync { profile.first = "Bea" }
    queue.sync {}
    queue.sync { profile.useLast = true }
    queue.sync {}
    queue.sync { profile.first = "Cy" }  // not read any more
    queue.sync {}
    queue.sync { profile.last = "Mo" }
    queue.sync {}
    #expect(received.history == ["Ann", "Bea", "Lee", "Mo"])
    observer.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func fiveHundredRapidWritesArriveInOrderEndingWithTheLast() {
    let profile = Profile()
    let age = ObservedValue(on: queue) { profile.age }
    let received = Recorder<Int>()
    let observer = age.chain().do { received.append($0) }.end()
    // Each write is its own turn of the queue, interleaved with the reads
    // the earlier writes queued.
    for value in 1...500 {
      queue.async { profile.age = value }
    }
    queue.sync {}  // after the last write
    queue.sync {}  // after the read the last write queued
    let history = received.history
    #expect(history.last == 500)
    #expect(zip(history, history.dropFirst()).allSatisfy { $0 < $1 })
    observer.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func writesFromOtherThreadsToAHolderArriveInOrderEndingWithTheLast() {
    // A holder is a model safe to write from any thread: it stores before
    // it tells Observation, so no write is missed.
    let holder = ValueHolder(0)
    let value = ObservedValue(on: queue) { holder.value }
    let received = Recorder<Int>()
    let observer = value.chain().do { received.append($0) }.end()
    for step in 1...500 { holder.value = step }
    queue.sync {}
    let history = received.history
    #expect(history.last == 500)
    #expect(zip(history, history.dropFirst()).allSatisfy { $0 < $1 })
    observer.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func concurrentWritersLeaveTheLastValue() {
    // Two writers at once on a locked model and on a holder; each writer's
    // own values arrive in its order. Run under the thread sanitizer in CI.
    let locked = LockedCounter()
    let holder = ValueHolder(0)
    let sum = ObservedValue(on: queue) { [locked.value, holder.value] }
    let received = Recorder<[Int]>()
    let observer = sum.chain().do { received.append($0) }.end()
    race(threads: 2) { index in
      for step in 1...500 {
        if index == 0 { locked.value = step } else { holder.value = step }
      }
    }
    locked.value = 1000
    holder.value = 2000
    queue.sync {}
    let history = received.history
    #expect(history.last == [1000, 2000])
    for column in 0..<2 {
      let values = history.map { $0[column] }
      #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 })
    }
    observer.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func nothingIsDeliveredAfterInvalidateReturns() {
    let holder = ValueHolder(0)
    let value = ObservedValue(on: queue) { holder.value }
    let received = Recorder<Int>()
    let observer = value.chain().do { received.append($0) }.end()
    let writer = spawn {
      for step in 1...500 { holder.value = step }
    }
    for _ in 1...50 { queue.sync {} }
    observer.invalidate()
    let count = received.history.count
    writer.wait()
    holder.value = -1
    queue.sync {}
    #expect(received.history.count == count)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func theTrackingKeepsNothingAlive() {
    // A model that is never written again keeps the tracking that holds
    // the source: it must hold it weakly.
    weak var weakSource: ObservedValue<String>?
    weak var weakProfile: Profile?
    do {
      let profile = Profile()
      let source = ObservedValue(on: queue) { profile.first }
      weakSource = source
      weakProfile = profile
      let observer = source.chain().do { _ in }.sync()
      observer.invalidate()
    }
    queue.sync {}
    #expect(weakSource == nil)
    #expect(weakProfile == nil)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aSourceDroppedWhileTheModelLivesIsFreed() {
    let profile = Profile()
    weak var weakSource: ObservedValue<String>?
    do {
      let source = ObservedValue(of: profile, on: queue) { $0.first }
      weakSource = source
    }
    #expect(weakSource == nil)
    // The model's registrar still holds the tracking, which finds nothing.
    queue.sync { profile.first = "Bea" }
    queue.sync {}
    #expect(profile.first == "Bea")
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aModelFreedWhileBoundEndsTheBindingQuietly() {
    var profile: Profile? = Profile()
    weak var weakProfile: Profile?  // set apart: see AsyncSequenceSourceTests
    weakProfile = profile
    let source = ObservedValue(of: profile!, on: queue) { $0.first }
    let received = Recorder<String>()
    let observer = source.chain().do { received.append($0) }.sync()
    queue.sync { profile!.first = "Bea" }
    queue.sync {}
    profile = nil
    #expect(weakProfile == nil)
    #expect(received.history == ["Ann", "Bea"])
    #expect(source.canFetch() == false)
    let late = Recorder<String>()
    let lateObserver = source.chain().do { late.append($0) }.sync()
    #expect(late.history.isEmpty)
    observer.invalidate()
    lateObserver.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aKeyPathChainKeepsItsSourceAndNotTheModel() {
    var profile: Profile? = Profile()
    weak var weakProfile: Profile?  // set apart: see AsyncSequenceSourceTests
    weakProfile = profile
    let received = Recorder<String>()
    let observer = profile!.chain(\.first, on: queue).do { received.append($0) }.sync()
    queue.sync { profile!.first = "Bea" }
    queue.sync {}
    #expect(received.history == ["Ann", "Bea"])
    profile = nil
    #expect(weakProfile == nil)
    observer.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func theValueIsObservableItself() {
    let profile = Profile()
    let age = ObservedValue(on: queue) { profile.age }
    let tracker = Tracker()
    #expect(tracker.track { age.value } == 30)
    queue.sync { profile.age = 31 }
    queue.sync {}
    #expect(tracker.count == 1)
    #expect(age.value == 31)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test @MainActor func aMainActorModelIsReadOnTheMainQueue() async {
    let model = MainActorModel()
    let source = ObservedValue(onMainActor: model) { $0.title }
    let received = Recorder<String>()
    let observer = source.chain().do { received.append($0) }.sync()
    model.title = "b"
    #expect(received.history == ["a"])
    await mainQueueTurn()
    #expect(received.history == ["a", "b"])
    model.title = "c"
    model.title = "d"
    await mainQueueTurn()
    #expect(received.history == ["a", "b", "d"])
    observer.invalidate()
  }
}
