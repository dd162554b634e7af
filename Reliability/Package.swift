// swift-tools-version: 6.0
// The fuzzer and the soak run live in a package of their own: they are
// built with flags of their own (libFuzzer, release), never by `swift test`,
// and the library keeps no dependencies. See Documentation/Reliability.md.
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
  name: "ChainingReliability",
  platforms: [.macOS(.v15)],
  dependencies: [.package(path: "..")],
  targets: [
    // Built with `--sanitize=fuzzer` and `-DCHAINING_LIBFUZZER`, libFuzzer
    // drives it; built without, it replays the inputs given as arguments.
    .executableTarget(
      name: "ChainingFuzz",
      dependencies: [.product(name: "Chaining", package: rootIdentity)]
    ),
    .executableTarget(
      name: "ChainingSoak",
      dependencies: [.product(name: "Chaining", package: rootIdentity)]
    ),
  ],
  swiftLanguageModes: [.v6]
)
