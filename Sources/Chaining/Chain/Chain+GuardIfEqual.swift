// MARK: - guardIfEqual and removeDuplicates

extension Chain where Value: Equatable {
  /// Drops a value equal to the last value this step passed on.
  ///
  /// ```swift
  /// let notifier = Notifier<Int>()
  /// let observer = notifier.chain().guardIfEqual().do { print($0) }.end()
  /// notifier.notify(value: 1)
  /// notifier.notify(value: 1)
  /// notifier.notify(value: 2)
  /// // Prints "1", then "2"
  /// ```
  ///
  /// - Returns: A chain without consecutive duplicates.
  ///
  /// The first value always passes, including the value ``sync()`` sends;
  /// it then counts as the last value passed. Each finished chain keeps its
  /// own last value, alive for as long as the observer.
  @inlinable
  public consuming func guardIfEqual() -> Chain<Value, Source> {
    appending { downstream in
      let last = Box<Value?>(nil)
      return { value in
        if let previous = last.value, previous == value { return }
        last.value = value
        downstream(value)
      }
    }
  }

  /// Drops a value equal to the last value this step passed on; another name
  /// for ``guardIfEqual()``, familiar from Combine.
  ///
  /// ```swift
  /// let word = ValueHolder("ab")
  /// let observer = word.chain().map(\.count).removeDuplicates().do { print($0) }.sync()
  /// word.value = "cd"  // a new word of the same length
  /// // Prints "2" once
  /// ```
  ///
  /// - Returns: A chain without consecutive duplicates.
  @inlinable
  public consuming func removeDuplicates() -> Chain<Value, Source> {
    guardIfEqual()
  }
}

extension Chain {
  /// Drops a value when a closure says it duplicates the last value this
  /// step passed on.
  ///
  /// ```swift
  /// struct Point { let x: Int, y: Int }
  /// let notifier = Notifier<Point>()
  /// let observer = notifier.chain()
  ///   .removeDuplicates { previous, current in previous.x == current.x }
  ///   .do { print($0.x, $0.y) }
  ///   .end()
  /// for (x, y) in [(0, 0), (0, 1), (1, 1), (2, 1)] { notifier.notify(value: Point(x: x, y: y)) }
  /// // Prints "0 0", "1 1", then "2 1"
  /// ```
  ///
  /// Combine's `removeDuplicates(by:)` and RxSwift's
  /// `distinctUntilChanged(_:)`: the comparison is with the last value
  /// passed on, not the last value received.
  ///
  /// - Parameters:
  ///   - isDuplicate: Called with the last value passed on and the new
  ///     value; `true` drops the new value.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain (see ``guard(_:isolation:)``).
  /// - Returns: A chain without the values `isDuplicate` rejects.
  ///
  /// The first value always passes, including the value ``sync()`` sends.
  /// Each finished chain keeps its own last value, alive for as long as
  /// the observer, with `isDuplicate`.
  @inlinable
  public consuming func removeDuplicates(
    by isDuplicate: @escaping (Value, Value) -> Bool,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    isolated(to: isolation).appending { downstream in
      let last = Box<Value?>(nil)
      return { value in
        if let previous = last.value, isDuplicate(previous, value) { return }
        last.value = value
        downstream(value)
      }
    }
  }
}

/// A mutable value owned by one finished chain.
///
/// Only the step that created it reads and writes it, and the chain's gate
/// runs one value at a time, so it needs no lock.
@usableFromInline
final class Box<Value> {
  @usableFromInline @exclusivity(unchecked) var value: Value
  @usableFromInline init(_ value: Value) { self.value = value }
}
