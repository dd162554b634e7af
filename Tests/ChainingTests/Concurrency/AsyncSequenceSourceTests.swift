import Dispatch
import Foundation
import Testing

@testable import Chaining

// Every wait below is on an event: the source's completion, a value taken
// from a chain's `values`, an `AsyncStream`'s termination, or the end of the
// source's task. Nothing sleeps.

/// An error a test sequence throws.
private enum Broken: Error, Equatable {
  case broken
}

/// A `Swift.Sendable` element whose release a weak reference can watch.
private final class Item: Swift.Sendable {
  let number: Int
  init(_ number: Int) { self.number = number }
}

/// A sequence that counts how often it is iterated, and holds a token.
private struct CountingSequence: AsyncSequence, Swift.Sendable {
  let base: AsyncStream<Int>
  let iterations: Recorder<Void>
  let token: Token

  func makeAsyncIterator() -> AsyncStream<Int>.Iterator {
    iterations.append(())
    return base.makeAsyncIterator()
  }
}

/// `completion` as text, `nil` as "running": the enum holds `any Error`,
/// so it is not `Equatable`.
private func text<Element: Swift.Sendable>(_ completion: AsyncSequenceSource<Element>.Completion?) -> String {
  completion.map { String(describing: $0) } ?? "running"
}

/// The terminations of `continuation`'s stream, to wait for one.
private func terminations(of continuation: AsyncStream<Int>.Continuation) -> AsyncStream<String> {
  let (terminations, terminated) = AsyncStream.makeStream(of: String.self)
  continuation.onTermination = { termination in
    terminated.yield("\(termination)")
    terminated.finish()
  }
  return terminations
}

/// The first value of `stream`.
private func first<Value>(_ stream: AsyncStream<Value>) async -> Value? {
  var iterator = stream.makeAsyncIterator()
  return await iterator.next()
}

