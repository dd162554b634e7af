// MARK: - tuple

extension Chain {
  /// Joins a chain of another value type, sending each value as one side of
  /// a pair of optionals.
  ///
  /// Each delivery sets exactly one side: `(value, nil)` for a value from this
  /// chain, `(nil, value)` for one from `other`. Use
  /// ``combine(_:)-6p7cs`` to get both latest values
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
  /// ``sync()``, when any source is ``Fetchable``, sends one pair for
  /// each fetchable source, in source order. Sources are held as their own
  /// chains hold them. When a side crosses a hop, the steps that follow
  /// still run one value at a time, as after ``merge(_:)-2oy9n``.
  @inlinable
  public consuming func tuple<Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value?, Other?), Source> {
    tuplePair(other, as: Source.self)
  }

  /// Joins a chain whose source is ``Fetchable``, sending each value with
  /// its side; ``sync()`` is then available on the result.
  ///
  /// Behaves exactly as ``tuple(_:)-5b6zn``; the
  /// result takes the other chain's source type, so that a chain started
  /// from a ``Notifier`` and joined with a holder can be synced.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(Value?, Other?)` pairs.
  @inlinable
  public consuming func tuple<Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value?, Other?), OtherSource> {
    tuplePair(other, as: OtherSource.self)
  }

  /// The pairs of `tuple`, as a chain whose source type is `Result`.
  @inlinable
  consuming func tuplePair<Other, OtherSource, Result>(
    _ other: consuming Chain<Other, OtherSource>,
    as _: Result.Type
  ) -> Chain<(Value?, Other?), Result> {
    let build = self.build
    let otherBuild = other.build
    return Chain<(Value?, Other?), Result>(isolation: joinedIsolation(isolation, other.isolation)) { given, context in
      // Not `??`, which would wrap the closure in reabstraction thunks.
      let downstream: ((Value?, Other?)) -> Void
      if let given { downstream = given } else { downstream = { _ in } }
      // One value at a time after the join, even when a side hops.
      JoinSides.build(
        build,
        otherBuild,
        first: { downstream(($0, nil)) },
        second: { downstream((nil, $0)) },
        in: context
      )
    }
  }
}

extension Chain where Source: Fetchable {
  /// Joins a chain of another value type when both sources are
  /// ``Fetchable``: the joined chain keeps this chain's source type.
  ///
  /// Behaves exactly as ``tuple(_:)-5b6zn``.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(Value?, Other?)` pairs.
  @inlinable
  public consuming func tuple<Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value?, Other?), Source> {
    tuplePair(other, as: Source.self)
  }
}
