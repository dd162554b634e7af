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
  /// ``sync()`` is available when this chain's source is ``Fetchable``; it
  /// then fetches from every fetchable source of the merged chains, in the
  /// order they were merged, and sends each value through. Each source is
  /// held as its own chain holds it; one source being released does not
  /// affect the others. Handlers may send into any of the sources.
  @inlinable
  public consuming func merge<OtherSource>(_ other: consuming Chain<Value, OtherSource>) -> Chain<Value, Source> {
    let build = self.build
    let otherBuild = other.build
    return Chain { downstream, context in
      build(downstream, context)
      otherBuild(downstream, context)
    }
  }
}
