// MARK: - guard and filter

extension Chain {
  /// Passes a value on only when a closure returns `true` for it.
  ///
  /// ```swift
  /// let count = ValueHolder(1)
  /// let observer = count.chain().guard { $0 % 2 == 0 }.do { print("even", $0) }.sync()
  /// count.value = 2
  /// // Prints "even 2"
  /// ```
  ///
  /// - Parameters:
  ///   - isIncluded: Called with every value that reaches this step.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain of the values for which `isIncluded` returned `true`.
  ///
  /// Also applies to the value ``sync()`` sends: a synced value that fails
  /// the test is not delivered. `isIncluded` runs where `isolation` says and
  /// is held strongly by the finished observer.
  @inlinable
  public consuming func `guard`(
    _ isIncluded: @escaping (Value) -> Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    isolated(to: isolation).appendingFilter(isIncluded)
  }

  /// Passes a value on only when a closure returns `true` for it; another
  /// name for ``guard(_:isolation:)``, familiar from Combine and RxSwift.
  ///
  /// ```swift
  /// let notifier = Notifier<String>()
  /// let observer = notifier.chain().filter { !$0.isEmpty }.do { print($0) }.end()
  /// notifier.notify(value: "")
  /// notifier.notify(value: "typed")
  /// // Prints "typed"
  /// ```
  ///
  /// - Parameters:
  ///   - isIncluded: Called with every value that reaches this step.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain of the values for which `isIncluded` returned `true`.
  @inlinable
  public consuming func filter(
    _ isIncluded: @escaping (Value) -> Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    `guard`(isIncluded, isolation: isolation)
  }
}
