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
    #expect(gate.word.load(ordering: .relaxed) == 0)
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
    let started = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
    let runner = spawn {
      gate.deliver(
        0,
        to: { _ in
          started.signal()
          proceed.wait()
          log.append("run ended")
        },
        in: DeliveryContext.current
      )
    }
    started.wait()
    let closer = spawn {
      gate.close()
      log.append("closed")
    }
    // Let the run end only once the closer is waiting for it.
    while gate.word.load(ordering: .acquiring) & DeliveryGate.waiting == 0 {}
    proceed.signal()
    closer.wait()
    runner.wait()
    #expect(log.history == ["run ended", "closed"])
    #expect(gate.word.load(ordering: .relaxed) == DeliveryGate.closed)
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
    #expect(gate.word.load(ordering: .acquiring) == 0)
  }

  // A gate started `alone` lets its only sender core run the chain
  // without claiming it (`deliverAlone`); every other path is unchanged.

  @Test func startMarksTheGateAloneOnlyWhenAsked() {
    let alone = DeliveryGate(held: true)
    alone.start(with: [], alone: true)
    #expect(alone.word.load(ordering: .relaxed) == DeliveryGate.alone)
    #expect(alone.isAlone)
    let shared = DeliveryGate(held: true)
    shared.start(with: [], alone: false)
    #expect(shared.word.load(ordering: .relaxed) == 0)
    #expect(!shared.isAlone)
  }

  @Test func deliverAloneRunsAnAloneGateWithoutClaimingIt() {
    let gate = DeliveryGate(held: true)
    gate.start(with: [], alone: true)
    let words = Recorder<Int>()
    let context = DeliveryContext.current
    func body(_ value: Int) {
      words.append(gate.word.load(ordering: .relaxed))
      // The run is still this chain's: an echo of it is dropped.
      gate.deliverAlone(value + 1, to: body, dropsEchoes: true, in: context)
    }
    gate.deliverAlone(1, to: body, dropsEchoes: true, in: context)
    #expect(words.history == [DeliveryGate.alone])
    #expect(gate.word.load(ordering: .relaxed) == DeliveryGate.alone)
  }

  @Test func deliverAloneClaimsAGateThatIsNotAlone() {
    let gate = DeliveryGate(held: false)
    let words = Recorder<Int>()
    gate.deliverAlone(1, to: { _ in words.append(gate.word.load(ordering: .relaxed)) }, dropsEchoes: true, in: .current)
    #expect(words.history == [DeliveryGate.running])
    #expect(gate.word.load(ordering: .relaxed) == 0)
  }

  @Test func deliverAloneRunsNothingOnceTheGateIsClosed() {
    let gate = DeliveryGate(held: true)
    gate.start(with: [], alone: true)
    gate.close()
    let log = Recorder<Int>()
    gate.deliverAlone(1, to: { log.append($0) }, dropsEchoes: true, in: .current)
    gate.deliver(2, to: { log.append($0) }, in: .current)
    #expect(log.history == [])
    #expect(gate.word.load(ordering: .relaxed) == DeliveryGate.alone | DeliveryGate.closed)
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
      log.append("start \(value), word \(gate.word.load(ordering: .relaxed))")
      if value == 1 { gate.deliver(2, to: body, dropsEchoes: false, in: context) }
    }
    gate.deliver(1, to: body, in: context)
    let running = DeliveryGate.alone | DeliveryGate.running
    #expect(
      log.history == [
        "fetched", "sent while held", "start 1, word \(running)",
        "start 2, word \(running)",
      ]
    )
    #expect(gate.word.load(ordering: .relaxed) == DeliveryGate.alone)
  }
}