// A mistake in the source can leave a wait unanswered: each test's time
// limit makes that a failure. (On each test, not the suite: the limit is a
// `Duration`, which needs macOS 13, and a suite cannot carry `@available`.)
@Suite struct AsyncSequenceSourceTests {
  // MARK: - Elements

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1)))
  @MainActor func aSequenceWhoseConformanceIsIsolatedToTheMainActorIsIteratedThere() async {
    let received = Recorder<Int>()
    let onMain = Recorder<Bool>()
    let source = AsyncSequenceSource(MainActorNumbers(count: 3) { onMain.append(isOnMainActor) })
    let observer = source.chain().do { received.append($0) }.end()
    #expect(text(await source.waitForCompletion()) == "finished")
    #expect(received.history == [1, 2, 3])
    // `makeAsyncIterator()`, isolated by the conformance, ran on the main
    // actor; the iterator's `next()` is not isolated.
    #expect(onMain.history == [true])
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1)), arguments: [false, true])
  func anAppDeclaredSequenceCompilesWithAndWithoutTheAppTemplateSettings(appTemplate: Bool) throws {
    // An app target with Xcode 26's settings isolates `Numbers`' conformance
    // to the main actor; without them it is not isolated. Either way the
    // source takes it, and a stream too.
    let result = try CompileCheck.typecheck(
      """
      struct Numbers: AsyncSequence {
        typealias Element = Int
        struct AsyncIterator: AsyncIteratorProtocol {
          var next = 0
          mutating func next() async -> Int? {
            next += 1
            return next <= 3 ? next : nil
          }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
      }

      @MainActor func start() -> (AsyncSequenceSource<Int>, AsyncSequenceSource<Int>) {
        let (stream, _) = AsyncStream.makeStream(of: Int.self)
        return (AsyncSequenceSource(Numbers()), AsyncSequenceSource(stream))
      }

      func startAnywhere() -> AsyncSequenceSource<Int> {
        let (stream, _) = AsyncStream.makeStream(of: Int.self)
        return AsyncSequenceSource(stream)
      }
      """,
      warningsAsErrors: true,
      flags: appTemplate ? CompileCheck.appTemplateFlags : []
    )
    let compiles = result.succeeded
    #expect(compiles, "\(result.diagnostics)")
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func elementsReachChainsInSequenceOrder() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let received = Recorder<Int>()
    let observer = source.chain().do { received.append($0) }.end()
    for value in 1...100 { input.yield(value) }
    input.finish()
    #expect(text(await source.waitForCompletion()) == "finished")
    #expect(received.history == Array(1...100))
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func theFirstChainSeesElementsProducedBeforeIt() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    // Iteration has not started: the stream buffers these.
    input.yield(1)
    input.yield(2)
    #expect(source.latestValue == nil)
    let received = Recorder<Int>()
    let observer = source.chain().do { received.append($0) }.sync()
    input.yield(3)
    input.finish()
    _ = await source.waitForCompletion()
    #expect(received.history == [1, 2, 3])
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func equalElementsAreEachSent() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let received = Recorder<Int>()
    let observer = source.chain().do { received.append($0) }.end()
    for value in [5, 5, 5] { input.yield(value) }
    input.finish()
    _ = await source.waitForCompletion()
    #expect(received.history == [5, 5, 5])
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func stepsTransformTheElements() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let received = Recorder<String>()
    let observer = source.chain().filter { $0 % 2 == 0 }.map { "#\($0)" }.do { received.append($0) }.end()
    for value in 1...6 { input.yield(value) }
    input.finish()
    _ = await source.waitForCompletion()
    #expect(received.history == ["#2", "#4", "#6"])
    observer.invalidate()
  }

  // MARK: - sync versus end

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func syncBeforeTheFirstElementSendsNothing() {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let received = Recorder<Int>()
    let observer = source.chain().do { received.append($0) }.sync()
    #expect(received.history == [])
    #expect(source.latestValue == nil)
    #expect(!source.canFetch())
    observer.invalidate()
    input.finish()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func syncSendsTheLatestElementAndEndDoesNot() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    var delivered = source.chain().values.makeAsyncIterator()
    input.yield(1)
    input.yield(2)
    #expect(await delivered.next() == 1)
    #expect(await delivered.next() == 2)
    // 2 is stored before it is broadcast.
    #expect(source.latestValue == 2)
    #expect(source.canFetch())
    #expect(source.fetchedValue() == 2)
    let synced = Recorder<Int>()
    let ended = Recorder<Int>()
    let pool = ObserverPool()
    source.chain().do { synced.append($0) }.sync().addTo(pool)
    source.chain().do { ended.append($0) }.end().addTo(pool)
    #expect(synced.history == [2])
    #expect(ended.history == [])
    input.yield(3)
    #expect(await delivered.next() == 3)
    input.finish()
    _ = await source.waitForCompletion()
    #expect(synced.history == [2, 3])
    #expect(ended.history == [3])
    pool.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func syncAfterTheEndStillSendsTheLatestElement() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let first = source.chain().end()
    input.yield(7)
    input.yield(8)
    input.finish()
    _ = await source.waitForCompletion()
    first.invalidate()
    let received = Recorder<Int>()
    let observer = source.chain().do { received.append($0) }.sync()
    #expect(received.history == [8])
    observer.invalidate()
  }

  // MARK: - Completion

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func completionIsNilWhileRunningThenFinished() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    var delivered = source.chain().values.makeAsyncIterator()
    input.yield(1)
    #expect(await delivered.next() == 1)
    #expect(text(source.completion) == "running")
    #expect(!source.ended.canFetch())
    input.finish()
    #expect(text(await source.waitForCompletion()) == "finished")
    #expect(text(source.completion) == "finished")
    #expect(source.failure == nil)
    #expect(text(source.ended.fetchedValue()) == "finished")
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func endedSendsTheCompletionOnceAndSyncSendsItAfterwards() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let before = Recorder<String>()
    let pool = ObserverPool()
    source.ended.chain().do { before.append(String(describing: $0)) }.sync().addTo(pool)
    source.chain().end().addTo(pool)
    #expect(before.history == [])
    input.finish()
    _ = await source.waitForCompletion()
    source.cancel()  // after the end: changes nothing
    let after = Recorder<String>()
    source.ended.chain().do { after.append(String(describing: $0)) }.sync().addTo(pool)
    let afterEnd = Recorder<String>()
    source.ended.chain().do { afterEnd.append(String(describing: $0)) }.end().addTo(pool)
    #expect(before.history == ["finished"])
    #expect(after.history == ["finished"])
    #expect(afterEnd.history == [])
    #expect(text(source.completion) == "finished")
    pool.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func aThrownErrorEndsIterationAndIsReported() async {
    let (stream, input) = AsyncThrowingStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let received = Recorder<Int>()
    let ends = Recorder<String>()
    let pool = ObserverPool()
    source.chain().do { received.append($0) }.end().addTo(pool)
    source.ended.chain().do { ends.append(String(describing: $0)) }.end().addTo(pool)
    input.yield(1)
    input.yield(2)
    input.finish(throwing: Broken.broken)
    let completion = await source.waitForCompletion()
    guard case .failure(let error) = completion else {
      Issue.record("expected a failure, got \(text(completion))")
      return
    }
    #expect(error as? Broken == .broken)
    #expect(source.failure as? Broken == .broken)
    #expect(received.history == [1, 2])
    #expect(ends.history.count == 1)
    #expect(ends.history.first?.hasPrefix("failure(") == true)
    #expect(source.latestValue == 2)
    pool.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func aSequenceThatThrowsMidwayStopsAtTheError() async {
    // A typed-throws sequence: its error ends the iteration, and nothing
    // after it is requested.
    let numbers = ThrowingRange(range: 1...10) { value throws(Broken) -> Int in
      if value == 4 { throw .broken }
      return value
    }
    let source = AsyncSequenceSource(numbers)
    let received = Recorder<Int>()
    let observer = source.chain().do { received.append($0) }.end()
    _ = await source.waitForCompletion()
    #expect(received.history == [1, 2, 3])
    #expect(source.failure as? Broken == .broken)
    #expect(numbers.requested.history == [1, 2, 3, 4])
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func waitForCompletionReturnsNilWhenTheWaitingTaskIsCancelled() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let observer = source.chain().end()
    let waiting = Task { await source.waitForCompletion() }
    // The wait is a chain of `ended`: once it is subscribed, cancel it.
    await source.ended.waitForObservers()
    waiting.cancel()
    #expect(await waiting.value == nil)
    #expect(text(source.completion) == "running")
    input.finish()
    #expect(text(await source.waitForCompletion()) == "finished")
    observer.invalidate()
  }

  // MARK: - Cancellation

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func cancelEndsTheIterationAndCancelsTheTask() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let terminated = terminations(of: input)
    let source = AsyncSequenceSource(stream)
    let received = Recorder<Int>()
    let ends = Recorder<String>()
    let pool = ObserverPool()
    var delivered = source.chain().values.makeAsyncIterator()
    source.chain().do { received.append($0) }.end().addTo(pool)
    source.ended.chain().do { ends.append(String(describing: $0)) }.end().addTo(pool)
    input.yield(1)
    #expect(await delivered.next() == 1)
    source.cancel()
    // Set, and told, before `cancel()` returned.
    #expect(text(source.completion) == "cancelled")
    #expect(ends.history == ["cancelled"])
    #expect(source.failure == nil)
    // The task was cancelled: the stream ends its iteration.
    #expect(await first(terminated) == "cancelled")
    if case .enqueued = input.yield(2) { Issue.record("the stream still accepts elements") }
    #expect(received.history == [1])
    #expect(source.latestValue == 1)
    pool.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func cancelBeforeAnyChainNeverIteratesTheSequence() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let iterations = Recorder<Void>()
    weak var weakToken: Token?
    let source: AsyncSequenceSource<Int>
    do {
      let token = Token()
      weakToken = token
      source = AsyncSequenceSource(CountingSequence(base: stream, iterations: iterations, token: token))
    }
    #expect(weakToken != nil)
    source.cancel()
    // The unstarted sequence is released with the start.
    #expect(weakToken == nil)
    let received = Recorder<Int>()
    let observer = source.chain().do { received.append($0) }.sync()
    input.yield(1)
    #expect(text(await source.waitForCompletion()) == "cancelled")
    #expect(iterations.count == 0)
    #expect(received.history == [])
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func anElementTheSequenceProducesAfterCancelIsDropped() async throws {
    // A sequence that ignores cancellation: its next element still comes,
    // and the source neither stores nor sends it.
    let gate = ElementGate()
    let source = AsyncSequenceSource(gate)
    let received = Recorder<Int>()
    let observer = source.chain().do { received.append($0) }.end()
    let task = try #require(source.store.read { $0.task })
    gate.send(1)
    await gate.waitUntilRequested(2)
    source.cancel()
    gate.send(2)  // produced after `cancel()`
    gate.finish()  // ends the iteration, should it go on
    await task.value
    #expect(received.history == [1])
    #expect(source.latestValue == 1)
    #expect(text(source.completion) == "cancelled")
    // The iteration stopped at the dropped element: nothing more was asked.
    #expect(gate.requests == 2)
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func aHandlerMayCancelTheSource() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let received = Recorder<Int>()
    let observer = source.chain().do { value in
      received.append(value)
      if value == 2 { source.cancel() }
    }.end()
    for value in 1...5 { input.yield(value) }
    _ = await source.waitForCompletion()
    #expect(text(source.completion) == "cancelled")
    #expect(received.history == [1, 2])
    #expect(source.latestValue == 2)
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func aHandlerSeesItsElementAsTheLatest() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let seen = Recorder<Int?>()
    let observer = source.chain().do { _ in seen.append(source.latestValue) }.end()
    for value in 1...3 { input.yield(value) }
    input.finish()
    _ = await source.waitForCompletion()
    #expect(seen.history == [1, 2, 3])
    observer.invalidate()
  }

  // MARK: - Lifetime

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func freeingTheSourceCancelsTheTaskAndNothingKeepsTheSource() async throws {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let terminated = terminations(of: input)
    var source: AsyncSequenceSource<Int>? = AsyncSequenceSource(stream)
    // Set apart from its declaration: `weak let` needs Swift 6.3, and a
    // `weak var` set only there is a warning in it.
    weak var weakSource: AsyncSequenceSource<Int>?
    weakSource = source
    let ended = source!.ended
    let received = Recorder<Int>()
    let observer = source!.chain().do { received.append($0) }.end()
    var delivered = source!.chain().values.makeAsyncIterator()
    let task = try #require(source!.store.read { $0.task })
    input.yield(1)
    #expect(await delivered.next() == 1)
    // The task is suspended in the stream, waiting for the next element;
    // it does not keep the source alive.
    source = nil
    #expect(weakSource == nil)
    #expect(await first(terminated) == "cancelled")
    await task.value
    #expect(text(ended.completion) == "cancelled")
    // The source ended: the `for await` over its chain finishes.
    #expect(await delivered.next() == nil)
    #expect(received.history == [1])
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func freeingTheSourceFinishesLoopsOverItsChainsAtOnce() async throws {
    // The sequence ignores cancellation, so the task outlives the source:
    // the loop ends when the source is freed, not when the task ends.
    let gate = ElementGate()
    var source: AsyncSequenceSource<Int>? = AsyncSequenceSource(gate)
    var delivered = source!.chain().values.makeAsyncIterator()
    let task = try #require(source!.store.read { $0.task })
    gate.send(1)
    #expect(await delivered.next() == 1)
    await gate.waitUntilRequested(2)
    source = nil
    #expect(await delivered.next() == nil)
    // The task was still waiting for the sequence; it ends with it.
    gate.finish()
    await task.value
    #expect(gate.requests == 2)
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func cancelRacingTheFirstChainAlwaysStopsTheIteration() async {
    for _ in 0..<2_000 {
      let (stream, input) = AsyncStream.makeStream(of: Int.self)
      let terminated = terminations(of: input)
      weak var weakToken: Token?
      let source: AsyncSequenceSource<Int>
      do {
        let token = Token()
        weakToken = token
        source = AsyncSequenceSource(CountingSequence(base: stream, iterations: Recorder(), token: token))
      }
      let pool = ObserverPool()
      race(threads: 2) { thread in
        if thread == 0 {
          source.cancel()
        } else {
          source.chain().sync().addTo(pool)
        }
      }
      #expect(text(source.completion) == "cancelled")
      #expect(source.store.read { $0.task } == nil)
      // Either `cancel()` came first and released the unstarted sequence,
      // or the chain started a task, which `cancel()` (or the start, when
      // it saw the source stopped) cancelled: the stream then ends.
      if weakToken != nil {
        #expect(await first(terminated) == "cancelled")
      }
      pool.invalidate()
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func theTaskReleasesTheSequenceWhenItEnds() async throws {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    weak var weakToken: Token?
    let source: AsyncSequenceSource<Int>
    do {
      let token = Token()
      weakToken = token
      source = AsyncSequenceSource(CountingSequence(base: stream, iterations: Recorder(), token: token))
    }
    let observer = source.chain().end()
    let task = try #require(source.store.read { $0.task })
    #expect(weakToken != nil)
    input.finish()
    await task.value
    // The source lives on, with its latest element, but not the sequence.
    #expect(weakToken == nil)
    #expect(source.store.read { $0.task } == nil)
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func everythingIsReleasedOnceTheSourceIsFreedAndTheTaskEnded() async throws {
    let (stream, input) = AsyncStream.makeStream(of: Item.self)
    weak var weakFirst: Item?
    weak var weakLast: Item?
    weak var weakSource: AsyncSequenceSource<Item>?
    weak var weakEnded: AsyncSequenceSource<Item>.CompletionSource?
    let task: Task<Void, Never>
    do {
      let source = AsyncSequenceSource(stream)
      weakSource = source
      weakEnded = source.ended
      var delivered = source.chain().values.makeAsyncIterator()
      task = try #require(source.store.read { $0.task })
      do {
        let first = Item(1)
        let last = Item(2)
        weakFirst = first
        weakLast = last
        input.yield(first)
        input.yield(last)
      }
      #expect(await delivered.next()?.number == 1)
      #expect(await delivered.next()?.number == 2)
      // The source holds its latest element only.
      #expect(weakFirst == nil)
      #expect(weakLast != nil)
    }
    await task.value
    #expect(weakSource == nil)
    #expect(weakEnded == nil)
    #expect(weakLast == nil)
    input.finish()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func invalidatingAChainReleasesItsClosuresAndKeepsTheIterationGoing() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    weak var weakToken: Token?
    let observer: Observer
    do {
      let token = Token()
      weakToken = token
      observer = source.chain().do { _ in _ = token }.end()
    }
    #expect(weakToken != nil)
    observer.invalidate()
    #expect(weakToken == nil)
    #expect(source.observerCount == 0)
    // The iteration does not end when the last chain goes.
    input.yield(4)
    var delivered = source.chain().values.makeAsyncIterator()
    input.yield(5)
    // 4 was stored either before the new chain subscribed (and `values`
    // starts with it), or after (and it was broadcast to the chain).
    #expect(await delivered.next() == 4)
    #expect(await delivered.next() == 5)
    #expect(text(source.completion) == "running")
    input.finish()
    _ = await source.waitForCompletion()
  }

  // MARK: - Threads

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func chainsBuiltOnTheMainActorRunThere() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let (offMain, onMain) = await MainActor.run { () -> (Recorder<Int>, Recorder<Int>) in
      let offMain = Recorder<Int>()
      let onMain = Recorder<Int>()
      source.chain().do { value in
        if isOnMainActor { onMain.append(value) } else { offMain.append(value) }
      }.end().addTo(mainActorPool)
      return (offMain, onMain)
    }
    for value in 1...3 { input.yield(value) }
    input.finish()
    _ = await source.waitForCompletion()
    // The values were queued on the main actor: let it run them.
    await MainActor.run {}
    #expect(onMain.history == [1, 2, 3])
    #expect(offMain.history == [])
    await MainActor.run { mainActorPool.invalidate() }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func concurrentProducersReachTheChainInStreamOrder() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let received = Recorder<Int>()
    let observer = source.chain().do { received.append($0) }.end()
    race(threads: 4) { thread in
      for index in 0..<250 { input.yield(thread * 1_000 + index) }
    }
    input.finish()
    _ = await source.waitForCompletion()
    let history = received.history
    #expect(history.count == 1_000)
    for thread in 0..<4 {
      // Each producer's elements, in the order it yielded them.
      let mine = history.filter { $0 / 1_000 == thread }
      #expect(mine == (0..<250).map { thread * 1_000 + $0 })
    }
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func chainsSyncedWhileElementsFlowSeeAnUnbrokenRunToTheEnd() async {
    let (stream, input) = AsyncStream.makeStream(of: Int.self)
    let source = AsyncSequenceSource(stream)
    let first = source.chain().end()
    let producer = spawn {
      for value in 0..<2_000 { input.yield(value) }
      input.finish()
    }
    let histories = (0..<40).map { _ in Recorder<Int>() }
    let pool = ObserverPool()
    race(threads: 4) { thread in
      for index in stride(from: thread, to: 40, by: 4) {
        let history = histories[index]
        source.chain().do { history.append($0) }.sync().addTo(pool)
      }
    }
    _ = await source.waitForCompletion()
    producer.wait()
    for history in histories.map(\.history) {
      // Each chain gets the latest element when it is synced (or nothing
      // before the first), then every later element: nothing older, no gap.
      #expect(history.last == 1_999)
      if let start = history.first {
        #expect(history == Array(start...1_999))
      }
    }
    pool.invalidate()
    first.invalidate()
  }
}

/// Observers of the main-actor test.
@MainActor private let mainActorPool = ObserverPool()

// MARK: - Test sequences

/// A sequence of `range` whose elements go through `transform`, which may
/// throw; records each element it is asked for.
private struct ThrowingRange: AsyncSequence, Swift.Sendable {
  let range: ClosedRange<Int>
  let transform: @Sendable (Int) throws(Broken) -> Int
  let requested = Recorder<Int>()

  struct AsyncIterator: AsyncIteratorProtocol {
    var remaining: ClosedRange<Int>.Iterator
    let transform: @Sendable (Int) throws(Broken) -> Int
    let requested: Recorder<Int>

    mutating func next() async throws(Broken) -> Int? {
      guard let value = remaining.next() else { return nil }
      requested.append(value)
      return try transform(value)
    }

    mutating func next(isolation actor: isolated (any Actor)?) async throws(Broken) -> Int? {
      try await next()
    }
  }

  func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(remaining: range.makeIterator(), transform: transform, requested: requested)
  }
}

/// A sequence that hands out exactly the elements the test sends, and ends
/// when the test finishes it. It ignores cancellation: `next()` waits for
/// the next element, or the end, whatever happens to its task.
private final class ElementGate: AsyncSequence, @unchecked Swift.Sendable {
  // @unchecked: `state` is guarded by `lock`.
  private let lock = NSLock()
  private var state = (
    values: [Int](), waiting: [CheckedContinuation<Int?, Never>](), requests: 0, finished: false
  )
  private var requestWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

  /// How many elements the iteration has asked for.
  var requests: Int { lock.withLock { state.requests } }

  func send(_ value: Int) {
    let waiter = lock.withLock { () -> CheckedContinuation<Int?, Never>? in
      if state.waiting.isEmpty {
        state.values.append(value)
        return nil
      }
      return state.waiting.removeFirst()
    }
    waiter?.resume(returning: value)
  }

  /// Ends the sequence once the elements sent are taken.
  func finish() {
    let waiters = lock.withLock { () -> [CheckedContinuation<Int?, Never>] in
      state.finished = true
      defer { state.waiting = [] }
      return state.waiting
    }
    for waiter in waiters { waiter.resume(returning: nil) }
  }

  /// Waits until the iteration has asked for `count` elements.
  func waitUntilRequested(_ count: Int) async {
    await withCheckedContinuation { continuation in
      let ready = lock.withLock { () -> Bool in
        if state.requests >= count { return true }
        requestWaiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  private func next() async -> Int? {
    await withCheckedContinuation { continuation in
      let (value, ready) = lock.withLock { () -> (Int??, [CheckedContinuation<Void, Never>]) in
        state.requests += 1
        let ready = requestWaiters.filter { $0.count <= state.requests }.map(\.continuation)
        requestWaiters.removeAll { $0.count <= state.requests }
        if !state.values.isEmpty { return (state.values.removeFirst(), ready) }
        if state.finished { return (.some(nil), ready) }
        state.waiting.append(continuation)
        return (nil, ready)
      }
      for waiter in ready { waiter.resume() }
      if let value { continuation.resume(returning: value) }
    }
  }

  struct AsyncIterator: AsyncIteratorProtocol {
    let gate: ElementGate
    mutating func next() async -> Int? { await gate.next() }
  }

  func makeAsyncIterator() -> AsyncIterator { AsyncIterator(gate: self) }
}

/// Counts to `count` through a conformance isolated to the main actor: it
/// can be used only there. `made` is called by `makeAsyncIterator()`.
struct MainActorNumbers: Swift.Sendable {
  let count: Int
  let made: @Sendable () -> Void
}

extension MainActorNumbers: @MainActor AsyncSequence {
  typealias Element = Int

  struct AsyncIterator: AsyncIteratorProtocol {
    let numbers: MainActorNumbers
    var next = 0

    mutating func next() async -> Int? {
      next += 1
      return next <= numbers.count ? next : nil
    }
  }

  func makeAsyncIterator() -> AsyncIterator {
    made()
    return AsyncIterator(numbers: self)
  }
}
