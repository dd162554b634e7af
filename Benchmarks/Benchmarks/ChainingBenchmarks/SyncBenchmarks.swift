import Benchmark
import Chaining
import OpenCombine

/// Binding to a holder and receiving its current value, then ending the
/// binding: `sync()` + `invalidate()`, per binding. The difference to
/// "subscribe + invalidate" is the cost of fetching and delivering the value.
func syncBenchmarks() {
  let bindings = Suite.sends

  Benchmark("sync: chaining") { benchmark in
    let holder = ValueHolder(1)
    let counter = Counter()
    benchmark.measure(operations: bindings) {
      for _ in 0..<bindings {
        let observer = holder.chain().do { counter.total &+= $0 }.sync()
        observer.invalidate()
      }
    }
    benchmark.expectDelivery(counter)
  }

  Benchmark("sync: floor") { benchmark in
    let counter = Counter()
    let stored = identity(1)
    var handlers: [(Int) -> Void] = []
    handlers.reserveCapacity(1)
    benchmark.measure(operations: bindings) {
      for _ in 0..<bindings {
        let handler: (Int) -> Void = { counter.total &+= $0 }
        handlers.append(handler)
        handler(stored)
        handlers.removeLast()
      }
    }
    benchmark.expectDelivery(counter)
    blackHole(handlers)
  }

  Benchmark("sync: opencombine") { benchmark in
    let subject = CurrentValueSubject<Int, Never>(1)
    let counter = Counter()
    benchmark.measure(operations: bindings) {
      for _ in 0..<bindings {
        let cancellable = subject.sink { counter.total &+= $0 }
        cancellable.cancel()
      }
    }
    benchmark.expectDelivery(counter)
  }
}
