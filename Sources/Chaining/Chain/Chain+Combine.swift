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
  /// ``sync()``, when any source is ``Fetchable``, fetches every
  /// fetchable source in order; with two fetchable sources it sends exactly
  /// one pair. Each finished chain keeps its own latest values, alive for as
  /// long as the observer. Sources are held as their own chains hold them.
  /// When a side crosses a hop, the sides still run one value at a time,
  /// as for ``merge(_:)-2oy9n``.
  ///
  /// Glitch-free: a write and everything its delivery causes on the same
  /// thread (handlers that write included) form one wave, and a combine
  /// whose sides change in a wave sends once, after the wave's other
  /// deliveries, from every side's final value. So
  /// `source.chain().map { $0 * 10 }.combine(source.chain().map { $0 * 100 })`
  /// sends `(20, 200)` when `source` becomes 2, never `(20, 100)`. Use
  /// ``withBatchedUpdates(_:)`` to make several writes one wave. A value
  /// that crosses a hop (``receive(on:)``, another actor) or comes from a
  /// timer arrives in a wave of its own.
  @inlinable
  public consuming func combine<Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value, Other), Source> {
    combinePair(other, as: Source.self)
  }

  /// Combines a chain of pairs with a third chain into triples.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, Other)` triples.
  @inlinable
  public consuming func combine<A, B, Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, Other), Source> where Value == (A, B) {
    combinePair(other, as: Source.self).map { ($0.0, $0.1, $1) }
  }

  /// Combines a chain of triples with a fourth chain into quadruples.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, Other)` tuples.
  @inlinable
  public consuming func combine<A, B, C, Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, Other), Source> where Value == (A, B, C) {
    combinePair(other, as: Source.self).map { ($0.0, $0.1, $0.2, $1) }
  }

  /// Combines a chain of quadruples with a fifth chain into quintuples.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, D, Other)` tuples.
  @inlinable
  public consuming func combine<A, B, C, D, Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, D, Other), Source> where Value == (A, B, C, D) {
    combinePair(other, as: Source.self).map { ($0.0, $0.1, $0.2, $0.3, $1) }
  }

  // The same joins when the other chain's source is `Fetchable`: the
  // joined chain takes that source's type, so that `sync()` is available
  // whichever side is fetchable. Swift prefers these, as more constrained,
  // whenever they apply; the values are the same.

  /// Joins a chain whose source is ``Fetchable``, sending both latest
  /// values together; ``sync()`` is then available on the result.
  ///
  /// Behaves exactly as ``combine(_:)-6p7cs``; the
  /// result takes the other chain's source type, so that a chain started
  /// from a ``Notifier`` and combined with a holder can be synced:
  ///
  /// ```swift
  /// let taps = Notifier<Int>()
  /// let name = ValueHolder("Ann")
  /// let pool = ObserverPool()
  /// taps.chain().combine(name.chain()).do { print($0, $1) }.sync().addTo(pool)
  /// // Prints nothing yet: `taps` has no value to fetch.
  /// taps.notify(value: 1)
  /// // Prints "1 Ann"
  /// ```
  ///
  /// ``sync()`` fetches every fetchable source, in source order.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(Value, Other)` pairs.
  @inlinable
  public consuming func combine<Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value, Other), OtherSource> {
    combinePair(other, as: OtherSource.self)
  }

  /// Combines a chain of pairs with a third chain, whose source is
  /// ``Fetchable``, into triples; ``sync()`` is then available.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, Other)` triples.
  @inlinable
  public consuming func combine<A, B, Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, Other), OtherSource> where Value == (A, B) {
    combinePair(other, as: OtherSource.self).map { ($0.0, $0.1, $1) }
  }

  /// Combines a chain of triples with a fourth chain, whose source is
  /// ``Fetchable``, into quadruples; ``sync()`` is then available.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, Other)` tuples.
  @inlinable
  public consuming func combine<A, B, C, Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, Other), OtherSource> where Value == (A, B, C) {
    combinePair(other, as: OtherSource.self).map { ($0.0, $0.1, $0.2, $1) }
  }

  /// Combines a chain of quadruples with a fifth chain, whose source is
  /// ``Fetchable``, into quintuples; ``sync()`` is then available.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, D, Other)` tuples.
  @inlinable
  public consuming func combine<A, B, C, D, Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, D, Other), OtherSource> where Value == (A, B, C, D) {
    combinePair(other, as: OtherSource.self).map { ($0.0, $0.1, $0.2, $0.3, $1) }
  }

  /// The pairs of `combine`, as a chain whose source type is `Result`:
  /// this chain's, or the other's when that one is ``Fetchable``.
  @inlinable
  consuming func combinePair<Other, OtherSource, Result>(
    _ other: consuming Chain<Other, OtherSource>,
    as _: Result.Type
  ) -> Chain<(Value, Other), Result> {
    let build = self.build
    let otherBuild = other.build
    return Chain<(Value, Other), Result>(isolation: joinedIsolation(isolation, other.isolation)) { given, context in
      // Not `??`, which would wrap the closure in reabstraction thunks.
      let downstream: ((Value, Other)) -> Void
      if let given { downstream = given } else { downstream = { _ in } }
      // Each side's latest value, touched only under the gate the sides
      // run under. Written here, in the client's module, so that the pair
      // is built by specialized code; `WaveFlush` only decides when.
      let latest = Box<(Value?, Other?)>((nil, nil))
      let flush = WaveFlush(gate: context.gate) {
        if let value = latest.value.0, let other = latest.value.1 { downstream((value, other)) }
      }
      func receiveFirst(_ value: Value) {
        latest.value.0 = value
        // Inside a wave, the pair waits for the wave's end.
        if flush.defers() { return }
        if let other = latest.value.1 { downstream((value, other)) }
      }
      func receiveSecond(_ other: Other) {
        latest.value.1 = other
        if flush.defers() { return }
        if let value = latest.value.0 { downstream((value, other)) }
      }
      flush.buildSides(in: context) {
        JoinSides.build(build, otherBuild, first: receiveFirst, second: receiveSecond, in: context)
      }
    }
  }
}

