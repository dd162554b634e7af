// MARK: - ReadOnlyValueHolder

/// A read-only view of a ``ValueHolder``: it reads, chains and syncs, but
/// cannot write.
///
/// Publish a holder's state through this view when other code should follow
/// it but not change it. The view reads the holder's value each time; it
/// keeps no copy of its own. It is a ``Fetchable`` but not a ``Sendable``, so
/// it offers neither a setter, nor ``Receivable/receive(value:)``, nor
/// ``Sendable/broadcast(value:)``, and cannot be cast back to the holder.
///
/// ```swift
/// final class Counter {
///   private let holder = ValueHolder(0)
///   var count: ReadOnlyValueHolder<Int> { holder.readOnly }
///   func increment() { holder.value += 1 }
/// }
/// let counter = Counter()
/// let observer = counter.count.chain().do { print("count:", $0) }.sync()
/// // Prints "count: 0"
/// counter.increment()
/// // Prints "count: 1"
/// ```
///
/// ### Retention
/// The view holds its holder strongly, as a property would: a holder stays
/// alive while someone holds a view of it. The holder does not hold the view.
/// A chain started from the view subscribes to the holder itself, so its
/// ``Observer`` follows the holder's lifetime, not the view's: it keeps
/// receiving after the view is released, and goes quiet when the holder is
/// released. Start the chain from `view.retain()` to have the observer keep
/// the view, and so the holder, alive.
///
/// ### Thread safety
/// The view has no state of its own. It may be used from any thread, as the
/// holder may; it is `Swift.Sendable` when `T` is.
public final class ReadOnlyValueHolder<T>: Fetchable {
  /// The type of the values chains receive.
  public typealias ChainValue = T

  @usableFromInline let holder: ValueHolder<T>

  /// Creates a read-only view of a holder.
  ///
  /// - Parameter holder: The holder to read. It is held strongly.
  public init(_ holder: ValueHolder<T>) {
    self.holder = holder
  }

  /// The holder's current value.
  ///
  /// Read under the holder's lock, on the calling thread. Reading it inside
  /// an Observation tracking closure, such as a SwiftUI view's `body`, tracks
  /// the holder.
  @inlinable
  public var value: T { holder.value }

  /// Returns the holder's current value; ``Chain/sync()`` sends it first.
  ///
  /// - Returns: The holder's current value.
  public func fetchedValue() -> T {
    holder.fetchedValue()
  }

  /// Subscribes a finished chain to the holder. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {
    holder._subscribe(context, handler)
  }

  /// Registers what `sync()` fetches from the holder. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {
    holder._addFetch(context, handler)
  }
}

// @unchecked: the only stored property is a `let` of a holder that is itself
// `Swift.Sendable` when `T` is.
extension ReadOnlyValueHolder: @unchecked Swift.Sendable where T: Swift.Sendable {}

extension ValueHolder {
  /// A read-only view of this holder.
  ///
  /// ```swift
  /// let name = ValueHolder("Ann")
  /// let view = name.readOnly
  /// name.value = "Bob"
  /// print(view.value)
  /// // Prints "Bob"
  /// ```
  ///
  /// Each access returns a new ``ReadOnlyValueHolder``, which holds this
  /// holder strongly and follows it; no value is copied.
  public var readOnly: ReadOnlyValueHolder<T> {
    ReadOnlyValueHolder(self)
  }
}
