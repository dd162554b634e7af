import Dispatch
import Testing

@testable import Chaining

/// The lock of the graph of computed values (`GraphLock`), given back with
/// a plain store on Linux (`Verification/GraphLock.pml` models it).
@Suite struct GraphLockTests {
  /// A count changed only under the lock being tested.
  final class Count: @unchecked Swift.Sendable {
    var value = 0
  }

  @Test func threadsIncrementingUnderTheLockLoseNoIncrement() {
    let lock = GraphLock()
    let counter = Count()
    let threads = 4
    let increments = 20_000
    let workers = (0..<threads).map { _ in
      spawn {
        for _ in 0..<increments {
          lock.withLock { _ in counter.value += 1 }
        }
      }
    }
    for worker in workers { worker.wait() }
    #expect(lock.withLock { _ in counter.value } == threads * increments)
  }

  #if !canImport(Darwin)
  @Test func parkedThreadsAreWokenWhenTheLockIsGivenBack() {
    // The holder keeps the lock until every waiter has counted itself in
    // `parked`, which a waiter does only on its way to park: so the
    // waiters go through the parking path, and each must be woken to
    // finish.
    for _ in 0..<20 {
      let lock = GraphLock()
      let counter = Count()
      let holding = DispatchSemaphore(value: 0)
      let holder = spawn {
        lock.withLock { _ in
          holding.signal()
          while lock.parked.load(ordering: .relaxed) != 3 {}
          counter.value += 100
        }
      }
      holding.wait()
      let waiters = (0..<3).map { _ in spawn { lock.withLock { _ in counter.value += 1 } } }
      holder.wait()
      for waiter in waiters { waiter.wait() }
      #expect(lock.withLock { _ in counter.value } == 103)
      #expect(lock.word.load(ordering: .relaxed) == GraphLock.free)
      #expect(lock.parked.load(ordering: .relaxed) == 0)
    }
  }
  #endif
}
