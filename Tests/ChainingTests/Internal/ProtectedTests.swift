import Dispatch
import Testing

@testable import Chaining

@Suite struct ProtectedTests {
  @Test func withLockReturnsTheBodysResultAndKeepsItsChanges() {
    let counter = Protected(0)
    let result = counter.withLock { value -> String in
      value += 5
      return "five"
    }
    #expect(result == "five")
    #expect(counter.withLock { $0 } == 5)
  }

  @Test func threadsIncrementingUnderTheLockLoseNoIncrement() {
    let counter = Protected(0)
    let threads = 4
    let increments = 20_000
    let workers = (0..<threads).map { _ in
      spawn {
        for _ in 0..<increments { counter.withLock { $0 += 1 } }
      }
    }
    for worker in workers { worker.wait() }
    #expect(counter.withLock { $0 } == threads * increments)
  }

  #if !canImport(Darwin)
  @Test func parkedThreadsAreWokenWhenTheLockIsGivenBack() {
    // The holder keeps the lock until a waiter has marked it contended,
    // which a waiter does only on its way to park: so the waiters go
    // through the parking path, and each must be woken to finish.
    for _ in 0..<20 {
      let counter = Protected(0)
      let holding = DispatchSemaphore(value: 0)
      let holder = spawn {
        counter.withLock { value in
          holding.signal()
          while counter.lock.load(ordering: .relaxed) != Protected<Int>.contended {}
          value += 100
        }
      }
      holding.wait()
      let waiters = (0..<3).map { _ in spawn { counter.withLock { $0 += 1 } } }
      holder.wait()
      for waiter in waiters { waiter.wait() }
      #expect(counter.withLock { $0 } == 103)
      #expect(counter.lock.load(ordering: .relaxed) == Protected<Int>.free)
    }
  }
  #endif
}
