import Chaining
// Foundation for `NSLock`, as in TestClock.swift.
import Foundation

// MARK: - Recorder

/// Records the values a chain delivers, for tests: thread-safe, in order,
/// and awaitable, so that a test of a binding needs no box and lock of
/// its own, and no sleeping.
///
/// Send values to it with `sendTo` (it is `Receivable`) or from a `do`
/// step, on any thread; read them with ``values``, or wait for them:
///
/// ```swift
/// import Chaining
/// import ChainingTesting
///
/// let query = ValueHolder("")
/// let results = Recorder<String>()
/// let observer = query.chain()
///   .mapLatest { text in await search(text) }
///   .sendTo(results)
///   .sync()
/// let first = try await results.next()  // the answer for ""
/// query.value = "swift"
/// let second = try await results.next()  // the answer for "swift"
/// ```
///
/// ``next()`` returns the values one by one, in the order they were
/// recorded, each once; ``values(count:)`` waits until a number of values
/// have come. Each waits at most ``timeout`` (10 seconds unless given),
/// then throws ``Timeout``, whose message lists what did come: the
/// deadline only turns a hang into a failure, and never decides a test
/// that passes.
///
/// A chain holds a receiver weakly (`sendTo`): keep the recorder in a
/// variable of the test. Its values are kept until it is freed.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
public final class Recorder<Value: Swift.Sendable>: Receivable, @unchecked Swift.Sendable {
  // @unchecked: `state` is guarded by `lock`.

  /// The values a recorder receives.
  public typealias ReceiveValue = Value

  /// How long ``next()`` and ``values(count:)`` wait before they throw.
  public let timeout: Duration

  private struct State {
    var values: [Value] = []
    /// How many values `next()` has returned.
    var taken = 0
    /// Waiting tasks, each for a number of values.
    var waiters: [Int: (count: Int, continuation: CheckedContinuation<Void, any Error>)] = [:]
    var nextWaiter = 0
  }

  private let lock = NSLock()
  private var state = State()

  /// An empty recorder whose waits give up after `timeout`.
  ///
  /// - Parameter timeout: How long a wait may take before it throws
  ///   ``Timeout``, on the continuous clock: 10 seconds by default, far
  ///   longer than any wait of a passing test.
  public init(timeout: Duration = .seconds(10)) {
    self.timeout = timeout
  }

  /// Every value recorded so far, in the order they came.
  public var values: [Value] {
    lock.withLock { state.values }
  }

  /// Records `value`, and wakes the waits it completes. Thread-safe.
  public func receive(value: Value) {
    let ready = lock.withLock { () -> [CheckedContinuation<Void, any Error>] in
      state.values.append(value)
      let count = state.values.count
      let done = state.waiters.filter { $0.value.count <= count }
      for id in done.keys { state.waiters[id] = nil }
      return done.map(\.value.continuation)
    }
    for continuation in ready { continuation.resume() }
  }

  /// Records `value`; the same as ``receive(value:)``, for a `do` step.
  public func append(_ value: Value) {
    receive(value: value)
  }

  /// Returns the next value that `next()` has not returned yet, waiting
  /// for it if it has not come.
  ///
  /// A call that throws still takes its place in the order: the next call
  /// returns the value after the one it waited for.
  ///
  /// - Throws: ``Timeout`` when no such value comes within ``timeout``;
  ///   `CancellationError` when the task is cancelled while it waits.
  public func next() async throws -> Value {
    let wanted = lock.withLock { () -> Int in
      state.taken += 1
      return state.taken
    }
    let values = try await wait(for: wanted, call: "next()")
    return values[wanted - 1]
  }

  /// Returns the first `count` values recorded, waiting until that many
  /// have come.
  ///
  /// - Parameter count: How many values to wait for.
  /// - Throws: ``Timeout`` when fewer come within ``timeout``;
  ///   `CancellationError` when the task is cancelled while it waits.
  public func values(count: Int) async throws -> [Value] {
    if count < 0 { fatalError("Recorder.values(count:): count must not be negative, got \(count)") }
    return Array(try await wait(for: count, call: "values(count: \(count))").prefix(count))
  }

  /// Waits until `count` values have come; returns them all.
  private func wait(for count: Int, call: String) async throws -> [Value] {
    let id = lock.withLock { () -> Int? in
      if state.values.count >= count { return nil }
      state.nextWaiter += 1
      return state.nextWaiter
    }
    if let id {
      let deadline = Task { [weak self, timeout] in
        try? await Task.sleep(for: timeout)
        self?.giveUp(id, reason: Timeout(call: call, timeout: timeout, values: self?.values.map { "\($0)" } ?? []))
      }
      defer { deadline.cancel() }
      try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
          let stillWaiting = lock.withLock { () -> Bool in
            if state.values.count >= count { return false }
            state.waiters[id] = (count, continuation)
            return true
          }
          if !stillWaiting {
            continuation.resume()
          } else if Task.isCancelled {
            // Cancelled before the wait was registered: the handler found
            // nothing to end.
            giveUp(id, reason: CancellationError())
          }
        }
      } onCancel: {
        giveUp(id, reason: CancellationError())
      }
    }
    return lock.withLock { state.values }
  }

  /// Ends the wait `id`, if it still waits, with `reason`.
  private func giveUp(_ id: Int, reason: any Error) {
    let waiter = lock.withLock { state.waiters.removeValue(forKey: id) }
    waiter?.continuation.resume(throwing: reason)
  }

  /// The error of a wait that ran out of time.
  public struct Timeout: Error, CustomStringConvertible {
    /// The call that waited, such as `next()`.
    public let call: String
    /// How long it waited.
    public let timeout: Duration
    /// The values recorded by then, described.
    public let values: [String]

    /// The call, how long it waited, and the values it got.
    public var description: String {
      "Recorder.\(call) waited \(timeout) and got \(values.count) value(s): [\(values.joined(separator: ", "))]"
    }
  }
}
