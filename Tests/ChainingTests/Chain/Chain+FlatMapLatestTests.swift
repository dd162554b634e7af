import Chaining
import Dispatch
import Foundation
import Testing

/// An object that holds a source of its own, as a selected item does.
private final class Folder: Swift.Sendable {
  let title: ValueHolder<String>
  init(_ title: String) { self.title = ValueHolder(title) }
}

/// A counter shared by the closures of a test and its threads.
private final class Counter: @unchecked Swift.Sendable {
  // @unchecked: `value` is only touched under `lock`.
  private let lock = NSLock()
  private var value = 0

  /// Adds one and returns the new count.
  func next() -> Int {
    lock.withLock {
      value += 1
      return value
    }
  }

  var count: Int { lock.withLock { value } }
}

/// A value as a stress test's chain delivers it: which inner chain (the
/// number of the switch that made it), which holder it follows, and the
/// holder's value.
private struct Delivery: Equatable, Swift.Sendable {
  let generation: Int
  let holder: Int
  let value: Int
}

/// Returns after the main queue has run every block queued before this call.
@MainActor private func mainQueueTurnPassed() async {
  await withCheckedContinuation { done in DispatchQueue.main.async { done.resume() } }
}

@Suite struct ChainFlatMapLatestTests {
  // MARK: - Flow

  @Test func followsOnlyTheLatestInnerChain() {
    let inbox = Folder("Inbox")
    let archive = Folder("Archive")
    let selected = ValueHolder(inbox)
    let received = Recorder<String>()
    let observer = selected.chain().flatMapLatest { $0.title.chain() }.do { received.append($0) }.sync()
    #expect(received.history == ["Inbox"])
    inbox.title.value = "Inbox 1"
    #expect(received.history == ["Inbox", "Inbox 1"])
    selected.value = archive
    #expect(received.history == ["Inbox", "Inbox 1", "Archive"])
    inbox.title.value = "Inbox 2"
    #expect(received.history == ["Inbox", "Inbox 1", "Archive"])
    archive.title.value = "Archive 1"
    #expect(received.history == ["Inbox", "Inbox 1", "Archive", "Archive 1"])
    withExtendedLifetime(observer) {}
  }

  @Test func stepsOfTheInnerChainRunBeforeTheLaterSteps() {
    let numbers = [ValueHolder(1), ValueHolder(2)]
    let selected = ValueHolder(0)
    let received = Recorder<String>()
    let observer = selected.chain()
      .flatMapLatest { index in numbers[index].chain().filter { $0 >= 0 }.map { "\(index):\($0 * 10)" } }
      .map { "<\($0)>" }
      .do { received.append($0) }
      .sync()
    numbers[0].value = -5
    numbers[0].value = 3
    selected.value = 1
    numbers[1].value = 4
    #expect(received.history == ["<0:10>", "<0:30>", "<1:20>", "<1:40>"])
    withExtendedLifetime(observer) {}
  }

  @Test func transformRunsOnceForEachOuterValue() {
    let selected = Notifier<Int>()
    let inner = ValueHolder("x")
    let calls = Recorder<Int>()
    let observer = selected.chain().flatMapLatest { value in
      calls.append(value)
      return inner.chain()
    }.end()
    selected.notify(value: 1)
    selected.notify(value: 2)
    inner.value = "y"
    selected.notify(value: 3)
    #expect(calls.history == [1, 2, 3])
    withExtendedLifetime(observer) {}
  }

  @Test func switchingToANotifierSendsNothingUntilItNotifies() {
    let events = [Notifier<String>(), Notifier<String>()]
    let selected = ValueHolder(0)
    let received = Recorder<String>()
    let observer = selected.chain().flatMapLatest { events[$0].chain() }.do { received.append($0) }.sync()
    #expect(received.history == [])
    events[0].notify(value: "a")
    selected.value = 1
    #expect(received.history == ["a"])
    events[0].notify(value: "b")
    events[1].notify(value: "c")
    #expect(received.history == ["a", "c"])
    withExtendedLifetime(observer) {}
  }

