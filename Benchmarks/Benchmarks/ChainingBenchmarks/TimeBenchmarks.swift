import Benchmark
import Chaining

/// What a value costs as it reaches a time step on a system clock: the
/// interval is an hour, so nothing is due while the benchmark runs, and
/// each value pays its arrival: a lock and a reading of the clock. The
/// first value of each iteration starts the timer's task (and `throttle`
/// sends it at once); `invalidate()` cancels the task.
func timeBenchmarks() {
  let sends = Suite.sends

  Benchmark("debounce: chaining") { benchmark in
    let holder = ValueHolder(-1)
    let counter = Counter()
    let observer = holder.chain().debounce(for: .seconds(3600)).do { counter.total &+= $0 }.end()
    benchmark.measure(operations: sends) {
      for value in 0..<sends { holder.value = value }
    }
    observer.invalidate()
    precondition(counter.total == 0, "debounce: a value was sent before its hour")
  }

  Benchmark("throttle: chaining") { benchmark in
    let holder = ValueHolder(-1)
    let counter = Counter()
    let observer = holder.chain().throttle(for: .seconds(3600)).do { _ in counter.total &+= 1 }.end()
    benchmark.measure(operations: sends) {
      for value in 0..<sends { holder.value = value }
    }
    observer.invalidate()
    precondition(counter.total == 1, "throttle: \(counter.total) values sent, expected the first only")
  }
}
