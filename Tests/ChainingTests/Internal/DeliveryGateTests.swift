import Dispatch
import Testing

@testable import Chaining

@Suite struct DeliveryGateTests {
  @Test func aValueSentWhileTheGateRunsRunsRightAfterTheCurrentOne() {
    let gate = DeliveryGate(held: false)
    let log = Recorder<String>()
    let context = DeliveryContext.current
    func body(_ value: Int) {
      log.append("start \(value)")
      if value == 1 {
        // Sent from inside the run: the gate is running, so both are queued.
        gate.deliver(2, to: body, dropsEchoes: false, in: context)
        gate.deliver(3, to: body, dropsEchoes: false, in: context)
      }
      log.append("end \(value)")
    }
    gate.deliver(1, to: body, in: context)
    #expect(log.history == ["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"])
    #expect((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == 0)
  }

  @Test func aValueThatTheChainCausedIsDroppedAsAnEcho() {
    let gate = DeliveryGate(held: false)
    let log = Recorder<Int>()
    let context = DeliveryContext.current
    func body(_ value: Int) {
      log.append(value)
      gate.deliver(value + 1, to: body, in: context)
    }
    gate.deliver(1, to: body, in: context)
    #expect(log.history == [1])
  }

  @Test func aHeldGateRunsValuesFromOtherThreadsOnlyAfterTheStartingRuns() {
    let gate = DeliveryGate(held: true)
    let log = Recorder<String>()
    spawn {
      gate.deliver("sent", to: { log.append($0) }, in: DeliveryContext.current)
    }.wait()
    #expect(log.history == [])
    gate.start(with: [{ log.append("fetched") }], alone: false)
    #expect(log.history == ["fetched", "sent"])
  }

  @Test func closeWaitsForARunOnAnotherThreadToEnd() {
    let gate = DeliveryGate(held: false)
    let log = Recorder<String>()
    let (proceed, runner, _) = startBlockedRun(of: gate, appending: "run ended", to: log)
    closeOnAnotherThreadWhileItRuns(gate, proceed: proceed, runner: runner, log: log)
    #expect(log.history == ["run ended", "closed"])
    #expect((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == 0)
    #expect(gate.requests.load(ordering: .relaxed) == DeliveryGate.closed | DeliveryGate.waiting)
  }

  @Test func closingFromInsideARunDropsWhatWasQueuedAndEverythingAfter() {
    let gate = DeliveryGate(held: false)
    let log = Recorder<Int>()
    let context = DeliveryContext.current
    func body(_ value: Int) {
      log.append(value)
      if value == 1 {
        gate.deliver(2, to: body, dropsEchoes: false, in: context)
        gate.close()
      }
    }
    gate.deliver(1, to: body, in: context)
    gate.deliver(3, to: body, in: context)
    #expect(log.history == [1])
    #expect(gate.isClosed)
  }

  @Test func valuesFromManyThreadsEachRunOnceAndNeverTwoAtATime() {
    let gate = DeliveryGate(held: false)
    let threads = 4
    let perThread = 2_000
    // Touched only inside the gate's runs: the gate is its only guard.
    final class Tally: @unchecked Swift.Sendable {
      var running = 0
      var overlaps = 0
      var total = 0
    }
    let tally = Tally()
    race(threads: threads) { _ in
      let context = DeliveryContext.current
      for _ in 0..<perThread {
        gate.deliver(
          1,
          to: { value in
            tally.running += 1
            if tally.running != 1 { tally.overlaps += 1 }
            tally.total += value
            tally.running -= 1
          },
          in: context
        )
      }
    }
    #expect(tally.total == threads * perThread)
    #expect(tally.overlaps == 0)
    #expect((gate.word.load(ordering: .acquiring) & ~DeliveryGate.generations) == 0)
  }

