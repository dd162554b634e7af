// swift-tools-version: 6.2
// 6.2: the oldest toolchain that builds the package (`SendableMetatype`,
// isolated conformances and exit tests arrived in Swift 6.2), so that an
// older one says so instead of failing on the sources.
import PackageDescription

let package = Package(
  name: "swift-chaining",
  // The oldest systems current Xcode builds for. The Clock-based steps and
  // `TestClock` need iOS 16 / macOS 13, the Observation features iOS 17 /
  // macOS 14: each declaration says so with `@available`, which
  // `.ci/apple/check` checks.
  platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
  products: [
    .library(name: "Chaining", targets: ["Chaining"]),
    // Test support for code that uses Chaining: `TestClock`.
    .library(name: "ChainingTesting", targets: ["ChainingTesting"]),
  ],
  targets: [
    .target(name: "Chaining", dependencies: ["_ChainingThreadContext"]),
    .target(name: "ChainingTesting", dependencies: ["Chaining"]),
    // Not API: a C11 thread-local slot, the two sides of an asymmetric
    // fence (membarrier on Linux), the runtime's non-trapping isolation
    // check, and the thread id and queue label that `log` writes, which
    // Swift cannot declare or call.
    .target(
      name: "_ChainingThreadContext",
      // `dlsym`, for the runtime's isolation check: in the C library since
      // glibc 2.34, in libdl before.
      linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux, .android]))]
    ),
    // The demo app: its model and console view live in a library so that a
    // test can check the output; the executable only prints it.
    .target(name: "ChainingDemoKit", dependencies: ["Chaining"]),
    .executableTarget(name: "ChainingDemo", dependencies: ["ChainingDemoKit"]),
    .testTarget(name: "ChainingTests", dependencies: ["Chaining", "ChainingTesting"]),
    // A separate module that imports Chaining the way a client does, to check
    // that `Chaining.Sendable` and `Swift.Sendable` can be used side by side.
    .testTarget(name: "ChainingClientTests", dependencies: ["Chaining"]),
    // The patterns the README and the threading guide teach, compiled as a
    // client module in Swift 6 mode; CI builds it with warnings as errors.
    .testTarget(name: "ChainingPatternsTests", dependencies: ["Chaining"]),
    // The README's and Patterns.md's examples, and an app-declared
    // `AsyncSequence`, built with the settings of a new app target in
    // Xcode 26, and run.
    .testTarget(
      name: "ChainingAppTemplateTests",
      dependencies: ["Chaining"],
      swiftSettings: [
        .defaultIsolation(MainActor.self),
        .enableUpcomingFeature("NonisolatedNonsendingByDefault"),
        .enableUpcomingFeature("InferIsolatedConformances"),
      ]
    ),
    .testTarget(name: "ChainingDemoTests", dependencies: ["ChainingDemoKit"]),
    // Code written with SwiftChaining 0.5.36's names (deprecated here),
    // compiled as a client module, and what it does.
    .testTarget(name: "ChainingCompatibilityTests", dependencies: ["Chaining"]),
  ],
  swiftLanguageModes: [.v6]
)
