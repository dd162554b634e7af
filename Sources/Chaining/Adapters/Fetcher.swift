// MARK: - Fetcher

/// Makes any value a closure can compute into a source.
///
/// ``Chain/sync()`` sends the closure's result; ``broadcast()``, or receiving
/// `Void` through a chain, sends it again. Use it to bind something that has
/// no change notification of its own, refreshed when something else happens:
///
/// ```swift
/// var items = ["a"]
/// let itemCount = Fetcher { items.count }
/// let observer = itemCount.chain().do { print("count", $0) }.sync()
/// // Prints "count 1"
/// items.append("b")
/// itemCount.broadcast()
/// // Prints "count 2"
/// ```
///
/// The closures run on the thread that syncs or broadcasts, each time, and
/// are held for the fetcher's lifetime.
public final class Fetcher<T>: Syncable, Receivable {
  /// The type of the values chains receive.
  public typealias ChainValue = T
  /// `Void`: receiving anything sends the current value again.
  public typealias ReceiveValue = Void

  private let core = _SenderCore<T>()
  private let getter: () -> T
  private let availability: (() -> Bool)?

  /// Creates a fetcher.
  ///
  /// - Parameters:
  ///   - getter: Returns the current value.
  ///   - canFetch: Returns whether there is a value now; when it returns
  ///     `false`, `getter` is not called and nothing is sent. Defaults to
  ///     always.
  public init(_ getter: @escaping () -> T, canFetch: (() -> Bool)? = nil) {
    self.getter = getter
    availability = canFetch
  }

  deinit {
    // Nothing can send any more (see `_SenderCore.senderEnded()`).
    core.senderEnded()
  }

  /// Sends the current value to every chain, when there is one.
  public func broadcast() {
    guard canFetch() else { return }
    core.broadcast(getter())
  }

  /// Returns the getter's result.
  public func fetchedValue() -> T {
    getter()
  }

  /// Returns the `canFetch` closure's result, or `true` without one.
  public func canFetch() -> Bool {
    availability?() ?? true
  }

  /// Sends the current value again (see ``broadcast()``).
  public func receive(value: Void) {
    broadcast()
  }

  /// The stored core of this fetcher. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<T>? {
    core
  }
}
