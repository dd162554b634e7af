// MARK: - AnyFetchable

/// A source with a current value that forwards to any ``Fetchable`` of the
/// same value type.
///
/// You rarely name this type. It is the source of the chain that
/// ``Chainable/chain()`` returns when it is called on an existential such as
/// `any Fetchable<Int>` or `any Fetchable<Int> & Sendable`, so that the
/// chain can still finish with ``Chain/sync()``.
///
/// ```swift
/// let count = ValueHolder(1)
/// let source: any Fetchable<Int> & Sendable = count
/// let observer = source.chain().do { print("count:", $0) }.sync()
/// // Prints "count: 1"
/// count.value = 2
/// // Prints "count: 2"
/// ```
///
/// A chain through an `AnyFetchable` behaves as one started from the wrapped
/// object: ``Chain/sync()`` fetches the wrapped object's current value, and
/// broadcasts go straight from the wrapped object to the chain's first step.
/// The wrapper adds no step per value.
///
/// ### Retention
/// The wrapper holds the wrapped object strongly. A finished ``Observer``
/// holds neither: the wrapped object's own lifetime rules apply.
///
/// ### Thread safety
/// The wrapper has no state of its own; it is as thread-safe as the object it
/// wraps.
public final class AnyFetchable<T>: Fetchable {
  /// The type of the values a chain receives.
  public typealias ChainValue = T

  @usableFromInline let base: any Fetchable<T>

  /// Wraps a source that has a current value.
  ///
  /// - Parameter base: The source that chains started from this wrapper
  ///   subscribe to and fetch from. It is held strongly.
  public init(_ base: any Fetchable<T>) {
    self.base = base
  }

  /// Returns the wrapped object's current value.
  ///
  /// Called by ``Chain/sync()`` on the thread that calls it.
  ///
  /// - Returns: The wrapped object's ``Fetchable/fetchedValue()``.
  public func fetchedValue() -> T {
    base.fetchedValue()
  }

  /// Whether the wrapped object has a value to fetch.
  ///
  /// - Returns: The wrapped object's ``Fetchable/canFetch()``.
  public func canFetch() -> Bool {
    base.canFetch()
  }

  /// Subscribes a finished chain to the wrapped object's broadcasts. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {
    base._subscribe(context, handler)
  }

  /// Registers what `sync()` fetches from the wrapped object. Not API.
  ///
  /// Forwarded, so that the observer captures the wrapped object as a chain
  /// started from it would, and never this wrapper.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {
    base._addFetch(context, handler)
  }
}

extension Fetchable {
  /// Starts a chain that can finish with ``Chain/sync()`` from this object
  /// when it is used as an existential, such as `any Fetchable<Int>`.
  ///
  /// On a concrete type, the compiler picks ``Chainable/chain()``; this
  /// overload is chosen only where that one cannot be used. The chain's source
  /// is an ``AnyFetchable`` wrapping this object.
  ///
  /// ```swift
  /// func show(_ title: any Fetchable<String> & Sendable) -> Observer {
  ///   title.chain().do { print("title:", $0) }.sync()
  /// }
  /// let observer = show(ValueHolder("Inbox"))
  /// // Prints "title: Inbox"
  /// ```
  ///
  /// - Returns: A new chain whose values are this object's values.
  ///
  /// The chain holds this object strongly while you build it; the finished
  /// ``Observer`` does not.
  @_disfavoredOverload
  @_documentation(visibility: internal)
  public func chain() -> Chain<ChainValue, AnyFetchable<ChainValue>> {
    Chain(source: AnyFetchable(self), retained: false)
  }
}
