import Benchmark
import Chaining
import OpenCombine

/// Creating N live `do` observers of one sender and keeping them: the heap
/// bytes they hold, per observer.
///
/// `memoryLeakedBytes` is the bytes requested from malloc and not freed
/// inside the measured region: what the observers, their closures and the
/// sender's list hold while alive. Temporary allocations, such as the chain
/// builders, are freed before the region ends and do not count. The array
/// that keeps the observers is reserved before the region starts, so its 8
/// bytes per observer do not count either. `./compare` divides by N.
func memoryBenchmarks() {
  let observers = Suite.size(10_000, smoke: 100)

  Benchmark("memory per observer: chaining", configuration: Suite.memory()) { benchmark in
    let notifier = Notifier<Int>()
    let counter = Counter()
    var kept: [Observer] = []
    kept.reserveCapacity(observers)
    benchmark.measure(operations: observers) {
      for _ in 0..<observers {
        kept.append(notifier.chain().do { counter.total &+= $0 }.end())
      }
    }
    notifier.notify(value: 1)
    benchmark.expectDelivery(counter)
    blackHole(kept)
  }

  // A chain from one holder to another, made N times between N + 1
  // holders made before: the observer, the two holders' entries, and the
  // link of the graph of ranks (`RankGraph`) that `sendTo` makes.
  Benchmark("memory per sendTo link: chaining", configuration: Suite.memory()) { benchmark in
    let holders = (0...observers).map { _ in ValueHolder(0) }
    let counter = Counter()
    let last = holders[observers].chain().do { counter.total &+= $0 }.end()
    var kept: [Observer] = []
    kept.reserveCapacity(observers)
    benchmark.measure(operations: observers) {
      for index in 0..<observers {
        kept.append(holders[index].chain().sendTo(holders[index + 1]).end())
      }
    }
    holders[0].value = 1
    benchmark.expectDelivery(counter)
    // The holders too: a chain holds the holder it sends to weakly.
    blackHole(holders)
    blackHole(kept)
    last.invalidate()
  }

  Benchmark("memory per observer: floor", configuration: Suite.memory()) { benchmark in
    let counter = Counter()
    // The sender's list grows as observers come, like the library's.
    var handlers: [(Int) -> Void] = []
    benchmark.measure(operations: observers) {
      for _ in 0..<observers {
        handlers.append { counter.total &+= $0 }
      }
    }
    for handler in handlers { handler(1) }
    benchmark.expectDelivery(counter)
  }

  Benchmark("memory per observer: opencombine", configuration: Suite.memory()) { benchmark in
    let subject = PassthroughSubject<Int, Never>()
    let counter = Counter()
    var kept: [AnyCancellable] = []
    kept.reserveCapacity(observers)
    benchmark.measure(operations: observers) {
      for _ in 0..<observers {
        kept.append(subject.sink { counter.total &+= $0 })
      }
    }
    subject.send(1)
    benchmark.expectDelivery(counter)
    blackHole(kept)
  }
}
