import Benchmark

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = .init(
    metrics: [.wallClock, .instructions, .mallocCountTotal],
    maxDuration: .seconds(2),
    maxIterations: 1_000
  )
  arrayHolderBenchmarks()
}
