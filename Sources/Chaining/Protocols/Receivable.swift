// MARK: - Receivable

/// An object that can be the end of a chain: ``Chain/sendTo(_:isolation:)-1b7uw`` calls
/// its ``receive(value:)``.
///
/// ```swift
/// final class Label: Receivable {
///   var text = ""
///   func receive(value: String) { text = value }
/// }
///
/// let label = Label()
/// let title = ValueHolder("Inbox")
/// let observer = title.chain().sendTo(label).sync()
/// print(label.text)
/// // Prints "Inbox"
/// ```
public protocol Receivable<ReceiveValue>: AnyObject {
  /// The type of the values this object accepts.
  associatedtype ReceiveValue

  /// Accepts a value sent through a chain.
  ///
  /// Called synchronously on the thread that delivers the value (see
  /// ``Sendable/broadcast(value:)``). A chain holds its receivers weakly
  /// unless they were passed as ``Chainable/retain()``; once a receiver is
  /// released, the chain skips it.
  func receive(value: ReceiveValue)
}