  @Test func switchingToAMergedChainFetchesItsFetchableSources() {
    let saved = ValueHolder("saved")
    let edits = Notifier<String>()
    let other = ValueHolder("other")
    let selected = ValueHolder(0)
    let received = Recorder<String>()
    let observer = selected.chain()
      .flatMapLatest { index in
        index == 0 ? edits.chain().merge(saved.chain()) : other.chain().merge(edits.chain())
      }
      .do { received.append($0) }
      .sync()
    #expect(received.history == ["saved"])
    edits.notify(value: "edit")
    selected.value = 1
    #expect(received.history == ["saved", "edit", "other"])
    withExtendedLifetime(observer) {}
  }

  @Test func switchingToTheSameSourceAgainSendsItsValueAgainAndSubscribesOnce() {
    let inner = ValueHolder(7)
    let selected = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = selected.chain().flatMapLatest { _ in inner.chain() }.do { received.append($0) }.sync()
    selected.value = 1
    selected.value = 2
    #expect(received.history == [7, 7, 7])
    #expect(inner.observerCount == 1)
    inner.value = 8
    #expect(received.history == [7, 7, 7, 8])
    withExtendedLifetime(observer) {}
  }

  // MARK: - sync and end

  @Test func syncSyncsThroughTheInnerChainBeforeReturning() {
    let folder = Folder("Inbox")
    let selected = ValueHolder(folder)
    let received = Recorder<String>()
    let observer = selected.chain().flatMapLatest { $0.title.chain().map { $0.uppercased() } }
      .do { received.append($0) }
      .sync()
    #expect(received.history == ["INBOX"])
    withExtendedLifetime(observer) {}
  }

  @Test func endSendsNothingUntilTheOuterSourceSends() {
    let folders = [Folder("Inbox"), Folder("Archive")]
    let selected = ValueHolder(0)
    let received = Recorder<String>()
    let observer = selected.chain().flatMapLatest { folders[$0].title.chain() }.do { received.append($0) }.end()
    folders[0].title.value = "Inbox 1"
    #expect(received.history == [])
    #expect(folders[0].title.observerCount == 0)
    selected.value = 1
    #expect(received.history == ["Archive"])
    withExtendedLifetime(observer) {}
  }

  @Test func anOuterNotifierSwitchesOnEachValue() {
    let selected = Notifier<Folder>()
    let first = Folder("first")
    let second = Folder("second")
    let received = Recorder<String>()
    let observer = selected.chain().flatMapLatest { $0.title.chain() }.do { received.append($0) }.end()
    selected.notify(value: first)
    selected.notify(value: second)
    first.title.value = "first 1"
    selected.notify(value: first)
    #expect(received.history == ["first", "second", "first 1"])
    withExtendedLifetime(observer) {}
  }

  // MARK: - Lifetime

  @Test func aSwitchUnsubscribesTheReplacedInnerChain() {
    let folders = [Folder("a"), Folder("b")]
    let selected = ValueHolder(0)
    let observer = selected.chain().flatMapLatest { folders[$0].title.chain() }.end()
    #expect(folders.map(\.title.observerCount) == [0, 0])
    selected.value = 1
    #expect(folders.map(\.title.observerCount) == [0, 1])
    selected.value = 0
    #expect(folders.map(\.title.observerCount) == [1, 0])
    withExtendedLifetime(observer) {}
  }

  @Test func invalidatingTheObserverEndsTheInnerChain() {
    let folder = Folder("a")
    let selected = ValueHolder(folder)
    let received = Recorder<String>()
    let observer = selected.chain().flatMapLatest { $0.title.chain() }.do { received.append($0) }.sync()
    #expect(folder.title.observerCount == 1)
    observer.invalidate()
    #expect(folder.title.observerCount == 0)
    folder.title.value = "b"
    selected.value = Folder("c")
    #expect(received.history == ["a"])
    #expect(observer.isInvalidated)
  }

  @Test func releasingTheObserverEndsTheInnerChain() {
    let folder = Folder("a")
    let selected = ValueHolder(folder)
    let received = Recorder<String>()
    var observer: Observer? = selected.chain().flatMapLatest { $0.title.chain() }.do { received.append($0) }.sync()
    #expect(observer != nil)
    observer = nil
    #expect(folder.title.observerCount == 0)
    folder.title.value = "b"
    #expect(received.history == ["a"])
  }

