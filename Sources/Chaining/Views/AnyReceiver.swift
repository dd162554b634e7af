// MARK: - AnyReceiver

/// A send-only view: it passes values to a receiver and hides everything else
/// about it.
///
/// Give code an `AnyReceiver` when it should send into a holder or a
/// notifier, but neither read it, subscribe to it, nor cast it back to the
/// holder. (An `any Receivable<T>` also sends, but can be cast back with
/// `as?`.)
///
/// ```swift
/// let count = ValueHolder(0)
/// let input = AnyReceiver(count)
/// input.receive(value: 3)
/// print(count.value)
/// // Prints "3"
/// ```
///
/// An `AnyReceiver` is itself a ``Receivable``, so chains can
/// ``Chain/sendTo(_:isolation:)-1b7uw`` it, and `any Receivable<T>` arrays can
/// hold it beside other receivers.
///
/// ### Retention
/// The view holds its target strongly: as long as someone holds the view,
/// sending reaches the target. A chain that sends to the view holds the view
/// weakly, as it holds every receiver; pass `view.retain()` to keep it.
///
/// ### Threading
/// ``receive(value:)`` calls the target's `receive(value:)` on the calling
/// thread, synchronously. The view has no state of its own; it is as
/// thread-safe as its target. It is not `Swift.Sendable`, because it cannot
/// know whether its target is; to share a send-only reference between
/// threads, use `any Receivable<T> & Swift.Sendable`.
public final class AnyReceiver<T>: Receivable {
  /// The type of the values this view accepts.
  public typealias ReceiveValue = T

  @usableFromInline let target: any Receivable<T>

  /// Creates a send-only view of a receiver.
  ///
  /// - Parameter target: The receiver that values are passed to. It is held
  ///   strongly.
  public init(_ target: any Receivable<T>) {
    // Unwrap, so that a view of a view calls the target directly.
    if let view = target as? AnyReceiver<T> {
      self.target = view.target
    } else {
      self.target = target
    }
  }

  /// Passes a value to the target.
  ///
  /// Calls the target's `receive(value:)` on the calling thread, before
  /// returning.
  ///
  /// - Parameter value: The value to send.
  public func receive(value: T) {
    target.receive(value: value)
  }
}

extension Receivable {
  /// A send-only view of this receiver: it can send values in, but not read,
  /// subscribe or cast back.
  ///
  /// ```swift
  /// let events = Notifier<String>()
  /// let observer = events.chain().do { print("event:", $0) }.end()
  /// let input = events.sendOnly
  /// input.receive(value: "tap")
  /// // Prints "event: tap"
  /// ```
  ///
  /// Each access returns a new ``AnyReceiver``, which holds this object
  /// strongly.
  public var sendOnly: AnyReceiver<ReceiveValue> {
    AnyReceiver(self)
  }
}
