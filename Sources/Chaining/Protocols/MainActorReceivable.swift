// MARK: - MainActorReceivable

/// An object on the main actor that can be the end of a chain.
///
/// The main-actor counterpart of ``Receivable``: a `@MainActor` class, such
/// as a view or a view model, adopts it with no warning in Swift 6, and
/// ``Chain/sendTo(_:)-lxwb`` calls its ``receive(value:)``
/// on the main actor, whichever thread the value comes from.
///
/// ```swift
/// @MainActor final class CounterLabel: MainActorReceivable {
///   var text = ""
///   func receive(value: Int) { text = "\(value) items" }
/// }
/// ```
@MainActor
public protocol MainActorReceivable<ReceiveValue>: AnyObject, Swift.Sendable {
  /// The type of the values this object accepts.
  associatedtype ReceiveValue

  /// Accepts a value sent through a chain, on the main actor.
  func receive(value: ReceiveValue)
}
