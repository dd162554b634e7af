// MARK: - AsyncSequenceSource

/// Feeds chains from any `AsyncSequence`: iterates it in a task, broadcasts
/// each element, and keeps the latest one for ``Chain/sync()``.
///
/// ```swift
/// let (readings, input) = AsyncStream.makeStream(of: Int.self)
/// let temperature = AsyncSequenceSource(readings)
/// let pool = ObserverPool()
/// temperature.chain().do { print("now", $0) }.sync().addTo(pool)
/// input.yield(21)
/// input.yield(22)
/// input.finish()
/// print(await temperature.waitForCompletion()!)
/// // Prints "now 21"
/// // Prints "now 22"
/// // Prints "finished"
/// ```
///
/// The source is the counterpart of ``Chain/values``, which hands a chain's
/// values to `for await`. It is a class that you keep, like a holder,
/// rather than a conversion such as RxSwift's `asObservable()`, because
/// chains do not own their sources: one iteration of the sequence feeds
/// every chain started from the source, and most sequences (`AsyncStream`
/// among them) can be iterated only once.
///
/// ### When the sequence is iterated
/// Iteration starts when the first chain started from the source is
/// finished (``Chain/end()``, ``Chain/sync()``, or the start of a
/// `for await` loop over ``Chain/values``), so that chain sees every
/// element. It runs in a task of its own, which ends when:
/// - the sequence ends: ``completion`` becomes ``Completion/finished``;
/// - the sequence throws: iteration stops, and ``completion`` becomes
///   ``Completion/failure(_:)`` with the error, also in ``failure``;
/// - ``cancel()`` is called, or the source is freed: the task is cancelled,
///   and ``completion`` becomes ``Completion/cancelled``.
///
/// It does not end when the last chain is invalidated: a sequence iterated
/// once cannot be restarted for the next chain, and the source keeps the
/// latest element for it. Call ``cancel()`` to stop it. The ``ended``
/// source sends the completion to chains, and ``waitForCompletion()``
/// waits for it.
///
/// ### Elements
/// Each element is stored as ``latestValue`` and broadcast to every chain,
/// in the order of the sequence, one at a time, all of them: equal
/// elements are sent again (add ``Chain/removeDuplicates()`` to skip
/// them). ``Chain/sync()`` sends the latest element, or nothing before the
/// first one; from this source it is exact, as from a ``ValueHolder``:
/// nothing older follows the element it sends. After the iteration ends,
/// the latest element stays, and `sync()` still sends it. After
/// ``cancel()`` returns, no element is stored or broadcast, even one that
/// the sequence produces later.
///
/// ### Threads
/// The task is not isolated to an actor. Each element is broadcast from
/// it as by ``Sendable/broadcast(value:)``: handlers run synchronously on
/// the task's thread (one of Swift's global executor), before the next
/// element is requested, unless a step moves them (a step written on an
/// actor runs on that actor; see ``Chain/do(_:isolation:)``) or another
/// thread is already delivering into the same chain. Keep handlers short,
/// as on any thread of the global executor. The source may be used from
/// any thread.
///
/// ### Lifetime
/// The source holds the sequence until its task takes it, and the latest
/// element. The task holds the sequence and the source's storage, never
/// the source itself: freeing the source cancels the task, and a sequence
/// that honours cancellation (as `AsyncStream` does) then ends it at once.
/// A sequence that ignores cancellation keeps the task, and what it
/// holds, until it produces its next element or ends; that element is
/// dropped. Chains hold the source as they hold any source: not at all,
/// unless started from ``Chainable/retain()``.
public final class AsyncSequenceSource<Element: Swift.Sendable>: Syncable {
  /// The type of the values chains receive: the sequence's elements.
  public typealias ChainValue = Element

  /// The latest element, whether iteration has started, and how to start it.
  struct State {
    /// The latest element, or `nil` before the first one.
    var latest: Element?
    /// Set once iteration has ended or been cancelled: no element is stored
    /// or broadcast afterwards.
    var isStopped = false
    /// Starts the task, with the sequence it iterates; `nil` once taken.
    var start: Start?
    /// The running task, to cancel; `nil` before it starts and once stopped.
    var task: Task<Void, Never>?
  }

