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
      // Relative, in the check's own folder: so the command is the same
      // for every check of a stage and flags (`frontendCommand(for:in:)`).
      file.lastPathComponent,
    ]
    if warningsAsErrors { arguments.append("-warnings-as-errors") }
    arguments += flags
    return try run(frontendCommand(for: arguments, in: directory), in: directory)
  }

  /// The one frontend command that the driver runs for `arguments` (a
  /// `swiftc` command line whose paths are absolute but the source's),
  /// found once per command line with the driver's `-###`, which prints
  /// it, run in `directory`; the driver's command line itself when that
  /// is not one plain command. The driver's own start is most of a small
  /// check's time (ten checks of a three-line snippet: 3.4 s through the
  /// driver, 0.7 s straight to the frontend), and the documentation's
  /// snippets are 486 checks (73.5 -> 50.2 s one at a time). The
  /// diagnostics are the frontend's, as through the driver.
  private static func frontendCommand(for arguments: [String], in directory: URL) throws -> [String] {
    let key = arguments.joined(separator: "\u{0}")
    if let command = frontendCommands.withLock({ $0[key] }) { return command }
    let printed = try run(arguments + ["-###"], in: directory)
    let lines = printed.diagnostics.split(separator: "\n")
    // Unquoted words only: a line with quotes or escapes would need a
    // shell's parsing, and the driver then runs the check itself.
    var command = arguments
    if printed.succeeded, lines.count == 1, !lines[0].contains(where: { "\"'\\".contains($0) }) {
      let words = lines[0].split(separator: " ").map(String.init)
      if words.count > 2, words[0].hasPrefix("/"), words[1] == "-frontend" { command = words }
    }
    frontendCommands.withLock { $0[key] = command }
    return command
  }

  /// `frontendCommand(for:in:)`'s commands, by command line.
  private static let frontendCommands = LockedDictionary()

  /// A dictionary under a lock: checks run at the same time.
  private final class LockedDictionary: @unchecked Sendable {
    private let lock = NSLock()
    private var commands: [String: [String]] = [:]

    func withLock<Result>(_ body: (inout [String: [String]]) -> Result) -> Result {
      lock.withLock { body(&commands) }
    }
  }

  /// Runs `arguments` (a command on the `PATH` or an absolute path, then
  /// its arguments) in `directory`, or in this process's, and returns
  /// whether it succeeded, with its standard output and error.
  static func run(_ arguments: [String], in directory: URL? = nil) throws -> Result {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
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
