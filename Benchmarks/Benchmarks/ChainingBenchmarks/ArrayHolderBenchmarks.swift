import Benchmark
import Chaining

/// Appends to an array holder with one observer attached: the cost of a
/// growing list that a view follows, per append, against a plain array and
/// a closure call per append. OpenCombine has no observable array.
func arrayHolderBenchmarks() {
  let appends = Suite.sends

  Benchmark("ArrayHolder append: chaining") { benchmark in
    let holder = ArrayHolder<Int>()
    let counter = Counter()
    let observer = holder.chain().do { event in
      if case .inserted(_, let element) = event { counter.total &+= element }
    }.end()
    benchmark.measure(operations: appends) {
      for value in 0..<appends { holder.append(value) }
    }
    benchmark.expectDelivery(counter)
    observer.invalidate()
  }

  Benchmark("ArrayHolder append: floor") { benchmark in
    let counter = Counter()
    var array: [Int] = []
    let handlers: [(Int, Int) -> Void] = identity([{ _, element in counter.total &+= element }])
    benchmark.measure(operations: appends) {
      for value in 0..<appends {
        array.append(value)
        for handler in handlers { handler(array.count - 1, value) }
      }
    }
    benchmark.expectDelivery(counter)
    blackHole(array)
  }
}
