import Dispatch
import _ChainingThreadContext

// MARK: - The queue, turns and hand-overs

/// The slow paths of a delivery: a value that finds the gate claimed is
/// queued, the thread holding the gate runs the queue, and past
/// `handOffLimit` hands the gate over to a writer waiting for its turn
/// (Verification/JoinedChain.pml and Verification/HandOver.pml).
extension DeliveryGate {
  /// For tests: called on the thread that holds the gate in `drain`, when
  /// it has emptied the queue, before it releases the gate: a seam that
  /// widens the window in which a writer can queue one more value. Set
  /// with `setEmptiedForTests(_:)`.
  static let emptiedForTests = Protected<((DeliveryGate) -> Void)?>(nil)

  /// Whether `emptiedForTests` is set: one relaxed load on that slow path
  /// when no test has set it. The lock of `emptiedForTests`, taken after
  /// the flag is seen, orders the closure's store and its read.
  static let emptiedForTestsIsSet = AtomicReference<Bool>(allocatedWith: false)

  /// For tests: sets or clears `emptiedForTests`. Other tests' gates, in
  /// parallel, call it too: a test's closure checks the gate it gets.
  static func setEmptiedForTests(_ body: ((DeliveryGate) -> Void)?) {
    emptiedForTests.withLock { $0 = body }
    emptiedForTestsIsSet.store(body != nil, ordering: .relaxed)
  }

  /// The slow path of `deliver` for a thread that claimed the gate and found
  /// a request: drops the value when closed, otherwise runs the values
  /// queued before it first, and returns true. When it hands the gate over
  /// on the way (past `handOffLimit`), it returns false without running
  /// the value: the caller queues it, behind the others.
  @usableFromInline
  func runRequested<Value>(_ value: Value, _ body: (Value) -> Void, leaving idle: Int, in context: DeliveryContext)
    -> Bool
  {
    var othersRun = 0
    if !isClosed, case .handedOver = runPending(in: context, othersRun: &othersRun) {
      // Handed over. When the waiter left meanwhile without its turn,
      // nobody holds the gate: run the queue on as `drain` does, on the
      // same count.
      if !handOver(leaving: idle) {
        drain(in: context, reclaiming: Self.released(from: idle), othersRun: othersRun)
      }
      return false
    }
    if isClosed {
      release(to: idle, in: context)
      return true
    }
    // `run`, with the count carried on to the queue found at the release.
    context.enter(self)
    body(value)
    context.popCause()
    serve(releaseReadingRequests(to: idle), released: Self.released(from: idle), in: context, othersRun: othersRun)
    context.leave()
    return true
  }

  /// After a release to `released` that found `requested`: wakes a
  /// waiting `close()`, and runs what was queued unless another thread has
  /// claimed the gate meanwhile (that thread then sees `queued`), on the
  /// count `othersRun` of the call that released (see `drain`); with
  /// nothing queued, ends that count (`endCount`).
  @usableFromInline
  func serve(_ requested: Int, released: Int, in context: DeliveryContext, othersRun: Int = 0) {
    wakeCloser(if: requested)
    if requested & Self.queued != 0 {
      drain(in: context, reclaiming: released, othersRun: othersRun)
    } else {
      endCount(othersRun)
    }
  }

  /// Wakes the threads waiting in `close()` when `requested` says so.
  func wakeCloser(if requested: Int) {
    guard requested & Self.waiting != 0 else { return }
    // Under the stripe's lock, which the waiter holds from its check until
    // it sleeps: a wake sent in between would be lost.
    withStripeLock { ParkingLot.shared.wakeAll(self) }
  }