  @Test func neitherTheStepNorTheInnerChainKeepsTheInnerSource() {
    let selected = Notifier<Folder>()
    weak var weakFolder: Folder?
    weak var weakTitle: ValueHolder<String>?
    let received = Recorder<String>()
    let observer = selected.chain().flatMapLatest { $0.title.chain() }.do { received.append($0) }.end()
    do {
      let folder = Folder("a")
      weakFolder = folder
      weakTitle = folder.title
      selected.notify(value: folder)
      folder.title.value = "b"
    }
    // Still the latest inner chain, but nothing holds its source any more.
    #expect(received.history == ["a", "b"])
    #expect(weakFolder == nil)
    #expect(weakTitle == nil)
    #expect(!observer.isInvalidated)
  }

  @Test func aRetainedInnerSourceIsReleasedAtTheSwitch() {
    let selected = Notifier<Int>()
    weak var weakFirst: ValueHolder<Int>?
    weak var weakSecond: ValueHolder<Int>?
    let observer = selected.chain().flatMapLatest { value in
      let inner = ValueHolder(value)
      if value == 1 { weakFirst = inner } else { weakSecond = inner }
      return inner.retain().chain()
    }.end()
    selected.notify(value: 1)
    #expect(weakFirst != nil)
    selected.notify(value: 2)
    #expect(weakFirst == nil)
    #expect(weakSecond != nil)
    observer.invalidate()
    #expect(weakSecond == nil)
  }

  @Test func invalidatingReleasesEveryClosureWhileTheSourcesLive() {
    let folder = Folder("a")
    let selected = ValueHolder(folder)
    weak var weakTransformToken: Token?
    weak var weakInnerToken: Token?
    weak var weakAfterToken: Token?
    var observer: Observer?
    do {
      let transformToken = Token()
      let innerToken = Token()
      let afterToken = Token()
      weakTransformToken = transformToken
      weakInnerToken = innerToken
      weakAfterToken = afterToken
      observer = selected.chain()
        .flatMapLatest { folder in
          withExtendedLifetime(transformToken) {}
          return folder.title.chain().do { _ in withExtendedLifetime(innerToken) {} }
        }
        .do { _ in withExtendedLifetime(afterToken) {} }
        .sync()
    }
    #expect(weakTransformToken != nil)
    #expect(weakInnerToken != nil)
    #expect(weakAfterToken != nil)
    observer?.invalidate()
    // Both sources are still alive: their senders must have let go too.
    #expect(weakTransformToken == nil)
    #expect(weakInnerToken == nil)
    #expect(weakAfterToken == nil)
    withExtendedLifetime((folder, selected, observer)) {}
  }

  @Test func aSwitchReleasesTheReplacedInnerChainsClosures() {
    let folders = [Folder("a"), Folder("b")]
    let selected = ValueHolder(0)
    weak var weakToken: Token?
    let observer = selected.chain().flatMapLatest { index in
      let token = Token()
      if index == 0 { weakToken = token }
      return folders[index].title.chain().do { _ in withExtendedLifetime(token) {} }
    }.sync()
    #expect(weakToken != nil)
    selected.value = 1
    #expect(weakToken == nil)
    withExtendedLifetime(observer) {}
  }

  @Test func prefixAfterTheStepEndsTheInnerChainFromInsideItsDelivery() {
    let folder = Folder("a")
    let selected = ValueHolder(folder)
    let received = Recorder<String>()
    let observer = selected.chain().flatMapLatest { $0.title.chain() }.prefix(2).do { received.append($0) }.sync()
    folder.title.value = "b"
    #expect(observer.isInvalidated)
    #expect(folder.title.observerCount == 0)
    folder.title.value = "c"
    #expect(received.history == ["a", "b"])
  }

  // MARK: - Reentrancy

