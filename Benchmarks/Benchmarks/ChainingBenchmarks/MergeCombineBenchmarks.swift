import Benchmark
import Chaining
import OpenCombine

/// Two senders joined into one observer, sent to alternately: `merge`
/// passes each value on, `combine` sends the pair of latest values. Cost
/// per delivered value.
///
/// OpenCombine 0.14.0 has neither `Publishers.Merge` nor `CombineLatest`.
/// Merging is written as `[first, second].publisher.flatMap { $0 }`, the
/// usual spelling of `MergeMany`; combining has no OpenCombine row.
func mergeCombineBenchmarks() {
  let sends = Suite.sends
  let pairs = sends / 2

  Benchmark("merge 2: chaining") { benchmark in
    let first = Notifier<Int>()
    let second = Notifier<Int>()
    let counter = Counter()
    let observer = first.chain().merge(second.chain()).do { counter.total &+= $0 }.end()
    benchmark.measure(operations: pairs * 2) {
      for value in 0..<pairs {
        first.notify(value: value)
        second.notify(value: value)
      }
    }
    benchmark.expectDelivery(counter)
    observer.invalidate()
  }

  Benchmark("merge 2: floor") { benchmark in
    let counter = Counter()
    let handler: (Int) -> Void = { counter.total &+= $0 }
    let first: [(Int) -> Void] = identity([handler])
    let second: [(Int) -> Void] = identity([handler])
    benchmark.measure(operations: pairs * 2) {
      for value in 0..<pairs {
        for handler in first { handler(value) }
        for handler in second { handler(value) }
      }
    }
    benchmark.expectDelivery(counter)
  }

  Benchmark("merge 2: opencombine") { benchmark in
    let first = PassthroughSubject<Int, Never>()
    let second = PassthroughSubject<Int, Never>()
    let counter = Counter()
    let cancellable = [first, second].publisher.flatMap { $0 }.sink { counter.total &+= $0 }
    benchmark.measure(operations: pairs * 2) {
      for value in 0..<pairs {
        first.send(value)
        second.send(value)
      }
    }
    benchmark.expectDelivery(counter)
    cancellable.cancel()
  }

  Benchmark("combine 2: chaining") { benchmark in
    let first = Notifier<Int>()
    let second = Notifier<Int>()
    let counter = Counter()
    let observer = first.chain().combine(second.chain()).do { counter.total &+= $0 &+ $1 }.end()
    first.notify(value: 0)
    second.notify(value: 0)
    benchmark.measure(operations: pairs * 2) {
      for value in 0..<pairs {
        first.notify(value: value)
        second.notify(value: value)
      }
    }
    benchmark.expectDelivery(counter)
    observer.invalidate()
  }

  Benchmark("combine 2: floor") { benchmark in
    let counter = Counter()
    let downstream: (Int, Int) -> Void = { counter.total &+= $0 &+ $1 }
    // The latest value of each side, as a hand-written combineLatest keeps them.
    var latest: (Int?, Int?) = (nil, nil)
    let first: [(Int) -> Void] = identity([
      { value in
        latest.0 = value
        if let other = latest.1 { downstream(value, other) }
      }
    ])
    let second: [(Int) -> Void] = identity([
      { other in
        latest.1 = other
        if let value = latest.0 { downstream(value, other) }
      }
    ])
    for handler in first { handler(0) }
    for handler in second { handler(0) }
    benchmark.measure(operations: pairs * 2) {
      for value in 0..<pairs {
        for handler in first { handler(value) }
        for handler in second { handler(value) }
      }
    }
    benchmark.expectDelivery(counter)
  }
}
