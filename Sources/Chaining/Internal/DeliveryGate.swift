import Synchronization

// MARK: - DeliveryGate

/// Serializes the deliveries into one finished chain and makes invalidation final.
///
/// Every value that enters a chain, from any of its sources or from `sync()`,
/// passes through the chain's gate:
/// - A value that has already passed through this chain (an echo coming back
///   through a binding loop, on this thread or another) is dropped. This is
///   what lets two-way bindings settle, whatever the value type.
/// - Otherwise, when nobody is running the chain, the calling thread runs it
///   at once.
/// - When the chain is running (on another thread, or further up this
///   thread's stack), the value is queued and run right after the values
///   before it. The sending thread never blocks, so chains feeding each
///   other from several threads cannot deadlock.
///
/// `close()` makes sure no run starts afterwards and, unless that could
/// deadlock, waits for a run in progress on another thread to finish.
@usableFromInline
final class DeliveryGate: @unchecked Swift.Sendable {
  // @unchecked: `state` is guarded by its lock, `closed` is atomic, and
  // `busy` is held by the running thread for as long as it runs the chain.

  @usableFromInline
  struct State {
    /// Starts `true`: the thread finishing the chain holds the gate until
    /// `start(with:)`, so nothing runs before `sync()`'s fetched values.
    @usableFromInline var isRunning = true
    /// Runs queued while the chain was running.
    @usableFromInline var pending: [Queued] = []

    @usableFromInline
    init(isRunning: Bool) {
      self.isRunning = isRunning
    }
  }

  @usableFromInline
  struct Queued {
    @usableFromInline let causes: Causes
    @usableFromInline let run: () -> Void

    @usableFromInline
    init(causes: Causes, run: @escaping () -> Void) {
      self.causes = causes
      self.run = run
    }
  }

  /// Guards `State`. Never held while user code runs.
  @usableFromInline let state: Protected<State>

  /// Creates a gate.
  ///
  /// - Parameter held: Whether the creating thread holds it until
  ///   `start(with:)`: true for a chain's main gate, false for a hop's.
  init(held: Bool) {
    state = Protected(State(isRunning: held))
  }
  /// Held while the chain runs, so that `close()` can wait for the run.
  @usableFromInline let busy = Lock()
  /// Set once by `close()`; checked under `busy` before every run.
  @usableFromInline let closed = Atomic(false)

  /// Whether `close()` has been called.
  var isClosed: Bool { closed.load(ordering: .acquiring) }

  /// Runs `body(value)` under the gate's rules (see the type's discussion).
  ///
  /// With `dropsEchoes` false, a value this chain caused is run too (after
  /// the current one): for commands to the chain itself, such as a
  /// suspender's changes.
  @inlinable @inline(__always)
  func deliver<Value>(_ value: Value, to body: @escaping (Value) -> Void, dropsEchoes: Bool = true) {
    if closed.load(ordering: .acquiring) { return }
    let context = DeliveryContext.current
    if dropsEchoes, context.isCaused(by: self) { return }
    let claimed = state.withLock { state -> Bool in
      if !state.isRunning {
        state.isRunning = true
        return true
      }
      state.pending.append(Queued(causes: context.capture()) { body(value) })
      return false
    }
    guard claimed else { return }
    context.depth += 1
    context.causes.append(Unmanaged.passUnretained(self))
    busy.withLock {
      if !closed.load(ordering: .acquiring) { body(value) }
      context.causes.removeLast()
      runPending(in: context)
    }
    context.depth -= 1
  }

  /// Opens the gate once the chain is finished: runs `first` (the fetches of
  /// `sync()`, in order), then what arrived while the chain was being
  /// finished, then lets values in.
  ///
  /// Called once, by the thread that finished the chain.
  func start(with first: [() -> Void]) {
    let context = DeliveryContext.current
    context.depth += 1
    context.causes.append(Unmanaged.passUnretained(self))
    busy.withLock {
      for run in first where !closed.load(ordering: .acquiring) {
        run()
      }
      context.causes.removeLast()
      runPending(in: context)
    }
    context.depth -= 1
  }

  /// Runs what was queued meanwhile, until the queue is empty, then stops running.
  @usableFromInline
  func runPending(in context: DeliveryContext) {
    while true {
      let batch = state.withLock { state -> [Queued] in
        if state.pending.isEmpty {
          state.isRunning = false
          return []
        }
        let batch = state.pending
        state.pending = []
        return batch
      }
      if batch.isEmpty { return }
      for queued in batch where !closed.load(ordering: .acquiring) {
        context.run(with: queued.causes, adding: self, queued.run)
      }
    }
  }

  /// Stops all further runs.
  ///
  /// After `close()` returns no run starts. A run in progress on another
  /// thread is waited for, except when the calling thread is itself inside
  /// a delivery: two handlers closing each other's chains from two threads
  /// would otherwise wait for each other forever.
  func close() {
    closed.store(true, ordering: .sequentiallyConsistent)
    let (running, dropped) = state.withLock { state in
      let dropped = state.pending
      state.pending = []
      return (state.isRunning, dropped)
    }
    _ = consume dropped  // released here, outside the lock
    if running, DeliveryContext.current.depth == 0 {
      busy.withLock {}
    }
  }
}
