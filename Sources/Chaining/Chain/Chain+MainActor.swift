// MARK: - doOnMainActor and sendTo a main-actor receiver

extension Chain where Value: Swift.Sendable {
  /// Runs a main-actor closure with each value, then the rest of the chain on
  /// the main actor.
  ///
  /// Use it to update UI state from a model that may change on any thread:
  ///
  /// ```swift
  /// @MainActor final class ViewModel {
  ///   var title = ""
  /// }
  /// let viewModel = ViewModel()
  /// let observer = model.name.chain().map { "Hello, \($0)" }.doOnMainActor { title in
  ///   viewModel.title = title  // main-actor state, no warning
  /// }.sync()
  /// ```
  ///
  /// A value that reaches this step on the main actor (the main thread, or
  /// a block of the main queue), while no earlier value is still waiting,
  /// runs at once; any other value is queued on the main queue and runs
  /// later, in order.
  ///
  /// In code that is already on the main actor (a `@MainActor` type), a
  /// plain ``do(_:isolation:)`` does the same: steps run on the actor of the
  /// code that builds them. `doOnMainActor` is for code that is not: a
  /// nonisolated model or helper that hands values to the main actor. The
  /// two share one hop: a chain built on the main actor with both has one.
  ///
  /// - Parameter body: Called on the main actor with every value.
  /// - Returns: A chain with the same values; later steps run on the main actor.
  ///
  /// Values must be `Swift.Sendable`. After the observer is invalidated, no
  /// queued value reaches `body`.
  public consuming func doOnMainActor(_ body: @escaping @MainActor @Sendable (Value) -> Void) -> Chain<Value, Source> {
    // After `isolated(to:)` every value runs on the main actor.
    isolated(to: MainActor.shared).appendingLast { downstream in
      guard let downstream else { return { value in MainActor.assumeIsolated { body(value) } } }
      return { value in
        MainActor.assumeIsolated { body(value) }
        downstream(value)
      }
    }
  }

  /// Hands each value to a main-actor receiver's `receive(value:)`, on the
  /// main actor, and passes it on.
  ///
  /// ```swift
  /// @MainActor final class TitleLabel: MainActorReceivable {
  ///   var text = ""
  ///   func receive(value: String) { text = value }
  /// }
  /// let label = TitleLabel()
  /// let observer = model.title.chain().sendTo(label).sync()
  /// ```
  ///
  /// Delivery follows ``doOnMainActor(_:)``. The receiver is held weakly.
  ///
  /// - Parameter receiver: The object to send to.
  /// - Returns: A chain with the same values; later steps run on the main actor.
  public consuming func sendTo<Receiver: MainActorReceivable>(_ receiver: Receiver) -> Chain<Value, Source>
  where Receiver.ReceiveValue == Value {
    doOnMainActor { [weak receiver] value in
      receiver?.receive(value: value)
    }
  }
}
