// MARK: - Notifier

/// Broadcasts values it is handed, without holding any.
///
/// Use a notifier for events, such as a button tap or a saved record, where
/// there is no current value to sync.
///
/// ```swift
/// let saved = Notifier<String>()
/// let observer = saved.chain().do { print("saved", $0) }.end()
/// saved.notify(value: "draft.txt")
/// // Prints "saved draft.txt"
/// ```
///
/// A notifier is also a ``Receivable``: values sent to it are broadcast
/// again, so a chain can feed it. It is not ``Fetchable``, so ``Chain/sync()``
/// does not compile on a chain started from it.
///
/// A notifier may be used from any thread; see
/// ``Sendable/broadcast(value:)`` for which thread runs the handlers.
public final class Notifier<T>: Sendable, Receivable {
  /// The type of the values chains receive.
  public typealias ChainValue = T
  /// The type of the values this notifier accepts as a receiver.
  public typealias ReceiveValue = T

  @usableFromInline let core = _SenderCore<T>()

  /// Creates a notifier.
  public init() {}

  deinit {
    // Nothing can notify any more (see `_SenderCore.senderEnded()`).
    core.senderEnded()
  }

  /// Broadcasts `value` to every chain started from this notifier.
  ///
  /// - Parameter value: The value to send.
  @inlinable
  public func notify(value: T) {
    core.broadcast(value)
  }

  /// Broadcasts a value received through a chain.
  @inlinable
  public func receive(value: T) {
    core.broadcast(value)
  }

  /// Subscribes a chain to the stored core, borrowing it: no reference
  /// counting, unlike going through `_senderCore(creating:)`. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {
    context.add(core.subscribe(gate: context.gate, handler: handler))
  }

  /// The stored core of this notifier. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<T>? {
    core
  }
}

extension Notifier where T == Void {
  /// Broadcasts an event that carries no value.
  ///
  /// ```swift
  /// let tapped = Notifier<Void>()
  /// let observer = tapped.chain().do { print("tapped") }.end()
  /// tapped.notify()
  /// // Prints "tapped"
  /// ```
  @inlinable
  public func notify() {
    core.broadcast(())
  }
}

// @unchecked: the notifier's only state is its core, which guards itself.
extension Notifier: @unchecked Swift.Sendable where T: Swift.Sendable {}