// MARK: - combine of any number of chains

extension Chain {
  /// Joins one chain per element of `elements`, sending the array of their
  /// latest values, in the order of `elements`.
  ///
  /// The `combine` of any number of chains of one value type: nothing is
  /// sent until every chain has delivered a value; from then on every value
  /// from any of them sends the array of the latest values. `side` makes
  /// the chain of each element, at once, in order; chains cannot be kept
  /// in an array, so this takes what makes them.
  ///
  /// ```swift
  /// let prices = [ValueHolder(3), ValueHolder(4), ValueHolder(5)]
  /// let pool = ObserverPool()
  /// Chain.combine(prices) { $0.chain() }
  ///   .map { $0.reduce(0, +) }
  ///   .do { print("total:", $0) }
  ///   .sync()
  ///   .addTo(pool)
  /// // Prints "total: 12"
  /// prices[1].value = 10
  /// // Prints "total: 18"
  /// ```
  ///
  /// As ``combine(_:)-6p7cs``: ``sync()`` fetches every fetchable source
  /// in order and sends one array once all have sent; glitch-free, so a
  /// wave that changes several of the chains sends one array, after the
  /// wave's other deliveries, from their final values; when a chain
  /// crosses a hop, the chains still run one value at a time. A value is
  /// stored in place, O(1), and the array is sent without a copy, unless a
  /// step keeps it: the next write then copies it, O(n) for n chains.
  /// Nested pairs copied O(n²) per write.
  ///
  /// - Parameters:
  ///   - elements: What the chains are made from, such as holders; at
  ///     least one.
  ///   - side: Makes the chain of one element; called once per element,
  ///     on this thread, before this returns.
  /// - Returns: A chain of arrays with one value per element. The finished
  ///   chain keeps every chain's latest value for as long as the observer.
  /// - Precondition: `elements` is not empty: with no chain to join,
  ///   there would be nothing to send, ever.
  @inlinable
  public static func combine<Element, Elements: Sequence>(
    _ elements: Elements,
    _ side: (Elements.Element) -> Chain<Element, Source>
  ) -> Chain<[Element], Source> where Value == [Element] {
    var builds: [Chain<Element, Source>.Build] = []
    var isolation: (any Actor)?
    for element in elements {
      let chain = side(element)
      isolation = builds.isEmpty ? chain.isolation : joinedIsolation(isolation, chain.isolation)
      builds.append(chain.build)
    }
    // `fatalError`, not `precondition`, whose message an optimized build drops.
    if builds.isEmpty {
      fatalError("Chain.combine(_:_:): elements must not be empty, got an empty \(Elements.self)")
    }
    return Chain<[Element], Source>(isolation: isolation) { given, context in
      let downstream: ([Element]) -> Void
      if let given { downstream = given } else { downstream = { _ in } }
      let latest = LatestValues<Element>(count: builds.count)
      let flush = WaveFlush(gate: context.gate) {
        if let values = latest.all { downstream(values) }
      }
      flush.buildSides(in: context) {
        JoinSides.build(
          builds,
          receive: { index, value in
            latest.store(value, at: index)
            // Inside a wave, the array waits for the wave's end.
            if flush.defers() { return }
            if let values = latest.all { downstream(values) }
          },
          in: context
        )
      }
    }
  }
}

