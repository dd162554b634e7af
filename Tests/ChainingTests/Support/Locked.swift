@testable import Chaining

/// A value behind the library's lock, for tests on any platform
/// (`Synchronization.Mutex` needs macOS 15 and iOS 18).
final class Locked<Value>: @unchecked Swift.Sendable {
  // @unchecked: `value` is reached only under the lock.
  private let protected: Protected<Value>

  init(_ value: Value) {
    protected = Protected(value)
  }

  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    try protected.withLock(body)
  }
}

/// An `Int` that threads count with atomically, for tests: the library's
/// own atomics (`Synchronization.Atomic` needs macOS 15 and iOS 18).
final class AtomicCounter: @unchecked Swift.Sendable {
  // @unchecked: `storage` is reached only atomically, through `word`.

  /// The count: the first stored property (see `AtomicReference`).
  private var storage: Int

  private var word: AtomicReference<Int> { AtomicReference(in: self) }

  init(_ value: Int = 0) {
    storage = value
  }

  /// Adds `amount` (relaxed) and returns the new count.
  @discardableResult
  func add(_ amount: Int) -> Int {
    word.wrappingAdd(amount, ordering: .relaxed).newValue
  }

  /// The count (relaxed).
  var value: Int { word.load(ordering: .relaxed) }
}
