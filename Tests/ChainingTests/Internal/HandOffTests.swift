import Chaining
import Dispatch
import Foundation
import Testing

@testable import Chaining

/// A thread runs at most `DeliveryGate.handOffLimit` values that other
/// threads queued, at a gate or at a sender, before it hands over to a
/// writer waiting for its turn, which runs the rest in order (issue #34).
/// Before, the thread ran them all, for as long as they kept coming.
@Suite struct HandOffTests {
  private static let limit = DeliveryGate.handOffLimit
  private static let others = 1_000
  /// Only turns a hang into a failure.
  private static let deadline: DispatchTimeInterval = .seconds(60)

  /// Records each value with the thread that ran it, and signals once
  /// `expected` values have run.
  final class Runs: @unchecked Swift.Sendable {
    // @unchecked: `runs` is touched only under `lock`.
    private let lock = NSLock()
    private var runs: [(value: Int, runner: Int)] = []
    private let expected: Int
    let all = DispatchSemaphore(value: 0)
    /// Called after each value is recorded, on the thread that ran it.
    nonisolated(unsafe) var onRun: (Int) -> Void = { _ in }
    let lateThreads = Recorder<DispatchGroup>()

    init(expected: Int) { self.expected = expected }

    func record(_ value: Int) {
      let runner = DeliveryContext.current.runner
      let done = lock.withLock { () -> Bool in
        runs.append((value, runner))
        return runs.count == expected
      }
      if done { all.signal() }
      onRun(value)
    }

    var values: [Int] { lock.withLock { runs.map(\.value) } }
    func count(on runner: Int) -> Int { lock.withLock { runs.filter { $0.runner == runner }.count } }
    func runners(of range: Range<Int>) -> [Int] {
      lock.withLock { runs.filter { range.contains($0.value) }.map(\.runner) }
    }
    var waitForAll: Bool { all.wait(timeout: .now() + HandOffTests.deadline) == .success }
  }

  /// Sends `others` values from another thread while `hold` keeps the
  /// first run (of -1) waiting on the writer's thread, then lets it go.
  /// When the writer has run `limit` of them, a third thread writes one
  /// more (`late`) and waits for its turn; the writer must then hand over
  /// to it. Returns the writer's runner and the late thread's.
  private func handOverScenario(
    runs: Runs,
    write: @escaping @Sendable () -> Void,
    sendOther: @escaping @Sendable (Int) -> Void,
    started: DispatchSemaphore,
    hold: DispatchSemaphore,
    lateWaits: @escaping @Sendable () -> Bool
  ) -> (writer: Int, late: Int) {
    let writer = Recorder<Int>()
    let late = Recorder<Int>()
    let writing = spawn {
      writer.append(DeliveryContext.current.runner)
      write()
    }
    started.wait()
    spawn { for value in 0..<Self.queuedBeforeLimit { sendOther(value) } }.wait()
    // The writer runs `limit` values; as it runs the next one (it has set
    // `overLimit` by then, finding nobody waiting), the late thread writes
    // and waits for its turn. That handler returns once it waits.
    runs.onRun = { value in
      guard value == Self.limit else { return }
      let lateThread = spawn {
        late.append(DeliveryContext.current.runner)
        sendOther(Self.lateValue)
      }
      let deadline = DispatchTime.now() + Self.deadline
      while !lateWaits(), DispatchTime.now() < deadline { sched_yield() }
      runs.lateThreads.append(lateThread)
    }
    hold.signal()
    writing.wait()
    for thread in runs.lateThreads.history { thread.wait() }
    // Every run is over: break the cycle the hook made through `runs`.
    runs.onRun = { _ in }
    return (writer.history[0], late.history[0])
  }

  private static let queuedBeforeLimit = 100
  private static let lateValue = 1_000

