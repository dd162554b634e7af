// MARK: - combine

extension Chain {
  /// Joins a chain of another value type, sending both latest values together.
  ///
  /// Like Combine's `combineLatest`: nothing is sent until both chains have
  /// delivered a value; from then on every value from either side sends the
  /// pair of the latest values.
  ///
  /// ```swift
  /// let first = ValueHolder("Ann")
  /// let last = ValueHolder("Lee")
  /// let observer = first.chain().combine(last.chain()).map { "\($0) \($1)" }.do { print($0) }.sync()
  /// // Prints "Ann Lee"
  /// last.value = "Kim"
  /// // Prints "Ann Kim"
  /// ```
  ///
  /// Combining again flattens the tuple, up to five values:
  /// `a.chain().combine(b.chain()).combine(c.chain())` sends `(A, B, C)`.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(Value, Other)` pairs.
  ///
  /// ``sync()``, when this chain's source is ``Fetchable``, fetches every
  /// fetchable source in order; with two fetchable sources it sends exactly
  /// one pair. Each finished chain keeps its own latest values, alive for as
  /// long as the observer. Sources are held as their own chains hold them.
  @inlinable
  public consuming func combine<Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value, Other), Source> {
    combinePair(other)
  }

  /// Combines a chain of pairs with a third chain into triples.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, Other)` triples.
  @inlinable
  public consuming func combine<A, B, Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, Other), Source> where Value == (A, B) {
    combinePair(other).map { ($0.0, $0.1, $1) }
  }

  /// Combines a chain of triples with a fourth chain into quadruples.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, Other)` tuples.
  @inlinable
  public consuming func combine<A, B, C, Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, Other), Source> where Value == (A, B, C) {
    combinePair(other).map { ($0.0, $0.1, $0.2, $1) }
  }

  /// Combines a chain of quadruples with a fifth chain into quintuples.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, D, Other)` tuples.
  @inlinable
  public consuming func combine<A, B, C, D, Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, D, Other), Source> where Value == (A, B, C, D) {
    combinePair(other).map { ($0.0, $0.1, $0.2, $0.3, $1) }
  }

  @inlinable
  consuming func combinePair<Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value, Other), Source> {
    let build = self.build
    let otherBuild = other.build
    return Chain<(Value, Other), Source> { given, context in
      // Not `??`, which would wrap the closure in reabstraction thunks.
      let downstream: ((Value, Other)) -> Void
      if let given { downstream = given } else { downstream = { _ in } }
      let latest = Box<(Value?, Other?)>((nil, nil))
      build(
        { value in
          latest.value.0 = value
          if let other = latest.value.1 { downstream((value, other)) }
        },
        context
      )
      otherBuild(
        { other in
          latest.value.1 = other
          if let value = latest.value.0 { downstream((value, other)) }
        },
        context
      )
    }
  }
}
