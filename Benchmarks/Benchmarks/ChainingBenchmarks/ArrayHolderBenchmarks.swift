import Benchmark
import Chaining

/// 100_000 appends with one observer attached: the cost of a growing list
/// that a view follows, against a plain array and a closure call per append.
func arrayHolderBenchmarks() {
  let appends = 100_000

  Benchmark("ArrayHolder append x100_000, 1 observer") { benchmark in
    for _ in benchmark.scaledIterations {
      let holder = ArrayHolder<Int>()
      var inserted = 0
      let observer = holder.chain().do { event in
        if case .inserted = event { inserted += 1 }
      }.end()
      for value in 0..<appends { holder.append(value) }
      blackHole(inserted)
      observer.invalidate()
    }
  }

  Benchmark("floor: [Int].append x100_000 + closure call") { benchmark in
    for _ in benchmark.scaledIterations {
      var array: [Int] = []
      var inserted = 0
      let handler: (Int, Int) -> Void = { _, _ in inserted += 1 }
      for value in 0..<appends {
        array.append(value)
        handler(array.count - 1, value)
      }
      blackHole(inserted)
      blackHole(array)
    }
  }
}
