import Benchmark
import Foundation

// One file per subject; each registers the library's benchmark beside the
// hand-written floor and, where one exists, the OpenCombine equivalent.
// Names are "<subject>: chaining", "<subject>: floor" and
// "<subject>: opencombine", which is how `./compare` pairs them.
let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = Suite.timing()
  fanOutBenchmarks()
  chainDepthBenchmarks()
  syncBenchmarks()
  mergeCombineBenchmarks()
  glitchFreeBenchmarks()
  cellxBenchmarks()
  kairoBenchmarks()
  subscribeInvalidateBenchmarks()
  teardownBenchmarks()
  arrayHolderBenchmarks()
  arrayViewBenchmarks()
  memoryBenchmarks()
  observationBenchmarks()
  isolationBenchmarks()
  timeBenchmarks()
  existentialBenchmarks()
  computedBenchmarks()
}

// MARK: - Suite

/// Settings shared by every subject.
///
/// Every benchmark builds what it needs, calls `startMeasurement()`, does a
/// known number of operations, calls `stopMeasurement()`, then reports that
/// number as the ``operations`` metric. Setup and release are therefore not
/// measured, and `./compare` divides each median by the operations to get a
/// cost per delivered value, per operation or per observer.
///
/// Set `CHAINING_BENCHMARK_SMOKE` to run everything once with small sizes,
/// as CI does; the numbers of such a run mean nothing.
enum Suite {
  /// Whether `CHAINING_BENCHMARK_SMOKE` is set.
  static let isSmoke = ProcessInfo.processInfo.environment["CHAINING_BENCHMARK_SMOKE"] != nil

  /// The number of operations one iteration measured: values delivered,
  /// subscriptions made, observers invalidated or created.
  static let operations = BenchmarkMetric.custom("operations", polarity: .prefersLarger, useScalingFactor: false)

  /// The full size, or `smoke` in smoke mode.
  static func size(_ full: Int, smoke: Int) -> Int {
    isSmoke ? smoke : full
  }

  /// Sends per iteration for the delivery subjects.
  static let sends = size(10_000, smoke: 100)

  /// The configuration of the benchmarks that measure time.
  static func timing() -> Benchmark.Configuration {
    configuration(metrics: [.wallClock, .instructions, .mallocCountTotal])
  }

  /// The configuration of the benchmarks that measure memory.
  static func memory() -> Benchmark.Configuration {
    configuration(metrics: [.memoryLeakedBytes, .mallocFreeDelta, .mallocBytesCount, .mallocCountTotal])
  }

  /// A configuration reporting `metrics` and ``operations`` as raw numbers
  /// (nanoseconds, bytes, counts), so that exported medians keep their
  /// precision.
  private static func configuration(metrics: [BenchmarkMetric]) -> Benchmark.Configuration {
    let all = metrics + [operations]
    return .init(
      metrics: all,
      timeUnits: .nanoseconds,
      units: Dictionary(uniqueKeysWithValues: all.map { ($0, BenchmarkUnits.count) }),
      warmupIterations: isSmoke ? 0 : 3,
      scalingFactor: .one,
      maxDuration: isSmoke ? .milliseconds(1) : .seconds(1),
      maxIterations: isSmoke ? 1 : 1_000
    )
  }
}

/// Where every handler in the suite adds the values it receives, so that
/// Chaining, the floor and OpenCombine do the same work per value.
///
/// Unchecked, because the run-time exclusivity check of a class property
/// would add a few nanoseconds to every handler and blur the floor.
final class Counter {
  @exclusivity(unchecked) var total = 0
}

extension Benchmark {
  /// Runs `work` between `startMeasurement()` and `stopMeasurement()` and
  /// reports `operations`.
  func measure(operations: Int, _ work: () -> Void) {
    startMeasurement()
    work()
    stopMeasurement()
    measurement(Suite.operations, operations)
  }
}

extension Benchmark {
  /// Fails the benchmark when no value reached the handlers, so that a
  /// pipeline that delivers nothing cannot pass for a fast one.
  ///
  /// The smoke run stops the process, because package-benchmark reports a
  /// benchmark's `error(_:)` without failing the run, and CI must fail.
  func expectDelivery(_ counter: Counter) {
    Benchmark.blackHole(counter.total)
    guard counter.total == 0 else { return }
    let message = "\(name): no value reached the handlers"
    if Suite.isSmoke { fatalError(message) }
    error(message)
  }

  /// Fails the benchmark unless what the handlers added to `counter` is
  /// the sum of `0..<count`, as when each of those values reaches them
  /// once: a source that may coalesce values must not pass for a fast one
  /// by delivering fewer.
  func expectDelivery(_ counter: Counter, everyValueBelow count: Int) {
    expectDelivery(counter)
    let expected = count * (count - 1) / 2
    guard counter.total != expected else { return }
    let message = "\(name): the handlers received a total of \(counter.total), not \(expected)"
    if Suite.isSmoke { fatalError(message) }
    error(message)
  }
}