  @Test func aTwoWayBindingThroughTheStepSettles() {
    // `Box` is not `Equatable`: only the echo rule can stop the loop.
    let titles = [ValueHolder(Box(number: 1)), ValueHolder(Box(number: 2))]
    let selected = ValueHolder(0)
    let field = ValueHolder(Box(number: 0))
    let forward = Recorder<Int>()
    let backward = Recorder<Int>()
    let toField = selected.chain()
      .flatMapLatest { titles[$0].chain() }
      .do { forward.append($0.number) }
      .sendTo(field)
      .sync()
    let toTitle = field.chain().do { box in
      backward.append(box.number)
      titles[selected.value].value = box
    }.end()
    #expect(field.value.number == 1)
    field.value = Box(number: 10)
    #expect(titles[0].value.number == 10)
    titles[0].value = Box(number: 11)
    #expect(field.value.number == 11)
    selected.value = 1
    #expect(field.value.number == 2)
    field.value = Box(number: 20)
    #expect(titles.map(\.value.number) == [11, 20])
    // Every value crossed once each way (the one the switch sent, 2, too:
    // written back into its own title, it is skipped as an echo there).
    #expect(forward.history == [1, 10, 11, 2, 20])
    #expect(backward.history == [10, 11, 2, 20])
    withExtendedLifetime((toField, toTitle)) {}
  }

  @Test func aLaterStepWritingTheInnerSourceIsSkippedAsAnEcho() {
    let inner = ValueHolder(Box(number: 1))
    let selected = ValueHolder(0)
    let received = Recorder<Int>()
    let others = Recorder<Int>()
    let other = inner.chain().do { others.append($0.number) }.end()
    let observer = selected.chain().flatMapLatest { _ in inner.chain() }.do { box in
      received.append(box.number)
      if box.number < 3 { inner.value = Box(number: box.number + 1) }
    }.sync()
    #expect(received.history == [1])
    #expect(inner.value.number == 2)
    #expect(others.history == [2])
    withExtendedLifetime((observer, other)) {}
  }

  @Test func aLaterStepWritingTheOuterSourceIsSkippedAsAnEcho() {
    let folders = [Folder("a"), Folder("b")]
    let selected = ValueHolder(0)
    let switches = Recorder<Int>()
    let others = Recorder<Int>()
    let other = selected.chain().do { others.append($0) }.end()
    let observer = selected.chain()
      .flatMapLatest { index in
        switches.append(index)
        return folders[index].title.chain()
      }
      .do { title in
        if title == "go" { selected.value = 1 }
      }
      .sync()
    folders[0].title.value = "go"
    // The outer source holds the write and its other chains receive it; this
    // chain caused it, so it does not switch.
    #expect(selected.value == 1)
    #expect(others.history == [1])
    #expect(switches.history == [0])
    #expect(folders.map(\.title.observerCount) == [1, 0])
    withExtendedLifetime((observer, other)) {}
  }

