// MARK: - dropFirst

extension Chain {
  /// Skips the first `count` values, then passes on every value.
  ///
  /// ```swift
  /// let age = ValueHolder(29)
  /// let pool = ObserverPool()
  /// age.chain().dropFirst().do { print("changed to", $0) }.sync().addTo(pool)
  /// // Prints nothing: sync()'s value, 29, is skipped.
  /// age.value = 30
  /// // Prints "changed to 30"
  /// ```
  ///
  /// With ``sync()``, the synced value counts as the first: `dropFirst()`
  /// then binds to changes only, while the chain still starts from the
  /// source's current state. This matters for `combine`: a combined
  /// chain that is synced and then drops its first value sends on the next
  /// change of either side, where one finished with ``end()`` waits until
  /// every side has changed.
  ///
  /// - Parameter count: How many values to skip; must not be negative. The
  ///   default skips one.
  /// - Returns: A chain that passes on every value after the first `count`.
  ///
  /// Each finished chain keeps its own count, touched only by its handlers,
  /// which run one value at a time on the delivering thread, so it needs no
  /// lock. The step holds nothing else. An echo that the chain drops (a
  /// value its own delivery sent back into it) never reaches the step and
  /// is not counted.
  @inlinable
  public consuming func dropFirst(_ count: Int = 1) -> Chain<Value, Source> {
    if count < 0 { fatalError("Chain.dropFirst(_:): count must not be negative, got \(count)") }
    return appending { downstream, _ in
      let dropped = Box(0)
      return { value in
        if dropped.value < count {
          dropped.value += 1
        } else {
          downstream(value)
        }
      }
    }
  }
}
