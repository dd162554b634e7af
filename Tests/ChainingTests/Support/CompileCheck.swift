import Foundation

/// Type-checks a snippet of client code against the freshly built `Chaining` module.
///
/// Used to prove that misuse does not compile, and that the documentation's
/// snippets do. The module is found next to the running test binary, where
/// SwiftPM puts it (`<build dir>/Modules`). Checks may run concurrently.
enum CompileCheck {
  /// The settings of a new app in Xcode 26: the main actor as default
  /// isolation, and the two upcoming features its template turns on.
  static let appTemplateFlags = [
    "-default-isolation", "MainActor",
    "-enable-upcoming-feature", "NonisolatedNonsendingByDefault",
    "-enable-upcoming-feature", "InferIsolatedConformances",
  ]

  struct Result {
    let succeeded: Bool
    let diagnostics: String
  }

  /// - Parameters:
  ///   - source: The client code, compiled as `main.swift` after `import Chaining`.
  ///   - warningsAsErrors: Whether a warning, such as a deprecation, fails the check.
  ///   - flags: More `swiftc` flags, such as an app's default isolation.
  static func typecheck(_ source: String, warningsAsErrors: Bool = false, flags: [String] = []) throws -> Result {
    try compile(source, stage: "-typecheck", warningsAsErrors: warningsAsErrors, flags: flags)
  }

  /// Like `typecheck(_:warningsAsErrors:flags:)`, and also runs the compiler's
  /// mandatory checks that come after type checking, such as the one that
  /// finds a noncopyable value used after it was consumed.
  static func checkOwnership(_ source: String) throws -> Result {
    try compile(source, stage: "-emit-sil", warningsAsErrors: false)
  }

  /// Compiles `source` up to `stage` (a `swiftc` mode flag) against this build.
  private static func compile(
    _ source: String,
    stage: String,
    warningsAsErrors: Bool,
    flags: [String] = []
  ) throws -> Result {
    let fileManager = FileManager.default
    let directory = fileManager.temporaryDirectory
      .appendingPathComponent("chaining-compile-check-\(UUID().uuidString)")
    try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? fileManager.removeItem(at: directory) }
    let file = directory.appendingPathComponent("main.swift")
    try ("import Chaining\n" + source).write(to: file, atomically: true, encoding: .utf8)

    let modules = try modulesDirectory()
    let buildDirectory = modules.deletingLastPathComponent()
    let threadContextMap = buildDirectory.appendingPathComponent("_ChainingThreadContext.build/module.modulemap")
    var arguments = [
      "swiftc", stage, "-o", "/dev/null", "-swift-version", "6",
      "-I", modules.path,
      // The module map SwiftPM wrote for the C module that `Chaining`
      // imports; a test build (`-enable-testing`) needs it even though the
      // import is internal.
      "-Xcc", "-fmodule-map-file=" + threadContextMap.path,
      // A Clang module cache shared by every check against this build: the
      // system modules that `Chaining` imports are built once instead of
      // once per check (about 1.2 s each).
      "-module-cache-path", buildDirectory.appendingPathComponent("CompileCheckModuleCache").path,
      file.path,
    ]
    if warningsAsErrors { arguments.append("-warnings-as-errors") }
    arguments += flags
    return try run(arguments)
  }

  /// Runs `arguments` (a command on the `PATH`, then its arguments) and
  /// returns whether it succeeded, with its standard output and error.
  static func run(_ arguments: [String]) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Result(succeeded: process.terminationStatus == 0, diagnostics: String(decoding: data, as: UTF8.self))
  }

  /// The `Modules` directory of the build that produced this test binary.
  static func modulesDirectory() throws -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent()
    for _ in 0..<4 {
      let candidate = directory.appendingPathComponent("Modules")
      if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("Chaining.swiftmodule").path) {
        return candidate
      }
      directory = directory.deletingLastPathComponent()
    }
    throw CocoaError(
      .fileNoSuchFile,
      userInfo: [NSFilePathErrorKey: "Modules/Chaining.swiftmodule near \(CommandLine.arguments[0])"]
    )
  }
}
