import Dispatch
import Observation

// MARK: - chain(_:)

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Observable where Self: AnyObject & Swift.Sendable {
  /// Starts a chain from one property of this `@Observable` model.
  ///
  /// A shorthand for an ``ObservedValue`` that reads `keyPath`, kept alive
  /// by the chain's observer:
  ///
  /// ```swift
  /// import Observation
  ///
  /// @Observable final class Profile: @unchecked Swift.Sendable {
  ///   var first = "Ann"
  /// }
  ///
  /// let profile = Profile()
  /// let queue = DispatchQueue(label: "profile")
  /// let observer = profile.chain(\.first, on: queue).do { print($0) }.sync()
  /// // Prints "Ann"
  /// queue.sync { profile.first = "Bea" }
  /// queue.sync {}
  /// // Prints "Bea"
  /// observer.invalidate()
  /// ```
  ///
  /// The model is held weakly: once it is gone, the chain receives nothing
  /// more. Values arrive on `queue`, as ``ObservedValue`` describes.
  ///
  /// - Parameters:
  ///   - keyPath: The property to read.
  ///   - queue: The serial queue on which the property is read after each
  ///     change: the queue the model is written on (see
  ///     ``ObservedValue``).
  /// - Returns: A chain of the property's values, which ``Chain/sync()``
  ///   starts with the current one.
  public func chain<Value>(
    _ keyPath: KeyPath<Self, Value> & Swift.Sendable,
    on queue: DispatchQueue
  ) -> Chain<Value, ObservedValue<Value>> {
    Chain(source: ObservedValue(of: self, on: queue) { $0[keyPath: keyPath] }, retained: true)
  }

  /// Unavailable: the chain reads the model on the queue where it is
  /// written, so it needs that queue; see ``chain(_:on:)``.
  @available(
    *,
    unavailable,
    message:
      "pass the queue the model is written on, chain(keyPath, on: queue) (the writer rule in Observation.md), or use ObservedValue(onMainActor:_:) for a @MainActor model"
  )
  public func chain<Value>(_ keyPath: KeyPath<Self, Value> & Swift.Sendable) -> Chain<Value, ObservedValue<Value>> {
    fatalError("unavailable")
  }
}
