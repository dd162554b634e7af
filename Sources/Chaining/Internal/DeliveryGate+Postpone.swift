// MARK: - Postponed runs

/// A run postponed to a shallower frame of the same write, so that a chain
/// of any depth delivers in a bounded stack (see Threading.md, "Deep
/// graphs").
extension DeliveryGate {
  /// `deliver` when `DeliveryContext.nestingLimit` runs of chains nest on
  /// the calling thread already, or its stack is nearly used up
  /// (`DeliveryContext.mustPostpone`): claims the gate now, in the value's
  /// order, and runs the chain later, from a shallower frame of this
  /// thread, within the same write and wave (`DeliveryContext.postpone`).
  ///
  /// Claiming now is what keeps the chain's values in order: a value that
  /// arrives meanwhile, from this thread or another, finds the chain
  /// running and is queued behind this one, as it would be behind a run
  /// in progress. Every postponed run is run before the outermost write
  /// returns, and none is on the stack meanwhile, so a chain of any
  /// length delivers in a bounded stack (`DepthTests`). A gate that is
  /// running takes the value in its queue; outside a wave (nothing would
  /// run the postponed value), it runs at once as before. Checked, with
  /// hand-overs and waiters, by `Verification/HandOver.pml` (`POSTPONE`,
  /// and `MUTANT_POSTPONE_AHEAD`, the value run ahead of a queue its claim
  /// found).
  @usableFromInline @inline(never)
  func postpone<Value>(_ value: Value, _ body: @escaping (Value) -> Void, in context: DeliveryContext) {
    guard context.isInWave else {
      if !runIfIdle(value, to: body, in: context) { queue(value, body, in: context) }
      return
    }
    guard let idle = claim(in: context) else {
      queue(value, body, in: context)
      return
    }
    // Sequentially consistent, as in `runIfIdle`. A request found now was
    // made before this claim: values queued by a thread that released the
    // gate with its queue (for a writer waiting its turn), or a close
    // (`waiting` comes only with `closed`).
    if requests.load(ordering: .sequentiallyConsistent) != 0 {
      // Queued values arrived first: this one goes behind them, and the
      // postponed run runs the queue, in order, as a turn does
      // (`drain`). Running this value first put it ahead of them (the
      // soak's deep chain: a writer's value ran before its earlier ones).
      // Closed, the value is dropped.
      let queued = withStripeLock { () -> Bool in
        // Relaxed: under the stripe's lock, as in `queue`.
        if requests.load(ordering: .relaxed) & Self.closed != 0 { return false }
        pending.append(Queued(causes: context.capture(), sender: context.runner) { body(value) })
        return true
      }
      if queued {
        context.postpone(causes: .none) { [self] in drain(in: context, claimed: idle) }
      } else {
        release(to: idle, in: context)
      }
      return
    }
    context.postpone(causes: context.capture(confined: true)) { [self] in
      // This value first: what the queue holds now arrived after the
      // claim, so after it. Closed meanwhile, it is dropped, as a queued
      // value is.
      if isClosed {
        release(to: idle, in: context)
      } else {
        run(value, body, leaving: idle, in: context)
      }
    }
  }
}
