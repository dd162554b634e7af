import Testing

@testable import Chaining

// The checks exist only in builds with CHAINING_INTERNAL_CHECKS (a step of
// .ci/run builds the suite so); their messages are printed in debug builds.
#if CHAINING_INTERNAL_CHECKS && DEBUG && !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)
/// Each invariant check stops on the broken state it names: the suite
/// passing with the checks on means something only if they can fail.
@Suite struct InvariantChecksTests {
  @Test func aSenderCoreWhoseCountDisagreesWithItsListStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let core = _SenderCore<Int>()
      core.state.withLock { $0.live = 1 }
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("_SenderCore: live is 1, the list has 0 observers"), "\(message)")
  }

  @Test func aGateWithValuesQueuedButNotFlaggedStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let gate = DeliveryGate(held: false)
      gate.withStripeLock {
        gate.pending.append(DeliveryGate.Queued(causes: .none, sender: 0) {})
      }
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("DeliveryGate: 1 values queued without `queued`"), "\(message)")
  }

  @Test func aGateReleasedByAThreadThatDoesNotRunItStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      // Idle: nobody runs it, so nobody may release it.
      let gate = DeliveryGate(held: false)
      _ = gate.releaseReadingRequests(to: 0)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("DeliveryGate: released by a thread that does not run it"), "\(message)")
  }

  @Test func aFrozenPathOfCausesThatGrowsStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let path = CausePath(base: nil, limit: 0)
      path.freeze()
      path.append([DeliveryGate(held: false)])
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("CausePath: grown once frozen"), "\(message)")
  }

  @Test func aFetchAddedByAThreadThatDoesNotHoldTheChainStops() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let observer = ValueHolder(1).chain().end()
      // The gate opened when the chain was finished: nobody holds it now.
      observer.addFetch {}
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("DeliveryGate: a fetch added by a thread that does not run it"), "\(message)")
  }

  @Test func theChecksPassOnAGateAndACoreInUse() {
    let holder = ValueHolder(0)
    var received: [Int] = []
    let observer = holder.chain().do { received.append($0) }.sync()
    holder.value = 1
    observer.invalidate()
    holder.value = 2
    #expect(received == [0, 1])
  }
}
#endif
