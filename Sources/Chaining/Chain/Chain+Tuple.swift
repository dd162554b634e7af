// MARK: - tuple

extension Chain {
  /// Joins a chain of another value type, sending each value as one side of
  /// a pair of optionals.
  ///
  /// Each delivery sets exactly one side: `(value, nil)` for a value from this
  /// chain, `(nil, value)` for one from `other`. Use
  /// ``combine(_:)->Chain<(Value,Other),Source>`` to get both latest values
  /// together instead.
  ///
  /// ```swift
  /// let name = Notifier<String>()
  /// let age = Notifier<Int>()
  /// let observer = name.chain().tuple(age.chain()).do { print($0) }.end()
  /// name.notify(value: "Ann")
  /// age.notify(value: 30)
  /// // Prints "(Optional("Ann"), nil)", then "(nil, Optional(30))"
  /// ```
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(Value?, Other?)` pairs.
  ///
  /// ``sync()``, when this chain's source is ``Fetchable``, sends one pair for
  /// each fetchable source, in source order. Sources are held as their own
  /// chains hold them.
  @inlinable
  public consuming func tuple<Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value?, Other?), Source> {
    let build = self.build
    let otherBuild = other.build
    return Chain<(Value?, Other?), Source> { given, context in
      // Not `??`, which would wrap the closure in reabstraction thunks.
      let downstream: ((Value?, Other?)) -> Void
      if let given { downstream = given } else { downstream = { _ in } }
      build({ downstream(($0, nil)) }, context)
      otherBuild({ downstream((nil, $0)) }, context)
    }
  }
}