  /// The slow path of `deliver` when the gate is claimed: queues the run,
  /// or drops it when closed, then makes sure a thread runs the queue;
  /// past `handOffLimit`, waits for its turn to run it (`awaitTurn(in:)`).
  @usableFromInline
  func queue<Value>(_ value: Value, _ body: @escaping (Value) -> Void, in context: DeliveryContext) {
    // The runner is this thread, further up its stack: it sees `queued`
    // when it releases. Relaxed: only this thread writes its own mark into
    // `word` and takes it out, so program order decides whether it is
    // there, and no other thread's mark equals it.
    let isRunner = word.load(ordering: .relaxed) & ~Self.idleBits == context.runner
    // A thread inside a delivery may hold a gate that the running thread's
    // handlers feed: it waits only once its wave has ended, out of every
    // delivery (`DeliveryContext.deferTurn(_:)`), so only inside a wave.
    let nested = context.depth > 0
    let mayWait = handsOff && !isRunner && (!nested || context.isInWave)
    let (flagged, waits) = withStripeLock { () -> (Bool, Bool) in
      // Relaxed: `queued` changes only under this lock. `closed` is set
      // outside it; a stale read lets in a value that is dropped all the
      // same: this thread's `bitwiseOr` below comes after `close()`'s in
      // the flags' order, so its own later reads see `closed` (the drain's
      // `isClosed` check), and `closeBusy` empties the queue under this lock.
      let current = requests.load(ordering: .relaxed)
      if current & Self.closed != 0 { return (false, false) }
      pending.append(Queued(causes: context.capture(), sender: context.runner) { body(value) })
      let waits = mayWait && overLimit
      if waits { waiters += 1 }
      // Already set: the thread that set it makes sure the queue runs, and
      // takes this value with the others, under this lock.
      if current & Self.queued != 0 { return (false, waits) }
      requests.bitwiseOr(Self.queued, ordering: .sequentiallyConsistent)
      return (true, waits)
    }
    if isRunner { return }
    if waits {
      if nested {
        context.deferTurn(self)
      } else {
        awaitTurn(in: context, waits: true)
      }
      return
    }
    guard flagged else { return }
    // The heavy side: after it, either the runner sees `queued` when it
    // releases, or this load of `word` sees it released.
    _chaining_heavy_fence()
    drain(in: context)
  }

  /// For a writer whose value was queued while the thread running the
  /// chain was past `handOffLimit` (`overLimit`): waits, yielding its
  /// processor, until that thread hands the gate over (the writer then
  /// claims it and runs the queue as `drain` does, this value included),
  /// until `overLimit` is cleared (see there), or for `turnWait` at most.
  ///
  /// This is what bounds the time a thread spends running other threads'
  /// values (it hands over as soon as a writer waits here) and what keeps
  /// writers from outpacing the chain: while the queue is long, each
  /// writer waits until its value has run or runs the queue itself, so
  /// the queue stays short and every value written so far has run once
  /// every writer has returned. The wait is bounded, so it cannot
  /// deadlock: a holder whose handler waits for a lock this writer holds
  /// is waited for `turnWait` at most, then this writer returns and the
  /// holder runs the value as before.
  ///
  /// Why no value is left behind: a holder hands over (`handOver`) by
  /// releasing the gate and then, under the stripe's lock, finding a
  /// waiter; a waiter leaves only after taking itself out under that lock
  /// and then trying to claim (`drain`). So either the holder finds none
  /// and claims again itself, from the word it released to
  /// (`reclaim(from:in:)`), or the waiter's claim comes after the release
  /// and finds the gate idle (or claimed by a thread that will see
  /// `queued`). A waiter that took its turn between the release and the
  /// look changed the generation: the holder's claim fails and it leaves
  /// (else it could be held for ever, claiming again after each such
  /// turn, its own value never run: `MUTANT_NO_GEN` in
  /// `Verification/JoinedChain.pml`, property `ran`). Checked by
  /// `Verification/HandOver.pml`, `Verification/JoinedChain.pml`,
  /// `HandOffTests` and `JoinLivenessTests`, under the thread sanitizer
  /// too.
  ///
  /// With `waits` false (a turn deferred to the end of a wave that ended
  /// inside a delivery), it only leaves: takes itself out and tries to
  /// claim once.
  func awaitTurn(in context: DeliveryContext, waits: Bool) {
    let start = DispatchTime.now().uptimeNanoseconds
    while waits {
      // Relaxed: only a guess; the claim decides.
      if word.load(ordering: .relaxed) & ~Self.idleBits == 0, let idle = claim(in: context) {
        withStripeLock { waiters -= 1 }
        // A count of its own: a turn runs up to `handOffLimit` values of
        // others, so two threads past the limit cannot hand the gate back
        // and forth without running anything.
        drain(in: context, claimed: idle)
        return
      }
      let goesOn = withStripeLock { overLimit }
      if !goesOn || DispatchTime.now().uptimeNanoseconds &- start >= turnWait { break }
      yieldProcessor()
    }
    withStripeLock { waiters -= 1 }
    drain(in: context)
  }

