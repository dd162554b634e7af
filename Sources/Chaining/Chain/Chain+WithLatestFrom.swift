// MARK: - withLatestFrom

extension Chain {
  /// Pairs each value with the current value of another source, read when
  /// the value arrives; changes of that source send nothing.
  ///
  /// ```swift
  /// let username = ValueHolder("ann")
  /// let signUpTaps = Notifier<Void>()
  /// let observer = signUpTaps.chain()
  ///   .withLatestFrom(username)
  ///   .do { _, name in print("sign up", name) }
  ///   .end()
  /// username.value = "anna"  // prints nothing
  /// signUpTaps.notify(value: ())
  /// // Prints "sign up anna"
  /// ```
  ///
  /// RxSwift's `withLatestFrom(_:)` and CombineExt's: where `combine`
  /// sends whenever either side changes, this step sends only when its
  /// own chain does, with `other`'s value as it is then. Reading
  /// ``ValueHolder/value`` inside a `map` does the same, spelled out.
  ///
  /// - Parameter other: The source to read, with
  ///   ``Fetchable/fetchedValue()``, for each value. Held strongly by the
  ///   finished observer until it is invalidated, so that it can be read:
  ///   a binding of a button to a form keeps the form's holders.
  /// - Returns: A chain of each value with `other`'s value beside it.
  ///
  /// The value ``sync()`` sends is paired like any other. A value that
  /// arrives when `other` cannot fetch (``Fetchable/canFetch()`` is
  /// `false`: a property adapter whose object is gone) is dropped.
  /// `other` is read on the thread that runs this step: its
  /// `fetchedValue()` must be safe there, as a holder's is on any thread.
  /// Nothing is subscribed to `other`: its observer count does not change.
  @inlinable
  public consuming func withLatestFrom<Other: Fetchable>(
    _ other: Other
  ) -> Chain<(Value, Other.ChainValue), Source> {
    appending { downstream in
      { value in
        guard other.canFetch() else { return }
        downstream((value, other.fetchedValue()))
      }
    }
  }
}
