import Chaining
import Foundation
import Testing

/// The messages that Documentation/Troubleshooting.md explains: each failing
/// snippet must still draw its message, word for word, and each fix must
/// compile, so that the page cannot drift from the compiler.
@Suite struct TroubleshootingTests {
  // MARK: - Two Sendables

  @Test func structDeclaredSendableNeedsSwiftSendable() throws {
    let failing = try CompileCheck.typecheck(
      """
      struct Reading: Sendable {
        let celsius: Double
      }
      """
    )
    #expect(!failing.succeeded)
    #expect(
      failing.diagnostics.contains("error: non-class type 'Reading' cannot conform to class protocol 'Sendable'"),
      "\(failing.diagnostics)"
    )
    let fixed = try CompileCheck.typecheck(
      """
      struct Reading: Swift.Sendable {
        let celsius: Double
      }
      """,
      warningsAsErrors: true
    )
    #expect(fixed.succeeded, "\(fixed.diagnostics)")
  }

  @Test func genericSendableConstraintNeedsSwiftSendable() throws {
    let failing = try CompileCheck.typecheck(
      """
      func store<Value: Sendable>(_ value: Value) -> Task<Value, Never> {
        Task { value }
      }
      let task = store(1)
      """
    )
    #expect(!failing.succeeded)
    #expect(
      failing.diagnostics.contains("error: global function 'store' requires that 'Int' conform to 'Sendable'"),
      "\(failing.diagnostics)"
    )
    let fixed = try CompileCheck.typecheck(
      """
      func store<Value: Swift.Sendable>(_ value: Value) -> Task<Value, Never> {
        Task { value }
      }
      let task = store(1)
      """,
      warningsAsErrors: true
    )
    #expect(fixed.succeeded, "\(fixed.diagnostics)")
  }

  // MARK: - A source without its queue

  @Test func aSourceWithoutItsQueueIsUnavailable() throws {
    let failing = try CompileCheck.typecheck(
      """
      import Observation

      @Observable final class Settings: @unchecked Swift.Sendable {
        var name = ""
      }

      let settings = Settings()
      let field = ValueHolder("")
      let name = ObservedValue(of: settings) { $0.name }
      let names = settings.chain(\\.name)
      let binding = field.bind(to: settings, \\.name)
      """
    )
    #expect(!failing.succeeded)
    #expect(
      failing.diagnostics.contains(
        "error: 'init(of:_:)' is unavailable: pass the queue the model is written on, ObservedValue(of: model, on: queue) { ... } (the writer rule in Observation.md), or use ObservedValue(onMainActor:_:) for a @MainActor model"
      ),
      "\(failing.diagnostics)"
    )
    // `chain(_:)` and `bind(to:_:)` say the same.
    let errors = failing.diagnostics.split(separator: "\n").filter {
      $0.contains(": error: ") && $0.contains("is unavailable: pass the queue the model is written on")
    }
    #expect(errors.count == 3, "\(failing.diagnostics)")
    let fixed = try CompileCheck.typecheck(
      """
      import Dispatch
      import Observation

      @Observable final class Settings: @unchecked Swift.Sendable {
        var name = ""
      }

      let settings = Settings()
      let settingsQueue = DispatchQueue(label: "settings")
      let name = ObservedValue(of: settings, on: settingsQueue) { $0.name }
      """,
      warningsAsErrors: true
    )
    #expect(fixed.succeeded, "\(fixed.diagnostics)")
  }

  // MARK: - An @Observable model

  @Test func plainObservableModelIsNotSendable() throws {
    let failing = try CompileCheck.typecheck(
      """
      import Dispatch
      import Observation

      @Observable final class Settings {
        var name = ""
      }

      let settings = Settings()
      let settingsQueue = DispatchQueue(label: "settings")
      let name = ObservedValue(of: settings, on: settingsQueue) { $0.name }
      """
    )
    #expect(!failing.succeeded)
    #expect(
      failing.diagnostics.contains("error: type 'Settings' does not conform to the 'Sendable' protocol"),
      "\(failing.diagnostics)"
    )
    let fixed = try CompileCheck.typecheck(
      """
      import Observation

      @MainActor @Observable final class Settings {
        var name = ""
      }

      @MainActor func showName(of settings: Settings) -> Observer {
        ObservedValue(onMainActor: settings) { $0.name }
          .retain().chain()
          .do { print($0) }
          .sync()
      }
      """,
      warningsAsErrors: true
    )
    #expect(fixed.succeeded, "\(fixed.diagnostics)")
  }

  // MARK: - A chain kept to finish later

  @Test func chainInAGlobalCannotBeFinished() throws {
    let failing = try CompileCheck.checkOwnership(
      """
      let counter = ValueHolder(1)
      let doubled = counter.chain().map { $0 * 2 }
      let observer = doubled.do { print($0) }.sync()
      """
    )
    #expect(!failing.succeeded)
    #expect(
      failing.diagnostics.contains("error: cannot consume noncopyable stored property 'doubled' that is global"),
      "\(failing.diagnostics)"
    )
    let fixed = try CompileCheck.checkOwnership(
      """
      let counter = ValueHolder(1)
      let observer = counter.chain().map { $0 * 2 }.do { print($0) }.sync()

      func bindDoubled(_ counter: ValueHolder<Int>) -> Observer {
        let doubled = counter.chain().map { $0 * 2 }
        return doubled.do { print($0) }.sync()
      }
      let other = bindDoubled(counter)
      """
    )
    #expect(fixed.succeeded, "\(fixed.diagnostics)")
  }

  @Test func chainCapturedByAnEscapingClosureCannotBeFinished() throws {
    let failing = try CompileCheck.checkOwnership(
      """
      final class Loader { var onLoad: (() -> Void)? }

      func bind(_ count: ValueHolder<Int>, when loader: Loader, in pool: ObserverPool) {
        let doubled = count.chain().map { $0 * 2 }
        loader.onLoad = {
          doubled.do { print($0) }.sync().addTo(pool)
        }
      }
      """
    )
    #expect(!failing.succeeded)
    #expect(
      failing.diagnostics.contains(
        "error: noncopyable 'doubled' cannot be consumed when captured by an escaping closure"
      ),
      "\(failing.diagnostics)"
    )
    let fixed = try CompileCheck.checkOwnership(
      """
      final class Loader { var onLoad: (() -> Void)? }

      func bind(_ count: ValueHolder<Int>, when loader: Loader, in pool: ObserverPool) {
        loader.onLoad = {
          count.chain().map { $0 * 2 }.do { print($0) }.sync().addTo(pool)
        }
      }
      """
    )
    #expect(fixed.succeeded, "\(fixed.diagnostics)")
  }

  @Test func chainInAClassPropertyCannotBeFinished() throws {
    let failing = try CompileCheck.checkOwnership(
      """
      final class Screen {
        let count = ValueHolder(1)
        let doubled: Chain<Int, ValueHolder<Int>>
        var observer: Observer?

        init() { doubled = count.chain().map { $0 * 2 } }

        func bind() {
          observer = doubled.do { print($0) }.sync()
        }
      }
      """
    )
    #expect(!failing.succeeded)
    #expect(
      failing.diagnostics.contains("error: cannot consume noncopyable stored property 'self.doubled' of a class"),
      "\(failing.diagnostics)"
    )
    let fixed = try CompileCheck.checkOwnership(
      """
      final class Screen {
        let count = ValueHolder(1)
        var observer: Observer?

        func bind() {
          observer = count.chain().map { $0 * 2 }.do { print($0) }.sync()
        }
      }

      final class PreparedScreen {
        let count = ValueHolder(1)
        var pending: Chain<Int, ValueHolder<Int>>?
        var observer: Observer?

        init() { pending = count.chain().map { $0 * 2 } }

        func bind() {
          if let doubled = pending.take() {
            observer = doubled.do { print($0) }.sync()
          }
        }
      }
      """
    )
    #expect(fixed.succeeded, "\(fixed.diagnostics)")
  }

  @Test func chainReturnedAsSomeNoncopyableHasNoSteps() throws {
    let failing = try CompileCheck.typecheck(
      """
      func doubled(_ count: ValueHolder<Int>) -> some ~Copyable {
        count.chain().map { $0 * 2 }
      }
      let count = ValueHolder(1)
      let observer = doubled(count).do { print($0) }.sync()
      """
    )
    #expect(!failing.succeeded)
    #expect(
      failing.diagnostics.contains("error: value of type 'some ~Copyable' has no member 'do'"),
      "\(failing.diagnostics)"
    )
    let fixed = try CompileCheck.checkOwnership(
      """
      func doubled(_ count: ValueHolder<Int>) -> Chain<Int, ValueHolder<Int>> {
        count.chain().map { $0 * 2 }
      }

      func bindDoubled(_ count: ValueHolder<Int>, print label: String) -> Observer {
        count.chain().map { $0 * 2 }.do { print(label, $0) }.sync()
      }

      func withDoubled(
        _ count: ValueHolder<Int>,
        finish: (consuming Chain<Int, ValueHolder<Int>>) -> Observer
      ) -> Observer {
        finish(count.chain().map { $0 * 2 })
      }

      let count = ValueHolder(1)
      let first = doubled(count).do { print($0) }.sync()
      let second = bindDoubled(count, print: "doubled")
      let third = withDoubled(count) { $0.do { print($0) }.sync() }
      """
    )
    #expect(fixed.succeeded, "\(fixed.diagnostics)")
  }

  @Test func chainParameterMustBeConsuming() throws {
    let failing = try CompileCheck.typecheck(
      """
      func bind(_ chain: Chain<Int, ValueHolder<Int>>) -> Observer {
        chain.do { print($0) }.end()
      }
      """
    )
    #expect(!failing.succeeded)
    #expect(
      failing.diagnostics.contains(
        "error: parameter of noncopyable type 'Chain<Int, ValueHolder<Int>>' must specify ownership"
      ),
      "\(failing.diagnostics)"
    )
    let fixed = try CompileCheck.checkOwnership(
      """
      func bind(_ chain: consuming Chain<Int, ValueHolder<Int>>) -> Observer {
        chain.do { print($0) }.end()
      }
      let observer = bind(ValueHolder(1).chain())
      """
    )
    #expect(fixed.succeeded, "\(fixed.diagnostics)")
  }

  // MARK: - The unused observer

  @Test func observerThatIsNeverReadDrawsAWarning() throws {
    let failing = try CompileCheck.typecheck(
      """
      func bind(_ count: ValueHolder<Int>) {
        let observer = count.chain().do { print($0) }.sync()
      }
      """
    )
    #expect(
      failing.diagnostics.contains(
        "warning: initialization of immutable value 'observer' was never used; "
          + "consider replacing with assignment to '_' or removing it"
      ),
      "\(failing.diagnostics)"
    )
    let fixed = try CompileCheck.typecheck(
      """
      final class Screen {
        let count = ValueHolder(1)
        let pool = ObserverPool()
        private var observer: Observer?

        func bind() {
          count.chain().do { print($0) }.sync().addTo(pool)
          observer = count.chain().do { print($0) }.sync()
        }
      }
      """,
      warningsAsErrors: true
    )
    #expect(fixed.succeeded, "\(fixed.diagnostics)")
  }

  @Test func assigningTheObserverToUnderscoreEndsTheBindingAtOnce() {
    let count = ValueHolder(1)
    let received = Recorder<Int>()
    _ = count.chain().do { received.append($0) }.sync()
    count.value = 2
    #expect(received.history == [1])
  }

  // MARK: - Installation

  @Test func productOfAPathDependencyIsNamedByTheFolder() throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("chaining-troubleshooting-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    // A path dependency is named after its folder, not the package's name.
    let checkout = folder.appendingPathComponent("Chaining")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(at: checkout, withDestinationURL: MarkdownSnippet.repositoryRoot)

    let failing = try describeApp(in: folder, package: "swift-chaining")
    #expect(!failing.succeeded)
    #expect(
      failing.output.contains(
        "error: 'app': unknown package 'swift-chaining' in dependencies of target 'App'; "
          + "valid packages are: 'Chaining' (at '\(checkout.path)')"
      ),
      "\(failing.output)"
    )
    let fixed = try describeApp(in: folder, package: "Chaining")
    #expect(fixed.succeeded, "\(fixed.output)")
  }

  /// Writes an app package next to `Chaining` in `folder`, depending on it by
  /// path and naming it `package` in its target, and loads its package graph.
  private func describeApp(in folder: URL, package: String) throws -> (succeeded: Bool, output: String) {
    let app = folder.appendingPathComponent("App")
    let sources = app.appendingPathComponent("Sources/App")
    try FileManager.default.createDirectory(at: sources, withIntermediateDirectories: true)
    try "import Chaining\n".write(to: sources.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
    try """
    // swift-tools-version: 6.0
    import PackageDescription

    let package = Package(
      name: "App",
      platforms: [.macOS(.v12), .iOS(.v15), .tvOS(.v15), .watchOS(.v8), .visionOS(.v1)],
      dependencies: [
        .package(path: "../Chaining")
      ],
      targets: [
        .executableTarget(name: "App", dependencies: [.product(name: "Chaining", package: "\(package)")])
      ]
    )

    """.write(to: app.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)

    let result = try CompileCheck.run(["swift", "package", "--package-path", app.path, "describe"])
    return (result.succeeded, result.diagnostics)
  }
}
