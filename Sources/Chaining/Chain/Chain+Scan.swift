// MARK: - scan

extension Chain {
  /// Accumulates the values and passes on each running result.
  ///
  /// ```swift
  /// let deposits = Notifier<Int>()
  /// let observer = deposits.chain().scan(0, +).do { print("balance", $0) }.end()
  /// deposits.notify(value: 10)
  /// deposits.notify(value: 5)
  /// // Prints "balance 10", then "balance 15"
  /// ```
  ///
  /// - Parameters:
  ///   - initial: The starting result.
  ///   - next: Combines the result so far with a value into the next result.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain of the running results.
  ///
  /// Each finished chain keeps its own result, starting from `initial`; the
  /// value ``sync()`` sends is accumulated like any other.
  @inlinable
  public consuming func scan<Result>(
    _ initial: Result,
    _ next: @escaping (Result, Value) -> Result,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Result, Source> {
    isolated(to: isolation).appending { downstream in
      let result = Box(initial)
      return { value in
        result.value = next(result.value, value)
        downstream(result.value)
      }
    }
  }
}
