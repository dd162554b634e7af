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
    gate.start(with: [{ log.append("fetched") }])
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
}
