import Benchmark
import Chaining
import Dispatch

/// Reading a computed value that is clean, beside reading a holder's
/// `value` (issue #37: at most 2x); and the same on two threads at once,
/// each reading a value of its own, unrelated to the other's.
func computedBenchmarks() {
  let reads = Suite.size(1_000_000, smoke: 100)

  Benchmark("holder read: chaining") { benchmark in
    let holder = ValueHolder(1)
    let counter = Counter()
    benchmark.measure(operations: reads) {
      for _ in 0..<reads { counter.total &+= holder.value }
    }
    benchmark.expectDelivery(counter)
  }

  Benchmark("computed read: chaining") { benchmark in
    let holder = ValueHolder(1)
    let computed = Computed { holder.value + 1 }
    let counter = Counter()
    benchmark.measure(operations: reads) {
      for _ in 0..<reads { counter.total &+= computed.value }
    }
    benchmark.expectDelivery(counter)
    blackHole(holder)
  }

  let holders = [ValueHolder(1), ValueHolder(2)]
  twoThreadReads("holder read, 2 threads: chaining", reads: reads, holders.map { holder in { holder.value } })
  let computeds = holders.map { holder in Computed { holder.value + 1 } }
  twoThreadReads("computed read, 2 threads: chaining", reads: reads, computeds.map { computed in { computed.value } })
}

/// A benchmark of two threads at once, each calling its own of `read`
/// `reads` times (one operation per pair of calls).
private func twoThreadReads(_ name: String, reads: Int, _ read: [() -> Int]) {
  nonisolated(unsafe) let read = read
  Benchmark(name) { benchmark in
    let counters = [Counter(), Counter()]
    benchmark.measure(operations: reads) {
      onTwoThreads { thread in
        let read = read[thread]
        let counter = counters[thread]
        for _ in 0..<reads { counter.total &+= read() }
      }
    }
    for counter in counters { benchmark.expectDelivery(counter) }
  }
}

/// Runs `body(0)` on this thread and `body(1)` on another at once, and
/// returns when both have.
private func onTwoThreads(_ body: @escaping (Int) -> Void) {
  nonisolated(unsafe) let body = body
  let other = DispatchGroup()
  DispatchQueue.global().async(group: other) { body(1) }
  body(0)
  other.wait()
}
