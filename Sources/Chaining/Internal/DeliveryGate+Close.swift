import _ChainingThreadContext

// MARK: - Starting and closing

/// The two ends of a gate's life: `start(with:alone:)` lets values in once
/// the chain is finished, `close()` stops them for good
/// (Verification/DeliveryGate.pml).
extension DeliveryGate {
  /// Opens the gate once the chain is finished: runs `first` (the fetches of
  /// `sync()`, in order), then what arrived while the chain was being
  /// finished, then lets values in, marking the gate `alone` when `alone`.
  ///
  /// Called once, by the thread that created the gate held.
  func start(with first: [() -> Void], alone: Bool) {
    let idle = alone ? Self.alone : 0
    let context = DeliveryContext.current
    // One wave: a combine whose sources are fetched sends one value.
    context.beginWave()
    if first.isEmpty {
      release(to: idle, in: context)
    } else {
      run((), { _ in for fetch in first where !isClosed { fetch() } }, leaving: idle, in: context)
    }
    context.endWave()
  }

  /// Stops all further runs.
  ///
  /// After `close()` returns no run starts. A run in progress on another
  /// thread is waited for, except when the calling thread is itself inside
  /// a delivery: two handlers closing each other's chains from two threads
  /// would otherwise wait for each other forever. A run that did not claim
  /// the gate (`deliverAlone`) is not waited for here: the observer then
  /// asks the sender core (see `Observer.invalidate()`).
  ///
  /// Returns whether this call closed the gate, rather than an earlier one.
  @discardableResult
  func close() -> Bool {
    // Sequentially consistent, change and load: a claim changes `word` and
    // then loads `requests` (see `deliver`), and `deliverAlone` loads
    // `requests` after the core's claim.
    let original = requests.bitwiseOr(Self.closed, ordering: .sequentiallyConsistent).oldValue
    let runner = word.load(ordering: .sequentiallyConsistent) & ~Self.idleBits
    if runner != 0 || original & Self.queued != 0 {
      closeBusy(runner: runner)
    }
    return original & Self.closed == 0
  }

  /// `close()` when a run may be in progress or values are queued: drops
  /// the queue, then waits for the run unless that could deadlock.
  func closeBusy(runner: Int) {
    let dropped = withStripeLock { () -> [Queued] in
      // Relaxed: under the stripe's lock, as in `runPending`.
      requests.bitwiseAnd(~Self.queued, ordering: .relaxed)
      overLimit = false
      defer { pending = [] }
      return pending
    }
    _ = consume dropped  // released here, outside the lock
    // Not when the runner is this thread: it is inside a delivery, or
    // its run is postponed to the end of its write (`postpone`), and
    // would wait for itself.
    let context = DeliveryContext.current
    guard runner != 0, context.depth == 0, runner != context.runner else { return }
    requests.bitwiseOr(Self.waiting, ordering: .sequentiallyConsistent)
    // The heavy side: after it, either the runner sees `waiting` when it
    // releases, or the check below sees it released.
    _chaining_heavy_fence()
    ParkingLot.shared.wait(for: self) { word.load(ordering: .acquiring) & ~Self.idleBits == 0 }
  }
}
