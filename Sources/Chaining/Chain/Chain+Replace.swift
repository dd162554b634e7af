// MARK: - replace and replaceWithVoid

extension Chain {
  /// Replaces every value with the same constant.
  ///
  /// ```swift
  /// let tapped = Notifier<Void>()
  /// let observer = tapped.chain().replace("tapped").do { print($0) }.end()
  /// tapped.notify()
  /// // Prints "tapped"
  /// ```
  ///
  /// - Parameter value: The value to send instead. The finished observer
  ///   holds it.
  /// - Returns: A chain of `value`, once for every value that reaches this step.
  @inlinable
  public consuming func replace<Next>(_ value: Next) -> Chain<Next, Source> {
    appending { downstream in
      { _ in downstream(value) }
    }
  }

  /// Replaces every value with `()`, keeping only the fact that it happened.
  ///
  /// ```swift
  /// let name = ValueHolder("Ann")
  /// let observer = name.chain().replaceWithVoid().do { print("changed") }.end()
  /// name.value = "Bob"
  /// // Prints "changed"
  /// ```
  ///
  /// - Returns: A chain of `Void` values.
  @inlinable
  public consuming func replaceWithVoid() -> Chain<Void, Source> {
    replace(())
  }
}