  typealias Start = @Sendable (HolderStore<State, Element>, CompletionSource) -> Task<Void, Never>

  /// The latest element and the chains of the elements: what the task
  /// writes. Its lock also guards the start and the stop.
  let store: HolderStore<State, Element>

  /// Sends how the iteration ended to the chains started from it, once.
  ///
  /// A ``Syncable`` source of ``Completion``: ``Chain/sync()`` sends the
  /// completion when the iteration has already ended, and the end itself
  /// is broadcast once. Nothing is sent while the sequence runs.
  ///
  /// ```swift
  /// let (events, input) = AsyncThrowingStream.makeStream(of: String.self)
  /// let source = AsyncSequenceSource(events)
  /// let pool = ObserverPool()
  /// source.chain().do { print("event", $0) }.end().addTo(pool)
  /// source.ended.chain().do { print("ended:", $0) }.sync().addTo(pool)
  /// input.yield("a")
  /// input.finish(throwing: CancellationError())
  /// _ = await source.waitForCompletion()
  /// // Prints "event a"
  /// // Prints "ended: failure(Swift.CancellationError())"
  /// ```
  ///
  /// It is sent on the thread that ends the iteration: the task's, or the
  /// one that calls ``cancel()`` or frees the source.
  public let ended: CompletionSource

  /// Starts a source that will iterate `sequence` once, from the first
  /// chain finished on it (see the type's discussion).
  ///
  /// - Parameter sequence: The sequence to iterate. It is handed over
  ///   (`sending`): the source's task is the only code that uses it, so a
  ///   sequence that is not `Swift.Sendable` may be passed when nothing
  ///   else uses it. Its type needs `SendableMetatype`, as every type has
  ///   unless its `AsyncSequence` conformance is isolated to an actor: the
  ///   task uses the conformance off that actor.
  public init<Base: AsyncSequence & SendableMetatype>(_ sequence: sending Base) where Base.Element == Element {
    let handover = Handover(sequence)
    var state = State()
    state.start = { store, ended in
      Task { await Self.iterate(handover.take(), into: store, ending: ended) }
    }
    store = HolderStore(state)
    ended = CompletionSource()
  }

  /// Starts a source that will iterate `sequence` once, on the main
  /// actor, from the first chain finished on it: for a sequence whose
  /// `AsyncSequence` conformance is isolated to the main actor, as the
  /// conformance of a type declared in an app target with Xcode 26's
  /// settings is (the main actor as default isolation, and
  /// `InferIsolatedConformances`).
  ///
  /// Swift picks this initializer only for such a sequence: for any other,
  /// the one above is more specific. The task that iterates runs on the
  /// main actor: `makeAsyncIterator()` is called there, and each element
  /// is stored and broadcast from there, so handlers run on the main actor
  /// unless a step moves them. The iterator's `next()` runs where it is
  /// isolated. The source holds the sequence until the task takes it, as
  /// with the other initializer.
  ///
  /// - Parameter sequence: The sequence to iterate, handed over
  ///   (`sending`).
  @MainActor
  public init<Base: AsyncSequence>(_ sequence: sending Base) where Base.Element == Element {
    let handover = MainActorHandover(sequence)
    var state = State()
    state.start = { store, ended in
      Task { @MainActor in await handover.iterate(into: store, ending: ended) }
    }
    store = HolderStore(state)
    ended = CompletionSource()
  }

  deinit {
    cancel()
    // No element can come any more: a `for await` loop over a chain of
    // this source finishes (see `_SenderCore.senderEnded()`).
    store.core.senderEnded()
  }

  /// The latest element of the sequence, or `nil` before the first one.
  ///
  /// It stays after the iteration ends.
  public var latestValue: Element? {
    store.read { $0.latest }
  }

  /// How the iteration ended, or `nil` while it has not.
  public var completion: Completion? {
    ended.completion
  }

  /// The error the sequence threw, or `nil` when it has thrown none (yet).
  ///
  /// Set when ``completion`` is ``Completion/failure(_:)``. The elements
  /// the sequence produced before the error were delivered.
  public var failure: (any Error)? {
    if case .failure(let error) = completion { error } else { nil }
  }