  @Test func aRunnerPastTheLimitHandsOverToAWriterWaitingItsTurn() {
    let runs = Runs(expected: Self.queuedBeforeLimit + 2)
    let (gate, started, hold, body) = patientGate(runs)
    let (writer, late) = handOverScenario(
      runs: runs,
      write: { gate.deliver(-1, to: body, in: .current) },
      sendOther: { gate.deliver($0, to: body, in: .current) },
      started: started,
      hold: hold,
      lateWaits: { ParkingLot.shared.withLock(gate) { gate.waiters } == 1 }
    )
    #expect(runs.waitForAll)
    let expected = [-1] + Array(0..<Self.queuedBeforeLimit) + [Self.lateValue]
    #expect(runs.values == expected)
    // The writer ran its own value and the first `limit` + 1 of the
    // others (the last while the late thread came); the late thread the
    // rest, its own value included. Before, the writer ran them all.
    #expect(runs.count(on: writer) == 1 + Self.limit + 1)
    #expect(runs.count(on: late) == Self.queuedBeforeLimit - Self.limit - 1 + 1)
  }

  @Test func aBroadcastingThreadPastTheLimitHandsOverToABroadcasterWaitingItsTurn() {
    let notifier = Notifier<Int>()
    notifier.core.turnWait = 60_000_000_000
    let runs = Runs(expected: Self.queuedBeforeLimit + 2)
    let started = DispatchSemaphore(value: 0)
    let hold = DispatchSemaphore(value: 0)
    let observer = notifier.chain().do { value in
      if value == -1 {
        started.signal()
        hold.wait()
      }
      runs.record(value)
    }.end()
    let (writer, late) = handOverScenario(
      runs: runs,
      write: { notifier.notify(value: -1) },
      sendOther: { notifier.notify(value: $0) },
      started: started,
      hold: hold,
      lateWaits: { notifier.core.state.withLock { $0.waiters } == 1 }
    )
    #expect(runs.waitForAll)
    #expect(runs.values == [-1] + Array(0..<Self.queuedBeforeLimit) + [Self.lateValue])
    #expect(runs.count(on: writer) == 1 + Self.limit + 1)
    #expect(runs.count(on: late) == Self.queuedBeforeLimit - Self.limit - 1 + 1)
    observer.invalidate()
  }

  @Test func withNobodyWaitingTheRunnerRunsEveryValueBeforeItReturns() {
    // What the testing guide promises: once every writer has returned,
    // every value has run. A runner past the limit hands over only to a
    // writer that waits; when none does, it runs the rest itself.
    let gate = DeliveryGate(held: false)
    let runs = Runs(expected: 1_001)
    let started = DispatchSemaphore(value: 0)
    let hold = DispatchSemaphore(value: 0)
    let body = blocking(runs, started: started, hold: hold)
    let writing = spawn { gate.deliver(-1, to: body, in: .current) }
    started.wait()
    spawn { for value in 0..<1_000 { gate.deliver(value, to: body, in: .current) } }.wait()
    hold.signal()
    writing.wait()
    #expect(runs.values == [-1] + Array(0..<1_000))
    expectIdle(gate)
  }

