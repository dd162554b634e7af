// swift-tools-version: 6.1
// The benchmarks live in a package of their own, so that the library keeps
// no dependencies. Run them with `swift package benchmark` from this folder,
// or `./compare` for the summary table.
import Foundation
import PackageDescription

// A path dependency is identified by its folder's name, which depends on
// where the repository was cloned; name it from this file's location.
let rootIdentity = URL(fileURLWithPath: #filePath)
  .deletingLastPathComponent()
  .deletingLastPathComponent()
  .lastPathComponent
  .lowercased()

let package = Package(
  name: "ChainingBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(path: ".."),
    .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
  ],
  targets: [
    .executableTarget(
      name: "ChainingBenchmarks",
      dependencies: [
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "Chaining", package: rootIdentity),
        .product(name: "OpenCombine", package: "OpenCombine"),
      ],
      path: "Benchmarks/ChainingBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    ),
    // Instructions per item at three sizes, under callgrind: `./count-scaling`.
    // Not in a folder whose parent is named `Benchmarks`: the benchmark
    // plugin runs every executable found there as a benchmark.
    .executableTarget(
      name: "ScalingCounts",
      dependencies: [.product(name: "Chaining", package: rootIdentity)],
      path: "Tools/ScalingCounts"
    ),
  ],
  swiftLanguageModes: [.v6]
)