  /// Stops the iteration: cancels the task and ends with
  /// ``Completion/cancelled``, unless the iteration has already ended.
  ///
  /// After this returns, no element is stored or broadcast, and
  /// ``completion`` is set; the ``ended`` chains have been told, on the
  /// calling thread. A sequence that honours cancellation ends its
  /// iteration at once (an `AsyncStream` calls its `onTermination` with
  /// `.cancelled` before this returns); one that does not is left
  /// running until its next element, which is dropped. An element being
  /// delivered on another thread finishes. Before any chain has started
  /// the iteration, the sequence is released without being iterated.
  /// Calling `cancel()` again does nothing. Freeing the source cancels it
  /// the same way.
  public func cancel() {
    let (stopped, task, start) = store.withLock { state, _ -> (Bool, Task<Void, Never>?, Start?) in
      let stopped = !state.isStopped
      state.isStopped = true
      defer {
        state.task = nil
        state.start = nil
      }
      return (stopped, state.task, state.start)
    }
    // Outside the lock: cancelling runs the sequence's cancellation
    // handlers, and an unstarted sequence is released with `start`.
    task?.cancel()
    _ = consume start
    if stopped { ended.complete(.cancelled) }
  }

  /// Waits until the iteration ends, and returns how it ended.
  ///
  /// Returns at once when it has already ended. Returns `nil` when the
  /// calling task is cancelled first. The iteration starts only with the
  /// first chain: waiting for a source that no chain uses waits until
  /// ``cancel()`` is called or the source is freed.
  ///
  /// - Returns: The ``completion``, or `nil` when the calling task was
  ///   cancelled before it.
  public func waitForCompletion() async -> Completion? {
    for await completion in ended.chain().values { return completion }
    return nil
  }

  /// Returns the latest element; ``Chain/sync()`` sends it.
  ///
  /// Only call it when ``canFetch()`` is `true`: before the first element
  /// it stops the program.
  public func fetchedValue() -> Element {
    guard let latest = latestValue else {
      fatalError("AsyncSequenceSource.fetchedValue(): the sequence has produced no element yet")
    }
    return latest
  }

  /// Whether the sequence has produced an element, which ``Chain/sync()`` then sends.
  public func canFetch() -> Bool {
    latestValue != nil
  }

  /// Subscribes a finished chain and takes the element ``Chain/sync()``
  /// sends, in one step; starts the iteration for the first chain. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Element) -> Void) {
    store.attach(context, handler) { $0.latest }
    startIterating()
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the element to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (Element) -> Void) {}

  /// The stored core of this source. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Element>? {
    store.core
  }

  // MARK: Iteration

  /// Starts the task, unless it was started or the source stopped.
  private func startIterating() {
    guard let start = store.withLock({ state, _ in state.start.take() }) else { return }
    let task = start(store, ended)
    // A `cancel()` between taking `start` and here did not see the task:
    // cancel it now.
    let cancelled = store.withLock { state, _ -> Bool in
      if state.isStopped { return true }
      state.task = task
      return false
    }
    if cancelled { task.cancel() }
  }

  /// The task's body: delivers every element in order, then ends. Runs
  /// on `isolation`, the caller's: the main actor for a sequence whose
  /// conformance is isolated there (`MainActorHandover`).
  fileprivate static func iterate<Base: AsyncSequence>(
    _ sequence: Base,
    into store: HolderStore<State, Element>,
    ending ended: CompletionSource,
    isolation: isolated (any Actor)? = #isolation
  ) async where Base.Element == Element {
    do {
      for try await element in sequence {
        guard deliver(element, to: store) else { return }
      }
      end(.finished, store, ended)
    } catch {
      end(.failure(error), store, ended)
    }
  }

  /// Stores and broadcasts `element`; false once the source has stopped.
  private static func deliver(_ element: Element, to store: HolderStore<State, Element>) -> Bool {
    var delivered = false
    store.write { state in
      if state.isStopped { return (nil, nil) }
      delivered = true
      let replaced = state.latest
      state.latest = element
      // The replaced element is released after unlocking.
      return (element, replaced)
    }
    return delivered
  }

  /// Ends the iteration with `completion`, unless ``cancel()`` came first.
  private static func end(_ completion: Completion, _ store: HolderStore<State, Element>, _ ended: CompletionSource) {
    let first = store.withLock { state, _ -> Bool in
      if state.isStopped { return false }
      state.isStopped = true
      state.task = nil
      return true
    }
    if first { ended.complete(completion) }
  }
}

