// MARK: - Chainable

/// An object a chain can start from.
///
/// `Chainable` only names the type of the values the object sends. What the
/// object can do is said by the protocols that refine it: a ``Sendable``
/// pushes values with ``Sendable/broadcast(value:)``, a ``Fetchable`` hands out
/// its current value when a chain calls ``Chain/sync()``, and a ``Syncable``
/// does both.
///
/// You rarely adopt `Chainable` directly; adopt ``Sendable``, ``Fetchable`` or
/// ``Syncable`` and write `typealias ChainValue = ...`:
///
/// ```swift
/// final class Clock: Sendable {
///   typealias ChainValue = Int
///   func tick(_ second: Int) { broadcast(value: second) }
/// }
/// let clock = Clock()
/// let observer = clock.chain().do { print("tick", $0) }.end()
/// clock.tick(1)
/// // Prints "tick 1"
/// ```
public protocol Chainable<ChainValue>: AnyObject {
  /// The type of the values a chain started from this object receives.
  associatedtype ChainValue

  /// Subscribes a finished chain to this object's broadcasts. Not API.
  ///
  /// The default does nothing; ``Sendable`` provides the real one.
  ///
  /// Contract, with ``_addFetch(_:_:)``: the two together register at
  /// most one fetch per chain, so that `sync()` sends one value. A source
  /// that takes the value to fetch here, in the same step as it
  /// subscribes (a holder, under its lock, so that no write falls between
  /// the two), must do nothing in `_addFetch`; one that does not, leaves
  /// the fetch to `_addFetch`. In debug builds, a chain stops the
  /// program, naming the source, when a source registers two.
  func _subscribe(_ context: _ChainContext, _ handler: @escaping (ChainValue) -> Void)

  /// Registers what `sync()` fetches from this object. Not API.
  ///
  /// The default does nothing; ``Fetchable`` provides the real one.
  ///
  /// Contract: see ``_subscribe(_:_:)``: empty when `_subscribe` already
  /// took the value to fetch.
  func _addFetch(_ context: _ChainContext, _ handler: @escaping (ChainValue) -> Void)
}

extension Chainable {
  /// Starts a chain from this object.
  ///
  /// The chain is a builder: add steps such as ``Chain/do(_:isolation:)``,
  /// ``Chain/map(_:isolation:)`` and ``Chain/sendTo(_:isolation:)-1b7uw``, then finish it
  /// with ``Chain/end()`` or ``Chain/sync()`` to get the ``Observer`` that
  /// keeps the binding alive.
  ///
  /// ```swift
  /// let name = ValueHolder("Ann")
  /// let observer = name.chain().map { "Hello, \($0)" }.do { print($0) }.sync()
  /// // Prints "Hello, Ann"
  /// ```
  ///
  /// - Returns: A new chain whose values are this object's values.
  ///
  /// The chain holds this object strongly while you build it. The finished
  /// ``Observer`` does not: when the object is released, the binding goes
  /// quiet. Use ``retain()`` to have the observer keep it alive.
  @inlinable
  public func chain() -> Chain<ChainValue, Self> {
    Chain(source: self, retained: false)
  }

  /// Returns a wrapper that makes the finished ``Observer`` keep this object alive.
  ///
  /// By default an observer holds neither the object its chain started from
  /// nor the receivers it sends to. Start the chain from `retain()`, or pass
  /// `retain()` to ``Chain/sendTo(_:isolation:)-1s4fs``, to keep the object
  /// alive for as long as the observer is valid:
  ///
  /// ```swift
  /// let observer = ValueHolder(1).retain().chain().do { print($0) }.sync()
  /// // Prints "1", and the holder lives until `observer` is invalidated or released.
  /// ```
  ///
  /// - Returns: A ``Retainer`` holding this object strongly.
  public func retain() -> Retainer<Self> {
    Retainer(self)
  }

  /// Does nothing: this object does not broadcast. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (ChainValue) -> Void) {}

  /// Does nothing: this object has no value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (ChainValue) -> Void) {}
}