  @Test func aRunnerPastTheLimitThatFindsOneMoreValueAtItsReleaseHandsOver() {
    // Found by `Verification/JoinedChain.pml` (`reaches`): a runner that
    // had emptied the queue cleared `overLimit`, and counted afresh when it
    // claimed again for a value queued before its release, so a writer
    // queuing one value at a time there held it for ever. Now the count
    // spans the whole call and `overLimit` stays set until the runner
    // leaves: the writer waits, and the runner hands over to it.
    let runs = Runs(expected: Self.queuedBeforeLimit + 2)
    let (gate, started, hold, body) = patientGate(runs)
    let writer = Recorder<Int>()
    let late = Recorder<Int>()
    let lateThreads = Recorder<DispatchGroup>()
    let writing = spawn {
      writer.append(DeliveryContext.current.runner)
      gate.deliver(-1, to: body, in: .current)
    }
    started.wait()
    spawn { for value in 0..<Self.queuedBeforeLimit { gate.deliver(value, to: body, in: .current) } }.wait()
    let seam = Recorder<Bool>()
    DeliveryGate.setEmptiedForTests { emptied in
      guard emptied === gate, seam.count == 0 else { return }
      seam.append(true)
      let done = Recorder<Bool>()
      lateThreads.append(
        spawn {
          late.append(DeliveryContext.current.runner)
          gate.deliver(Self.lateValue, to: body, in: .current)
          done.append(true)
        }
      )
      // Until the late writer waits for its turn (or, before the fix,
      // returns at once, its value queued for the runner).
      let deadline = DispatchTime.now() + Self.deadline
      while ParkingLot.shared.withLock(gate, { gate.waiters }) == 0, done.count == 0, DispatchTime.now() < deadline {
        sched_yield()
      }
    }
    hold.signal()
    writing.wait()
    for thread in lateThreads.history { thread.wait() }
    DeliveryGate.setEmptiedForTests(nil)
    #expect(runs.waitForAll)
    #expect(runs.values == [-1] + Array(0..<Self.queuedBeforeLimit) + [Self.lateValue])
    #expect(runs.count(on: writer.history[0]) == 1 + Self.queuedBeforeLimit)
    #expect(runs.runners(of: Self.lateValue..<Self.lateValue + 1) == [late.history[0]])
    expectIdle(gate)
  }

  @Test func aRunnerDoesNotClaimAgainAfterAWaiterTookItsTurn() {
    // Found by `Verification/HandOver.pml` and `JoinedChain.pml`: a runner handing
    // over releases the gate, then looks for the waiter; one that has
    // claimed, run the queue and left by then is not one that gave up, so
    // the runner must not claim again and run on (it could do so for
    // ever, one turn after another). `handOver` says whether a waiter is
    // still there; when none is, the runner claims again only from the
    // word it released to, which the waiter's turn changed.
    let gate = DeliveryGate(held: false)
    let context = DeliveryContext.current
    for (waiters, taken) in [(Int32(0), false), (0, true), (1, false)] {
      let idle = gate.claim(in: context) ?? -1
      #expect(idle & ~DeliveryGate.generations == 0)
      ParkingLot.shared.withLock(gate) { gate.waiters = waiters }
      #expect(gate.handOver(leaving: idle) == (waiters > 0), "waiters \(waiters)")
      ParkingLot.shared.withLock(gate) { gate.waiters = 0 }
      // The waiter's turn, between the runner's release and its look.
      if taken { spawn { gate.deliver(0, to: { _ in }, in: .current) }.wait() }
      let again = gate.reclaim(from: DeliveryGate.released(from: idle), in: context)
      #expect((again != nil) == !taken, "waiters \(waiters), turn taken \(taken)")
      if let again { _ = gate.releaseReadingRequests(to: again) }
      expectIdle(gate)
    }
  }

  @Test func valuesARunnerQueuedItselfAreNotCounted() {
    // A handler's writes to its own chain run before the write returns,
    // however many there are, and nothing waits for them.
    let gate = DeliveryGate(held: false)
    let runs = Runs(expected: Self.others + 1)
    let context = DeliveryContext.current
    func body(_ value: Int) {
      runs.record(value)
      if value == 0 {
        for next in 1...Self.others { gate.deliver(next, to: body, dropsEchoes: false, in: context) }
      }
    }
    gate.deliver(0, to: body, in: context)
    #expect(runs.count(on: context.runner) == Self.others + 1)
    #expect(runs.values == Array(0...Self.others))
    expectIdle(gate)
  }

