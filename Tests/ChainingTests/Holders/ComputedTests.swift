import Foundation
import Observation
import Testing
import _ChainingThreadContext

@testable import Chaining

/// `Computed` (#37): evaluation on read, dependencies, equality, lifetimes, threads, cycles, Observation and chains.
@Suite struct ComputedTests {
  /// A closure that counts its evaluations.
  final class Counter: @unchecked Swift.Sendable {
    var count = 0
  }

  @Test func evaluatesOnlyWhenReadAndADependencyChanged() {
    let a = ValueHolder(1)
    let b = ValueHolder(2)
    let evaluations = Counter()
    let sum = Computed { () -> Int in
      evaluations.count += 1
      return a.value + b.value
    }
    #expect(evaluations.count == 0)
    #expect(sum.value == 3)
    #expect(sum.value == 3)
    #expect(evaluations.count == 1)
    a.value = 10
    #expect(evaluations.count == 1)
    #expect(sum.value == 12)
    #expect(evaluations.count == 2)
    a.value = 10
    #expect(sum.value == 12)
    #expect(evaluations.count == 2)
  }

  @Test func dependsOnlyOnWhatTheLastEvaluationRead() {
    let flag = ValueHolder(false)
    let a = ValueHolder(1)
    let b = ValueHolder(2)
    let evaluations = Counter()
    let chosen = Computed { () -> Int in
      evaluations.count += 1
      return flag.value ? a.value : b.value
    }
    #expect(chosen.value == 2)
    a.value = 5
    #expect(chosen.value == 2)
    #expect(evaluations.count == 1)
    flag.value = true
    #expect(chosen.value == 5)
    #expect(evaluations.count == 2)
    b.value = 7
    #expect(chosen.value == 5)
    #expect(evaluations.count == 2)
  }

  @Test func anEqualValueStopsPropagation() {
    let a = ValueHolder(1)
    let parityEvaluations = Counter()
    let textEvaluations = Counter()
    let parity = Computed { () -> Bool in
      parityEvaluations.count += 1
      return a.value.isMultiple(of: 2)
    }
    let text = Computed { () -> String in
      textEvaluations.count += 1
      return parity.value ? "even" : "odd"
    }
    #expect(text.value == "odd")
    a.value = 3
    #expect(text.value == "odd")
    #expect(parityEvaluations.count == 2)
    #expect(textEvaluations.count == 1)
    a.value = 4
    #expect(text.value == "even")
    #expect(textEvaluations.count == 2)
  }

  @Test func aDiamondEvaluatesEachNodeOncePerChange() {
    let a = ValueHolder(1)
    let counts = (Counter(), Counter(), Counter())
    let b = Computed { () -> Int in
      counts.0.count += 1
      return a.value * 2
    }
    let c = Computed { () -> Int in
      counts.1.count += 1
      return a.value * 3
    }
    let d = Computed { () -> Int in
      counts.2.count += 1
      return b.value + c.value
    }
    #expect(d.value == 5)
    for value in 2...5 {
      a.value = value
      #expect(d.value == value * 5)
    }
    let evaluations: [Int] = [counts.0.count, counts.1.count, counts.2.count]
    #expect(evaluations == [5, 5, 5])
  }

  @Test func keepsWhatItReadsAlive() {
    weak var weakHolder: ValueHolder<Int>?
    let computed: Computed<Int>
    do {
      let holder = ValueHolder(4)
      weakHolder = holder
      computed = Computed { holder.value * 2 }
      #expect(computed.value == 8)
    }
    #expect(weakHolder != nil)
    weakHolder?.value = 5
    #expect(computed.value == 10)
  }

  @Test func isFreedWithItsLastUser() {
    let a = ValueHolder(1)
    weak var weakComputed: Computed<Int>?
    do {
      let computed = Computed { a.value + 1 }
      weakComputed = computed
      #expect(computed.value == 2)
    }
    #expect(weakComputed == nil)
    a.value = 2
  }

  @Test func oneEvaluationPerChangeUnderEightReaders() {
    let a = ValueHolder(0)
    let evaluations = Counter()
    let square = Computed { () -> Int in
      evaluations.count += 1
      return a.value * a.value
    }
    for round in 1...20 {
      a.value = round
      race(threads: 8) { _ in
        #expect(square.value == round * round)
      }
    }
    #expect(evaluations.count == 20)
  }

  @Test func aValueReplacedOrFoundEqualIsReleased() {
    // A result equal to the value is released at once; a value replaced
    // by a new result, once the update ends. Both for an `Equatable`
    // value (compared) and another (each result a change).
    final class Payload: Equatable, @unchecked Swift.Sendable {
      let number: Int
      let freed: Counter
      init(_ number: Int, _ freed: Counter) {
        self.number = number
        self.freed = freed
      }
      deinit { freed.count += 1 }
      static func == (lhs: Payload, rhs: Payload) -> Bool { lhs.number == rhs.number }
    }
    struct Unequatable: @unchecked Swift.Sendable { let payload: Payload }
    let a = ValueHolder(0)
    let freedCompared = Counter()
    let freedUncompared = Counter()
    let compared = Computed { Payload(a.value / 2, freedCompared) }
    let uncompared = Computed { Unequatable(payload: Payload(a.value / 2, freedUncompared)) }
    #expect(compared.value.number == 0)
    #expect(uncompared.value.payload.number == 0)
    a.value = 1  // the same half: the compared value keeps its payload
    #expect(compared.value.number == 0)
    #expect(uncompared.value.payload.number == 0)
    #expect(freedCompared.count == 1)
    #expect(freedUncompared.count == 1)
    a.value = 2  // another half: both replace their payload
    #expect(compared.value.number == 1)
    #expect(uncompared.value.payload.number == 1)
    #expect(freedCompared.count == 2)
    #expect(freedUncompared.count == 2)
    withExtendedLifetime((compared, uncompared)) {}
  }

  @Test func aReaderWaitsForTheEvaluationAnotherThreadRuns() {
    // The first reader stops inside the closure, holding the value's
    // claim, until the second has started its read: the second finds the
    // value claimed (unless it is slower than the first's release), waits
    // for it, and gets the same value without evaluating again.
    let a = ValueHolder(0)
    let evaluations = Counter()
    let stop = StopInside()
    let tenfold = stop.tenfold(of: a, counting: evaluations)
    for round in 1...50 {
      a.value = round
      let results = stop.read(tenfold, whileAnotherThreadStopsInside: tenfold)
      #expect(results == [round * 10, round * 10])
    }
    #expect(evaluations.count == 50)
  }

  @Test func aCheckWaitsForADependencyAnotherThreadEvaluates() {
    // `outer` reads `inner`, so a write marks `inner` dirty and `outer`
    // check. The first thread reads `inner` and stops inside its closure,
    // holding its claim; the second reads `outer`, whose check asks
    // `inner` for its version with the graph's lock held, finds it
    // claimed (unless it is slower than the first's release), waits for
    // it with the lock given back, then evaluates `outer` once.
    let a = ValueHolder(0)
    let innerEvaluations = Counter()
    let outerEvaluations = Counter()
    let stop = StopInside()
    let inner = stop.tenfold(of: a, counting: innerEvaluations)
    let outer = Computed { () -> Int in
      outerEvaluations.count += 1
      return inner.value + 1
    }
    #expect(outer.value == 1)
    for round in 1...50 {
      a.value = round
      let results = stop.read(outer, whileAnotherThreadStopsInside: inner)
      #expect(results.sorted() == [round * 10, round * 10 + 1])
    }
    #expect(innerEvaluations.count == 51)
    #expect(outerEvaluations.count == 51)
  }

  @Test func readsInAnotherOrderOrTwiceKeepTheirDependencies() {
    let a = ValueHolder(1)
    let b = ValueHolder(2)
    let flipped = ValueHolder(false)
    let evaluations = Counter()
    let sum = Computed { () -> Int in
      evaluations.count += 1
      if flipped.value { return b.value + a.value + b.value }
      return a.value + b.value + a.value
    }
    #expect(sum.value == 4)
    flipped.value = true
    #expect(sum.value == 5)
    // `b`, read out of order and then again in order, is listed once.
    #expect(sum.box.dependencies.count == 3)
    #expect(b.store.observation?.dependents.count == 1)
    a.value = 10
    #expect(sum.value == 14)
    b.value = 20
    #expect(sum.value == 50)
    flipped.value = false
    #expect(sum.value == 40)
    b.value = 3
    #expect(sum.value == 23)
    #expect(sum.value == 23)
    #expect(evaluations.count == 6)
  }

