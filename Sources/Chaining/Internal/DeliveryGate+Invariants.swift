// MARK: - Invariants

#if CHAINING_INTERNAL_CHECKS
extension DeliveryGate {
  /// The rules that hold whenever the gate's stripe lock is free
  /// (Verification/DeliveryGate.pml, JoinedChain.pml and HandOver.pml
  /// check the same flags across threads): queued values mean `queued` is
  /// set; only a gate that hands off counts writers waiting their turn or
  /// goes over the limit; `waiting` and `settled` come only after
  /// `closed`. Called with the stripe's lock held, by `withStripeLock`.
  func _invariantCheck() {
    // Relaxed: `queued` changes only under the stripe's lock, which this
    // thread holds; `waiting` and `settled` are set by read-modify-writes
    // made after the one that set `closed`, so a value that has either
    // has `closed` too.
    let requested = requests.load(ordering: .relaxed)
    precondition(
      pending.isEmpty || requested & Self.queued != 0,
      "DeliveryGate: \(pending.count) values queued without `queued`"
    )
    precondition(waiters >= 0, "DeliveryGate: \(waiters) writers waiting")
    precondition(handsOff || (waiters == 0 && !overLimit), "DeliveryGate: a hop's gate counts turns")
    precondition(
      requested & (Self.waiting | Self.settled) == 0 || requested & Self.closed != 0,
      "DeliveryGate: `waiting` or `settled` without `closed` (requests \(requested))"
    )
  }

  /// Checks that the calling thread runs the chain, for what only the
  /// runner may do (`what` names it in the message): release the gate
  /// (its mark is in `word` until it does), or, for a chain's main gate,
  /// held by the thread that finishes the chain until it starts,
  /// register a fetch.
  @usableFromInline
  func _checkRunner(_ what: StaticString) {
    // Relaxed: only this thread writes its own mark into `word` and takes
    // it out (as in `queue`).
    let runner = word.load(ordering: .relaxed) & ~Self.idleBits
    let context = DeliveryContext.current
    precondition(
      runner == context.runner,
      "DeliveryGate: \(what) by a thread that does not run it (\(context.runner), runner \(runner))"
    )
  }
}
#endif
