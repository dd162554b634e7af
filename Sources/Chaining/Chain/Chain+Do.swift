// MARK: - do

extension Chain {
  /// Runs a closure with each value and passes the value on unchanged.
  ///
  /// ```swift
  /// let notifier = Notifier<String>()
  /// let observer = notifier.chain().do { print("got", $0) }.end()
  /// notifier.notify(value: "hello")
  /// // Prints "got hello"
  /// ```
  ///
  /// - Parameter body: Called with every value that reaches this step.
  /// - Returns: A chain with the same values.
  ///
  /// `body` runs on the thread that delivers the value (see
  /// ``Sendable/broadcast(value:)``), also for the value ``sync()`` sends.
  /// The finished observer holds `body` (and what it captures) strongly until
  /// it is invalidated or released; capture `self` weakly when `self` owns
  /// the observer.
  @inlinable
  public consuming func `do`(_ body: @escaping (Value) -> Void) -> Chain<Value, Source> {
    appendingLast { downstream in
      guard let downstream else { return body }
      return { value in
        body(value)
        downstream(value)
      }
    }
  }
}
