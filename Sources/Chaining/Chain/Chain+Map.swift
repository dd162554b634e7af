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
  /// - Parameter transform: Called with every value that reaches this step;
  ///   its result goes on down the chain.
  /// - Returns: A chain of the transformed values.
  ///
  /// `transform` runs on the delivering thread, also for the value
  /// ``sync()`` sends, and is held strongly by the finished observer.
  @inlinable
  public consuming func map<Next>(_ transform: @escaping (Value) -> Next) -> Chain<Next, Source> {
    appendingMap(transform)
  }
}
