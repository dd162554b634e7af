// MARK: - prefix(while:), first(where:) and drop(while:)

extension Chain {
  /// Passes values on while a closure returns `true` for them; at the
  /// first value it rejects, invalidates the observer.
  ///
  /// ```swift
  /// let notifier = Notifier<Int>()
  /// let observer = notifier.chain().prefix { $0 < 3 }.do { print($0) }.end()
  /// for number in 1...4 { notifier.notify(value: number) }
  /// // Prints "1", then "2"; observer.isInvalidated is now true
  /// ```
  ///
  /// Combine's `prefix(while:)` and RxSwift's `take(while:)`: the rejected
  /// value is not passed on, and nothing after it is.
  ///
  /// - Parameters:
  ///   - predicate: Called with each value that reaches this step, until
  ///     it first returns `false`; never after.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain (see ``guard(_:isolation:)``).
  /// - Returns: A chain that ends at the first value `predicate` rejects.
  ///
  /// The value ``sync()`` sends is tested like any other: a synced value
  /// that fails ends the chain at once. Invalidation releases the
  /// observer's subscriptions, closures and retained objects, as
  /// ``prefix(_:)`` does; a value already on its way through the steps
  /// after this one finishes first. `predicate` is held strongly by the
  /// observer until then.
  @inlinable
  public consuming func prefix(
    while predicate: @escaping (Value) -> Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    isolated(to: isolation).appendingEnding { value, downstream in
      guard predicate(value) else { return true }
      downstream(value)
      return false
    }
  }

  /// Passes on the first value a closure returns `true` for, then
  /// invalidates the observer.
  ///
  /// ```swift
  /// let notifier = Notifier<Int>()
  /// let observer = notifier.chain().first { $0 > 0 }.do { print($0) }.end()
  /// for number in [-10, -5, 0, 5, 10] { notifier.notify(value: number) }
  /// // Prints "5"; observer.isInvalidated is now true
  /// ```
  ///
  /// Combine's `first(where:)`; RxSwift's `filter(_:).take(1)`.
  ///
  /// - Parameters:
  ///   - predicate: Called with each value that reaches this step, until
  ///     it first returns `true`; never after.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain (see ``guard(_:isolation:)``).
  /// - Returns: A chain that passes one value on, then ends.
  ///
  /// The value ``sync()`` sends is tested like any other. The observer is
  /// invalidated after the value has run through the rest of the chain,
  /// as with ``first()``.
  @inlinable
  public consuming func first(
    where predicate: @escaping (Value) -> Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    isolated(to: isolation).appendingEnding { value, downstream in
      guard predicate(value) else { return false }
      downstream(value)
      return true
    }
  }

  /// Skips values while a closure returns `true` for them; from the first
  /// value it rejects, passes every value on.
  ///
  /// ```swift
  /// let notifier = Notifier<Int>()
  /// let observer = notifier.chain().drop { $0 <= 0 }.do { print($0) }.end()
  /// for number in [-40, -10, 0, 10, 0, 100, -5] { notifier.notify(value: number) }
  /// // Prints "10", "0", "100", then "-5"
  /// ```
  ///
  /// Combine's `drop(while:)` and RxSwift's `skip(while:)`.
  ///
  /// - Parameters:
  ///   - predicate: Called with each value that reaches this step, until
  ///     it first returns `false`; never after.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain (see ``guard(_:isolation:)``).
  /// - Returns: A chain of the values from the first one `predicate`
  ///   rejects.
  ///
  /// The value ``sync()`` sends is tested like any other. Each finished
  /// chain keeps its own state, touched only by its handlers, one value at
  /// a time; `predicate` is held strongly by the observer.
  @inlinable
  public consuming func drop(
    while predicate: @escaping (Value) -> Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    isolated(to: isolation).appending { downstream, _ in
      let dropping = Box(true)
      return { value in
        if dropping.value {
          if predicate(value) { return }
          dropping.value = false
        }
        downstream(value)
      }
    }
  }

  /// Appends a step that can end the binding: `step` gets each value and
  /// the rest of the chain, and returns `true` to end it. The observer is
  /// then invalidated (after the value, if `step` passed it on, has run
  /// through the rest of the chain), and later values, already on their
  /// way, are ignored. The step refers to the observer weakly.
  @inlinable
  consuming func appendingEnding(
    _ step: @escaping (_ value: Value, _ downstream: (Value) -> Void) -> Bool
  ) -> Chain<Value, Source> {
    appending { downstream, context in
      let ended = Box(false)
      let observer = context.observer
      return { [weak observer] value in
        if ended.value { return }
        if step(value, downstream) {
          ended.value = true
          observer?.invalidate()
        }
      }
    }
  }
}
