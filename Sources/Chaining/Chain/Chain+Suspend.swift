// MARK: - suspend

extension Chain {
  /// Holds back values while a ``Suspender`` is suspended.
  ///
  /// While `suspender.isSuspended` is `true`, values stop at this step. On
  /// resume:
  /// - when a source of the chain before this step is ``Fetchable`` (a
  ///   holder: its values are state), the latest value held back, if any, is
  ///   sent on, so the rest of the chain catches up;
  /// - otherwise (only notifiers: their values are events), nothing is
  ///   replayed.
  ///
  /// ```swift
  /// let suspender = Suspender()
  /// let count = ValueHolder(0)
  /// let observer = count.chain().suspend(suspender).do { print($0) }.sync()
  /// // Prints "0"
  /// suspender.suspend()
  /// count.value = 1
  /// count.value = 2
  /// suspender.resume()
  /// // Prints "2"
  /// ```
  ///
  /// - Parameter suspender: The switch. The finished observer keeps it alive.
  /// - Returns: A chain that passes values only while not suspended.
  ///
  /// ``sync()`` while suspended holds the fetched value back like any other.
  /// A handler of this chain may suspend or resume it: the change takes
  /// effect after the value being delivered.
  /// The resume and the values run through the chain one at a time, so a
  /// value is never replayed after a newer one.
  public consuming func suspend(_ suspender: Suspender) -> Chain<Value, Source> {
    let build = self.build
    // A resume delivers the held value on the thread that resumes.
    return Chain(isolation: nil) { given, context in
      // Not `??`, which would wrap the closure in reabstraction thunks.
      let downstream: (Value) -> Void
      if let given { downstream = given } else { downstream = { _ in } }
      // `state` is touched only inside this chain's gate, which runs one
      // thing at a time: the suspender's changes and the values, in the order
      // they arrive. While the chain is being finished, the finishing thread
      // holds the gate, so the writes below race with nothing.
      let state = Box(SuspendState<Value>())
      context.retain(suspender)
      // A change of the suspender is a command, never an echo: it gets
      // through even when this chain's own handler made it.
      suspender.subscribeCommands(context) { isSuspended in
        state.value.isSuspended = isSuspended
        guard !isSuspended, let held = state.value.held else { return }
        state.value.held = nil
        downstream(held)
      }
      state.value.isSuspended = suspender.isSuspended
      let fetchesBefore = context.fetchCount
      build(
        { value in
          guard state.value.isSuspended else { return downstream(value) }
          if state.value.replays { state.value.held = value }
        },
        context
      )
      // Values of a fetchable source are state, worth catching up on.
      state.value.replays = context.fetchCount > fetchesBefore
    }
  }
}

/// The state of one finished chain's ``Chain/suspend(_:)`` step.
private struct SuspendState<Value> {
  var isSuspended = false
  /// Whether a source of the chain is fetchable, so that a held value is replayed.
  var replays = false
  /// The latest value held back, for a chain whose source is fetchable.
  var held: Value?
}
