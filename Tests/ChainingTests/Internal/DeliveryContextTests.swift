import Testing

@testable import Chaining

@Suite struct DeliveryContextTests {
  /// A combine deferred with three causes keeps them in the thread's
  /// reused buffer; a wave of its own that interrupts the wave (another
  /// thread's value, `runAsOwnWave`) defers and sends its own combine
  /// there too, and must leave the interrupted one's causes in place.
  /// Each send sees exactly its own causes (and its gate).
  @Test func aWaveOfItsOwnLeavesTheCausesOfTheWaveItInterrupts() {
    let outer = (0..<3).map { _ in DeliveryGate(held: false) }
    let inner = (0..<3).map { _ in DeliveryGate(held: false) }
    let seen = Recorder<[Bool]>()
    spawn {
      let context = DeliveryContext.current
      let all = outer + inner
      let first = WaveFlush(gate: outer[2]) { seen.append(all.map { context.isCaused(by: $0) }) }
      let second = WaveFlush(gate: inner[2]) { seen.append(all.map { context.isCaused(by: $0) }) }
      context.beginWave()
      for gate in outer { context.enter(gate) }
      first.changed(in: context)
      for _ in outer {
        context.popCause()
        context.leave()
      }
      context.runAsOwnWave {
        for gate in inner { context.enter(gate) }
        second.changed(in: context)
        for _ in inner {
          context.popCause()
          context.leave()
        }
      }
      context.endWave()
      #expect(context.state.pointee.waves.flushCauses.isEmpty)
    }.wait()
    #expect(seen.history == [[false, false, false, true, true, true], [true, true, true, false, false, false]])
  }

  @Test func causesDeeperThanTheFirstBufferAreAllKept() {
    let gates = (0..<40).map { _ in DeliveryGate(held: false) }
    let other = DeliveryGate(held: false)
    spawn {
      let context = DeliveryContext.current
      for gate in gates { context.enter(gate) }
      #expect(gates.allSatisfy { context.isCaused(by: $0) })
      #expect(!context.isCaused(by: other))
      #expect(context.capture().ids == gates.map(\.id))
      #expect(context.depth == gates.count)
      for _ in gates {
        context.popCause()
        context.leave()
      }
      #expect(!context.isCaused(by: gates[0]))
      #expect(context.depth == 0)
    }.wait()
  }

  @Test func oneOrTwoCausesAreCapturedWithoutAnArrayAndInstalledAgain() {
    let gate = DeliveryGate(held: false)
    let own = DeliveryGate(held: false)
    spawn {
      let context = DeliveryContext.current
      let nothing = context.capture()
      #expect(nothing.single == 0)
      #expect(nothing.ids.isEmpty)
      context.enter(gate)
      let captured = context.capture()
      context.enter(own)
      let two = context.capture()
      context.popCause()
      context.leave()
      context.popCause()
      context.leave()
      #expect(captured.single == gate.id)
      #expect(captured.second == 0 && captured.copied.isEmpty && captured.node == nil)
      // Two causes (a deferred combine's usual ones): inline as well.
      #expect(two.single == gate.id && two.second == own.id)
      #expect(two.copied.isEmpty && two.node == nil)
      #expect(two.ids == [gate.id, own.id])
      context.enter(own)
      var inside: [Bool] = []
      context.run(with: captured) {
        inside = [context.isCaused(by: gate), context.isCaused(by: own)]
      }
      #expect(inside == [true, false])
      #expect(context.isCaused(by: own))
      #expect(!context.isCaused(by: gate))
      context.popCause()
      context.leave()
      context.run(with: two) {
        inside = [context.isCaused(by: gate), context.isCaused(by: own)]
      }
      #expect(inside == [true, true])
      #expect(!context.isCaused(by: gate) && !context.isCaused(by: own))
    }.wait()
  }

  @Test func runningWithQueuedCausesRestoresTheThreadsOwn() {
    let own = DeliveryGate(held: false)
    let queued = DeliveryGate(held: false)
    let added = DeliveryGate(held: false)
    spawn {
      let context = DeliveryContext.current
      context.enter(own)
      var inside: [Bool] = []
      context.run(with: Causes(gates: [queued]), adding: added) {
        inside = [context.isCaused(by: own), context.isCaused(by: queued), context.isCaused(by: added)]
      }
      #expect(inside == [false, true, true])
      #expect(context.isCaused(by: own))
      #expect(!context.isCaused(by: queued))
      #expect(!context.isCaused(by: added))
      context.popCause()
      context.leave()
    }.wait()
  }

  @Test func aRingOfTwentyHoldersSettlesAfterOneRound() {
    let holders = (0..<20).map { _ in ValueHolder(0) }
    let runs = Recorder<Int>()
    let observers = holders.indices.map { index in
      holders[index].chain()
        .do { _ in runs.append(index) }
        .sendTo(holders[(index + 1) % holders.count])
        .end()
    }
    holders[0].value = 5
    #expect(holders.map(\.value) == Array(repeating: 5, count: 20))
    // Each chain ran once; the last one's write back into the first holder
    // is an echo, dropped by every chain of the ring.
    #expect(runs.history == Array(0..<20))
    withExtendedLifetime(observers) {}
  }
}
