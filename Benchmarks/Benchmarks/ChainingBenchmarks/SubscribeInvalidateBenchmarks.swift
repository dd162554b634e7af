import Benchmark
import Chaining
import OpenCombine

/// Subscribing one observer to a sender and invalidating it again, per pair:
/// the cost of a short-lived binding, such as a cell's.
func subscribeInvalidateBenchmarks() {
  let pairs = Suite.sends

  Benchmark("subscribe + invalidate: chaining") { benchmark in
    let notifier = Notifier<Int>()
    let counter = Counter()
    benchmark.measure(operations: pairs) {
      for _ in 0..<pairs {
        let observer = notifier.chain().do { counter.total &+= $0 }.end()
        observer.invalidate()
      }
    }
    blackHole(counter.total)
  }

  Benchmark("subscribe + invalidate: floor") { benchmark in
    let counter = Counter()
    var handlers: [(Int) -> Void] = []
    handlers.reserveCapacity(1)
    benchmark.measure(operations: pairs) {
      for _ in 0..<pairs {
        handlers.append { counter.total &+= $0 }
        handlers.removeLast()
      }
    }
    blackHole(counter.total)
    blackHole(handlers)
  }

  Benchmark("subscribe + invalidate: opencombine") { benchmark in
    let subject = PassthroughSubject<Int, Never>()
    let counter = Counter()
    benchmark.measure(operations: pairs) {
      for _ in 0..<pairs {
        let cancellable = subject.sink { counter.total &+= $0 }
        cancellable.cancel()
      }
    }
    blackHole(counter.total)
  }
}
