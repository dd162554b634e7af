import Synchronization

// MARK: - Protected

/// A value guarded by a lock: all access goes through ``withLock(_:)``.
///
/// Like `Synchronization.Mutex`, whose lock it uses, but for state that is
/// not `Swift.Sendable` (values of a generic `T`, user closures): callers
/// promise by construction that the state never escapes the lock unguarded.
/// Never call out to user code from inside `withLock`.
final class Protected<State>: @unchecked Swift.Sendable {
  // @unchecked: `state` is only touched inside `mutex`.
  private let mutex = Mutex(())
  private var state: State

  init(_ initial: State) {
    state = initial
  }

  /// Runs `body` with exclusive access to the state and returns its result.
  @inline(__always)
  func withLock<Result>(_ body: (inout State) -> Result) -> Result {
    mutex.withLock { _ in Unchecked(body(&state)) }.value
  }
}

/// Carries a value out of a lock's closure, which only returns sendable values.
///
/// @unchecked: the value stays on the calling thread; it only passes the
/// lock's boundary.
private struct Unchecked<Value>: @unchecked Swift.Sendable {
  let value: Value
  @inline(__always)
  init(_ value: Value) { self.value = value }
}
