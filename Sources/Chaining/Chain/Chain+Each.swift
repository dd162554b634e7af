// MARK: - each

extension Chain where Value: Sequence {
  /// Passes on each element of each sequence value, in order.
  ///
  /// ```swift
  /// let batch = Notifier<[String]>()
  /// let observer = batch.chain().each().do { print($0) }.end()
  /// batch.notify(value: ["a", "b"])
  /// // Prints "a", then "b"
  /// ```
  ///
  /// - Returns: A chain of the elements.
  ///
  /// All elements of one value are passed on before the next value is
  /// handled. An empty sequence passes nothing on.
  @inlinable
  public consuming func each() -> Chain<Value.Element, Source> {
    appending { downstream in
      { sequence in
        for element in sequence { downstream(element) }
      }
    }
  }
}
