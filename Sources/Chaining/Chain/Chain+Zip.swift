// MARK: - zip

extension Chain {
  /// Joins another chain, pairing their values in order: the first value
  /// of each, then the second of each, and so on.
  ///
  /// ```swift
  /// let questions = Notifier<String>()
  /// let answers = Notifier<Int>()
  /// let observer = questions.chain().zip(answers.chain()).do { print($0, $1) }.end()
  /// questions.notify(value: "six times seven")
  /// questions.notify(value: "two and two")
  /// answers.notify(value: 42)
  /// // Prints "six times seven 42"
  /// answers.notify(value: 4)
  /// // Prints "two and two 4"
  /// ```
  ///
  /// Combine's and RxSwift's `zip`. Where ``combine(_:)-6p7cs`` sends the
  /// latest values whenever either side changes, `zip` sends each value
  /// once, with the value of the same rank from the other side. Call `zip`
  /// again to zip up to five chains into one flat tuple.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(Value, Other)` pairs.
  ///
  /// A value waits, in the observer, until the other side sends the value
  /// of its rank: a side that sends faster than the other makes the
  /// waiting values pile up, without bound. ``sync()``, when any source is
  /// ``Fetchable``, sends each fetchable source's value, in source order:
  /// two fetchable sources give one pair. Sources are held as their own
  /// chains hold them. The values go through the join one at a time, as
  /// after ``tuple(_:)-5b6zn``, and a pair is sent on the thread that sent
  /// its later value.
  @inlinable
  public consuming func zip<Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value, Other), Source> {
    zipPair(other, as: Source.self)
  }

  /// Zips a chain of pairs with a third chain into triples, as
  /// ``zip(_:)-9ksgr`` does two chains.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, Other)` triples.
  @inlinable
  public consuming func zip<A, B, Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, Other), Source> where Value == (A, B) {
    zipPair(other, as: Source.self).map { ($0.0, $0.1, $1) }
  }

  /// Zips a chain of triples with a fourth chain into quadruples, as
  /// ``zip(_:)-9ksgr`` does two chains.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, Other)` quadruples.
  @inlinable
  public consuming func zip<A, B, C, Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, Other), Source> where Value == (A, B, C) {
    zipPair(other, as: Source.self).map { ($0.0, $0.1, $0.2, $1) }
  }

  /// Zips a chain of quadruples with a fifth chain into quintuples, as
  /// ``zip(_:)-9ksgr`` does two chains.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, D, Other)` quintuples.
  @inlinable
  public consuming func zip<A, B, C, D, Other, OtherSource>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, D, Other), Source> where Value == (A, B, C, D) {
    zipPair(other, as: Source.self).map { ($0.0, $0.1, $0.2, $0.3, $1) }
  }

  // The same joins when the other chain's source is `Fetchable`: the
  // joined chain takes that source's type, so that `sync()` is available
  // whichever side is fetchable, as for `combine`.

  /// Zips a chain whose source is ``Fetchable``; ``sync()`` is then
  /// available on the result. Behaves exactly as ``zip(_:)-9ksgr``.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(Value, Other)` pairs.
  @inlinable
  public consuming func zip<Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(Value, Other), OtherSource> {
    zipPair(other, as: OtherSource.self)
  }

  /// Zips a chain of pairs with a third chain whose source is
  /// ``Fetchable``. Behaves exactly as ``zip(_:)-9ksgr``.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, Other)` triples.
  @inlinable
  public consuming func zip<A, B, Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, Other), OtherSource> where Value == (A, B) {
    zipPair(other, as: OtherSource.self).map { ($0.0, $0.1, $1) }
  }

  /// Zips a chain of triples with a fourth chain whose source is
  /// ``Fetchable``. Behaves exactly as ``zip(_:)-9ksgr``.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, Other)` quadruples.
  @inlinable
  public consuming func zip<A, B, C, Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, Other), OtherSource> where Value == (A, B, C) {
    zipPair(other, as: OtherSource.self).map { ($0.0, $0.1, $0.2, $1) }
  }

  /// Zips a chain of quadruples with a fifth chain whose source is
  /// ``Fetchable``. Behaves exactly as ``zip(_:)-9ksgr``.
  ///
  /// - Parameter other: The chain to join. It is consumed.
  /// - Returns: A chain of `(A, B, C, D, Other)` quintuples.
  @inlinable
  public consuming func zip<A, B, C, D, Other, OtherSource: Fetchable>(
    _ other: consuming Chain<Other, OtherSource>
  ) -> Chain<(A, B, C, D, Other), OtherSource> where Value == (A, B, C, D) {
    zipPair(other, as: OtherSource.self).map { ($0.0, $0.1, $0.2, $0.3, $1) }
  }

  /// The pairs of `zip`, as a chain whose source type is `Result`: the
  /// values of `tuple`, each side queued until the other has a value of
  /// the same rank.
  @inlinable
  consuming func zipPair<Other, OtherSource, Result>(
    _ other: consuming Chain<Other, OtherSource>,
    as _: Result.Type
  ) -> Chain<(Value, Other), Result> {
    tuplePair(other, as: Result.self).appending { downstream in
      let waiting = Box(ZipQueues<Value, Other>())
      return { pair in
        if let first = pair.0 {
          waiting.value.firsts.append(first)
        } else if let second = pair.1 {
          waiting.value.seconds.append(second)
        }
        while let zipped = waiting.value.next() { downstream(zipped) }
      }
    }
  }
}

/// The values of each side of a `zip` that wait for the other side's
/// value of the same rank. Only the zip's step, one value at a time,
/// touches them.
@usableFromInline
struct ZipQueues<First, Second> {
  @usableFromInline var firsts: [First] = []
  @usableFromInline var seconds: [Second] = []
  /// How many values of each array are already sent: the arrays are
  /// compacted when they are all sent, so a removal costs O(1).
  @usableFromInline var sent = 0

  @usableFromInline init() {}

  /// The next pair, if both sides have a value of the next rank.
  @inlinable
  mutating func next() -> (First, Second)? {
    guard sent < firsts.count, sent < seconds.count else { return nil }
    let pair = (firsts[sent], seconds[sent])
    sent += 1
    if sent == firsts.count || sent == seconds.count {
      firsts.removeFirst(sent)
      seconds.removeFirst(sent)
      sent = 0
    }
    return pair
  }
}
