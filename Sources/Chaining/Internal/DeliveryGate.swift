import Synchronization

// MARK: - DeliveryGate

/// Serializes the deliveries into one finished chain and makes invalidation final.
///
/// Every value that enters a chain, from any of its sources or from `sync()`,
/// passes through the chain's gate:
/// - When nobody is delivering, the calling thread becomes the owner and runs
///   the pipeline at once.
/// - When the owner is the calling thread, the value re-entered the chain from
///   inside its own delivery; it is dropped, which is what lets two-way
///   bindings settle.
/// - When another thread owns the gate, the value is queued and the owner runs
///   it after the values before it. The sending thread never blocks, so two
///   chains feeding each other from two threads cannot deadlock.
///
/// `close()` makes sure no pipeline run starts afterwards and, unless that
/// could deadlock, waits for a run in progress on another thread to finish.
final class DeliveryGate: @unchecked Swift.Sendable {
  // @unchecked: `state` is guarded by its mutex, `closed` is atomic, and
  // `busy` is held by the owner for as long as it runs pipelines.

  private struct State {
    /// The thread running pipelines, or 0.
    var owner: UInt = 0
    /// Runs queued by other threads while `owner` was delivering.
    var pending: [Thunk] = []
  }

  /// Guards `State`. Never held while user code runs.
  private let state = Protected(State())
  /// Held by the owner while it runs pipelines, so that `close()` can wait for it.
  private let busy = Mutex(())
  /// Set once by `close()`; checked under `busy` before every run.
  private let closed = Atomic(false)

  /// Whether `close()` has been called.
  var isClosed: Bool { closed.load(ordering: .acquiring) }

  /// Runs `body(value)` under the gate's rules (see the type's discussion).
  @inline(__always)
  func deliver<Value>(_ value: Value, to body: @escaping (Value) -> Void) {
    if closed.load(ordering: .acquiring) { return }
    let me = CurrentThread.id
    let claimed = state.withLock { state -> Bool in
      if state.owner == 0 {
        state.owner = me
        return true
      }
      if state.owner != me {
        state.pending.append(Thunk { body(value) })
      }
      return false
    }
    guard claimed else { return }
    let mark = CurrentThread.enter()
    defer { CurrentThread.leave(mark) }
    busy.withLock { _ in
      if !closed.load(ordering: .acquiring) { body(value) }
      drainPending()
    }
  }

  /// Runs what other threads queued, until the queue is empty, then gives up ownership.
  private func drainPending() {
    while true {
      let batch = state.withLock { state -> [Thunk] in
        if state.pending.isEmpty {
          state.owner = 0
          return []
        }
        let batch = state.pending
        state.pending = []
        return batch
      }
      if batch.isEmpty { return }
      for thunk in batch where !closed.load(ordering: .acquiring) {
        thunk.run()
      }
    }
  }

  /// Stops all further runs.
  ///
  /// After `close()` returns no pipeline run starts. A run in progress on
  /// another thread is waited for, except when the calling thread is itself
  /// inside a delivery: two handlers closing each other's chains from two
  /// threads would otherwise wait for each other forever.
  func close() {
    closed.store(true, ordering: .sequentiallyConsistent)
    let (owner, dropped) = state.withLock { state in
      let dropped = state.pending
      state.pending = []
      return (state.owner, dropped)
    }
    _ = consume dropped  // released here, outside the lock
    if owner != 0, owner != CurrentThread.id, !CurrentThread.isDelivering {
      busy.withLock { _ in }
    }
  }
}

/// A queued pipeline run.
///
/// @unchecked: a thunk is created by the sending thread and run once by the
/// gate's owner; it is never run concurrently.
struct Thunk: @unchecked Swift.Sendable {
  let run: () -> Void
  init(_ run: @escaping () -> Void) { self.run = run }
}
