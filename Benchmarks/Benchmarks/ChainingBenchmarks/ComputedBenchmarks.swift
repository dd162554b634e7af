import Benchmark
import Chaining

/// Reading a computed value that is clean, beside reading a holder's
/// `value` (issue #37: at most 2x).
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
}
