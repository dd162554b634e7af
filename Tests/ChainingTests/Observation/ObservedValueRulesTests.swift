import Chaining
import Dispatch
import Observation
import Testing

/// The delivery rules of Observation.md that other suites do not check, and
/// the first read of issue #35.
@Suite struct ObservedValueRulesTests {
  let queue = DispatchQueue(label: "ObservedValueRulesTests")
  let onQueue = DispatchSpecificKey<Bool>()

  init() {
    queue.setSpecific(key: onQueue, value: true)
  }

  /// "Where the closure runs": on the queue, the first time too when the
  /// source is made on another thread, so that no write of the queue is
  /// in progress while it reads.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func theClosureRunsOnTheQueueFromTheFirstRead() {
    let profile = Profile()
    let places = Recorder<Bool>()
    let key = onQueue
    let name = ObservedValue(on: queue) { () -> String in
      places.append(DispatchQueue.getSpecific(key: key) == true)
      return profile.first
    }
    // Two reads under tracking, both on the queue.
    #expect(places.history == [true, true])
    queue.sync { profile.first = "Bea" }
    queue.sync {}
    #expect(places.history == [true, true, true, true])
    #expect(name.fetchedValue() == "Bea")
  }

  /// Made in a block of its queue, the source reads there, at once.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func madeOnItsQueueItReadsThere() {
    let profile = Profile()
    let name = queue.sync { ObservedValue(of: profile, on: queue) { $0.first } }
    #expect(name.fetchedValue() == "Ann")
    queue.sync { profile.first = "Bea" }
    queue.sync {}
    #expect(name.fetchedValue() == "Bea")
  }

  /// "Where values arrive": a change's value reaches the chain on the
  /// queue; `sync()`'s on the calling thread.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func valuesArriveOnTheQueueAndSyncOnTheCaller() {
    let profile = Profile()
    let name = ObservedValue(of: profile, on: queue) { $0.first }
    let places = Recorder<Bool>()
    let key = onQueue
    let observer = name.chain().do { _ in places.append(DispatchQueue.getSpecific(key: key) == true) }.sync()
    #expect(places.history == [false])
    queue.sync { profile.first = "Bea" }
    queue.sync {}
    #expect(places.history == [false, true])
    observer.invalidate()
  }

  /// "`sync()`": a read still queued when the chain syncs sends the newer
  /// value after the synced one, and nothing older follows.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aReadQueuedAtSyncSendsTheNewerValueAfterIt() {
    let profile = Profile()
    let name = ObservedValue(of: profile, on: queue) { $0.first }
    let received = Recorder<String>()
    let held = DispatchSemaphore(value: 0)
    queue.async { held.wait() }
    queue.async { profile.first = "Bea" }
    let observer = name.chain().do { received.append($0) }.sync()
    held.signal()
    queue.sync {}
    queue.sync {}
    #expect(received.history == ["Ann", "Bea"])
    observer.invalidate()
  }

  /// Issue #35: a source made while its queue is in the middle of a write
  /// (after the write's `willSet`, before its store) reads the new value.
  /// Its first read ran on the calling thread: it read the old value, the
  /// write's `willSet` had told no tracking, and the write was missed for
  /// good (Verification/ReadLoop.pml's MUTANT_OLD_FIRST). Now it reads on
  /// the queue, after the write. The write waits for the source's read to
  /// let it go, or for a second: the first read of the old code lets it go
  /// at once; the new one runs only once the write is done.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aSourceMadeDuringAWriteOfItsQueueReadsTheWrite() {
    let model = PausedModel("A")
    let paused = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    queue.async { model.write("B", paused: paused, release: release) }
    paused.wait()
    let value = ObservedValue(of: model, on: queue) { model -> String in
      defer { release.signal() }
      return model.value
    }
    queue.sync {}
    queue.sync {}
    #expect(value.fetchedValue() == "B")
  }

  /// Issue #35: models as Xcode 26's app template writes them (default
  /// main-actor isolation, no `Swift.Sendable`, no `@unchecked`) work with
  /// the main-actor forms.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func modelsOfAnAppWithDefaultMainActorIsolationBindOnTheMainActor() throws {
    let app = try CompileCheck.typecheck(
      """
      import Observation

      @Observable final class Settings {
        var name = "Ann"
        var volume = 3
      }

      final class SettingsScreen {
        let settings = Settings()
        let name = ValueHolder("")
        let volume = ValueHolder("")
        let pool = ObserverPool()

        func start() {
          name.bind(onMainActor: settings, \\.name).addTo(pool)
          volume.bind(
            onMainActor: settings, \\.volume,
            forward: { String($0) },
            backward: { Int($0) ?? 0 }
          ).addTo(pool)
          ObservedValue(onMainActor: settings) { $0.name }
            .retain().chain()
            .do { print($0) }
            .sync()
            .addTo(pool)
        }
      }
      """,
      warningsAsErrors: true,
      flags: [
        "-default-isolation", "MainActor",
        "-enable-upcoming-feature", "NonisolatedNonsendingByDefault",
        "-enable-upcoming-feature", "InferIsolatedConformances",
      ]
    )
    #expect(app.succeeded, "\(app.diagnostics)")
  }
}

/// A model whose write can stop between its `willSet` (Observation's
/// notice) and its store.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
private final class PausedModel: Observable, @unchecked Swift.Sendable {
  // @unchecked: `stored` is written in `write`, on the tests' queue, and
  // read by the source's closure, on that queue too.
  private let registrar = ObservationRegistrar()
  private var stored: String

  init(_ value: String) {
    stored = value
  }

  var value: String {
    registrar.access(self, keyPath: \.value)
    return stored
  }

  /// Writes `value`, stopping after Observation's notice: signals
  /// `paused`, then waits for `release`, or for a second.
  func write(_ value: String, paused: DispatchSemaphore, release: DispatchSemaphore) {
    registrar.withMutation(of: self, keyPath: \.value) {
      paused.signal()
      _ = release.wait(timeout: .now() + 1)
      stored = value
    }
  }
}
