// MARK: - merge

extension Chain {
  /// Joins another chain of the same value type into this one.
  ///
  /// Values from either chain run through the steps that follow, one at a
  /// time, in the order they arrive.
  ///
  /// ```swift
  /// let typed = Notifier<String>()
  /// let pasted = Notifier<String>()
  /// let observer = typed.chain().merge(pasted.chain()).do { print("input", $0) }.end()
  /// typed.notify(value: "a")
  /// pasted.notify(value: "bc")
  /// // Prints "input a", then "input bc"
  /// ```
  ///
  /// Merge more than two by calling `merge` again:
  /// `a.chain().merge(b.chain()).merge(c.chain())`.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of the values of both.
  ///
  /// ``sync()`` is available when any source is ``Fetchable`` (see the
  /// overload for a fetchable `other`); it
  /// then fetches from every fetchable source of the merged chains, in the
  /// order they were merged, and sends each value through. Each source is
  /// held as its own chain holds it; one source being released does not
  /// affect the others. Handlers may send into any of the sources.
  ///
  /// The steps that follow run on the thread that delivers each value.
  /// When a side crosses a hop (``receive(on:)``, a step written on
  /// another actor, a time step, ``flatMapLatest(_:isolation:)``), both
  /// sides also pass a gate of the join's own: a value then runs on its
  /// side's thread, or right after the other side's value on that thread,
  /// and never at the same time as it.
  @inlinable
  public consuming func merge<OtherSource>(_ other: consuming Chain<Value, OtherSource>) -> Chain<Value, Source> {
    mergePair(other, as: Source.self)
  }

  /// Joins a chain of the same value type whose source is ``Fetchable``;
  /// ``sync()`` is then available on the result.
  ///
  /// Behaves exactly as ``merge(_:)-2oy9n``; the result
  /// takes the other chain's source type, so that a chain started from a
  /// ``Notifier`` and merged with a holder can be synced:
  ///
  /// ```swift
  /// let taps = Notifier<String>()
  /// let status = ValueHolder("idle")
  /// let pool = ObserverPool()
  /// taps.chain().merge(status.chain()).do { print($0) }.sync().addTo(pool)
  /// // Prints "idle"
  /// taps.notify(value: "tap")
  /// // Prints "tap"
  /// ```
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of the values of both.
  @inlinable
  public consuming func merge<OtherSource: Fetchable>(
    _ other: consuming Chain<Value, OtherSource>
  ) -> Chain<Value, OtherSource> {
    mergePair(other, as: OtherSource.self)
  }

  /// The values of both chains, as a chain whose source type is `Result`.
  @inlinable
  consuming func mergePair<OtherSource, Result>(
    _ other: consuming Chain<Value, OtherSource>,
    as _: Result.Type
  ) -> Chain<Value, Result> {
    let build = self.build
    let otherBuild = other.build
    return Chain<Value, Result>(isolation: joinedIsolation(isolation, other.isolation)) { downstream, context in
      guard let downstream else {
        build(nil, context)
        otherBuild(nil, context)
        return
      }
      // One value at a time after the join, even when a side hops.
      JoinSides.build(build, otherBuild, first: downstream, second: downstream, in: context)
    }
  }
}

extension Chain where Source: Fetchable {
  /// Joins a chain of the same value type when both sources are
  /// ``Fetchable``: the joined chain keeps this chain's source type.
  ///
  /// Behaves exactly as ``merge(_:)-2oy9n``; this overload
  /// only settles which source type the result carries when both could.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of the values of both.
  @inlinable
  public consuming func merge<OtherSource: Fetchable>(
    _ other: consuming Chain<Value, OtherSource>
  ) -> Chain<Value, Source> {
    mergePair(other, as: Source.self)
  }
}