  /// Another thread's value that a thread runs at a gate it holds is a
  /// wave of its own: the combine it changes sends right after it, not at
  /// the end of the running thread's batch (issue #34: else each such
  /// value joins that wave, whose end sends again after each of them, and
  /// a thread can be held sending for another thread's endless writes;
  /// `MUTANT_SHARED_WAVE` in `Verification/JoinedChain.pml`).
  @Test func anotherThreadsQueuedValueIsAWaveOfItsOwn() {
    let plain = ValueHolder(0)
    let left = ValueHolder(0)
    let right = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = plain.chain()
      .merge(left.chain().combine(right.chain()).map { $0 * 10 + $1 })
      .do { value in
        received.append(value)
        // The gate is this thread's: the other thread's write is queued.
        if value == 1 { spawn { right.value = 2 }.wait() }
      }
      .sync()
    withBatchedUpdates {
      plain.value = 1
      left.value = 5
    }
    // After `sync()`'s two: 2, the other thread's write, sent right after
    // it ran, before the batch's `left`; then the batch's own send.
    // (Joined to the batch, it was [0, 0, 1, 52].)
    #expect(received.history == [0, 0, 1, 2, 52])
    observer.invalidate()
  }

  @Test func aHopGateNeverHandsOver() {
    // A hop's steps must run on its queue or actor: a writer to its gate
    // never waits for a turn, and its runner runs every queued value.
    let gate = DeliveryGate(held: false, handsOff: false)
    let runs = Runs(expected: 1_001)
    let started = DispatchSemaphore(value: 0)
    let hold = DispatchSemaphore(value: 0)
    let body = blocking(runs, started: started, hold: hold)
    let writer = Recorder<Int>()
    let writing = spawn {
      writer.append(DeliveryContext.current.runner)
      gate.deliver(-1, to: body, in: .current)
    }
    started.wait()
    spawn { for value in 0..<1_000 { gate.deliver(value, to: body, in: .current) } }.wait()
    hold.signal()
    writing.wait()
    #expect(runs.count(on: writer.history[0]) == 1_001)
    #expect(!ParkingLot.shared.withLock(gate) { gate.overLimit })
  }

  @Test func closeDropsWhatIsLeftAndReleasesWaiters() {
    let gate = DeliveryGate(held: false)
    let runs = Runs(expected: 1)
    for value in 0..<Self.others {
      gate.pending.append(DeliveryGate.Queued(causes: Causes(gates: []), sender: 1) { runs.record(value) })
    }
    gate.requests.store(DeliveryGate.queued, ordering: .relaxed)
    gate.overLimit = true
    gate.close()
    let left = ParkingLot.shared.withLock(gate) { (gate.pending.count, gate.overLimit) }
    #expect(left.0 == 0)
    #expect(!left.1)
    // A writer now finds the gate closed and neither runs nor waits.
    gate.deliver(Self.others, to: { runs.record($0) }, in: .current)
    #expect(runs.values == [])
  }

  @Test func syncWhileAnotherThreadWritesNonstopReturns() {
    // The hostage of issue #34: `sync()` ran every value another thread
    // queued at the new chain's gate while it fetched, for as long as
    // they kept coming, and never returned.
    let holder = ValueHolder(0)
    whileWrittenNonstop(
      by: 1,
      writing: { _, value in holder.value = value },
      during: {
        expectEachReturns { _, returned in
          let observer = holder.chain().do { _ in }.sync()
          returned()
          observer.invalidate()
        }
      }
    )
  }

  @Test func aSelectionWriteWhileTheInnerSourcesAreWrittenNonstopReturns() {
    // Issue #34: a thread that wrote a `flatMapLatest` selection while
    // another thread wrote the inner source nonstop never returned.
    let inners = [ValueHolder(0), ValueHolder(0)]
    let selection = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = selection.chain().flatMapLatest { inners[$0].chain() }.do { received.append($0) }.sync()
    whileWrittenNonstop(
      by: 2,
      writing: { index, value in inners[index].value = value },
      during: {
        expectEachReturns { round, returned in
          selection.value = round % 2
          returned()
        }
      }
    )
    #expect(received.count > 0)
    observer.invalidate()
  }

