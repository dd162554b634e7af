// MARK: - mapLatest and mapFirst

extension Chain where Value: Swift.Sendable {
  /// Runs an async closure for each value, and passes on its result,
  /// unless a newer value arrived meanwhile: then the run is cancelled and
  /// its result dropped.
  ///
  /// ```swift
  /// let username = ValueHolder("")
  /// let observer = username.chain()
  ///   .mapLatest { name in await api.isAvailable(name) }  // an async call
  ///   .do { available in print(available ? "available" : "taken") }
  ///   .sync()
  /// ```
  ///
  /// Kotlin Flow's `mapLatest`; RxSwift's `flatMapLatest` and Combine's
  /// `map { Future … }.switchToLatest()` over one async call per value.
  ///
  /// - Parameters:
  ///   - transform: Called in a task of its own for each value, with the
  ///     task cancelled when a newer value arrives or the observer is
  ///     invalidated. It runs where its own isolation says (a
  ///     nonisolated closure, on the global executor).
  ///   - isolation: Where the result goes on. Leave it out: it is the
  ///     isolation of the code that builds the chain. Built on an actor (a
  ///     `@MainActor` view model), the steps after this one run on that
  ///     actor; built in nonisolated code, on the thread that finished the
  ///     run.
  /// - Returns: A chain of the results of the runs that no newer value
  ///   replaced.
  ///
  /// The value ``sync()`` sends starts a run like any other; its result
  /// comes later. A result enters the rest of the chain through a gate of
  /// this step, one at a time, with the causes its value arrived with, so
  /// a two-way binding through the step settles. The finished observer
  /// holds `transform`; each run's task holds the step until it ends.
  /// After `invalidate()` returns, the run in progress is cancelled and
  /// nothing more is delivered; a run that ignores cancellation finishes,
  /// and its result is dropped.
  @inlinable
  public consuming func mapLatest<Output>(
    _ transform: @escaping @Sendable (Value) async -> Output,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Output, Source> {
    appendingAsyncMap(.latest, transform, isolation: isolation)
  }

  /// Runs an async, throwing closure for each value, as
  /// ``mapLatest(_:isolation:)-58tx6`` does, and passes on its result or
  /// its error, as a `Result`: a failed call does not end the chain.
  ///
  /// ```swift
  /// let query = ValueHolder("")
  /// let observer = query.chain()
  ///   .mapLatest { text in try await api.search(text) }
  ///   .do { result in
  ///     switch result {
  ///     case .success(let items): print(items.count, "results")
  ///     case .failure(let error): print("failed:", error)
  ///     }
  ///   }
  ///   .sync()
  /// ```
  ///
  /// - Parameters:
  ///   - transform: As in ``mapLatest(_:isolation:)-58tx6``.
  ///   - isolation: As in ``mapLatest(_:isolation:)-58tx6``.
  /// - Returns: A chain of the results, or errors, of the runs that no
  ///   newer value replaced. The error of a run cancelled by a newer value
  ///   is dropped with it.
  @inlinable
  public consuming func mapLatest<Output>(
    _ transform: @escaping @Sendable (Value) async throws -> Output,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Result<Output, any Error>, Source> {
    appendingAsyncMap(.latest, Self.catching(transform), isolation: isolation)
  }

  /// Runs an async closure for a value, and drops the values that arrive
  /// while it runs; passes on its result.
  ///
  /// ```swift
  /// let signUpTaps = Notifier<Void>()
  /// let observer = signUpTaps.chain()
  ///   .mapFirst { _ in await api.signUp() }  // a double tap signs up once
  ///   .do { print("signed up:", $0) }
  ///   .end()
  /// ```
  ///
  /// RxSwift's `flatMapFirst` (an "exhaust" map): the run in progress
  /// wins, and the values it makes wait are dropped, not queued.
  ///
  /// - Parameters:
  ///   - transform: Called in a task of its own for a value that arrives
  ///     while no run is in progress. The task is cancelled when the
  ///     observer is invalidated.
  ///   - isolation: As in ``mapLatest(_:isolation:)-58tx6``.
  /// - Returns: A chain of the results of the runs.
  ///
  /// The value ``sync()`` sends starts a run if none is in progress. As
  /// for ``mapLatest(_:isolation:)-58tx6``: results go through a gate of
  /// the step with their value's causes, and nothing is delivered after
  /// `invalidate()` returns.
  @inlinable
  public consuming func mapFirst<Output>(
    _ transform: @escaping @Sendable (Value) async -> Output,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Output, Source> {
    appendingAsyncMap(.first, transform, isolation: isolation)
  }

  /// Runs an async, throwing closure as ``mapFirst(_:isolation:)-xr8o``
  /// does, and passes on its result or its error, as a `Result`.
  ///
  /// - Parameters:
  ///   - transform: As in ``mapFirst(_:isolation:)-xr8o``.
  ///   - isolation: As in ``mapLatest(_:isolation:)-58tx6``.
  /// - Returns: A chain of the results, or errors, of the runs.
  @inlinable
  public consuming func mapFirst<Output>(
    _ transform: @escaping @Sendable (Value) async throws -> Output,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Result<Output, any Error>, Source> {
    appendingAsyncMap(.first, Self.catching(transform), isolation: isolation)
  }

  /// A throwing transform as one that returns its error as a `Result`.
  @inlinable
  static func catching<Output>(
    _ transform: @escaping @Sendable (Value) async throws -> Output
  ) -> @Sendable (Value) async -> Result<Output, any Error> {
    { value in
      do {
        return .success(try await transform(value))
      } catch {
        return .failure(error)
      }
    }
  }

  /// Appends the step of `mapLatest` or `mapFirst`. Results come from the
  /// runs' tasks, so no actor is known for them until the hop to
  /// `isolation`.
  @inlinable
  consuming func appendingAsyncMap<Output>(
    _ mode: AsyncMapMode,
    _ transform: @escaping @Sendable (Value) async -> Output,
    isolation: (any Actor)?
  ) -> Chain<Output, Source> {
    appending { downstream, context in
      let step = AsyncMap(mode, transform, downstream: downstream, context: context)
      return { value in step.receive(value) }
    }
    .onAnyThread()
    .isolated(to: isolation)
  }
}

/// Which run an async map keeps when a value arrives during one.
@usableFromInline
enum AsyncMapMode: Swift.Sendable {
  /// `mapLatest`: the new value's; the running one is cancelled.
  case latest
  /// `mapFirst`: the running one's; the new value is dropped.
  case first
}

/// One finished chain's `mapLatest` or `mapFirst` step: the run in
/// progress, and the gate its result enters the rest of the chain through.
///
/// Each value that starts a run takes the next generation; a result goes
/// on only if its generation is still the current one when it is ready
/// (for `mapLatest`, no newer value arrived; for `mapFirst`, generations
/// change only between runs). The observer closes the gate when it is
/// invalidated, so nothing is delivered after `invalidate()` returns, then
/// calls `end()`, which cancels the run in progress.
@usableFromInline
final class AsyncMap<Value: Swift.Sendable, Output>: @unchecked Swift.Sendable {
  // @unchecked: `state` is guarded by its lock; the rest are constants.
  // `downstream` runs only inside `gate`.
  let gate = DeliveryGate(held: false, handsOff: false)
  let mode: AsyncMapMode
  let transform: @Sendable (Value) async -> Output
  let downstream: (Output) -> Void
  let state = Protected(State())

  struct State {
    /// Counts the runs started.
    var generation = 0
    /// The task of the run in progress, to cancel.
    var task: Task<Void, Never>?
    /// A run is in progress (its result not yet handled).
    var running = false
    /// Set once the observer is invalidated: no run starts any more.
    var ended = false
  }

  @usableFromInline
  init(
    _ mode: AsyncMapMode,
    _ transform: @escaping @Sendable (Value) async -> Output,
    downstream: @escaping (Output) -> Void,
    context: _ChainContext
  ) {
    self.mode = mode
    self.transform = transform
    self.downstream = downstream
    context.addHopGate(gate)
    context.addInvalidationHandler { [self] in end() }
  }

  /// A value arriving: starts its run, cancelling the one in progress
  /// (`latest`), or drops it while a run is in progress (`first`).
  @usableFromInline
  func receive(_ value: Value) {
    let causes = DeliveryContext.current.capture()
    let mode = self.mode
    let started = state.withLock { state -> (generation: Int, previous: Task<Void, Never>?)? in
      if state.ended || (mode == .first && state.running) { return nil }
      state.running = true
      state.generation &+= 1
      return (state.generation, state.task.take())
    }
    guard let (generation, previous) = started else { return }
    previous?.cancel()
    let task = Task { [self] in
      let output = await transform(value)
      finish(output, generation: generation, causes: causes)
    }
    // Stored unless the run already ended or was replaced; cancelled if
    // the observer was invalidated meanwhile.
    let cancels = state.withLock { state -> Bool in
      if state.ended { return true }
      if state.generation == generation && state.running { state.task = task }
      return false
    }
    if cancels { task.cancel() }
  }

  /// A run's result: sent through the gate if its generation is still the
  /// current one, with the causes its value arrived with.
  private func finish(_ output: Output, generation: Int, causes: Causes) {
    let sends = state.withLock { state -> Bool in
      if state.ended || state.generation != generation { return false }
      state.running = false
      state.task = nil
      return true
    }
    guard sends else { return }
    let context = DeliveryContext.current
    // A result's delivery starts a wave of its own, as a timer's does.
    context.inWave {
      context.run(with: causes) { gate.deliver(output, to: downstream, in: context) }
    }
  }

  /// The observer was invalidated: cancels the run in progress. The gate
  /// is already closed, so a result that races with this is not delivered.
  private func end() {
    let task = state.withLock { state -> Task<Void, Never>? in
      state.ended = true
      return state.task.take()
    }
    task?.cancel()
  }
}
