// MARK: - map

extension Chain {
  /// Transforms each value that flows through the chain.
  ///
  /// ```swift
  /// let celsius = ValueHolder(20.0)
  /// let observer = celsius.chain().map { $0 * 9 / 5 + 32 }.do { print($0, "°F") }.sync()
  /// // Prints "68.0 °F"
  /// ```
  ///
  /// - Parameters:
  ///   - transform: Called with every value that reaches this step;
  ///     its result goes on down the chain.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain of the transformed values.
  ///
  /// `transform` runs where `isolation` says, also for the value ``sync()``
  /// sends, and is held strongly by the finished observer.
  @inlinable
  public consuming func map<Next>(
    _ transform: @escaping (Value) -> Next,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Next, Source> {
    isolated(to: isolation).appendingMap(transform)
  }
}
