// MARK: - end and sync

extension Chain {
  /// Finishes the chain and returns the observer that keeps the binding alive.
  ///
  /// From now on every value the source broadcasts runs through the steps,
  /// until the observer is invalidated or released. Nothing is sent now; use
  /// ``sync()`` to also send the source's current value.
  ///
  /// ```swift
  /// let notifier = Notifier<Int>()
  /// let observer = notifier.chain().do { print($0) }.end()
  /// notifier.notify(value: 7)
  /// // Prints "7"
  /// ```
  ///
  /// - Returns: The ``Observer`` of the binding. Keep it: releasing it ends
  ///   the binding.
  @inlinable
  public consuming func end() -> Observer {
    let observer = finish()
    observer.start(fetching: false)
    return observer
  }

  /// Builds the chain into a new observer, which is also the context the
  /// build collects into, and returns it before its gate opens.
  @inlinable
  consuming func finish() -> Observer {
    let observer = Observer()
    build(nil, observer)
    return observer
  }
}

extension Chain where Source: Fetchable {
  /// Finishes the chain, sends the source's current value through it once,
  /// and returns the observer.
  ///
  /// Available only when the chain starts from a ``Fetchable`` source; on
  /// any other source it does not compile. The value is sent only when the
  /// source's ``Fetchable/canFetch()`` returns `true`.
  ///
  /// ```swift
  /// let title = ValueHolder("Inbox")
  /// let observer = title.chain().do { print($0) }.sync()
  /// // Prints "Inbox"
  /// title.value = "Archive"
  /// // Prints "Archive"
  /// ```
  ///
  /// - Returns: The ``Observer`` of the binding.
  ///
  /// The chain is subscribed before the value is fetched, and the fetch runs
  /// inside the chain's delivery, so a change made meanwhile on another thread
  /// is delivered after the fetched value, never before it: the last value
  /// the chain sees is the source's latest. The fetch usually runs on the
  /// calling thread before `sync()` returns; if another thread is already
  /// delivering a change into the new chain, that thread runs the fetch right
  /// after it, and `sync()` may return first.
  @inlinable
  public consuming func sync() -> Observer {
    let observer = finish()
    observer.start(fetching: true)
    return observer
  }
}
