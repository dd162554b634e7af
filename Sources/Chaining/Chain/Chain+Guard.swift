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
  /// - Parameter isIncluded: Called with every value that reaches this step.
  /// - Returns: A chain of the values for which `isIncluded` returned `true`.
  ///
  /// Also applies to the value ``sync()`` sends: a synced value that fails
  /// the test is not delivered. `isIncluded` runs on the delivering thread and
  /// is held strongly by the finished observer.
  @inlinable
  public consuming func `guard`(_ isIncluded: @escaping (Value) -> Bool) -> Chain<Value, Source> {
    appendingFilter(isIncluded)
  }

  /// Passes a value on only when a closure returns `true` for it; another
  /// name for ``guard(_:)``, familiar from Combine and RxSwift.
  ///
  /// ```swift
  /// let notifier = Notifier<String>()
  /// let observer = notifier.chain().filter { !$0.isEmpty }.do { print($0) }.end()
  /// notifier.notify(value: "")
  /// notifier.notify(value: "typed")
  /// // Prints "typed"
  /// ```
  ///
  /// - Parameter isIncluded: Called with every value that reaches this step.
  /// - Returns: A chain of the values for which `isIncluded` returned `true`.
  @inlinable
  public consuming func filter(_ isIncluded: @escaping (Value) -> Bool) -> Chain<Value, Source> {
    `guard`(isIncluded)
  }
}