  @Test(arguments: [false, true])
  func aJoinSideWriteWhileTheOtherSideIsWrittenNonstopReturns(hops: Bool) {
    // Issue #34: the end of a write's wave sends the combine's pair; when
    // the gate is busy it runs the other side's queued values first, which
    // change the combine on this thread, so the pair is sent again. A write
    // of one side must return while the other is written nonstop. (Spin
    // still finds a rare interleaving that repeats this without end, one
    // value per pair: `code: returns fails` in `Verification/check`; it
    // has not shown here.)
    let left = Notifier<Int>()
    let right = Notifier<Int>()
    let received = Recorder<Int>()
    let queue = DispatchQueue(label: "HandOffTests.join")
    let leftChain = hops ? left.chain().receive(on: queue) : left.chain()
    let observer = leftChain.combine(right.chain()).do { received.append($0.0) }.end()
    whileWrittenNonstop(
      by: 2,
      writing: { _, value in right.notify(value: value) },
      during: {
        expectEachReturns { round, returned in
          left.notify(value: round)
          returned()
        }
      }
    )
    if hops { queue.sync {} }
    observer.invalidate()
    #expect(received.history.contains(20))
  }

  /// Runs `body` while `producers` threads write nonstop, each calling
  /// `write(producer, value)` with values 1, 2, 3 and on; then stops them
  /// and waits for them to end.
  private func whileWrittenNonstop(
    by producers: Int,
    writing write: @escaping @Sendable (_ producer: Int, _ value: Int) -> Void,
    during body: () -> Void
  ) {
    let stop = Recorder<Bool>()
    let wrote = DispatchSemaphore(value: 0)
    let threads = (0..<producers).map { producer in
      spawn {
        var value = 0
        repeat {
          value += 1
          write(producer, value)
          if value == 1 { wrote.signal() }
        } while stop.count == 0
      }
    }
    // Each producer has written once before `body` starts: on a loaded
    // machine a producer could otherwise start only after `body` ended,
    // and a join would never get a value of that side (a CI run saw a
    // combine send nothing at all).
    for _ in 0..<producers { wrote.wait() }
    body()
    stop.append(true)
    for thread in threads { thread.wait() }
  }

  /// For rounds 1 to 20, runs `write(round, returned)` on a thread of its
  /// own and expects it to call `returned` (once the call under test has
  /// returned) within the deadline.
  private func expectEachReturns(
    _ write: @escaping @Sendable (_ round: Int, _ returned: @Sendable () -> Void) -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    for round in 1...20 {
      let done = DispatchSemaphore(value: 0)
      let writer = spawn { write(round) { done.signal() } }
      #expect(done.wait(timeout: .now() + Self.deadline) == .success, sourceLocation: sourceLocation)
      writer.wait()
    }
  }

  /// A gate whose waiters outlast any hold-up of the machine, with a
  /// `blocking` body.
  private func patientGate(
    _ runs: Runs
  ) -> (gate: DeliveryGate, started: DispatchSemaphore, hold: DispatchSemaphore, body: @Sendable (Int) -> Void) {
    let gate = DeliveryGate(held: false)
    gate.turnWait = 60_000_000_000
    let started = DispatchSemaphore(value: 0)
    let hold = DispatchSemaphore(value: 0)
    return (gate, started, hold, blocking(runs, started: started, hold: hold))
  }

  /// A chain's body that records each value; its run of -1 signals
  /// `started`, then waits for `hold`.
  private func blocking(_ runs: Runs, started: DispatchSemaphore, hold: DispatchSemaphore) -> @Sendable (Int) -> Void {
    { value in
      if value == -1 {
        started.signal()
        hold.wait()
      }
      runs.record(value)
    }
  }

  /// Checks that nobody runs `gate` and nothing is requested of it.
  private func expectIdle(_ gate: DeliveryGate, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(gate.requests.load(ordering: .relaxed) == 0, sourceLocation: sourceLocation)
    // Idle in whatever generation its releases left it.
    #expect(gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations == 0, sourceLocation: sourceLocation)
    #expect(!ParkingLot.shared.withLock(gate) { gate.overLimit }, sourceLocation: sourceLocation)
    #expect(ParkingLot.shared.withLock(gate) { gate.waiters } == 0, sourceLocation: sourceLocation)
  }
}
