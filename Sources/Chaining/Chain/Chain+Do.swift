// MARK: - do

extension Chain {
  /// Runs a closure with each value and passes the value on unchanged.
  ///
  /// ```swift
  /// let notifier = Notifier<String>()
  /// let observer = notifier.chain().do { print("got", $0) }.end()
  /// notifier.notify(value: "hello")
  /// // Prints "got hello"
  /// ```
  ///
  /// - Parameters:
  ///   - body: Called with every value that reaches this step.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain with the same values.
  ///
  /// `body` runs where `isolation` says: on the actor of the code that
  /// builds the chain, or on the thread that delivers the value (see
  /// ``Sendable/broadcast(value:)``) when that code is nonisolated; also for
  /// the value ``sync()`` sends.
  /// The finished observer holds `body` (and what it captures) strongly until
  /// it is invalidated or released; capture `self` weakly when `self` owns
  /// the observer.
  @inlinable
  public consuming func `do`(
    _ body: @escaping (Value) -> Void,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    isolated(to: isolation).appendingLast { downstream in
      guard let downstream else { return body }
      return { value in
        body(value)
        downstream(value)
      }
    }
  }
}
