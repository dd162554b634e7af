import Benchmark
import Chaining

/// Chaining through an existential: the `holder set` chain and the `sync`
/// binding, started from `any Fetchable<Int>` instead of `ValueHolder<Int>`.
/// Compare with the `holder set` and `sync` rows, which start from the
/// concrete type. Chaining only.
func existentialBenchmarks() {
  let sends = Suite.sends

  Benchmark("holder set (existential): chaining") { benchmark in
    let holder = ValueHolder(-1)
    let source: any Fetchable<Int> = holder
    let counter = Counter()
    let observer =
      source.chain()
      .map { $0 * 2 }
      .filter { $0 % 3 != 0 }
      .do { counter.total &+= $0 }
      .end()
    benchmark.measure(operations: sends) {
      for value in 0..<sends { holder.value = value }
    }
    benchmark.expectDelivery(counter)
    observer.invalidate()
  }

  Benchmark("sync (existential): chaining") { benchmark in
    let source: any Fetchable<Int> = ValueHolder(1)
    let counter = Counter()
    benchmark.measure(operations: sends) {
      for _ in 0..<sends {
        let observer = source.chain().do { counter.total &+= $0 }.sync()
        observer.invalidate()
      }
    }
    benchmark.expectDelivery(counter)
  }
}