  @Test func aSwitchFromInsideAnInnerDeliveryLetsThatValueFinishFirst() {
    // A suspender's resume is a command, never an echo: resumed from a later
    // step, it replays the held outer value and switches inside the inner
    // chain's delivery. The new chain's current value is then caused by this
    // chain's own delivery, and the step's gate skips it as an echo, as a
    // `receive(on:)` hop does for a value replayed this way.
    let suspender = Suspender()
    let titles = [ValueHolder("a0"), ValueHolder("b0")]
    let selected = ValueHolder(0)
    let received = Recorder<String>()
    let observer = selected.chain()
      .suspend(suspender)
      .flatMapLatest { titles[$0].chain() }
      .do { title in
        received.append("start \(title)")
        if title == "a1" { suspender.resume() }
        received.append("end \(title)")
      }
      .sync()
    suspender.suspend()
    selected.value = 1
    titles[0].value = "a1"
    titles[0].value = "a2"
    titles[1].value = "b1"
    #expect(
      received.history == [
        "start a0", "end a0", "start a1", "end a1", "start b1", "end b1",
      ]
    )
    #expect(titles.map(\.observerCount) == [0, 1])
    withExtendedLifetime(observer) {}
  }

  // MARK: - Threads

  @Test func innerValuesFromManyThreadsArriveExactlyOnceInPerThreadOrder() {
    let inner = Notifier<Int>()
    let selected = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = selected.chain().flatMapLatest { _ in inner.chain() }.do { received.append($0) }.sync()
    race(threads: 4) { thread in
      for index in 0..<2_500 { inner.notify(value: thread * 10_000 + index) }
    }
    let history = received.history
    #expect(history.count == 10_000)
    for thread in 0..<4 {
      let fromThread = history.filter { $0 / 10_000 == thread }
      #expect(fromThread == Array(thread * 10_000..<thread * 10_000 + 2_500))
    }
    withExtendedLifetime(observer) {}
  }

  @Test func aValueOfTheReplacedChainStillOnItsWayIsDropped() {
    let titles = [ValueHolder("a0"), ValueHolder("b0")]
    let selected = ValueHolder(0)
    let received = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let observer = selected.chain()
      .flatMapLatest { index in
        titles[index].chain().do { title in
          if title == "a1" {
            entered.signal()
            proceed.wait()
          }
        }
      }
      .do { received.append($0) }
      .sync()
    let writer = spawn { titles[0].value = "a1" }
    entered.wait()
    // `a1` is inside the old inner chain, on the writer's thread. The switch
    // runs inside the outer chain's delivery, so it does not wait for it.
    selected.value = 1
    #expect(received.history == ["a0", "b0"])
    proceed.signal()
    writer.wait()
    #expect(received.history == ["a0", "b0"])
    #expect(titles.map(\.observerCount) == [0, 1])
    withExtendedLifetime(observer) {}
  }

  @Test func aValueOfTheReplacedChainAlreadyInTheLaterStepsComesFirst() {
    let titles = [ValueHolder("a0"), ValueHolder("b0")]
    let selected = ValueHolder(0)
    let received = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let observer = selected.chain()
      .flatMapLatest { titles[$0].chain() }
      .do { title in
        received.append("start \(title)")
        if title == "a1" {
          entered.signal()
          proceed.wait()
        }
        received.append("end \(title)")
      }
      .sync()
    let writer = spawn { titles[0].value = "a1" }
    entered.wait()
    // The writer's thread runs the later steps: the new chain's value waits
    // at the step's gate, and that thread delivers it after `a1`.
    selected.value = 1
    #expect(received.history == ["start a0", "end a0", "start a1"])
    proceed.signal()
    writer.wait()
    #expect(received.history == ["start a0", "end a0", "start a1", "end a1", "start b0", "end b0"])
    withExtendedLifetime(observer) {}
  }

  @Test func concurrentSwitchesAndInnerWritesNeverDeliverAReplacedChainsValue() {
    let holderCount = 3
    let switchers = 2
    let switchesPerThread = 400
    let writesPerHolder = 2_000
    let holders = (0..<holderCount).map { _ in ValueHolder(0) }
    let selected = ValueHolder(0)
    let generations = Counter()
    let selections = Recorder<(generation: Int, holder: Int)>()
    let received = Recorder<Delivery>()
    let observer = selected.chain()
      .flatMapLatest { value in
        let generation = generations.next()
        let holder = value % holderCount
        selections.append((generation, holder))
        return holders[holder].chain().map { Delivery(generation: generation, holder: holder, value: $0) }
      }
      .do { received.append($0) }
      .sync()
    race(threads: switchers + holderCount) { thread in
      if thread < switchers {
        // Distinct values, so that every write switches.
        for index in 1...switchesPerThread { selected.value = thread * 100_000 + index }
      } else {
        let holder = holders[thread - switchers]
        for value in 1...writesPerHolder { holder.value = value }
      }
    }
    let total = 1 + switchers * switchesPerThread
    #expect(generations.count == total)
    let selectedHolder = Dictionary(uniqueKeysWithValues: selections.history.map { ($0.generation, $0.holder) })
    let history = received.history
    // Each value comes from the holder its chain selected; the chains follow
    // each other, never going back to a replaced one; within a chain, the
    // holder's values come in write order.
    var wrong = 0
    var backwards = 0
    for (index, delivery) in history.enumerated() {
      if selectedHolder[delivery.generation] != delivery.holder { wrong += 1 }
      guard index > 0 else { continue }
      let previous = history[index - 1]
      if delivery.generation < previous.generation
        || (delivery.generation == previous.generation && delivery.value <= previous.value)
      {
        backwards += 1
      }
    }
    #expect(wrong == 0)
    #expect(backwards == 0)
    // The chain ends on the latest chain and its holder's latest value.
    let last = history.last
    let lastHolder = selectedHolder[total]
    #expect(last?.generation == total)
    #expect(last?.holder == lastHolder)
    #expect(last?.value == writesPerHolder)
    #expect(holders.map(\.observerCount) == (0..<holderCount).map { $0 == lastHolder ? 1 : 0 })
    withExtendedLifetime(observer) {}
  }

  @Test func invalidateWhileThreadsSwitchAndWriteStopsEveryDelivery() {
    let holders = (0..<2).map { _ in ValueHolder(0) }
    let selected = ValueHolder(0)
    let received = Recorder<Int>()
    let atInvalidate = Recorder<Int>()
    let observer = selected.chain()
      .flatMapLatest { holders[$0 % 2].chain() }
      .do { received.append($0) }
      .sync()
    race(threads: 4) { thread in
      switch thread {
      case 0:
        for index in 1...1_000 {
          selected.value = index
          if index == 500 {
            observer.invalidate()
            atInvalidate.append(received.count)
          }
        }
      case 1:
        for index in 1...1_000 { selected.value = 10_000 + index }
      default:
        for value in 1...2_000 { holders[thread - 2].value = value }
      }
    }
    // Once `invalidate()` returned, nothing more was delivered, and no inner
    // chain is left subscribed.
    #expect(atInvalidate.history == [received.count])
    #expect(holders.map(\.observerCount) == [0, 0])
    #expect(observer.isInvalidated)
  }

  @Test func invalidateWaitsForAnInnerValueRunningOnAnotherThread() {
    let inner = Notifier<Int>()
    let selected = ValueHolder(0)
    let events = Recorder<String>()
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let observer = selected.chain().flatMapLatest { _ in inner.chain() }.do { value in
      events.append("started \(value)")
      entered.signal()
      proceed.wait()
      events.append("finished \(value)")
    }.end()
    selected.value = 1
    let sender = spawn { inner.notify(value: 1) }
    entered.wait()
    let invalidator = spawn {
      observer.invalidate()
      events.append("invalidate returned")
    }
    // A correct invalidate() is still waiting for the running handler.
    #expect(invalidator.wait(timeout: .now() + .milliseconds(300)) == .timedOut)
    proceed.signal()
    invalidator.wait()
    sender.wait()
    #expect(events.history == ["started 1", "finished 1", "invalidate returned"])
    #expect(inner.observerCount == 0)
  }
}

