import Dispatch

// MARK: - receive(on:)

extension Chain where Value: Swift.Sendable {
  /// Runs the rest of the chain on a dispatch queue.
  ///
  /// Every later step runs on `queue`, one value at a time, in the order the
  /// values reached this step, even when `queue` is concurrent.
  ///
  /// ```swift
  /// let work = DispatchQueue(label: "work")
  /// let query = ValueHolder("")
  /// let observer = query.chain()
  ///   .receive(on: work)
  ///   .do { text in search(text) }  // runs on `work`
  ///   .end()
  /// ```
  ///
  /// - Parameter queue: Where the rest of the chain runs.
  /// - Returns: A chain with the same values.
  ///
  /// Values must be `Swift.Sendable`: they cross to another thread. The
  /// closures of the later steps are created on the thread that builds the
  /// chain and from then on only run on `queue`.
  ///
  /// After the observer is invalidated, no value still waiting in the queue
  /// reaches a later step, and `invalidate()` waits for one that is running
  /// (unless it is called from inside a delivery). ``sync()`` sends the
  /// fetched value through the queue like any other. Binding loops still
  /// settle: a value that comes back to this chain through the queue is
  /// skipped like any echo.
  public consuming func receive(on queue: DispatchQueue) -> Chain<Value, Source> {
    appending { downstream, context in
      let hop = QueueHop(target: queue, downstream: downstream)
      context.addHopGate(hop.gate)
      return { value in hop.send(value) }
    }
    .onAnyThread()
  }
}