  /// A release stores the next generation; a thread claims again from the
  /// word it released to only when nobody claimed the gate in between
  /// (issue #34: the thread that did sees `queued` and runs the queue).
  @Test func aReleasedGateIsClaimedAgainOnlyWhenNobodyClaimedItSince() {
    let gate = DeliveryGate(held: false)
    let context = DeliveryContext.current
    let idle = gate.claim(in: context)
    #expect(idle == 0)
    _ = gate.releaseReadingRequests(to: 0)
    let released = DeliveryGate.released(from: 0)
    #expect(released == DeliveryGate.generation)
    #expect(gate.word.load(ordering: .relaxed) == released)
    // Nobody claimed: claimed again, and released in the next generation.
    #expect(gate.reclaim(from: released, in: context) == released)
    _ = gate.releaseReadingRequests(to: released)
    let second = DeliveryGate.released(from: released)
    // Another thread claims and releases in between: not claimed again.
    spawn { gate.deliver(1, to: { _ in }, in: DeliveryContext.current) }.wait()
    #expect(gate.reclaim(from: second, in: context) == nil)
    #expect(gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations == 0)
    // The generation wraps within its bits and keeps `alone`.
    #expect(DeliveryGate.released(from: DeliveryGate.alone | DeliveryGate.generations) == DeliveryGate.alone)
  }

  // A gate started `alone` lets its only sender core run the chain
  // without claiming it (`deliverAlone`); every other path is unchanged.

  @Test func startMarksTheGateAloneOnlyWhenAsked() {
    let alone = DeliveryGate(held: true)
    alone.start(with: [], alone: true)
    #expect((alone.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == DeliveryGate.alone)
    #expect(alone.isAlone)
    let shared = DeliveryGate(held: true)
    shared.start(with: [], alone: false)
    #expect((shared.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == 0)
    #expect(!shared.isAlone)
  }

  @Test func deliverAloneRunsAnAloneGateWithoutClaimingIt() {
    let gate = DeliveryGate(held: true)
    gate.start(with: [], alone: true)
    let words = Recorder<Int>()
    let context = DeliveryContext.current
    func body(_ value: Int) {
      words.append((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations))
      // The run is still this chain's: an echo of it is dropped.
      gate.deliverAlone(value + 1, to: body, dropsEchoes: true, in: context)
    }
    gate.deliverAlone(1, to: body, dropsEchoes: true, in: context)
    #expect(words.history == [DeliveryGate.alone])
    #expect((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == DeliveryGate.alone)
  }

  @Test func deliverAloneClaimsAGateThatIsNotAlone() {
    let gate = DeliveryGate(held: false)
    let words = Recorder<Int>()
    gate.deliverAlone(
      1,
      to: { _ in words.append((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations)) },
      dropsEchoes: true,
      in: .current
    )
    #expect(words.history == [DeliveryContext.current.runner])
    #expect((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == 0)
  }

  @Test func deliverAloneRunsNothingOnceTheGateIsClosed() {
    let gate = DeliveryGate(held: true)
    gate.start(with: [], alone: true)
    gate.close()
    let log = Recorder<Int>()
    gate.deliverAlone(1, to: { log.append($0) }, dropsEchoes: true, in: .current)
    gate.deliver(2, to: { log.append($0) }, in: .current)
    #expect(log.history == [])
    #expect((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == DeliveryGate.alone)
    #expect(gate.requests.load(ordering: .relaxed) == DeliveryGate.closed)
  }