  @Test func anEvaluationThatDropsSeveralKeepsOneOutOfOrderAndAddsTwoRewiresInPlace() {
    // Past the head and `second`, read in order, the second evaluation reads the last
    // of four old dependencies (out of order) and two new ones, and drops
    // the other three: the kept one moves down over those dropped, the
    // new ones follow it, and the dropped ones, held by nothing else, are
    // freed (`Tracking.rewire(_:droppingInto:)`, with room for them on
    // the stack).
    final class Slot: @unchecked Swift.Sendable {
      var old: [Computed<Int>?] = []
      var new: [Computed<Int>] = []
    }
    let head = ValueHolder(1)
    let second = ValueHolder(false)
    let other = ValueHolder(0)
    let slot = Slot()
    slot.old = (1...4).map { index in Computed { head.value * index } }
    slot.new = [
      Computed { () -> Int in
        _ = other.value
        return head.value + 100
      },
      Computed { head.value + 200 },
    ]
    let evaluations = Counter()
    let value = Computed { () -> Int in
      evaluations.count += 1
      let base = head.value
      if second.value { return base + slot.old[3]!.value + slot.new[0].value + slot.new[1].value }
      return base + slot.old.reduce(0) { $0 + $1!.value }
    }
    #expect(value.value == 1 + 10)
    let address = { (object: AnyObject) in Unmanaged.passUnretained(object).toOpaque() }
    let owners = { value.box.dependencies.indices.map { value.box.dependencies[$0].owner.toOpaque() } }
    #expect(owners() == [address(head), address(second)] + slot.old.map { address($0!) })
    // Set apart from their declarations: `weak let` needs Swift 6.3, and a
    // `weak var` never set again is an error in the Apple check.
    weak var weakDropped0: Computed<Int>?
    weak var weakDropped1: Computed<Int>?
    weak var weakDropped2: Computed<Int>?
    (weakDropped0, weakDropped1, weakDropped2) = (slot.old[0], slot.old[1], slot.old[2])
    // Held by `value`'s dependencies alone.
    for index in 0..<3 { slot.old[index] = nil }
    #expect(weakDropped0 != nil && weakDropped1 != nil && weakDropped2 != nil)
    // The kept one moved meanwhile: it keeps the version read now, and
    // the next read evaluates nothing.
    withBatchedUpdates {
      second.value = true
      head.value = 2
    }
    #expect(value.value == 2 + 8 + 102 + 202)
    #expect(value.value == 2 + 8 + 102 + 202)
    #expect(evaluations.count == 2)
    let kept = slot.old[3]!
    #expect(
      owners() == [address(head), address(second), address(kept), address(slot.new[0]), address(slot.new[1])]
    )
    #expect(weakDropped0 == nil && weakDropped1 == nil && weakDropped2 == nil)
    #expect(kept.box.dependents.count == 1)
    #expect(slot.new.allSatisfy { $0.box.dependents.count == 1 })
    // A change that reaches `value` only through a new dependency, which
    // evaluates equal: the check compares each version, the kept one's
    // included, and evaluates nothing.
    other.value = 1
    #expect(value.value == 2 + 8 + 102 + 202)
    #expect(evaluations.count == 2)
    head.value = 3
    #expect(value.value == 3 + 12 + 103 + 203)
    #expect(evaluations.count == 3)
  }

  @Test func aDependencyNoLongerReadIsReleased() {
    final class Slot: @unchecked Swift.Sendable {
      var inner: Computed<Int>?
    }
    let a = ValueHolder(3)
    let useInner = ValueHolder(true)
    let slot = Slot()
    weak var weakInner: Computed<Int>?
    do {
      let inner = Computed { a.value * 2 }
      weakInner = inner
      slot.inner = inner
    }
    let outer = Computed { useInner.value ? slot.inner?.value ?? -1 : 0 }
    #expect(outer.value == 6)
    slot.inner = nil
    // Kept by the dependency, and still followed.
    #expect(weakInner != nil)
    #expect(weakInner?.value == 6)
    useInner.value = false
    #expect(outer.value == 0)
    #expect(weakInner == nil)
  }

  @Test func aValueWithAChainFreesWhatItReadOnceTheChainAndItsUsersGo() {
    weak var weakHolder: ValueHolder<Int>?
    weak var weakComputed: Computed<Int>?
    var observer: Observer?
    do {
      let holder = ValueHolder(1)
      weakHolder = holder
      let computed = Computed { holder.value + 1 }
      weakComputed = computed
      observer = computed.chain().do { _ in }.sync()
      holder.value = 2
    }
    #expect(weakHolder != nil)
    #expect(weakComputed != nil)
    observer?.invalidate()
    observer = nil
    #expect(weakComputed == nil)
    #expect(weakHolder == nil)
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func aCycleStopsWithAMessageThatNamesIt() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ValueHolder(0)
      var second: Computed<Int>?
      let first = Computed(name: "first") { holder.value + (second?.value ?? 0) }
      second = Computed(name: "second") { first.value + 1 }
      _ = first.value
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Computed.value: a computed value reads itself: first -> second -> first"))
  }

  @Test func aCycleTooDeepForTheReadingThreadsStackStopsWithAMessageThatNamesIt() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      // A ring of 20,000 values, each reading the next and the last the
      // first, read on a thread of 512 KiB: the update moves to new
      // threads, the last of which reads the first value, claimed by the
      // reading thread, which waits for the threads after it.
      final class Ring: @unchecked Swift.Sendable {
        // @unchecked: set before the thread starts, then only read.
        var values: [Computed<Int>] = []
      }
      let ring = Ring()
      let count = 20_000
      ring.values = (0..<count).map { index in
        Computed(name: "value \(index)") { ring.values[(index + 1) % count].value + 1 }
      }
      DispatchQueue.global().asyncAfter(deadline: .now() + 60) { exit(0) }
      spawn(stackSize: 512 * 1024) { _ = ring.values[0].value }.wait()
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    let names =
      (0..<8).map { "value \($0)" } + ["… 19985 more …"] + (19_993..<20_000).map { "value \($0)" } + ["value 0"]
    #expect(message.contains("Computed.value: a computed value reads itself, through values read on "), "\(message)")
    let cycle = names.joined(separator: " -> ")
    #expect(message.contains("threads at once that would wait for each other forever: \(cycle)\n"))
  }

  @Test(arguments: [2, 3])
  func aCycleReadOnSeveralThreadsAtOnceStopsWithAMessageThatNamesIt(threads: Int) async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [threads] in
      readRingOnThreads(threads)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(ringStopMessages(threads).contains { message.contains($0) }, "\(message)")
  }
  #endif

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aReadInsideObservationTrackingIsToldOfTheNextChange() {
    let a = ValueHolder(1)
    let double = Computed { a.value * 2 }
    let changes = Recorder<Int>()
    withObservationTracking {
      _ = double.value
    } onChange: {
      changes.append(1)
    }
    #expect(changes.history.isEmpty)
    a.value = 2
    #expect(changes.history == [1])
    #expect(double.value == 4)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aHolderReadOutsideAnEvaluationIsObservedWhatTheEvaluationsRead() {
    // A read inside an evaluation does not register with Observation (the
    // computed value's own registration covers it); a read outside one
    // still does, each time a tracking makes one.
    let a = ValueHolder(1)
    let double = Computed { a.value * 2 }
    #expect(double.value == 2)
    let changes = Recorder<String>()
    for round in 2...3 {
      withObservationTracking {
        _ = a.value
        _ = double.value
      } onChange: {
        changes.append("change \(round)")
      }
      a.value = round
      #expect(double.value == round * 2)
    }
    #expect(changes.history == ["change 2", "change 3"])
  }

  // MARK: - Chains

  @Test func aChainGetsEachChangeOnce() {
    let a = ValueHolder(1)
    let b = ValueHolder(2)
    let sum = Computed { a.value + b.value }
    let received = Recorder<Int>()
    let observer = sum.chain().do { received.append($0) }.sync()
    a.value = 10
    a.value = 10
    b.value = 20
    withBatchedUpdates {
      a.value = 100
      b.value = 200
    }
    #expect(received.history == [3, 12, 30, 300])
    withExtendedLifetime(observer) {}
  }

  @Test func aCombineOfAHolderAndAValueComputedFromItSendsOneUntornPairPerWrite() {
    let a = ValueHolder(1)
    let double = Computed { a.value * 2 }
    let received = Recorder<(Int, Int)>()
    let observer = a.chain().combine(double.chain()).do { received.append($0) }.sync()
    for value in 2...4 { a.value = value }
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 2], [2, 4], [3, 6], [4, 8]])
    withExtendedLifetime(observer) {}
  }

  @Test func aDiamondOfComputedValuesSendsOncePerWrite() {
    let a = ValueHolder(1)
    let b = Computed { a.value * 2 }
    let c = Computed { a.value * 3 }
    let d = Computed { b.value + c.value }
    let received = Recorder<(Int, Int)>()
    let pairs = b.chain().combine(c.chain()).do { received.append($0) }.sync()
    let sums = Recorder<Int>()
    let total = d.chain().do { sums.append($0) }.sync()
    for value in 2...3 { a.value = value }
    #expect(received.history.map { [$0.0, $0.1] } == [[2, 3], [4, 6], [6, 9]])
    #expect(sums.history == [5, 10, 15])
    withExtendedLifetime((pairs, total)) {}
  }

  @Test func anEqualValueSendsNothing() {
    let a = ValueHolder(1)
    let parity = Computed { a.value.isMultiple(of: 2) }
    let received = Recorder<Bool>()
    let observer = parity.chain().do { received.append($0) }.sync()
    a.value = 3
    a.value = 4
    a.value = 6
    #expect(received.history == [false, true])
    withExtendedLifetime(observer) {}
  }

  @Test func aValueMarkedTwiceInOneWaveSendsOnce() {
    // Read between two writes of one wave, the value is marked twice:
    // its chain still gets the wave's last value, once, at the wave's end.
    let a = ValueHolder(1)
    let double = Computed { a.value * 2 }
    let received = Recorder<Int>()
    let observer = double.chain().do { received.append($0) }.sync()
    var read = 0
    withBatchedUpdates {
      a.value = 2
      read = double.value
      a.value = 3
    }
    #expect(read == 4)
    #expect(received.history == [2, 6])
    withExtendedLifetime(observer) {}
  }

  @Test(arguments: [true, false])
  func aValueLetGoOfByAHandlerWhileItsRefreshWaitsIsFreedAfterIt(changes: Bool) {
    // A write marks the value, whose refresh then waits for the batch's
    // end, pinning the value's flush rather than retaining it (see
    // `DeliveryContext.deferRefresh(_:)`); a handler then lets the value
    // and its chain go. The refresh still runs at the batch's end (sent to
    // no chain when the value changed; skipped with no gate when it did
    // not, after a refresh that sent nothing), and the value is freed
    // then, with what its closure holds: not before (the address
    // sanitizer would see the wave's end read a freed flush), not never.
    let a = ValueHolder(1)
    let trigger = ValueHolder(0)
    let received = Recorder<Int>()
    weak var weakToken: Recorder<Int>?
    weak var weakComputed: Computed<Int>?
    var observer: (any AnyObserver)?
    do {
      let token = Recorder<Int>()
      weakToken = token
      let computed = Computed { () -> Int in
        token.append(a.value)
        return changes ? a.value : a.value / 100
      }
      weakComputed = computed
      observer = computed.chain().do { received.append($0) }.sync()
    }
    // An equal result first: the next refresh asks before the gate.
    a.value = 2
    let letGo = trigger.chain().do { _ in
      observer?.invalidate()
      observer = nil
    }.end()
    withBatchedUpdates {
      a.value = 3
      trigger.value = 1
      #expect(weakComputed == nil)
      #expect(weakToken != nil)
    }
    #expect(weakToken == nil)
    #expect(received.history == (changes ? [1, 2] : [0]))
    withExtendedLifetime(letGo) {}
  }

  @Test func aValueFreedAtTheWavesEndMayWriteFromItsDeinit() {
    // The value let go while its refresh waits is freed by the wave's end
    // (see the test above); what its closure held then goes too, and a
    // deinit that writes there starts more work in the same wave's end,
    // which sends it before the write returns.
    let a = ValueHolder(1)
    let trigger = ValueHolder(0)
    let released = ValueHolder(0)
    let doubled = Computed { released.value * 2 }
    let received = Recorder<Int>()
    let doubledObserver = doubled.chain().do { received.append($0) }.sync()
    weak var weakToken: DeinitAction?
    var observer: (any AnyObserver)?
    do {
      let token = DeinitAction { released.value = 21 }
      weakToken = token
      let computed = Computed { () -> Int in
        withExtendedLifetime(token) {}
        return a.value
      }
      observer = computed.chain().do { _ in }.sync()
    }
    let letGo = trigger.chain().do { _ in
      observer?.invalidate()
      observer = nil
    }.end()
    withBatchedUpdates {
      a.value = 2
      trigger.value = 1
      #expect(weakToken != nil)
    }
    #expect(weakToken == nil)
    #expect(released.value == 21)
    #expect(received.history == [0, 42])
    withExtendedLifetime((letGo, doubledObserver)) {}
  }

  @Test func aChangeAfterARefreshThatSentNothingIsSent() {
    // An equal result sends nothing, and the next refresh asks the value
    // whether its chains have had its version before taking the gate (see
    // `ComputedNode.isSent(runner:)`): the change after it must still be
    // sent, once, and the equal one after that not at all.
    let a = ValueHolder(1)
    let parity = Computed { a.value % 2 }
    let received = Recorder<Int>()
    let observer = parity.chain().do { received.append($0) }.sync()
    for value in [3, 4, 6, 7, 9, 8, 10, 11] { a.value = value }
    #expect(received.history == [1, 0, 1, 0, 1])
    // Through a value that reads it: the update the question makes
    // evaluates both.
    let doubled = Computed { parity.value * 2 }
    let doubledReceived = Recorder<Int>()
    let doubledObserver = doubled.chain().do { doubledReceived.append($0) }.sync()
    for value in [13, 14, 16, 17] { a.value = value }
    #expect(doubledReceived.history == [2, 0, 2])
    #expect(received.history == [1, 0, 1, 0, 1, 0, 1])
    withExtendedLifetime((observer, doubledObserver)) {}
  }

  @Test func twoThreadsWritingWhatAValueReadsLeaveItsChainWithItsLastValue() {
    // Each thread writes its own holder; the value is often equal to the
    // last (an eighth of the sum), so refreshes that sent nothing and
    // refreshes that send meet on both threads. Whatever the order, the
    // chain's last value is the value after both threads' last writes,
    // and its values only rise (the sum does, and refreshes send in version
    // order).
    let a = ValueHolder(0)
    let b = ValueHolder(0)
    let eighth = Computed { (a.value + b.value) / 8 }
    let received = Recorder<Int>()
    let observer = eighth.chain().do { received.append($0) }.sync()
    DispatchQueue.concurrentPerform(iterations: 2) { thread in
      let holder = thread == 0 ? a : b
      for value in 1...2_000 { holder.value = value }
    }
    #expect(eighth.value == 500)
    #expect(received.history.last == 500)
    #expect(zip(received.history, received.history.dropFirst()).allSatisfy { $0 < $1 })
    withExtendedLifetime(observer) {}
  }

  @Test func refreshesOnFourThreadsAtOnceSendInTheOrderOfTheirVersions() {
    // Each thread writes its own holder of a sum, which changes at every
    // write: every write's end refreshes the chain, without the flush's
    // gate, on four threads at once. Each refresh claims its broadcast in
    // the hold of the lock that reads the value, so the chain's values
    // only rise, and the last is the sum after every thread's last write.
    let heads = (0..<4).map { _ in ValueHolder(0) }
    let sum = Computed { heads.reduce(0) { $0 + $1.value } }
    let received = Recorder<Int>()
    let observer = sum.chain().do { received.append($0) }.sync()
    race(threads: 4) { thread in
      for value in 1...5_000 { heads[thread].value = value }
    }
    #expect(sum.value == 20_000)
    #expect(received.history.first == 0)
    #expect(received.history.last == 20_000)
    #expect(zip(received.history, received.history.dropFirst()).allSatisfy { $0 < $1 })
    withExtendedLifetime(observer) {}
  }

  @Test func chainsSubscribedWhileOtherThreadsRefreshNeverGetAnOlderValue() {
    // Two threads write the heads of a sum, each write's end refreshing
    // its chains, while a third subscribes a chain to it and invalidates
    // it, 1,000 times: refreshes claim their broadcasts while the list of
    // chains changes, and then take the core's lock inside the graph's.
    // No thread waits forever; the chain subscribed before the writes
    // gets rising values and ends with the last sum; each chain
    // subscribed meanwhile gets values that never go back; and one
    // subscribed after them gets the last sum. With the value `sync()`
    // sends fetched apart from the subscription, chains subscribed
    // meanwhile went back in six runs of eight.
    let heads = [ValueHolder(0), ValueHolder(0)]
    let sum = Computed { heads[0].value + heads[1].value }
    let steady = Recorder<Int>()
    let steadyChain = sum.chain().do { steady.append($0) }.sync()
    let wentBack = AtomicCounter()
    race(threads: 3) { thread in
      guard thread == 2 else {
        for value in 1...5_000 { heads[thread].value = value }
        return
      }
      for _ in 0..<1_000 {
        let received = Recorder<Int>()
        let chain = sum.chain().do { received.append($0) }.sync()
        chain.invalidate()
        // The synced value, then rising values; the first of them may be
        // the synced value again, from a refresh of it that another thread
        // had yet to send when this chain joined.
        let history = received.history
        let rest = history.dropFirst()
        let rising = zip(rest, rest.dropFirst()).allSatisfy { $0 < $1 }
        if !rising || (rest.first.map { $0 < history[0] } ?? false) { _ = wentBack.add(1) }
      }
    }
    #expect(wentBack.value == 0)
    #expect(steady.history.first == 0)
    #expect(steady.history.last == 10_000)
    #expect(zip(steady.history, steady.history.dropFirst()).allSatisfy { $0 < $1 })
    let late = Recorder<Int>()
    let lateChain = sum.chain().do { late.append($0) }.sync()
    #expect(late.history == [10_000])
    withExtendedLifetime((steadyChain, lateChain)) {}
  }

  @Test func aChainKeepsTheValueAlive() {
    let a = ValueHolder(1)
    let received = Recorder<Int>()
    weak var weakComputed: Computed<Int>?
    var observer: Observer?
    do {
      let computed = Computed { a.value + 1 }
      weakComputed = computed
      observer = computed.chain().do { received.append($0) }.sync()
    }
    #expect(weakComputed != nil)
    a.value = 5
    #expect(received.history == [2, 6])
    observer?.invalidate()
    observer = nil
    #expect(weakComputed == nil)
  }

  @Test func aValueReadingWhatACombineWritesRefreshesAfterIt() {
    // `total` reads `a` and `sum`, which a combine built later writes from
    // `a`: the read links `sum` to the value's refresh, which then ranks
    // above the combine, so a write of `a` sends once, untorn.
    let a = ValueHolder(1)
    let sum = ValueHolder(0)
    let total = Computed { a.value * 100 + sum.value }
    let received = Recorder<Int>()
    let observer = total.chain().do { received.append($0) }.sync()
    // Writes only from 2 on: the first write, not the sync, uses the link.
    let writer = a.chain().combine(a.chain()).filter { $0.0 >= 2 }.map { $0 + $1 }.sendTo(sum).sync()
    a.value = 2
    a.value = 3
    #expect(received.history == [100, 204, 306])
    withExtendedLifetime((observer, writer)) {}
  }

  @Test func aDependencyAddedByALaterEvaluationIsRankedToo() {
    // As above, but `sum` becomes a dependency only when `flag` is set, by
    // an evaluation that rewires the value: the rewire links it to the
    // value's refresh (by its place in the rank graph, through a holder,
    // or through a computed value that reads it). The combine is built
    // after, so a write of `a` sends once, untorn, only if the link was
    // made.
    let a = ValueHolder(1)
    let sum = ValueHolder(0)
    let flag = ValueHolder(false)
    let inner = Computed { sum.value }
    let viaHolder = Computed { flag.value ? a.value * 100 + sum.value : -1 }
    let viaComputed = Computed { flag.value ? a.value * 100 + inner.value : -1 }
    let received = Recorder<Int>()
    let receivedViaComputed = Recorder<Int>()
    let observers = [
      viaHolder.chain().do { received.append($0) }.sync(),
      viaComputed.chain().do { receivedViaComputed.append($0) }.sync(),
    ]
    flag.value = true
    let writer = a.chain().combine(a.chain()).filter { $0.0 >= 2 }.map { $0 + $1 }.sendTo(sum).sync()
    a.value = 2
    a.value = 3
    #expect(received.history == [-1, 100, 204, 306])
    #expect(receivedViaComputed.history == [-1, 100, 204, 306])
    withExtendedLifetime((observers, writer)) {}
  }

  @Test func tracksCollectionsViewsAndEveryHolder() {
    let items = ArrayHolder([1, 2])
    let prices = DictionaryHolder(["a": 10])
    let base = ValueHolder(100)
    let view = base.readOnly
    let flag = EventableValueHolder(false)
    let total = Computed { items.raw.reduce(0, +) + (prices.raw["a"] ?? 0) + view.value + (flag.value ? 1_000 : 0) }
    #expect(total.value == 113)
    items.append(3)
    #expect(total.value == 116)
    prices.replace(key: "a", value: 20)
    #expect(total.value == 126)
    base.value = 200
    #expect(total.value == 226)
    flag.value = true
    #expect(total.value == 1_226)
  }

  @Test func aComputedValueThatReadsAnotherKeepsItAlive() {
    let a = ValueHolder(1)
    weak var weakInner: Computed<Int>?
    let outer: Computed<Int>
    do {
      let inner = Computed { a.value * 2 }
      weakInner = inner
      outer = Computed { inner.value + 1 }
      #expect(outer.value == 3)
    }
    #expect(weakInner != nil)
    a.value = 2
    #expect(outer.value == 5)
  }

  @Test func theClosureRunsOnTheReadingThread() {
    let a = ValueHolder(1)
    let evaluated = Recorder<ObjectIdentifier>()
    let readers = Recorder<ObjectIdentifier>()
    let reader = Computed { () -> Int in
      evaluated.append(ObjectIdentifier(Thread.current))
      return a.value
    }
    for value in 2...3 {
      spawn {
        readers.append(ObjectIdentifier(Thread.current))
        _ = reader.value
      }.wait()
      a.value = value
    }
    // Two evaluations, each on the thread that read the value.
    #expect(evaluated.history.count == 2)
    #expect(evaluated.history == readers.history)
  }

  @Test func aChainTooDeepForTheReadingThreadsStackIsUpdatedOnNewThreads() {
    // 20,000 values, each the one before plus one, read on a thread of
    // 512 KiB. The first read evaluates each value, and each evaluation
    // reads the one before, evaluating it in turn: a recursion that
    // stack holds a few thousand values of at most, so it moves to new
    // threads. After a write, the read checks each value down to the
    // first, then evaluates them on the way back, in a loop that nests
    // nothing: all on the reading thread.
    final class Evaluations: @unchecked Swift.Sendable {
      // @unchecked: one evaluation runs at a time, on the reading thread
      // or on a thread it waits for (its creation and join order them).
      var reader: UInt64 = 0
      var onReader = 0
      var elsewhere = 0
    }
    let depth = 20_000
    let head = ValueHolder(0)
    let evaluations = Evaluations()
    var values: [Computed<Int>] = []
    for _ in 0..<depth {
      let previous = values.last
      values.append(
        Computed { () -> Int in
          if _chaining_thread_id() == evaluations.reader {
            evaluations.onReader += 1
          } else {
            evaluations.elsewhere += 1
          }
          return (previous?.value ?? head.value) + 1
        }
      )
    }
    var last = values.last
    let results = Recorder<Int>()
    let counts = Recorder<[Int]>()
    spawn(stackSize: 512 * 1024) { [last] in
      evaluations.reader = _chaining_thread_id()
      results.append(last?.value ?? 0)
      counts.append([evaluations.onReader, evaluations.elsewhere])
      head.value = 5
      results.append(last?.value ?? 0)
      counts.append([evaluations.onReader, evaluations.elsewhere])
    }.wait()
    #expect(results.history == [depth, depth + 5])
    // Each value evaluated once per read: in the first, some on the
    // reading thread and the rest on the threads the update moved to; in
    // the second, all on the reading thread.
    let (first, second) = (counts.history[0], counts.history[1])
    #expect(first[0] + first[1] == depth)
    #expect(first[0] > 0 && first[1] > 0)
    #expect(second[0] - first[0] == depth)
    #expect(second[1] == first[1])
    last = nil
    values = []
  }

  /// How each value of `aChainTooDeepForTheThreadsStackIsFreedWithoutOverflowingIt` holds the one before.
  enum HoldsPrevious: CaseIterable, Swift.Sendable {
    /// Its closure captures it; never read, so no dependency.
    case closure
    /// Its closure captures it, and a read made it a dependency.
    case closureAndDependency
    /// Its closure captures it weakly: only the dependency holds it.
    case dependency
  }

  @Test(arguments: HoldsPrevious.allCases)
  func aChainTooDeepForTheThreadsStackIsFreedWithoutOverflowingIt(holds: HoldsPrevious) {
    // 20,000 values, each holding the one before, freed at once on a
    // thread of 512 KiB: the last goes first, and would free the one
    // before inside its deinit, and so on down. Four times: a release
    // build lost a deferred release in one run of three, at most.
    for _ in 0..<4 { checkFreed(depth: 20_000, holds: holds) }
  }

  /// One free of `aChainTooDeepForTheThreadsStackIsFreedWithoutOverflowingIt`.
  private func checkFreed(depth: Int, holds: HoldsPrevious) {
    final class Outcome: @unchecked Swift.Sendable {
      // @unchecked: set on the thread, read after it ended.
      weak var first: Computed<Int>?
      weak var last: Computed<Int>?
      var value = 0
    }
    let outcome = Outcome()
    spawn(stackSize: 512 * 1024) {
      let head = ValueHolder(0)
      var values: [Computed<Int>] = []
      for _ in 0..<depth {
        let previous = values.last
        if holds == .dependency {
          values.append(Computed { [weak previous] in (previous?.value ?? head.value) + 1 })
        } else {
          values.append(Computed { (previous?.value ?? head.value) + 1 })
        }
      }
      if holds != .closure { outcome.value = values[depth - 1].value }
      outcome.first = values.first
      outcome.last = values.last
      values = []
    }.wait()
    #expect(outcome.value == (holds == .closure ? 0 : depth))
    #expect(outcome.first == nil)
    #expect(outcome.last == nil)
  }

  @Test func manyValuesMarkedByOneWriteSendInOrderOfRank() {
    // 40 values in a row, each with a chain: a write marks all of them at
    // once, more than the wave's end searches, so it sorts them; a
    // combine of the first and the last still sends once, untorn.
    let head = ValueHolder(0)
    var values: [Computed<Int>] = []
    var previous: () -> Int = { head.value }
    for _ in 0..<40 {
      let read = previous
      let value = Computed { read() + 1 }
      values.append(value)
      previous = { value.value }
    }
    let sent = Recorder<Int>()
    let chains = values.map { $0.chain().do { sent.append($0) }.end() }
    let pairs = Recorder<(Int, Int)>()
    let combined = values[0].chain().combine(values[39].chain()).do { pairs.append($0) }.sync()
    head.value = 10
    #expect(sent.history == Array(11...50))
    #expect(pairs.history.map { [$0.0, $0.1] } == [[1, 40], [11, 50]])
    withExtendedLifetime((chains, combined)) {}
  }

  @Test func manyValuesTwoStepsFromOneSendInOrderOfRankThenMarking() {
    // mux's shape: 20 values that each read one, each read by a value
    // with a chain, built twice on a thread of its own. The write marks
    // the last made first, so the wave's end defers the chains' refreshes
    // with ranks that never rise, and orders them without a search: by
    // rank, and in a rank in the order marked, as the search does.
    // - The thread's first two chains share the lowest rank: 1 is sent
    //   before 0. Reversing no run sends 0 first; reversing them all, 19.
    // - Then each chain ranks above the last: already in order, 0 first.
    //   Reversing them all sends 19 first.
    let ranks = Recorder<[Int]>()
    let sent = Recorder<[Int]>()
    spawn {
      for _ in 0..<2 {
        let head = ValueHolder(0)
        let all = Computed { head.value }
        let split = (0..<20).map { index in Computed { all.value * 100 + index } }
        let values = split.map { value in Computed { value.value + 1 } }
        let sends = Recorder<Int>()
        let chains = values.map { $0.chain().do { sends.append($0 % 100 - 1) }.end() }
        ranks.append(
          values.map { value in ComputedGraph.withLock { _ in value.box.flush?.rank.load(ordering: .relaxed) ?? -1 } }
        )
        head.value = 1
        sent.append(sends.history)
        for chain in chains { chain.invalidate() }
      }
    }.wait()
    #expect(ranks.history == [[1, 1] + Array(2..<20), Array(20..<40)])
    #expect(sent.history == [[1, 0] + Array(2..<20), Array(0..<20)])
  }

  @Test func questionsAskedInOneHoldOfTheLockSendWhatChangedAndWhatTheirEvaluationsWrite() {
    // mux's shape: a write marks 20 values with chains of which one
    // changes. After the first write, each chain has had its value's
    // version, so the next write's end asks the values whether it has,
    // one after the other in one hold of the graph's lock (see
    // `DeliveryContext.nextAsksHoldingLock()`), given back for each
    // evaluation. One evaluation writes a holder that a value with a
    // chain reads: its refresh, deferred meanwhile, ends the hold, and is
    // sent in the same wave. The graph's lock, left taken or given back
    // twice, hangs the next read (or fails `GraphLock.unlock()`'s check).
    let heads = (0..<20).map { _ in ValueHolder(0) }
    let all = Computed { heads.map(\.value) }
    let echo = ValueHolder(0)
    let echoed = Computed { echo.value * 10 }
    let split = (0..<20).map { index in
      Computed { () -> Int in
        let row = all.value
        if index == 5 { echo.value = row[7] }
        return row[index]
      }
    }
    let values = split.map { value in Computed { value.value + 1 } }
    let sent = Recorder<[Int]>()
    let chains = values.enumerated().map { index, value in value.chain().do { sent.append([index, $0]) }.end() }
    let echoes = Recorder<Int>()
    let echoChain = echoed.chain().do { echoes.append($0) }.end()
    heads[3].value = 4
    #expect(sent.history == [[3, 5]])
    #expect(echoes.history == [])
    heads[7].value = 2
    #expect(sent.history == [[3, 5], [7, 3]])
    #expect(echoes.history == [20])
    heads[7].value = 2
    heads[12].value = 6
    #expect(sent.history == [[3, 5], [7, 3], [12, 7]])
    #expect(echoes.history == [20])
    #expect(values.map(\.value) == (0..<20).map { [3: 5, 7: 3, 12: 7][$0] ?? 1 })
    #expect(echoed.value == 20)
    withExtendedLifetime((chains, echoChain)) {}
  }

  @Test func questionsInOneHoldOfTheLockGiveItBackForARefreshWithCauses() {
    // After the questions of 20 values with chains that had their
    // versions, the refresh of a value whose holder a chain wrote in the
    // same batch: deferred from inside that chain's run, with its causes,
    // it runs installing them, and the lock kept from the questions is
    // given back first.
    let heads = (0..<20).map { _ in ValueHolder(0) }
    let all = Computed { heads.map(\.value) }
    let values = (0..<20).map { index in Computed { all.value[index] + 1 } }
    let sent = Recorder<[Int]>()
    let chains = values.enumerated().map { index, value in value.chain().do { sent.append([index, $0]) }.end() }
    let x = ValueHolder(0)
    let y = ValueHolder(0)
    let copy = x.chain().sendTo(y).end()
    let yValue = Computed { y.value * 2 }
    let yReceived = Recorder<Int>()
    let yChain = yValue.chain().do { yReceived.append($0) }.end()
    heads[0].value = 1
    #expect(sent.history == [[0, 2]])
    for round in 1...3 {
      withBatchedUpdates {
        heads[1].value = round
        x.value = round
      }
    }
    #expect(sent.history == [[0, 2], [1, 2], [1, 3], [1, 4]])
    #expect(yReceived.history == [2, 4, 6])
    #expect(values.map(\.value) == [2, 4] + Array(repeating: 1, count: 18))
    withExtendedLifetime((chains, copy, yChain)) {}
  }

  @Test func questionsInOneHoldOfTheLockOnTwoThreadsLeaveEveryChainWithItsLastValue() {
    // Two threads each write their own heads of one value that 20 values
    // with chains read: each write's end asks 19 of them whether their
    // chains have had their version, in one hold of the lock given back
    // for evaluations, while the other thread's updates claim and
    // evaluate the same values. Each chain's values only rise, and each
    // ends with its value after both threads' last writes.
    let heads = (0..<20).map { _ in ValueHolder(0) }
    let all = Computed { heads.map(\.value) }
    let values = (0..<20).map { index in Computed { all.value[index] + 1 } }
    let sent = (0..<20).map { _ in Recorder<Int>() }
    let chains = (0..<20).map { index in values[index].chain().do { sent[index].append($0) }.sync() }
    race(threads: 2) { thread in
      for round in 1...500 {
        let index = thread * 10 + round % 10
        heads[index].value = round
      }
    }
    // The last round of each head: 500 for the tenth, 490 + k for the others.
    let last = (0..<20).map { index in index % 10 == 0 ? 500 : 490 + index % 10 }
    #expect(values.map(\.value) == last.map { $0 + 1 })
    #expect(sent.map(\.history.last) == last.map { $0 + 1 })
    #expect(sent.allSatisfy { zip($0.history, $0.history.dropFirst()).allSatisfy { $0 < $1 } })
    withExtendedLifetime(chains) {}
  }

  @Test func manyValuesOfOneRankSendInTheOrderTheyWereMarked() {
    // 20 values that each read the head, each with a chain: more than
    // the wave's end searches, so it sorts them. They send in the order
    // the write marked them (the order they first read the head), as a
    // search would, ties of rank included (taking the latest of a rank
    // first sends 1 before 0).
    let head = ValueHolder(0)
    let values = (0..<20).map { index in Computed { head.value * 100 + index } }
    let sent = Recorder<Int>()
    let chains = values.map { $0.chain().do { sent.append($0 % 100) }.end() }
    head.value = 1
    #expect(sent.history == Array(0..<20))
    withExtendedLifetime(chains) {}
  }

  // MARK: Reads without the lock

  @Test func aCleanValueThatFitsInAWordIsPublishedUntilAMark() {
    // Published while clean and read by another computed value, with its
    // version; a write that marks it takes it back before anything
    // changes; the next update publishes the new value. A value that no
    // computed value reads (fetched here, which a read outside an
    // evaluation would publish too: see below), or that does not fit in
    // a word, is not.
    let a = ValueHolder(2)
    let double = Computed { a.value * 2 }
    #expect(double.fetchedValue() == 4)
    #expect(double.box.readPublished() == nil)
    let reader = Computed { double.value + 1 }
    #expect(reader.fetchedValue() == 5)
    #expect(reader.box.readPublished() == nil)
    a.value = 3
    #expect(double.box.readPublished() == nil)
    #expect(double.value == 6)
    let first = double.box.readPublished()
    #expect(first?.bits == 6)
    #expect(reader.value == 7)
    a.value = 4
    #expect(double.box.readPublished() == nil)
    #expect(reader.value == 9)
    #expect(double.box.readPublished()?.bits == 8)
    #expect(double.box.readPublished()?.version == first.map { $0.version + 1 })
    // An equal result keeps the version, and is published again.
    let parity = Computed { a.value % 2 }
    let parityReader = Computed { parity.value }
    #expect(parityReader.value == 0)
    a.value = 6
    #expect(parityReader.value == 0)
    let version = parity.box.readPublished()?.version
    #expect(version != nil)
    a.value = 8
    #expect(parity.box.readPublished() == nil)
    #expect(parityReader.value == 0)
    #expect(parity.box.readPublished()?.version == version)
    let text = Computed { "\(a.value)" }
    let textReader = Computed { text.value + "!" }
    #expect(textReader.value == "8!")
    a.value = 9
    #expect(textReader.value == "9!")
    #expect(!text.box.publishesWord)
    #expect(text.box.readPublished() == nil)
  }

  @Test func aCleanValueReadOutsideAnEvaluationIsPublishedWithItsObservedBitUntilAMark() {
    // A read outside an evaluation (under the lock the first time) leaves
    // the value published with `observed`: the reads after it take the
    // word, until a write marks the value. A fetch registers nothing, so
    // publishes nothing; a read by another computed value publishes the
    // word for evaluations only.
    let a = ValueHolder(2)
    let double = Computed { a.value * 2 }
    #expect(double.box.readObservedPublished() == nil)
    #expect(double.fetchedValue() == 4)
    #expect(double.box.readObservedPublished() == nil)
    #expect(double.value == 4)
    #expect(double.box.readObservedPublished() == 4)
    #expect(double.value == 4)
    a.value = 3
    #expect(double.box.readObservedPublished() == nil)
    #expect(double.box.readPublished() == nil)
    #expect(double.value == 6)
    #expect(double.box.readObservedPublished() == 6)
    #expect(double.box.readPublished()?.bits == 6)
    let inner = Computed { a.value + 1 }
    let outer = Computed { inner.value * 10 }
    #expect(outer.value == 40)
    // Published by its first update as `outer`'s dependency.
    a.value = 4
    #expect(outer.value == 50)
    #expect(inner.box.readPublished()?.bits == 5)
    #expect(inner.box.readObservedPublished() == nil)
    #expect(inner.value == 5)
    #expect(inner.box.readObservedPublished() == 5)
    let text = Computed { "\(a.value)" }
    #expect(text.value == "4")
    #expect(text.box.readObservedPublished() == nil)
  }

  /// The published words of `holder`'s store: its bits and version, or
  /// nil when not published (or no registrar yet).
  private func published<T>(_ holder: ValueHolder<T>) -> (bits: UInt, version: UInt64)? {
    published(holder.store)
  }

  /// The published words of `store`, or nil.
  private func published<State, Event>(_ store: HolderStore<State, Event>) -> (bits: UInt, version: UInt64)? {
    store.withLock { _, _ in store.observation }?.readPublished()
  }

  @Test func aHolderThatFitsInAWordIsPublishedWhileComputedValuesReadIt() {
    // Published, with its version, from the first evaluation that reads
    // it; each write and resend publishes the new value and version; a
    // holder no computed value reads any more is not. A value read
    // outside evaluations only, or that does not fit in a word, is not.
    let a = ValueHolder(2)
    #expect(a.value == 2)
    #expect(published(a) == nil)
    do {
      let double = Computed { a.value * 2 }
      #expect(double.value == 4)
      #expect(published(a)?.bits == 2)
      #expect(published(a)?.version == a.store.readVersioned().version)
      a.value = 5
      #expect(published(a)?.bits == 5)
      #expect(double.value == 10)
      let version = a.store.readVersioned().version
      #expect(published(a)?.version == version)
      a.resend()
      #expect(published(a)?.bits == 5)
      #expect(published(a)?.version == version + 1)
      a.value = -3
      #expect(published(a).map { Int(bitPattern: $0.bits) } == -3)
      #expect(double.value == -6)
    }
    #expect(published(a) == nil)
    a.value = 7
    #expect(published(a) == nil)
    // Smaller values, their bytes first; a Boolean.
    let small = ValueHolder<Int8>(-1)
    let flag = ValueHolder(true)
    let both = Computed { flag.value ? Int(small.value) : 0 }
    #expect(both.value == -1)
    #expect(published(small)?.bits == 0xFF)
    #expect(published(flag)?.bits == 1)
    flag.value = false
    #expect(both.value == 0)
    #expect(published(flag)?.bits == 0)
    // `small` is no longer read.
    #expect(published(small) == nil)
    withExtendedLifetime(both) {}
    let text = ValueHolder("a")
    let shout = Computed { text.value + "!" }
    #expect(shout.value == "a!")
    #expect(!text.store.publishesWord)
    #expect(published(text) == nil)
  }

  @Test func aHolderReadAgainInAnEvaluationIsOneDependencyAtItsFirstRead() {
    // Three reads of `a` (the second and third through the words, as the
    // holder read last) and one of `b`: two dependencies, and a write
    // of either evaluates again, with the new value at every read.
    let a = ValueHolder(1)
    let b = ValueHolder(10)
    let evaluations = Counter()
    let total = Computed { () -> Int in
      evaluations.count += 1
      return a.value + a.value + a.value + b.value
    }
    #expect(total.value == 13)
    #expect(total.value == 13)
    #expect(evaluations.count == 1)
    #expect(total.box.dependencies.count == 2)
    a.value = 2
    #expect(total.value == 16)
    #expect(evaluations.count == 2)
    #expect(total.box.dependencies.count == 2)
    #expect(published(a)?.bits == 2)
    b.value = 20
    #expect(total.value == 26)
    #expect(evaluations.count == 3)
    #expect(total.value == 26)
    #expect(evaluations.count == 3)
    // The other order: `b` first, then `a` three times.
    let reversed = Computed { b.value + a.value * 3 }
    #expect(reversed.value == 26)
    a.value = 3
    #expect(reversed.value == 29)
    #expect(total.value == 29)
  }

  @Test func aHolderReadAgainIsTakenFromTheThreadOnlyInTheEvaluationThatReadItLast() {
    // The holder an evaluation read last in order, read again, is taken
    // from the thread's state (`lastReadOwner`), which an evaluation
    // clears when it begins and ends: `inner`, evaluated inside `outer`'s
    // evaluation, records its own read of `h` though `outer` read `h`
    // just before, and `outer` records its read of `h2` though `inner`
    // read `h2` last.
    let h = ValueHolder(1)
    let h2 = ValueHolder(10)
    final class Seen: @unchecked Swift.Sendable {
      var afterFirstRead: [UnsafeMutableRawPointer?] = []
      var afterInner: [UnsafeMutableRawPointer?] = []
    }
    let seen = Seen()
    let inner = Computed { h.value + h2.value * 100 }
    let outer = Computed { () -> Int in
      let state = DeliveryContext.current.state
      let first = h.value
      seen.afterFirstRead.append(UnsafeMutableRawPointer(bitPattern: state.pointee.lastReadOwner))
      let middle = inner.value
      seen.afterInner.append(UnsafeMutableRawPointer(bitPattern: state.pointee.lastReadOwner))
      return first + middle + h2.value
    }
    withExtendedLifetime((h, h2, inner, outer)) {
      #expect(outer.value == 1 + 1001 + 10)
      // The first evaluations read under the locks: nothing is published yet.
      #expect(seen.afterFirstRead == [nil])
      withBatchedUpdates {
        h.value = 2
        h2.value = 20
      }
      // `h` moved: `outer` evaluates at once, reads `h` through its words,
      // then `inner`, dirty, evaluates inside it.
      #expect(outer.value == 2 + 2002 + 20)
      #expect(seen.afterFirstRead == [nil, Unmanaged.passUnretained(h).toOpaque()])
      #expect(seen.afterInner == [nil, nil])
      #expect(UnsafeMutableRawPointer(bitPattern: DeliveryContext.current.state.pointee.lastReadOwner) == nil)
      let owners = { (value: ComputedNode) in
        value.dependencies.indices.map { value.dependencies[$0].owner.toOpaque() }
      }
      #expect(owners(inner.box) == [Unmanaged.passUnretained(h).toOpaque(), Unmanaged.passUnretained(h2).toOpaque()])
      #expect(
        owners(outer.box) == [
          Unmanaged.passUnretained(h).toOpaque(), Unmanaged.passUnretained(inner).toOpaque(),
          Unmanaged.passUnretained(h2).toOpaque(),
        ]
      )
      h2.value = 30
      #expect(outer.value == 2 + 3002 + 30)
      h.value = 3
      #expect(outer.value == 3 + 3003 + 30)
    }
  }

  @Test func aHolderReadAgainAfterTheEvaluationWroteItSeesTheWrite() {
    // A read again of the holder read last takes the bits of the
    // evaluation's read of it (`lastReadBits`), unless this thread wrote
    // the holder since: an evaluation that writes what it reads (which
    // marks it again) reads its own write back, as does a chain the write
    // runs, whose read the evaluation tracks too.
    let head = ValueHolder(1)
    let write = ValueHolder(false)
    let reads = Recorder<[Int]>()
    let seenByChain = Recorder<Int>()
    let chain = head.chain().do { _ in seenByChain.append(head.value) }.end()
    let value = Computed { () -> Int in
      let writes = write.value
      let first = head.value
      if writes { head.value = first + 100 }
      let second = head.value
      reads.append([first, second])
      return first + second
    }
    #expect(value.value == 2)
    head.value = 2
    #expect(value.value == 4)
    write.value = true
    #expect(value.value == 2 + 102)
    #expect(reads.history == [[1, 1], [2, 2], [2, 102]])
    #expect(seenByChain.history == [2, 102])
    withExtendedLifetime(chain) {}
  }

  @Test func aComputedReadAgainIsRecordedOnlyOnceInTheEvaluationThatReadIt() {
    // A computed value read out of order becomes the thread's
    // `lastComputedRead`, and a read again of it records nothing. An
    // evaluation clears it when it begins and when it ends: `inner`,
    // evaluated inside `outer` just after `outer` read `c`, records its
    // own read of `c` (else it would not depend on `c`); `late`, read
    // after `zero` read `c` inside its own evaluation, records its read
    // of `c` (else a change of `c` that leaves `zero` as it was would not
    // reach it).
    let h = ValueHolder(1)
    let c = Computed { h.value * 2 }
    let address = Unmanaged.passUnretained(c.box).toOpaque()
    final class Seen: @unchecked Swift.Sendable {
      var afterRead: [UnsafeMutableRawPointer?] = []
      var afterReadAgain: [UnsafeMutableRawPointer?] = []
    }
    let seen = Seen()
    let inner = Computed { c.value + 1 }
    let outer = Computed { () -> Int in
      let state = DeliveryContext.current.state
      let first = c.value
      seen.afterRead.append(state.pointee.lastComputedRead)
      let again = c.value
      seen.afterReadAgain.append(state.pointee.lastComputedRead)
      return first + again + inner.value * 100
    }
    let flag = ValueHolder(false)
    let x = ValueHolder(0)
    let zero = Computed { () -> Int in
      if flag.value { _ = x.value }
      return c.value * 0
    }
    let readsC = ValueHolder(false)
    let late = Computed { () -> Int in
      let z = zero.value
      return readsC.value ? z + c.value : z
    }
    withExtendedLifetime((h, c, inner, outer, flag, x, zero, readsC, late)) {
      #expect(outer.value == 2 + 2 + 300)
      // A first evaluation reads nothing in order: `c` is recorded, then
      // found at once.
      #expect(seen.afterRead == [address])
      #expect(seen.afterReadAgain == [address])
      #expect(DeliveryContext.current.state.pointee.lastComputedRead == nil)
      #expect(inner.box.dependencies.count == 1)
      h.value = 2
      #expect(inner.value == 5)
      #expect(outer.value == 4 + 4 + 500)
      // `outer` reads `c` in order now, which leaves the thread's value as
      // the evaluation found it.
      #expect(seen.afterRead == [address, nil])
      #expect(seen.afterReadAgain == [address, address])

      #expect(late.value == 0)
      withBatchedUpdates {
        flag.value = true  // `zero` reads `x`, then `c` out of order
        readsC.value = true  // `late` reads `c` after `zero`
        h.value = 3
      }
      #expect(late.value == 6)
      h.value = 4  // `zero` stays 0: only `late`'s own read of `c` moves it
      #expect(late.value == 8)
      #expect(zero.value == 0)
    }
  }

  @Test func aHolderReadAgainAmongTheLastEightReadIsTakenWithoutTheLock() {
    // A holder read again after other reads of the evaluation, among the
    // last eight matched in order, is taken through its words and becomes
    // the thread's `lastReadOwner` (`Tracking.readPublishedAgain(by:in:)`);
    // further back, it is read under its lock, which leaves
    // `lastReadOwner` as it was. Either way, its value is the holder's.
    let holders = (0..<10).map { ValueHolder($0) }
    let address = { (holder: ValueHolder<Int>) in Unmanaged.passUnretained(holder).toOpaque() }
    final class Seen: @unchecked Swift.Sendable {
      var near: [UnsafeMutableRawPointer?] = []
      var far: [UnsafeMutableRawPointer?] = []
    }
    let seen = Seen()
    // `holders[0]` again after one other read, then after nine.
    let near = Computed { () -> Int in
      let first = holders[0].value + holders[1].value
      let again = holders[0].value * 100
      seen.near.append(UnsafeMutableRawPointer(bitPattern: DeliveryContext.current.state.pointee.lastReadOwner))
      return first + again
    }
    let far = Computed { () -> Int in
      let all = holders.reduce(0) { $0 + $1.value }
      let again = holders[0].value * 100
      seen.far.append(UnsafeMutableRawPointer(bitPattern: DeliveryContext.current.state.pointee.lastReadOwner))
      return all + again
    }
    withExtendedLifetime((holders, near, far)) {
      #expect(near.value == 1)
      #expect(far.value == 45)
      // The first evaluations read under the locks: nothing is published yet.
      #expect(seen.near == [nil])
      #expect(seen.far == [nil])
      holders[0].value = 7
      #expect(near.value == 7 + 1 + 700)
      #expect(far.value == 52 + 700)
      #expect(seen.near == [nil, address(holders[0])])
      #expect(seen.far == [nil, address(holders[9])])
      holders[0].value = 8
      #expect(near.value == 8 + 1 + 800)
      #expect(far.value == 53 + 800)
    }
  }

  @Test func aValueReadOnlyInsideAnEvaluationIsPublishedByThatRead() {
    // `side` has no chain, and no dependent until `total`'s evaluation
    // ends: its first read by that evaluation publishes it, so that the
    // evaluation's reads of it again take no lock.
    let h = ValueHolder(1)
    let flag = ValueHolder(false)
    let side = Computed { h.value * 2 }
    final class Seen: @unchecked Swift.Sendable {
      var published: [Bool] = []
    }
    let seen = Seen()
    let total = Computed { () -> Int in
      guard flag.value else { return 0 }
      let first = side.value
      // One thread: nothing else touches the graph meanwhile.
      seen.published.append(side.box.isPublished)
      return first + side.value
    }
    #expect(total.value == 0)
    #expect(!side.box.isPublished)
    flag.value = true
    #expect(total.value == 4)
    #expect(seen.published == [true])
    h.value = 2
    #expect(total.value == 8)
    #expect(seen.published == [true, true])
  }

  @Test func aValueWhoseDependenciesChangeKeepsRoomForThem() {
    // `rewire` keeps the room of `added` after an evaluation that dropped
    // a dependency (the next may add one again), up to 16 entries; not
    // after a first evaluation, which adds every dependency.
    let flag = ValueHolder(false)
    let a = ValueHolder(1)
    let b = ValueHolder(2)
    let picked = Computed { flag.value ? a.value : b.value }
    #expect(picked.value == 2)
    #expect(picked.box.added.capacity == 0)
    flag.value = true
    #expect(picked.value == 1)
    #expect(picked.box.added.capacity > 0)
    #expect(picked.box.added.isEmpty)
    let many = (0..<20).map { ValueHolder($0) }
    let wide = Computed { flag.value ? many.reduce(0) { $0 + $1.value } : b.value }
    #expect(wide.value == 190)
    #expect(wide.box.added.capacity == 0)
    flag.value = false
    #expect(wide.value == 2)
    #expect(wide.box.added.capacity > 0)
    // Twenty added, the one before dropped: more than 16, not kept.
    flag.value = true
    #expect(wide.value == 190)
    #expect(wide.box.added.capacity == 0)
    #expect(picked.value == 1)
    withExtendedLifetime(many) {}
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func holdersOfEveryKindThatAskForItArePublished() {
    // A holder of events and an Observation value are published as a
    // value holder is; a property's adapter, whose cached value may
    // change outside its writes (its `sync()` reads the property again),
    // is not, and its reads take the lock.
    let events = EventableValueHolder(4)
    let plusOne = Computed { events.value + 1 }
    #expect(plusOne.value == 5)
    #expect(published(events.store)?.bits == 4)
    events.value = 6
    #expect(plusOne.value == 7)
    #expect(published(events.store)?.bits == 6)
    let model = PublishedModel()
    let queue = DispatchQueue(label: "ComputedTests.holdersOfEveryKindThatAskForItArePublished")
    let count = ObservedValue(of: model, on: queue) { $0.count }
    let doubled = Computed { count.value * 2 }
    #expect(doubled.value == 2)
    #expect(published(count.store)?.bits == 1)
    queue.sync { model.count = 5 }
    queue.sync {}
    #expect(doubled.value == 10)
    #expect(published(count.store)?.bits == 5)
    let box = PublishedModel()
    let adapter = PropertyAdapter(box, keyPath: \.count)
    let tripled = Computed { adapter.value * 3 }
    #expect(tripled.value == 3)
    #expect(!adapter.store.publishesWord)
    #expect(published(adapter.store) == nil)
    adapter.value = 2
    #expect(tripled.value == 6)
    #expect(published(adapter.store) == nil)
    // Read by these until here (an optimized build frees a value after
    // its last use).
    withExtendedLifetime((plusOne, doubled)) {}
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aReadWithoutTheLockIsToldOfTheNextChange() {
    // Each round: `double` is clean and published for `reader`'s
    // evaluation, not yet read outside one since the last write. A first
    // tracked read takes the lock (a word without the observed bit is not
    // taken outside an evaluation), a second takes the word; the write
    // tells both trackings.
    let a = ValueHolder(1)
    let double = Computed { a.value * 2 }
    let reader = Computed { double.value + 1 }
    let changes = Recorder<String>()
    for round in 2...4 {
      #expect(reader.value == (round - 1) * 2 + 1)
      #expect(double.box.readObservedPublished() == nil)
      withObservationTracking {
        _ = double.value
      } onChange: {
        changes.append("first \(round)")
      }
      #expect(double.box.readObservedPublished() == UInt((round - 1) * 2))
      withObservationTracking {
        _ = double.value
      } onChange: {
        changes.append("second \(round)")
      }
      a.value = round
      #expect(Set(changes.history) == Set((2...round).flatMap { ["first \($0)", "second \($0)"] }))
    }
    #expect(changes.history.count == 6)
  }

  @Test func valuesSmallerThanAWordReadInsideAnEvaluationKeepTheirBytes() {
    // Read through the published word inside an evaluation: each keeps
    // its own bytes, whatever the rest of the word holds.
    struct Packed: Equatable {
      var low: UInt8
      var middle: UInt16
      var high: Int8
    }
    enum Light: Equatable { case red, amber, green }
    func packed(_ value: Int) -> Packed {
      Packed(low: UInt8(value & 0xFF), middle: UInt16(value &* 3), high: -Int8(value % 100))
    }
    func describe(_ flag: Bool, _ small: Int8, _ packed: Packed, _ light: Light, _ real: Double) -> String {
      "\(flag) \(small) \(packed.low) \(packed.middle) \(packed.high) \(light) \(real)"
    }
    let lights = [Light.red, .amber, .green]
    let a = ValueHolder(0)
    let flag = Computed { a.value % 2 == 1 }
    let small = Computed { Int8(truncatingIfNeeded: a.value &* 37) }
    let pack = Computed { packed(a.value) }
    let light = Computed { lights[a.value % 3] }
    let real = Computed { Double(a.value) / 4 }
    let all = Computed { describe(flag.value, small.value, pack.value, light.value, real.value) }
    _ = all.value
    for value in [1, 200, 255, 257, 1000, 7] {
      a.value = value
      // Bring each clean, so that `all` reads the published words.
      _ = (flag.value, small.value, pack.value, light.value, real.value)
      #expect(flag.box.readPublished() != nil && pack.box.readPublished() != nil)
      let expected = describe(
        value % 2 == 1,
        Int8(truncatingIfNeeded: value &* 37),
        packed(value),
        lights[value % 3],
        Double(value) / 4
      )
      #expect(all.value == expected)
    }
  }

  @Test func aReadInOrderAfterTheSameValueWasReadOutOfOrderIsListedOnce() {
    // The last evaluation read flag, a, b; this one reads flag, b (out of
    // order), a (in order), b again: the second read of b is already
    // listed, and matching it in place too would list it twice. `a` and
    // `b` are published, so their reads take the inlined path.
    let flag = ValueHolder(false)
    let a0 = ValueHolder(1)
    let b0 = ValueHolder(2)
    let a = Computed { a0.value }
    let b = Computed { b0.value }
    let reader = Computed { flag.value ? b.value + a.value + b.value : a.value + b.value }
    #expect(reader.value == 3)
    a0.value = 10
    b0.value = 20
    #expect(a.value == 10 && b.value == 20)
    #expect(a.box.readPublished() != nil && b.box.readPublished() != nil)
    flag.value = true
    #expect(reader.value == 50)
    #expect(reader.box.dependencies.count == 3)
    #expect(b.box.dependents.count == 1)
    b0.value = 30
    #expect(reader.value == 70)
  }

  @Test func aLargeValueReadInOrderAfterItWasReadOutOfOrderIsListedOnce() {
    // As above, through a read of a computed value too large for a word,
    // which records a read in order inline too (a holder's read does:
    // `readsInAnotherOrderOrTwiceKeepTheirDependencies`).
    let flag = ValueHolder(false)
    let a0 = ValueHolder([1])
    let b0 = ValueHolder([2])
    let a = Computed { a0.value }
    let b = Computed { b0.value }
    let reader = Computed { flag.value ? b.value + a.value + b.value : a.value + b.value }
    #expect(reader.value == [1, 2])
    flag.value = true
    #expect(reader.value == [2, 1, 2])
    #expect(reader.box.dependencies.count == 3)
    #expect(b.box.dependents.count == 1)
    b0.value = [3]
    #expect(reader.value == [3, 1, 3])
  }

  @Test(arguments: [true, false])
  func readsWithoutTheLockSeeEveryWriteInOrderUnderConcurrentWrites(insideAnEvaluation: Bool) {
    // A writer counts up; four threads each read a value computed from
    // the count, 3,000 times: inside an evaluation of their own (the
    // value brought clean by each of them in turn), or outside every
    // evaluation (the first read after each mark takes the lock and
    // publishes the word with its observed bit). Most reads take the
    // published word while the writer marks it. Each read is a multiple
    // of 3 (never torn) and never below one read before it on the same
    // thread (never an older value); then a read sees the last write.
    let a = ValueHolder(0)
    let tripled = Computed { a.value &* 3 }
    let writes = 2_000
    let failures = Recorder<String>()
    race(threads: 5) { thread in
      if thread == 0 {
        for value in 1...writes { a.value = value }
        return
      }
      let reader = Computed { tripled.value }
      var last = 0
      for _ in 0..<3_000 {
        let read: Int
        if insideAnEvaluation {
          _ = tripled.value
          read = reader.value
        } else {
          read = tripled.value
        }
        if read % 3 != 0 || read < last { failures.append("\(read) after \(last)") }
        last = read
      }
    }
    #expect(failures.history == [])
    #expect(Computed { tripled.value }.value == writes * 3)
    #expect(tripled.value == writes * 3)
    #expect(tripled.box.readObservedPublished() == UInt(writes * 3))
  }

  @Test func holderReadsInsideEvaluationsSeeEveryWriteInOrderUnderConcurrentWrites() {
    // A writer counts up; four threads each read a value of their own
    // computed from the count, 3,000 times, which they evaluate after
    // each of its marks, reading the holder through its published words
    // (then again, as the holder read last): the second read of an
    // evaluation is never below the first, and a read is never below
    // one read before it on the same thread (never an older value); then
    // each value sees the last write.
    let a = ValueHolder(0)
    let writes = 2_000
    let failures = Recorder<String>()
    let readers = (0..<4).map { _ in
      Computed { () -> Int in
        let first = a.value
        let second = a.value
        return second >= first ? second : -1
      }
    }
    race(threads: 5) { thread in
      if thread == 0 {
        for value in 1...writes { a.value = value }
        return
      }
      var last = 0
      for _ in 0..<3_000 {
        let read = readers[thread - 1].value
        if read < last { failures.append("\(read) after \(last)") }
        last = read
      }
    }
    #expect(failures.history == [])
    #expect(readers.map(\.value) == Array(repeating: writes, count: 4))
    // Still read by the readers, which an optimized build would free
    // after their last use above.
    withExtendedLifetime(readers) { #expect(published(a)?.bits == UInt(writes)) }
  }
}

/// The names of the values of `readRingOnThreads(_:)`.
private let ringNames = ["first", "second", "third"]

/// Reads a ring of `count` computed values, each reading the next, on
/// `count` threads at once, the first on this one: each evaluation waits
/// until every thread has claimed its value, then reads the next, which
/// another thread has claimed. The last thread to wait stops the process
/// with the message of `ringStopMessages(_:)`. Were the cycle not stopped,
/// the threads would wait for each other forever: after a minute, a timer
/// ends the process with success, and the exit test fails rather than
/// hangs.
private func readRingOnThreads(_ count: Int) {
  final class Ring: @unchecked Swift.Sendable {
    // @unchecked: set before the threads start, then only read.
    var values: [Computed<Int>] = []
  }
  let claimed = DispatchGroup()
  for _ in 0..<count { claimed.enter() }
  let ring = Ring()
  ring.values = (0..<count).map { index in
    Computed(name: ringNames[index]) {
      claimed.leave()
      claimed.wait()
      return ring.values[(index + 1) % count].value + 1
    }
  }
  DispatchQueue.global().asyncAfter(deadline: .now() + 60) { exit(0) }
  for index in 1..<count { _ = spawn { _ = ring.values[index].value } }
  _ = ring.values[0].value
}

/// What stops `readRingOnThreads(count)`: the ring of names from
/// whichever value the last thread to wait waited for.
private func ringStopMessages(_ count: Int) -> [String] {
  (0..<count).map { start in
    "Computed.value: a computed value reads itself, through values read on \(count) threads at once "
      + "that would wait for each other forever: "
      + (0...count).map { ringNames[(start + $0) % count] }.joined(separator: " -> ")
  }
}

/// Stops one evaluation inside its closure (`here()`), holding the value's
/// claim, until a second thread has started reading.
private final class StopInside: @unchecked Swift.Sendable {
  // @unchecked: `enabled` is set before the first thread starts and
  // cleared by it; the semaphores order the rest.
  private var enabled = false
  private let inside = DispatchSemaphore(value: 0)
  private let go = DispatchSemaphore(value: 0)

  /// Called by the closure: stops there the first time after `read`
  /// enabled it.
  func here() {
    guard enabled else { return }
    enabled = false
    inside.signal()
    go.wait()
  }

  /// Ten times `a`'s value, each evaluation counted in `evaluations`, and
  /// stopped inside (`here()`) after the read.
  func tenfold(of a: ValueHolder<Int>, counting evaluations: ComputedTests.Counter) -> Computed<Int> {
    Computed { () -> Int in
      evaluations.count += 1
      let value = a.value * 10
      self.here()
      return value
    }
  }

  /// Reads `stopped` on one thread, which stops inside its closure, then
  /// `read` on another, and lets the first go on once the second has
  /// started. Returns both results, the first thread's first.
  func read(_ read: Computed<Int>, whileAnotherThreadStopsInside stopped: Computed<Int>) -> [Int] {
    enabled = true
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    let done = DispatchSemaphore(value: 0)
    let reading = DispatchSemaphore(value: 0)
    Thread {
      first.append(stopped.value)
      done.signal()
    }.start()
    inside.wait()
    Thread {
      reading.signal()
      second.append(read.value)
      done.signal()
    }.start()
    reading.wait()
    go.signal()
    done.wait()
    done.wait()
    return first.history + second.history
  }
}

/// A model whose count an `ObservedValue` or a `PropertyAdapter` reads.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable private final class PublishedModel: @unchecked Swift.Sendable {
  // @unchecked: written on one queue (or one thread) at a time.
  var count = 1
}

/// Runs an action when freed.
private final class DeinitAction: @unchecked Swift.Sendable {
  let action: () -> Void
  init(_ action: @escaping () -> Void) { self.action = action }
  deinit { action() }
}