// @unchecked: the state is guarded by the store's lock, the elements are
// `Swift.Sendable`, and `ended` guards itself.
extension AsyncSequenceSource: @unchecked Swift.Sendable {}

// MARK: - Completion

extension AsyncSequenceSource {
  /// How the iteration of an ``AsyncSequenceSource`` ended.
  public enum Completion: Swift.Sendable {
    /// The sequence ended: its iterator returned `nil`.
    case finished
    /// The sequence threw `error`; the elements before it were delivered.
    case failure(any Error)
    /// ``AsyncSequenceSource/cancel()`` was called, or the source was freed,
    /// before the sequence ended.
    case cancelled
  }
}

// MARK: - CompletionSource

extension AsyncSequenceSource {
  /// The source of ``AsyncSequenceSource/ended``: sends how the iteration
  /// ended, once.
  ///
  /// ``Chain/sync()`` sends the ``completion`` when there is one, so a
  /// chain finished after the end still sees it; the end itself is
  /// broadcast once, on the thread that ends the iteration.
  public final class CompletionSource: Syncable {
    /// The type of the values chains receive.
    public typealias ChainValue = Completion

    let store = HolderStore<Completion?, Completion>(nil)

    init() {}

    /// How the iteration ended, or `nil` while it has not.
    public var completion: Completion? {
      store.read { $0 }
    }

    /// Returns the completion; ``Chain/sync()`` sends it.
    ///
    /// Only call it when ``canFetch()`` is `true`: before the end it stops
    /// the program.
    public func fetchedValue() -> Completion {
      guard let completion else {
        fatalError("AsyncSequenceSource.CompletionSource.fetchedValue(): the iteration has not ended")
      }
      return completion
    }

    /// Whether the iteration has ended, so that ``Chain/sync()`` sends how.
    public func canFetch() -> Bool {
      completion != nil
    }

    /// Sets the completion and broadcasts it. Called once, by the call
    /// that stopped the source (see `AsyncSequenceSource.State.isStopped`).
    func complete(_ completion: Completion) {
      store.writeEvent { state in
        state = completion
        return completion
      }
    }

    /// Subscribes a finished chain and takes the completion
    /// ``Chain/sync()`` sends, in one step. Not API.
    public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Completion) -> Void) {
      store.attach(context, handler) { $0 }
    }

    /// Does nothing: ``_subscribe(_:_:)`` took the completion to fetch. Not API.
    public func _addFetch(_ context: _ChainContext, _ handler: @escaping (Completion) -> Void) {}

    /// The stored core of this source. Not API.
    public func _senderCore(creating: Bool) -> _SenderCore<Completion>? {
      store.core
    }
  }
}

// @unchecked: the completion is guarded by the store's lock, and is
// `Swift.Sendable`.
extension AsyncSequenceSource.CompletionSource: @unchecked Swift.Sendable {}

// MARK: - Handover

/// The sequence of a source that iterates it on the main actor, whose
/// conformance may be isolated there.
@MainActor
private final class MainActorHandover<Base: AsyncSequence> where Base.Element: Swift.Sendable {
  private var base: Base?

  init(_ base: consuming sending Base) {
    self.base = base
  }

  func iterate(
    into store: HolderStore<AsyncSequenceSource<Base.Element>.State, Base.Element>,
    ending ended: AsyncSequenceSource<Base.Element>.CompletionSource
  ) async {
    guard let base = base.take() else { fatalError("AsyncSequenceSource: the sequence was taken twice") }
    await AsyncSequenceSource.iterate(base, into: store, ending: ended)
  }
}

/// Moves a sequence handed to the initializer (`sending`) into the task
/// that iterates it.
///
/// @unchecked: the sequence is in no other isolation region (`sending`),
/// and it is taken once, by the task, through `Start`, which the source
/// takes out of its state once.
private final class Handover<Base>: @unchecked Swift.Sendable {
  private var base: Base?

  init(_ base: consuming sending Base) {
    self.base = base
  }

  func take() -> Base {
    guard let base = base.take() else { fatalError("AsyncSequenceSource: the sequence was taken twice") }
    return base
  }
}