@Suite(.serialized) @MainActor struct ChainFlatMapLatestMainActorTests {
  @Test func transformAndLaterStepsWrittenOnTheMainActorRunThere() async {
    let holders = [ValueHolder(0), ValueHolder(100)]
    let selected = ValueHolder(0)
    var received: [Int] = []
    var strays = 0
    let observer = selected.chain()
      .flatMapLatest { index in
        if !isOnMainQueue() { strays += 1 }
        return holders[index].chain()
      }
      .do { value in
        if !isOnMainQueue() { strays += 1 }
        received.append(value)
      }
      .sync()
    // `sync()` on the main actor runs at once, through both chains.
    #expect(received == [0])

    spawn {
      holders[0].value = 1
      selected.value = 1
      holders[0].value = 2
      holders[1].value = 101
    }.wait()
    // The main actor was blocked in `wait()`: the inner values wait there.
    #expect(received == [0])
    await mainQueueTurnPassed()
    // The switch waited for the main actor, so 2 still came from the chain
    // followed then; the switch sent the new holder's value, 101.
    #expect(received == [0, 1, 2, 101])
    #expect(strays == 0)
    withExtendedLifetime(observer) {}
  }

  @Test func aLaterStepOnTheMainActorHopsBackForValuesFromAnotherThread() async {
    let inner = ValueHolder(0)
    let selected = ValueHolder(0)
    var received: [Int] = []
    var strays = 0
    let observer = selected.chain()
      .flatMapLatest { _ in inner.chain() }
      .do { value in
        if !isOnMainQueue() { strays += 1 }
        received.append(value)
      }
      .sync()
    spawn {
      for value in 1...100 { inner.value = value }
    }.wait()
    #expect(received == [0])
    await mainQueueTurnPassed()
    #expect(received == Array(0...100))
    #expect(strays == 0)
    withExtendedLifetime(observer) {}
  }
}