  @Test func anAloneGateStillClaimsQueuesAndKeepsItsMark() {
    let gate = DeliveryGate(held: true)
    let log = Recorder<String>()
    spawn {
      gate.deliver("sent while held", to: { log.append($0) }, in: DeliveryContext.current)
    }.wait()
    gate.start(with: [{ log.append("fetched") }], alone: true)
    let context = DeliveryContext.current
    func body(_ value: Int) {
      log.append("start \(value), word \((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations))")
      if value == 1 { gate.deliver(2, to: body, dropsEchoes: false, in: context) }
    }
    gate.deliver(1, to: body, in: context)
    let running = DeliveryGate.alone | context.runner
    #expect(
      log.history == [
        "fetched", "sent while held", "start 1, word \(running)",
        "start 2, word \(running)",
      ]
    )
    #expect((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == DeliveryGate.alone)
  }

  // The runner releases with a plain store and then reads `requests`; a
  // thread that queues sets `queued` and then reads `word` (see the type's
  // discussion). These follow each way a queued value can be run.

  @Test func aValueQueuedFromAnotherThreadRunsOnTheRunnerRightAfterItsRun() {
    let gate = DeliveryGate(held: false)
    let log = Recorder<String>()
    let (proceed, runner, mark) = startBlockedRun(of: gate, appending: "run", to: log)
    // Returns at once: the value waits for the runner.
    let marks = Recorder<Int>()
    gate.deliver(
      "queued",
      to: {
        marks.append(DeliveryContext.current.runner)
        log.append($0)
      },
      in: .current
    )
    #expect(log.history == [])
    #expect(gate.requests.load(ordering: .acquiring) == DeliveryGate.queued)
    proceed.signal()
    runner.wait()
    #expect(log.history == ["run", "queued"])
    #expect(marks.history == [mark])
    expectIdle(gate)
  }

  @Test func aClaimThatFindsValuesQueuedRunsThemFirst() {
    // The moment between a queuing thread setting `queued` and running the
    // queue itself, with the gate idle: a new value claims the gate.
    let gate = DeliveryGate(held: false)
    let log = Recorder<String>()
    queueAsAnotherThread(["queued"], in: gate, to: log)
    gate.deliver("sent", to: { log.append($0) }, in: .current)
    #expect(log.history == ["queued", "sent"])
    expectIdle(gate)
  }

  @Test func aThreadThatQueuedAndFindsTheGateIdleRunsTheQueueItself() {
    let gate = DeliveryGate(held: false)
    let log = Recorder<String>()
    queueAsAnotherThread(["first", "second"], in: gate, to: log)
    gate.drain(in: .current)
    #expect(log.history == ["first", "second"])
    expectIdle(gate)
  }

  @Test func aThreadThatQueuedLeavesTheQueueToARunner() {
    let gate = DeliveryGate(held: false)
    let log = Recorder<String>()
    let context = DeliveryContext.current
    gate.deliver(
      "run",
      to: { value in
        // As if another thread had queued meanwhile and then found the
        // gate claimed: the runner takes the queue when it releases.
        queueAsAnotherThread(["queued"], in: gate, to: log)
        gate.drain(in: context)
        log.append(value)
      },
      in: context
    )
    #expect(log.history == ["run", "queued"])
    #expect(gate.requests.load(ordering: .relaxed) == 0)
  }

  @Test func closeDropsWhatOtherThreadsQueuedAndWaitsForTheRun() {
    let gate = DeliveryGate(held: false)
    let log = Recorder<String>()
    let (proceed, runner, _) = startBlockedRun(of: gate, appending: "run", to: log)
    gate.deliver("queued", to: { log.append($0) }, in: .current)
    closeOnAnotherThreadWhileItRuns(gate, proceed: proceed, runner: runner, log: log)
    #expect(log.history == ["run", "closed"])
    #expect((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == 0)
  }

  @Test func noRunStartsAfterCloseReturnsWhileThreadsKeepSending() {
    let gate = DeliveryGate(held: false)
    let threads = 3
    let perThread = 2_000
    // Touched only inside the gate's runs, and by the closer once `close()`
    // has returned: the gate is their only guard.
    final class Tally: @unchecked Swift.Sendable {
      var runs = 0
      var closed = false
      var runsAfterClose = 0
    }
    let tally = Tally()
    let started = AtomicCounter()
    let closesAfter = 100
    race(threads: threads + 1) { index in
      if index == threads {
        // The closer: lets the senders get going, then closes.
        while started.value < closesAfter {}
        gate.close()
        tally.closed = true
        return
      }
      let context = DeliveryContext.current
      for _ in 0..<perThread {
        gate.deliver(
          1,
          to: { _ in
            started.add(1)
            tally.runs += 1
            if tally.closed { tally.runsAfterClose += 1 }
          },
          in: context
        )
      }
    }
    #expect(tally.runsAfterClose == 0)
    #expect(tally.runs >= closesAfter && tally.runs <= threads * perThread)
    #expect(gate.isClosed)
    #expect((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == 0)
  }

  /// A value postponed past the nesting limit at a gate that another
  /// thread released with values still queued (as for a writer waiting
  /// its turn) goes behind them: the postponed run runs the queue, this
  /// value last. Running it first put a writer's value ahead of its
  /// earlier ones (found by the soak's deep chain).
  @Test func aValuePostponedAtAGateWithAQueueRunsBehindIt() {
    let gate = DeliveryGate(held: false)
    let log = Recorder<String>()
    let beforeTheWaveEnded = Recorder<[String]>()
    spawn {
      let context = DeliveryContext.current
      queueAsAnotherThread(["queued 1", "queued 2"], in: gate, to: log)
      context.beginWave()
      context.depth = DeliveryContext.nestingLimit
      gate.deliver("postponed", to: { log.append($0) }, in: context)
      context.depth = 0
      beforeTheWaveEnded.append(log.history)
      context.endWave()
    }.wait()
    #expect(beforeTheWaveEnded.history == [[]])
    #expect(log.history == ["queued 1", "queued 2", "postponed"])
    expectIdle(gate)
  }

  /// A value postponed at a closed gate is dropped, and the gate left idle.
  @Test func aValuePostponedAtAClosedGateIsDropped() {
    let gate = DeliveryGate(held: false)
    let log = Recorder<String>()
    gate.close()
    spawn {
      let context = DeliveryContext.current
      context.beginWave()
      context.depth = DeliveryContext.nestingLimit
      gate.deliver("postponed", to: { log.append($0) }, in: context)
      context.depth = 0
      context.endWave()
    }.wait()
    #expect(log.history == [])
    #expect((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == 0)
  }

  /// Queues each of `names` (appended to `log` when run) the way another
  /// thread does, up to setting `queued`: the thread has not yet looked
  /// whether the gate is claimed.
  private func queueAsAnotherThread(_ names: [String], in gate: DeliveryGate, to log: Recorder<String>) {
    for name in names {
      gate.pending.append(DeliveryGate.Queued(causes: Causes(gates: []), sender: 1) { log.append(name) })
    }
    gate.requests.store(DeliveryGate.queued, ordering: .relaxed)
  }

  /// Checks that nobody runs `gate` and nothing is requested of it.
  private func expectIdle(_ gate: DeliveryGate, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(gate.requests.load(ordering: .relaxed) == 0, sourceLocation: sourceLocation)
    #expect((gate.word.load(ordering: .relaxed) & ~DeliveryGate.generations) == 0, sourceLocation: sourceLocation)
  }

  /// Starts a run of `gate` on another thread, which appends `value` to
  /// `log` once `proceed` is signaled. Returns once the run has started,
  /// with the thread's `DeliveryContext.runner`.
  private func startBlockedRun(
    of gate: DeliveryGate,
    appending value: String,
    to log: Recorder<String>
  ) -> (proceed: DispatchSemaphore, done: DispatchGroup, runner: Int) {
    let started = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let runner = Recorder<Int>()
    let done = spawn {
      let context = DeliveryContext.current
      runner.append(context.runner)
      gate.deliver(
        value,
        to: { value in
          started.signal()
          proceed.wait()
          log.append(value)
        },
        in: context
      )
    }
    started.wait()
    return (proceed, done, runner.history.first ?? 0)
  }

  /// Closes `gate` on another thread, which appends "closed" to `log` once
  /// `close()` returns; lets the blocked run go on only once the closer
  /// waits for it, and checks that the close dropped the queue by then.
  /// Returns when both threads are done.
  private func closeOnAnotherThreadWhileItRuns(
    _ gate: DeliveryGate,
    proceed: DispatchSemaphore,
    runner: DispatchGroup,
    log: Recorder<String>,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    let closer = spawn {
      gate.close()
      log.append("closed")
    }
    while gate.requests.load(ordering: .acquiring) & DeliveryGate.waiting == 0 {}
    #expect(
      gate.requests.load(ordering: .acquiring) == DeliveryGate.closed | DeliveryGate.waiting,
      sourceLocation: sourceLocation
    )
    proceed.signal()
    closer.wait()
    runner.wait()
  }
}
