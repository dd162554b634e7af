// MARK: - optional, unwrap, forceUnwrap and compactMap

extension Chain {
  /// Wraps each value in an `Optional`.
  ///
  /// Useful to send to a receiver that takes an optional:
  ///
  /// ```swift
  /// let name = ValueHolder("Ann")
  /// let selection = ValueHolder<String?>(nil)
  /// let observer = name.chain().optional().sendTo(selection).sync()
  /// print(selection.value ?? "none")
  /// // Prints "Ann"
  /// ```
  ///
  /// - Returns: A chain of the same values, as optionals.
  @inlinable
  public consuming func optional() -> Chain<Value?, Source> {
    appending { downstream in
      { value in downstream(.some(value)) }
    }
  }

  /// Transforms each value and passes on only the results that are not `nil`.
  ///
  /// ```swift
  /// let text = ValueHolder("12")
  /// let observer = text.chain().compactMap { Int($0) }.do { print($0) }.sync()
  /// // Prints "12"
  /// text.value = "twelve"  // not a number: nothing is passed on
  /// ```
  ///
  /// - Parameters:
  ///   - transform: Called with every value that reaches this step.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain of the non-`nil` results.
  @inlinable
  public consuming func compactMap<Next>(
    _ transform: @escaping (Value) -> Next?,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Next, Source> {
    isolated(to: isolation).appendingCompactMap(transform)
  }

  /// Passes on the wrapped value of each optional and drops `nil`.
  ///
  /// ```swift
  /// let selection = ValueHolder<Int?>(nil)
  /// let observer = selection.chain().unwrap().do { print("selected", $0) }.sync()
  /// selection.value = 3
  /// // Prints "selected 3"
  /// ```
  ///
  /// - Returns: A chain of the non-`nil` values, unwrapped.
  @inlinable
  public consuming func unwrap<Wrapped>() -> Chain<Wrapped, Source> where Value == Wrapped? {
    appending { downstream in
      { value in
        if let wrapped = value { downstream(wrapped) }
      }
    }
  }

  /// Passes on the wrapped value of each optional, and stops the program if
  /// a value is `nil`.
  ///
  /// Use it only where `nil` is a programming error; otherwise use
  /// ``unwrap()``.
  ///
  /// ```swift
  /// let current = ValueHolder<Int?>(1)
  /// let observer = current.chain().forceUnwrap().do { print($0) }.sync()
  /// // Prints "1"
  /// ```
  ///
  /// - Returns: A chain of the values, unwrapped.
  @inlinable
  public consuming func forceUnwrap<Wrapped>() -> Chain<Wrapped, Source> where Value == Wrapped? {
    appending { downstream in
      { value in
        guard let wrapped = value else {
          fatalError("Chain.forceUnwrap(): a nil value of \(Value.self) reached forceUnwrap()")
        }
        downstream(wrapped)
      }
    }
  }
}
