import Benchmark
import Chaining
import OpenCombine

/// One sender, N observers that each add the value to a counter: the cost
/// per delivered value (one send reaches N observers).
func fanOutBenchmarks() {
  for observers in [1, 10, 1_000] {
    // Fewer sends for the widest fan-out keep an iteration short.
    let sends = observers >= 1_000 ? Suite.sends / 10 : Suite.sends
    let delivered = sends * observers

    Benchmark("fan-out \(observers): chaining") { benchmark in
      let notifier = Notifier<Int>()
      let counter = Counter()
      let subscribed = (0..<observers).map { _ in
        notifier.chain().do { counter.total &+= $0 }.end()
      }
      benchmark.measure(operations: delivered) {
        for value in 0..<sends { notifier.notify(value: value) }
      }
      benchmark.expectDelivery(counter)
      blackHole(subscribed)
    }

    Benchmark("fan-out \(observers): floor") { benchmark in
      let counter = Counter()
      let handlers: [(Int) -> Void] = identity(
        (0..<observers).map { _ in { counter.total &+= $0 } }
      )
      benchmark.measure(operations: delivered) {
        for value in 0..<sends {
          for handler in handlers { handler(value) }
        }
      }
      benchmark.expectDelivery(counter)
    }

    Benchmark("fan-out \(observers): opencombine") { benchmark in
      let subject = PassthroughSubject<Int, Never>()
      let counter = Counter()
      let cancellables = (0..<observers).map { _ in
        subject.sink { counter.total &+= $0 }
      }
      benchmark.measure(operations: delivered) {
        for value in 0..<sends { subject.send(value) }
      }
      benchmark.expectDelivery(counter)
      blackHole(cancellables)
    }
  }
}
