// MARK: - prefix and first

extension Chain {
  /// Passes on the first `count` values, then invalidates the observer.
  ///
  /// ```swift
  /// let notifier = Notifier<Int>()
  /// let observer = notifier.chain().prefix(2).do { print($0) }.end()
  /// notifier.notify(value: 1)
  /// notifier.notify(value: 2)
  /// notifier.notify(value: 3)
  /// // Prints "1", then "2"; observer.isInvalidated is now true
  /// ```
  ///
  /// - Parameter count: How many values to pass on; must not be negative.
  /// - Returns: A chain that ends after `count` values.
  ///
  /// The value ``sync()`` sends counts. After the last value has run through
  /// the rest of the chain, the observer is invalidated, which releases its
  /// subscriptions, closures and retained objects. With a `count` of 0,
  /// nothing is passed on and the first value that arrives invalidates the
  /// observer.
  @inlinable
  public consuming func prefix(_ count: Int) -> Chain<Value, Source> {
    if count < 0 { fatalError("Chain.prefix(_:): count must not be negative, got \(count)") }
    return appending { downstream, context in
      let passed = Box(0)
      let observer = context.observer
      return { [weak observer] value in
        if passed.value < count {
          passed.value += 1
          downstream(value)
        }
        if passed.value >= count {
          observer?.invalidate()
        }
      }
    }
  }

  /// Passes on the first value, then invalidates the observer.
  ///
  /// ```swift
  /// let holder = ValueHolder("first")
  /// let observer = holder.chain().first().do { print($0) }.sync()
  /// // Prints "first"
  /// holder.value = "second"  // nothing is printed
  /// ```
  ///
  /// - Returns: A chain that ends after one value.
  @inlinable
  public consuming func first() -> Chain<Value, Source> {
    prefix(1)
  }
}
