// MARK: - Fetchable

/// An object that can hand out its current value, which ``Chain/sync()`` sends.
///
/// Adopt `Fetchable` by returning the current value from ``fetchedValue()``.
/// When the value is sometimes unavailable, also implement ``canFetch()``:
///
/// ```swift
/// final class Counter: Fetchable {
///   typealias ChainValue = Int
///   var count = 0
///   func fetchedValue() -> Int { count }
/// }
///
/// let counter = Counter()
/// counter.count = 3
/// let observer = counter.chain().do { print($0) }.sync()
/// // Prints "3"
/// ```
///
/// A type that is only `Fetchable` sends its value once, on `sync()`. Adopt
/// ``Syncable`` to also push later changes.
public protocol Fetchable<ChainValue>: Chainable {
  /// Returns the value that ``Chain/sync()`` sends.
  ///
  /// Called by `sync()` on the thread that calls it (or, when another thread
  /// is delivering into the same chain, on that thread, right after the
  /// value it is delivering), and only when ``canFetch()`` returns `true`.
  func fetchedValue() -> ChainValue

  /// Returns whether there is a value to fetch now. Defaults to `true`.
  ///
  /// When it returns `false`, ``Chain/sync()`` sends nothing from this
  /// object and ``fetchedValue()`` is not called.
  func canFetch() -> Bool
}

extension Fetchable {
  /// Returns `true`: by default a fetchable object always has a value.
  public func canFetch() -> Bool { true }

  /// Registers this object's fetch with a chain being finished by `sync()`. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (ChainValue) -> Void) {
    context.addFetch {
      if self.canFetch() { handler(self.fetchedValue()) }
    }
  }
}
