// MARK: - AnyChainable

/// A source that forwards to any ``Chainable`` of the same value type.
///
/// You rarely name this type. It is the source of the chain that
/// ``Chainable/chain()`` returns when it is called on an existential, such as
/// `any Chainable<Int>`: a chain's source must be a concrete type, so the
/// existential is wrapped in an `AnyChainable`.
///
/// ```swift
/// let count = ValueHolder(1)
/// let source: any Chainable<Int> = count
/// let observer = source.chain().do { print("count:", $0) }.end()
/// count.value = 2
/// // Prints "count: 2"
/// ```
///
/// A chain through an `AnyChainable` behaves as one started from the wrapped
/// object: it subscribes to the wrapped object once, when the chain is
/// finished, and values then go straight from the wrapped object to the
/// chain's first step. The wrapper adds no step per value.
///
/// ### Retention
/// The wrapper holds the wrapped object strongly. A finished ``Observer``
/// holds neither: the wrapped object's own lifetime rules apply, as they do
/// to a chain started from it directly.
///
/// ### Thread safety
/// The wrapper has no state of its own; it is as thread-safe as the object it
/// wraps.
public final class AnyChainable<T>: Chainable {
  /// The type of the values a chain receives.
  public typealias ChainValue = T

  @usableFromInline let base: any Chainable<T>

  /// Wraps a source.
  ///
  /// - Parameter base: The source that chains started from this wrapper
  ///   subscribe to. It is held strongly.
  public init(_ base: any Chainable<T>) {
    self.base = base
  }

  /// Subscribes a finished chain to the wrapped object's broadcasts. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {
    base._subscribe(context, handler)
  }

  /// Registers what `sync()` fetches from the wrapped object. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {
    base._addFetch(context, handler)
  }
}

extension Chainable {
  /// Starts a chain from this object when it is used as an existential, such
  /// as `any Chainable<Int>`.
  ///
  /// On a concrete type, the compiler picks ``Chainable/chain()``; this
  /// overload is chosen only where that one cannot be used, because its result
  /// names `Self`. The chain's source is an ``AnyChainable`` wrapping this
  /// object, so ``Chain/sync()`` is not available: use `any Fetchable<T>`
  /// when the code needs it.
  ///
  /// ```swift
  /// let sources: [any Chainable<Int>] = [ValueHolder(1), Notifier<Int>()]
  /// let observers = sources.map { $0.chain().do { print($0) }.end() }
  /// ```
  ///
  /// - Returns: A new chain whose values are this object's values.
  ///
  /// The chain holds this object strongly while you build it; the finished
  /// ``Observer`` does not.
  @_disfavoredOverload
  @_documentation(visibility: internal)
  public func chain() -> Chain<ChainValue, AnyChainable<ChainValue>> {
    Chain(source: AnyChainable(self), retained: false)
  }
}
