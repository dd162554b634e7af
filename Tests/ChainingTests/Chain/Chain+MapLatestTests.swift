import Chaining
import ChainingTesting
import Testing

/// An API whose calls take one second of a test clock.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
private struct SlowAPI: Swift.Sendable {
  let clock: TestClock

  /// Whether `name` is free: names of four letters or more are.
  func isAvailable(_ name: String) async -> Bool {
    try? await clock.sleep(for: .seconds(1))
    return name.count >= 4
  }

  /// Signs up `name`, or fails for an empty one.
  func signUp(_ name: String) async throws -> String {
    try await clock.sleep(for: .seconds(1))
    if name.isEmpty { throw SignUpError.emptyName }
    return "welcome \(name)"
  }
}

private enum SignUpError: Error, Equatable {
  case emptyName
}

/// Signals its release: a test awaits the signal, and a hang (turned into a
/// failure by the time limit) means something still holds it.
private final class ReleaseSignal: Swift.Sendable {
  let released: @Sendable () -> Void
  init(_ released: @escaping @Sendable () -> Void) { self.released = released }
  deinit { released() }
}

/// The values a chain delivers, awaited one by one.
private struct Deliveries<Value: Swift.Sendable>: Swift.Sendable {
  let stream: AsyncStream<Value>
  let input: AsyncStream<Value>.Continuation

  init() {
    (stream, input) = AsyncStream.makeStream(of: Value.self)
  }
}

@Suite struct ChainMapLatestTests {
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func mapLatestDeliversOnlyTheLatestValuesAnswer() async {
    let clock = TestClock()
    let api = SlowAPI(clock: clock)
    let username = ValueHolder("ann")
    let answers = Deliveries<String>()
    let observer = username.chain()
      .mapLatest { name in "\(name): \(await api.isAvailable(name))" }
      .do { answers.input.yield($0) }
      .sync()
    await clock.waitForPending(1)  // the synced value's call
    username.value = "anna"  // cancels it: its sleep ends, its answer is dropped
    await clock.waitForPending(1)
    await clock.advance(by: .seconds(1))
    var delivered = answers.stream.makeAsyncIterator()
    #expect(await delivered.next() == "anna: true")
    username.value = "bo"
    await clock.waitForPending(1)
    await clock.advance(by: .seconds(1))
    #expect(await delivered.next() == "bo: false")
    observer.invalidate()
    answers.input.finish()
    #expect(await delivered.next() == nil)  // nothing else came: not "ann: false"
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func mapFirstDropsTheValuesThatArriveDuringARun() async {
    let clock = TestClock()
    let api = SlowAPI(clock: clock)
    let username = ValueHolder("chaining")
    let taps = Notifier<Void>()
    let signUps = Deliveries<String>()
    let observer = taps.chain()
      .withLatestFrom(username)
      .mapFirst { _, name in (try? await api.signUp(name)) ?? "failed" }
      .do { signUps.input.yield($0) }
      .end()
    taps.notify(value: ())
    await clock.waitForPending(1)
    taps.notify(value: ())  // a double tap: dropped while the first runs
    #expect(clock.pendingCount == 1)
    await clock.advance(by: .seconds(1))
    var delivered = signUps.stream.makeAsyncIterator()
    #expect(await delivered.next() == "welcome chaining")
    taps.notify(value: ())  // after the run: a new one
    await clock.waitForPending(1)
    await clock.advance(by: .seconds(1))
    #expect(await delivered.next() == "welcome chaining")
    observer.invalidate()
    signUps.input.finish()
    #expect(await delivered.next() == nil)
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func aThrowingRunDeliversItsErrorAndTheChainGoesOn() async throws {
    let clock = TestClock()
    let api = SlowAPI(clock: clock)
    let names = Notifier<String>()
    let results = Deliveries<Result<String, any Error>>()
    let observer = names.chain()
      .mapLatest { try await api.signUp($0) }
      .do { results.input.yield($0) }
      .end()
    var delivered = results.stream.makeAsyncIterator()
    names.notify(value: "")
    await clock.waitForPending(1)
    await clock.advance(by: .seconds(1))
    let failure = await delivered.next()
    #expect(throws: SignUpError.emptyName) { try failure?.get() }
    names.notify(value: "ann")
    await clock.waitForPending(1)
    await clock.advance(by: .seconds(1))
    #expect(try await delivered.next()?.get() == "welcome ann")
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func invalidateCancelsTheRunAndReleasesEverything() async {
    let clock = TestClock()
    let names = Notifier<String>()
    let delivered = Recorder<String>()
    let (released, signal) = AsyncStream.makeStream(of: Void.self)
    let observer: Observer
    do {
      let captured = ReleaseSignal { signal.yield() }
      observer = names.chain()
        .mapLatest { name in
          do {
            try await clock.sleep(for: .seconds(1))
          } catch {
            return "cancelled \(name)"
          }
          return withExtendedLifetime(captured) { "answered \(name)" }
        }
        .do { delivered.append($0) }
        .end()
    }
    names.notify(value: "ann")
    await clock.waitForPending(1)
    observer.invalidate()  // cancels the sleep: its answer is never delivered
    #expect(clock.pendingCount == 0)
    var releases = released.makeAsyncIterator()
    await releases.next()  // the run, the step and the closure are freed
    await clock.advance(by: .seconds(2))
    #expect(delivered.history == [])
  }

  @MainActor
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func resultsComeOnTheActorTheStepWasWrittenOn() async {
    let clock = TestClock()
    let api = SlowAPI(clock: clock)
    let username = ValueHolder("anna")
    var onMain: [Bool] = []
    let answers = Deliveries<Bool>()
    let observer = username.chain()
      .mapLatest { await api.isAvailable($0) }
      .do { available in
        onMain.append(isOnMainQueue())
        answers.input.yield(available)
      }
      .sync()
    await clock.waitForPending(1)
    await clock.advance(by: .seconds(1))
    var delivered = answers.stream.makeAsyncIterator()
    #expect(await delivered.next() == true)
    #expect(onMain == [true])
    observer.invalidate()
  }
}
