import Benchmark
import Chaining
import OpenCombine

/// Invalidating, one by one in subscription order, each of N observers of
/// one sender: the cost per observer. It should not grow with N; a list
/// that removes an observer by searching or shifting would make it O(N).
func teardownBenchmarks() {
  for named in [1_000, 10_000, 100_000] {
    // The names keep the full size so that smoke runs list the same benchmarks.
    let observers = Suite.size(named, smoke: named / 100)

    Benchmark("teardown \(named): chaining") { benchmark in
      let notifier = Notifier<Int>()
      let counter = Counter()
      let subscribed = (0..<observers).map { _ in
        notifier.chain().do { counter.total &+= $0 }.end()
      }
      benchmark.measure(operations: observers) {
        for observer in subscribed { observer.invalidate() }
      }
      blackHole(counter.total)
    }

    Benchmark("teardown \(named): floor") { benchmark in
      let counter = Counter()
      // A hand-written list that ends a subscription in O(1) by clearing
      // its slot, given the index it handed out.
      var handlers: [((Int) -> Void)?] = (0..<observers).map { _ in { counter.total &+= $0 } }
      benchmark.measure(operations: observers) {
        for index in 0..<observers { handlers[index] = nil }
      }
      blackHole(counter.total)
      blackHole(handlers)
    }

    Benchmark("teardown \(named): opencombine") { benchmark in
      let subject = PassthroughSubject<Int, Never>()
      let counter = Counter()
      let cancellables = (0..<observers).map { _ in
        subject.sink { counter.total &+= $0 }
      }
      benchmark.measure(operations: observers) {
        for cancellable in cancellables { cancellable.cancel() }
      }
      blackHole(counter.total)
    }
  }
}