/// The latest value of each chain of a `combine` of many, touched only
/// under the gate the chains run under: one value at a time, so, as
/// `Box`'s, its fields skip the run-time exclusivity checks.
@usableFromInline
final class LatestValues<Value> {
  /// The values, once every chain has sent one; until then `nil`.
  @usableFromInline @exclusivity(unchecked) var all: [Value]?
  /// The values so far, by chain, until every chain has sent one.
  @usableFromInline @exclusivity(unchecked) var partial: [Value?]
  /// How many chains have not sent a value yet.
  @usableFromInline @exclusivity(unchecked) var missing: Int

  @usableFromInline
  init(count: Int) {
    partial = Array(repeating: nil, count: count)
    missing = count
  }

  /// Stores `value` as the latest of chain `index`.
  @inlinable
  func store(_ value: Value, at index: Int) {
    if all != nil {
      all![index] = value
      return
    }
    if partial[index] == nil { missing -= 1 }
    partial[index] = value
    if missing == 0 {
      all = partial.map { $0.unsafelyUnwrapped }
      partial = []
    }
  }
}

// When both sources are fetchable, the joined chain keeps this chain's
// source type, as it does when only this one is.
extension Chain where Source: Fetchable {
  /// Joins a chain of another value type when both sources are
  /// ``Fetchable``, keeping this chain's source type.
  ///
  /// Behaves exactly as ``combine(_:)-6p7cs``.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(Value, Other)` pairs.
  @inlinable
  public consuming func combine<Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value, Other), Source> {
    combinePair(other, as: Source.self)
  }

  /// Combines a chain of pairs with a third chain into triples when both
  /// sources are ``Fetchable``, keeping this chain's source type.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, Other)` triples.
  @inlinable
  public consuming func combine<A, B, Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, Other), Source> where Value == (A, B) {
    combinePair(other, as: Source.self).map { ($0.0, $0.1, $1) }
  }

  /// Combines a chain of triples with a fourth chain into quadruples when
  /// both sources are ``Fetchable``, keeping this chain's source type.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, Other)` tuples.
  @inlinable
  public consuming func combine<A, B, C, Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, Other), Source> where Value == (A, B, C) {
    combinePair(other, as: Source.self).map { ($0.0, $0.1, $0.2, $1) }
  }

  /// Combines a chain of quadruples with a fifth chain into quintuples
  /// when both sources are ``Fetchable``, keeping this chain's source type.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, D, Other)` tuples.
  @inlinable
  public consuming func combine<A, B, C, D, Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, D, Other), Source> where Value == (A, B, C, D) {
    combinePair(other, as: Source.self).map { ($0.0, $0.1, $0.2, $0.3, $1) }
  }
}