  /// Runs the queue, as long as the gate can be claimed; when it cannot,
  /// the thread that claimed it sees `queued` and takes over. Past
  /// `handOffLimit`, hands the gate over to a waiting writer. With
  /// `claimed`, the calling thread has claimed the gate already, leaving
  /// it to that idle value; with `released`, it released the gate to that
  /// word and claims again only from it (`reclaim(from:in:)`), as after
  /// each of its own releases here. `othersRun`: how many values of other
  /// threads this call has run already (see `runPending`).
  @usableFromInline
  func drain(in context: DeliveryContext, claimed: Int? = nil, reclaiming released: Int? = nil, othersRun: Int = 0) {
    // One count for the whole call, claims again included: counted per
    // claim, a thread that finds one more value each time it releases
    // would never reach the limit (`MUTANT_COUNT_PER_CLAIM` in
    // `Verification/JoinedChain.pml`).
    var othersRun = othersRun
    var next: Int?
    if let claimed {
      next = claimed
    } else if let released {
      next = reclaim(from: released, in: context)
    } else {
      next = claim(in: context)
    }
    while let idle = next {
      switch runPending(in: context, othersRun: &othersRun) {
      case .emptied:
        if Self.emptiedForTestsIsSet.load(ordering: .relaxed) {
          Self.emptiedForTests.withLock { $0 }?(self)
        }
        let requested = releaseReadingRequests(to: idle)
        wakeCloser(if: requested)
        if requested & Self.queued == 0 {
          endCount(othersRun)
          return
        }
      case .handedOver:
        if handOver(leaving: idle) { return }
      }
      next = reclaim(from: Self.released(from: idle), in: context)
    }
  }

  /// At the end of a call that released the gate with nothing queued:
  /// clears `overLimit` when this call left it set (see there). A thread
  /// that has claimed the gate since and is past the limit sets it again
  /// at its next value of another thread.
  func endCount(_ othersRun: Int) {
    if othersRun >= Self.handOffLimit {
      withStripeLock { overLimit = false }
    }
  }

  /// How `runPending` ended.
  @usableFromInline
  enum PendingRun {
    /// The queue is empty, and `queued` clear.
    case emptied
    /// Stopped for a waiter, past `handOffLimit`, with values left at the
    /// head of the queue.
    case handedOver
  }

  /// Runs what was queued, batch after batch, until the queue is empty;
  /// then clears `queued` and returns `.emptied`. On a gate that
  /// `handsOff`, once `othersRun` (the values of other threads run by the
  /// caller's call, this one's added) reaches `handOffLimit`, it sets
  /// `overLimit` and, before each further value of another thread, looks
  /// for a writer waiting for its turn: when there is one, it keeps that
  /// value and the rest at the head of `pending` (`queued` stays set; the
  /// copy is short, as writers wait while the queue is long) and returns
  /// `.handedOver`. The calling thread holds the gate.
  @usableFromInline
  func runPending(in context: DeliveryContext, othersRun: inout Int) -> PendingRun {
    // Inside a delivery: a `close()` from a queued run must not wait.
    context.depth += 1
    defer { context.depth -= 1 }
    while true {
      let pastLimit = othersRun >= Self.handOffLimit
      let batch = withStripeLock { () -> ArraySlice<Queued> in
        if pending.isEmpty {
          // Relaxed: under the stripe's lock, as every change of `queued`
          // and every read of the queue it stands for.
          requests.bitwiseAnd(~Self.queued, ordering: .relaxed)
          // Past the limit, left set (see `overLimit`).
          if !pastLimit { overLimit = false }
          return []
        }
        defer { pending = [] }
        return pending[...]
      }
      if batch.isEmpty { return .emptied }
      for index in batch.indices {
        // Closed meanwhile: `closeBusy` emptied the queue; the rest of
        // this batch is dropped with it.
        if isClosed { break }
        let queued = batch[index]
        if handsOff, queued.sender != context.runner {
          if othersRun >= Self.handOffLimit {
            let handsOver = withStripeLock { () -> Bool in
              overLimit = true
              if waiters == 0 { return false }
              pending.insert(contentsOf: batch[index...], at: 0)
              return true
            }
            if handsOver { return .handedOver }
          }
          othersRun += 1
          // A wave of its own (see there): not one of this thread's.
          context.runAsOwnWave { context.run(with: queued.causes, adding: self, queued.run) }
          continue
        }
        context.run(with: queued.causes, adding: self, queued.run)
      }
    }
  }

  /// Releases the gate, from `idle`, with values still queued, for a
  /// writer waiting its turn; returns whether one still waits (it claims
  /// next). When none does, the caller claims again, from the word it
  /// released to, and runs on (see `awaitTurn(in:)` for why this loses
  /// nothing, and why a waiter that took its turn meanwhile makes that
  /// claim fail).
  func handOver(leaving idle: Int) -> Bool {
    let requested = releaseReadingRequests(to: idle)
    wakeCloser(if: requested)
    return withStripeLock { waiters > 0 }
  }
}
