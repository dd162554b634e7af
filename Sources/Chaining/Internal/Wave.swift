// MARK: - Waves

// A wave is a write and everything its delivery causes on the same thread,
// synchronously: the deliveries of a sender's broadcast (and of what its
// handlers write meanwhile, nested), a `sync()`'s fetches, one value a hop
// or a timer delivers, or a `withBatchedUpdates` closure. The thread's
// `DeliveryContext.Waves.open` counts the waves it is inside; the outermost
// one's end sends the combines that changed in it (`flushWave()`), each
// once, built from its sides' final values. Nothing here is shared between
// threads: the counter and the list are the thread's own, so they need no
// atomics. What a combine keeps is touched only under the gate its sides
// run under: its chain's, or a hop's when a hop comes before it.

extension DeliveryContext {
  /// A thread's waves, in its `State`: how many it is inside, and what
  /// waits for the outermost one's end. Only this file reads and writes
  /// them (and `DeliveryContext.run(installing:flushCauses:_:)`, the
  /// causes of a flushed combine).
  @usableFromInline
  struct Waves {
    /// How many waves this thread is inside: deliveries of a write, and
    /// batches. Nonzero, a combine defers its value.
    @usableFromInline var open = 0
    /// How many combines wait in `deferred`, plus the gates in `turns` and
    /// the runs in `postponed`: read on every wave's end, so kept apart
    /// from the arrays.
    @usableFromInline var deferredCount = 0
    /// Gates whose queue this thread joined from inside a delivery while
    /// their running thread was past its limit: it waits for its turn at
    /// each once its wave ends (see `deferTurn(_:)`).
    var turns: [DeliveryGate] = []
    /// Runs of chains postponed past `DeliveryContext.nestingLimit`
    /// nested runs, each on a gate this thread has claimed, oldest first
    /// (see `postpone(causes:_:)`).
    var postponed: [Postponed] = []
    /// The combines that changed in the current wave, in the order they
    /// first changed; sent when the wave ends. Freed with the thread's
    /// state.
    var deferred = TrivialList<WaveFlush.Entry>()
    /// The flushes of pinned entries (`WaveFlush.Entry.pinned`) whose
    /// sends are over and whose pins wait for the thread's next hold of
    /// the graph's lock (`unpinSent(in:)`), or for the wave's end
    /// (`unpinRefreshes()`). Freed with the thread's state.
    var unpins = TrivialList<Unmanaged<WaveFlush>>()
    /// Whether `deferred` is sorted for `takeLowestRanked()`: cleared by
    /// every entry deferred.
    var deferredSorted = false
    /// The causes of deferred combines that have a few (`Entry.arena`),
    /// their gates' ids, kept until the entry is sent: one buffer, reused wave
    /// after wave, so deferring a combine reached through several chains
    /// allocates nothing. Emptied down to `flushCausesFloor` when a
    /// flush ends; a wave of its own (`runAsOwnWave`) raises the floor
    /// over the entries of the wave it interrupts.
    var flushCauses: [UInt] = []
    var flushCausesFloor = 0
    /// The rank of the combine being sent by the wave's end, plus one, or
    /// `Int.min` when none is: what a combine reached from here learns as
    /// its least rank. Not 0: the combines of a `flatMapLatest`'s inner
    /// chains have ranks below 0 (see `LatestInnerChain.rankBase`).
    var level = Int.min

    @usableFromInline
    init() {}
  }
}

extension DeliveryContext {
  /// Whether the thread is inside a wave: a combine then defers its value.
  @inlinable @inline(__always)
  var isInWave: Bool { state.pointee.waves.open != 0 }

  /// Marks the start of a wave, or of a nested one.
  @inlinable @inline(__always)
  func beginWave() {
    // Wrapping: a thread nests far fewer than `Int.max` waves.
    state.pointee.waves.open &+= 1
  }

  /// Marks the end of a wave started by `beginWave()`; the outermost one
  /// sends what its combines deferred. Cheap when none did: two loads and
  /// a branch on every broadcast.
  @inlinable @inline(__always)
  func endWave() {
    let wave = state.pointee.waves.open &- 1
    state.pointee.waves.open = wave
    if state.pointee.waves.deferredCount != 0 { endWave(deferring: wave) }
  }

  /// The end of a wave when something waits: at the outermost wave's
  /// end, the flush; at the end of a write made outside every delivery
  /// inside a longer wave (a batch), the runs it postponed, so that the
  /// write has reached every chain when it returns, as one that nests
  /// less does.
  @usableFromInline
  func endWave(deferring wave: Int) {
    if wave == 0 {
      flushWave()
    } else if state.pointee.depth == 0 {
      runPostponed()
    }
  }

  /// Runs `body` as one wave (or inside the current one).
  @inlinable @inline(__always)
  func inWave(_ body: () -> Void) {
    beginWave()
    body()
    endWave()
  }

  /// Delivers `value`, which arrived from elsewhere (a hop to a queue or
  /// an actor, a timer) with the causes it was sent with, through `gate` to
  /// `downstream`, as a wave of its own: the arrival ends the wave that
  /// sent the value, and its delivery starts one. `QueueHop`,
  /// `IsolationHop` and the time steps call it.
  func deliverArrived<Value>(
    _ value: Value,
    causes: Causes,
    through gate: DeliveryGate,
    to downstream: @escaping (Value) -> Void
  ) {
    inWave {
      run(with: causes) { gate.deliver(value, to: downstream, in: self) }
    }
  }

  /// Runs `body`, another thread's value that this thread runs at a gate
  /// it holds, as a wave of its own: the combines it changes send at its
  /// end (queued behind it at that gate, as this thread's own values, so
  /// they run before the gate is left), not at the end of this thread's
  /// wave. A combine this thread's wave already holds takes the change in
  /// that send instead.
  ///
  /// Otherwise each such value would join this thread's wave, whose end
  /// sends again after each of them that came meanwhile: a thread could be
  /// held sending pairs for another thread's endless writes
  /// (`MUTANT_SHARED_WAVE` in `Verification/JoinedChain.pml`, property
  /// `returns`). The other thread's value is a wave as its write was: a
  /// combine still sends once per wave, with the values its sides hold
  /// then (Combining.md).
  func runAsOwnWave(_ body: () -> Void) {
    let saved = (
      wave: state.pointee.waves.open, count: state.pointee.waves.deferredCount,
      deferred: state.pointee.waves.deferred, turns: state.pointee.waves.turns,
      postponed: state.pointee.waves.postponed, level: state.pointee.waves.level,
      floor: state.pointee.waves.flushCausesFloor
    )
    // The interrupted wave's entries keep their causes below this floor.
    state.pointee.waves.flushCausesFloor = state.pointee.waves.flushCauses.count
    state.pointee.waves.open = 0
    state.pointee.waves.deferredCount = 0
    state.pointee.waves.deferred = TrivialList()
    state.pointee.waves.turns = []
    state.pointee.waves.postponed = []
    state.pointee.waves.level = Int.min
    inWave(body)
    // The wave's end sent every entry of its own list.
    state.pointee.waves.deferred.deallocate()
    state.pointee.waves.open = saved.wave
    state.pointee.waves.deferredCount = saved.count
    state.pointee.waves.deferred = saved.deferred
    state.pointee.waves.deferredSorted = false
    state.pointee.waves.turns = saved.turns
    state.pointee.waves.postponed = saved.postponed
    state.pointee.waves.level = saved.level
    state.pointee.waves.flushCausesFloor = saved.floor
  }

  /// Adds `flush` to the wave's deferred combines. Called under the
  /// combine's gate, which has just recorded this thread in `flush`.
  ///
  /// No allocation when the value's only cause is the gate it runs under
  /// (a combine of holders or senders written directly: the common case):
  /// the entry then keeps no causes, and the flush runs as a value sent
  /// to that gate from outside. Only a value that came through other
  /// chains first (a binding loop may pass through the combine) has its
  /// causes captured, so that the loop still settles.
  func deferFlush(_ flush: WaveFlush) {
    // The gate the combine's side runs under: the innermost cause, pushed
    // by the gate's run (`enter`, or `run(with:adding:_:)` for
    // a queued value). It is the chain's gate, or a hop's for a combine
    // after a hop: sending through it keeps the send serial with the
    // sides, on the hop's queue or actor. Compared unretained: the gate is
    // running on this thread right now, so it is alive; the entry retains
    // a hop's gate from then on, and `flush` retains its chain's. Checked by
    // `GlitchFreeTests.aHopEndsTheWaveAndEachDeliveryAfterItStartsOne` (a
    // combine after hops) under the thread sanitizer.
    let count = state.pointee.count
    let own = CauseSet.key(flush.gate)
    let innermost = count == 0 ? own : state.pointee.causes.unsafelyUnwrapped[count - 1]
    // A gate's address, not an installed id: the run that pushed it is on
    // this thread's stack (see above).
    precondition(innermost & 1 == 0, "DeliveryContext.deferFlush(_:): a combine's side ran under no gate")
    // Past `scanned`, a node; on an installed node, that node and the
    // ids pushed since (after `installedMark`) in the thread's buffer; a
    // few, in that buffer; the gate alone, none. A node made for each
    // combine deferred on an installed one (each combine of a graph of
    // combines, whose sends run with their causes installed) cost its
    // allocation, its ids', a table of its own for each sibling, and
    // their release: 30% of cellx's time (perf).
    var causes: Unmanaged<CauseNode>? = nil
    var arena = 0..<0
    if count > Self.scanned {
      // What `capture(confined: true)` keeps past `scanned`: not frozen,
      // as the node stays on this thread.
      causes = .passRetained(captureNode())
    } else if let base = state.pointee.base {
      causes = base.retain()
      arena = copyFlushCauses(from: 1)
    } else if count > 1 {
      arena = copyFlushCauses(from: 0)
    }
    appendDeferred(
      WaveFlush.Entry(
        // Retained here, released by `send(_:through:)` once the pair is
        // sent or queued: the entry keeps the combine alive even when a
        // handler of this wave invalidates its chain (its gate then drops
        // the send).
        flush: .passRetained(flush),
        hop: innermost == own ? nil : Self.gate(at: innermost).retain(),
        causes: causes,
        arena: arena
      )
    )
  }

  /// Adds `entry` to the wave's deferred flushes, to be sent at its end.
  private func appendDeferred(_ entry: WaveFlush.Entry) {
    state.pointee.waves.deferredSorted = false
    state.pointee.waves.deferred.append(entry)
    state.pointee.waves.deferredCount += 1
  }

  /// Adds the refresh of a computed value's chains, `flush`, to the
  /// wave's deferred flushes without its gate: for a write made outside
  /// every chain's run (no causes), in a wave. The entry takes over the
  /// caller's retain of `flush`. Called by the marking walk
  /// (`ComputedNode.notify`), under the graph's lock: it runs no user
  /// code and takes no lock (the rank is atomic).
  ///
  /// What `deferFlush(_:)` does under the gate, less what needs the gate:
  /// the rank, atomic, is raised the same way; with no causes the entry
  /// keeps none, as `deferFlush(_:)` would find only the gate itself; the
  /// thread is not recorded in `flush` (`deferredBy`, guarded by the
  /// gate), so a value marked again after a read in the same wave may
  /// have two entries. That costs one refresh more and sends nothing
  /// twice: a refresh sends only a version its chains have not had
  /// (`ComputedBox.refresh()`), and it runs at the wave's end, without
  /// the gate there too (`refresh(_:pinned:)`), or is dropped there, when
  /// the value says its chains have had its version
  /// (`ComputedNode.isSent(runner:)`). Skipping the gate here saves its
  /// claim and release, and a retain and a release of `flush`, per marked
  /// value with chains: a tenth of kairo's `mux` with `Computed`.
  /// `ComputedTests.aValueMarkedTwiceInOneWaveSendsOnce` checks the
  /// duplicate.
  ///
  /// The entry does not retain `flush` either: the caller has pinned it
  /// (`WaveFlush.pin()`, under the graph's lock, which the walk holds).
  /// The pin goes once nothing touches the flush for the entry anymore,
  /// in a hold of the lock the thread takes anyway: the question that
  /// skips the refresh removes it in its own hold (`ComputedNode.isSent`);
  /// a refresh that runs leaves it in `Waves.unpins` after its run, and the
  /// thread's next refresh or question removes it (`unpinSent(in:)`),
  /// never the run's own refresh, which goes on using the value (which
  /// the flush keeps alive) after unlocking. What is left when
  /// the entries run out goes in one hold of the wave's end
  /// (`unpinRefreshes()`). A value let go of meanwhile, on any thread
  /// (`ComputedBox.detachFlush()`), leaves its flush to the pins rather
  /// than releasing it, so the flush outlives every entry that points to
  /// it. That trades a retain and a release per marked value, two atomic
  /// operations, for at most one hold of the lock per wave: kairo mux
  /// with `Computed` makes 825 atomic operations a write rather than
  /// 1,025 (locked instructions, retains and releases, callgrind), broad
  /// 360 rather than 459. `Verification/RefreshPins.pml` models it, with
  /// mutants spin catches (a flush released while pinned; an orphan never
  /// released; the run's own refresh removing its pin; the question
  /// removing it before a wake); `ComputedTests.aValueLetGoOfByAHandlerWhileItsRefreshWaitsIsFreedAfterIt`
  /// lets a value go while its refresh waits (the address sanitizer finds
  /// the flush read after it is freed if the value releases it while
  /// pinned), and `aValueFreedAtTheWavesEndMayWriteFromItsDeinit` writes
  /// from what that frees.
  func deferRefresh(_ flush: Unmanaged<WaveFlush>) {
    let level = state.pointee.waves.level
    flush._withUnsafeGuaranteedRef { $0.learn(level: level) }
    appendDeferred(WaveFlush.Entry(flush: flush, hop: nil, causes: nil, arena: 0..<0, pinned: true))
  }

  /// Removes the pins of this thread's entries whose sends are over (see
  /// `deferRefresh(_:)`) that can go now: all but the last pin of an
  /// orphan, whose release waits for the wave's end (`WaveFlush.unpin()`).
  /// Under the graph's lock, in a hold the caller takes for its own
  /// reasons (a refresh, or the question before skipping one), on the
  /// thread of `state`: none of these entries runs on any flush anymore.
  static func unpinSent(in state: UnsafeMutablePointer<State>) {
    var index = 0
    while index < state.pointee.waves.unpins.count {
      if state.pointee.waves.unpins[index]._withUnsafeGuaranteedRef({ $0.unpin() }) {
        state.pointee.waves.unpins.swapRemove(at: index)
      } else {
        index += 1
      }
    }
  }

  /// Unpins the flushes of the pinned entries sent (see
  /// `deferRefresh(_:)`) that no later hold of the lock unpinned, under
  /// one hold of the graph's lock, then releases those whose value let go
  /// of them meanwhile, after unlocking (a release may free the value,
  /// whose deinit takes the lock).
  private func unpinRefreshes() {
    // The orphans to release are kept at the front of the list: no
    // allocation unless there are some (an array, even empty, cost a
    // release per wave).
    var orphans = 0
    state.pointee.graphLock._withUnsafeGuaranteedRef {
      $0.withLock { _ in
        for index in state.pointee.waves.unpins.indices {
          let flush = state.pointee.waves.unpins[index]
          let freed = flush._withUnsafeGuaranteedRef { $0.removePin() }
          if freed {
            state.pointee.waves.unpins[orphans] = flush
            orphans += 1
          }
        }
      }
    }
    if orphans == 0 {
      state.pointee.waves.unpins.removeAll(from: 0)
      return
    }
    // Out of the list before releasing: a release may free a value whose
    // deinit writes, and the wave that write starts uses the list.
    let released = (0..<orphans).map { state.pointee.waves.unpins[$0] }
    state.pointee.waves.unpins.removeAll(from: 0)
    for flush in released { flush.release() }
  }

  /// Appends the ids of the buffer's causes from `first` on to
  /// `flushCauses`, and returns where they are.
  private func copyFlushCauses(from first: Int) -> Range<Int> {
    let start = state.pointee.waves.flushCauses.count
    let causes = state.pointee.causes.unsafelyUnwrapped
    for index in first..<state.pointee.count {
      state.pointee.waves.flushCauses.append(Self.id(of: causes[index]))
    }
    return start..<state.pointee.waves.flushCauses.count
  }

  /// Waits for a turn at `gate` once this thread's wave ends: for a
  /// writer inside a delivery whose value `gate` queued while its running
  /// thread was past `DeliveryGate.handOffLimit`. Waiting there could
  /// deadlock (this thread may hold a gate the running thread's handlers
  /// feed); at the wave's end it holds none, and waits as a writer from
  /// outside every delivery does. Already counted in the gate's waiters;
  /// the turn takes it out.
  func deferTurn(_ gate: DeliveryGate) {
    state.pointee.waves.turns.append(gate)
    state.pointee.waves.deferredCount += 1
  }

  /// Postpones `run`, a run of a chain whose gate this thread has
  /// claimed, with the causes of its value, until the thread's stack is
  /// shallow again: the end of the current write made outside every
  /// delivery, or of the wave (see `DeliveryGate.postpone(_:_:in:)`).
  func postpone(causes: Causes, _ run: @escaping () -> Void) {
    state.pointee.waves.postponed.append(Postponed(causes: causes, run: run))
    state.pointee.waves.deferredCount += 1
  }

  /// Runs the postponed runs, oldest first, with the runs they postpone
  /// in turn, until none is left. Each starts from this frame, so the
  /// stack nests at most `nestingLimit` runs deeper than here.
  func runPostponed() {
    while !state.pointee.waves.postponed.isEmpty {
      let batch = state.pointee.waves.postponed
      state.pointee.waves.postponed = []
      state.pointee.waves.deferredCount -= batch.count
      for postponed in batch { run(with: postponed.causes, postponed.run) }
    }
  }

  /// Sends the deferred combines, lowest rank first (ties in the order
  /// they first changed), until none is left.
  ///
  /// The thread is counted inside a wave meanwhile, so that the writes a
  /// combine's handlers make join this wave: what they change is deferred
  /// to this same loop, not sent by a nested one. A combine's rank is
  /// higher than that of every combine whose sending reached it (it learns
  /// `level`), so a combine that reads what another one writes is sent
  /// after it, with that write's value: never a pair mixing old and new.
  ///
  /// Runs postponed first: they finish the deliveries that changed the
  /// combines, and a combine's pair waits for its sides' final values.
  /// Then, or in between, waits for this thread's turns (`deferTurn(_:)`).
  ///
  /// Questions in one hold: a computed value's refresh whose chains had
  /// its version last time is first a question
  /// (`ComputedNode.isSent(runner:unpinning:holdingLock:keepsLock:)`),
  /// asked under the graph's lock. When the chains have had the version,
  /// and the skip releases nothing (the entry is pinned and has no hop; a
  /// release may free a value, whose deinit takes the lock), the lock is
  /// kept for the next entry: a question asks in the same hold, and every
  /// other path gives the lock back first (`giveBackGraphLock(_:)`), as
  /// does the end of the entries. So a write that marks many values whose
  /// chains have had their versions (99 of kairo mux's 100 refreshes a
  /// write) asks in one hold, given back only for the evaluations the
  /// updates make, rather than a hold each: kairo mux with `Computed`
  /// takes 7% less time, with 311 → 215 locked instructions a write
  /// (Performance.md, "Questions asked in one hold"). Nothing new for
  /// other threads to meet: two holds of one thread with nothing of its
  /// own between them become one, which only removes the interleavings
  /// where another thread takes the lock in between (the models of the question,
  /// `Verification/ComputedRefresh.pml` and `Verification/RefreshPins.pml`,
  /// take each question as one hold). What runs in the hold between two
  /// questions takes no lock and runs no user code: the entry's
  /// bookkeeping, and a sort of the entries when an evaluation deferred
  /// more. `ComputedTests`' questions asked in one hold check each path
  /// that gives the lock back (a lock left taken hangs the next read).
  @usableFromInline
  func flushWave() {
    state.pointee.waves.open += 1
    // Whether this thread holds the graph's lock, kept from a question
    // that skipped a refresh for the next entry (see "Questions in one
    // hold" above): every other path gives it back first.
    var holdsGraphLock = false
    while true {
      while state.pointee.waves.deferredCount != 0 {
        if !state.pointee.waves.postponed.isEmpty {
          giveBackGraphLock(&holdsGraphLock)
          runPostponed()
          continue
        }
        state.pointee.waves.deferredCount -= 1
        if state.pointee.waves.deferred.isEmpty {
          giveBackGraphLock(&holdsGraphLock)
          let gate = state.pointee.waves.turns.removeFirst()
          // Outside every delivery, as a writer that waits at once; inside
          // one (a wave that ended within a run), it only tries its turn.
          gate.awaitTurn(in: self, waits: depth == 0)
          continue
        }
        let entry = takeLowestRanked()
        let saved = state.pointee.waves.level
        state.pointee.waves.level = entry.flush._withUnsafeGuaranteedRef { $0.rank.load(ordering: .relaxed) } &+ 1
        // Through the gate the combine's sides ran under, as any value of
        // its chain: run at once when idle, queued behind the run of another
        // thread otherwise. Not an echo: that gate's runs in this wave are
        // done, and its send is meant to reach the chain.
        let flush = entry.flush
        let hop = entry.hop
        let pinned = entry.pinned
        if entry.causes == nil && entry.arena.isEmpty && state.pointee.count == 0 && state.pointee.base == nil {
          // A computed value's refresh whose chains have had the version
          // the update leaves sends nothing: no gate (see
          // `ComputedNode.isSent(runner:)`). Most of kairo mux's 100
          // refreshes a write.
          let runner = runner
          let (node, asks) = flush._withUnsafeGuaranteedRef { flush in
            (flush.refreshes, flush.sentNothing.load(ordering: .relaxed) != 0)
          }
          var skips = false
          if let node, asks {
            // The lock is kept for the next question only when this skip
            // releases nothing (a release may free a value, whose deinit
            // takes the lock).
            let keepsLock = pinned && hop == nil
            skips = flush._withUnsafeGuaranteedRef { flush in
              node._withUnsafeGuaranteedRef {
                $0.isSent(
                  runner: runner,
                  unpinning: pinned ? flush : nil,
                  holdingLock: &holdsGraphLock,
                  keepsLock: keepsLock
                )
              }
            }
          } else {
            giveBackGraphLock(&holdsGraphLock)
          }
          if skips {
            if !pinned { flush.release() }
            hop?.release()
          } else if node != nil, hop == nil {
            refresh(flush, pinned: pinned)
          } else {
            send(flush, through: hop, pinned: pinned)
          }
        } else {
          // A node and the ids on top of it, or a few ids (see
          // `deferFlush(_:)`); or none when the wave ended inside a run of
          // other chains (a hop's drain, say): the value's only cause was
          // the gate, so none of those count. The entry's retain (or pin)
          // keeps the node alive for the run.
          giveBackGraphLock(&holdsGraphLock)
          run(installing: entry.causes, flushCauses: entry.arena) { send(flush, through: hop, pinned: pinned) }
          entry.causes?.release()
        }
        state.pointee.waves.level = saved
      }
      giveBackGraphLock(&holdsGraphLock)
      // The pins no later hold of the lock removed (see
      // `deferRefresh(_:)`); a release they let go may write, and defer
      // more.
      if state.pointee.waves.unpins.isEmpty { break }
      unpinRefreshes()
    }
    // Every entry of this flush was sent: its causes are done with.
    let floor = state.pointee.waves.flushCausesFloor
    if state.pointee.waves.flushCauses.count > floor {
      state.pointee.waves.flushCauses.removeLast(state.pointee.waves.flushCauses.count - floor)
    }
    state.pointee.waves.open -= 1
  }

  /// Gives back the graph's lock if `holds`, and clears it.
  @inline(__always)
  private func giveBackGraphLock(_ holds: inout Bool) {
    guard holds else { return }
    state.pointee.graphLock._withUnsafeGuaranteedRef { $0.unlock() }
    holds = false
  }

  /// Up to how many deferred combines `takeLowestRanked()` searches; more
  /// are sorted.
  static var sortedFlushes: Int { 16 }

  /// Removes and returns the deferred combine of lowest rank, the first of
  /// them when several share it. Most waves defer one combine.
  @inline(__always)
  private func takeLowestRanked() -> WaveFlush.Entry {
    let count = state.pointee.waves.deferred.count
    // Sorted and nothing deferred since: the end is the lowest, however
    // few are left (searching the last 16 of mux's 100 refreshes again
    // and again cost 2% of its instructions with `Computed`, callgrind).
    if count == 1 || state.pointee.waves.deferredSorted { return state.pointee.waves.deferred.removeLast() }
    return takeLowestRankedUnsorted()
  }

  /// `takeLowestRanked()` when the list is not sorted: out of line, so
  /// that the usual case costs no call.
  private func takeLowestRankedUnsorted() -> WaveFlush.Entry {
    let count = state.pointee.waves.deferred.count
    if count > Self.sortedFlushes {
      // Many at once (the computed values a write marks): sorted once,
      // highest rank first and, within a rank, the latest first, then
      // taken from the end, rather than searched each time (O(n²)). An
      // entry deferred meanwhile asks for another sort.
      sortDeferred()
      state.pointee.waves.deferredSorted = true
      return state.pointee.waves.deferred.removeLast()
    }
    var lowest = 0
    var lowestRank = Int.max
    for index in 0..<count {
      let rank = state.pointee.waves.deferred[index].flush._withUnsafeGuaranteedRef { $0.rank.load(ordering: .relaxed) }
      if rank < lowestRank {
        lowest = index
        lowestRank = rank
      }
    }
    return state.pointee.waves.deferred.remove(at: lowest)
  }

  /// Sorts the deferred combines highest rank first and, within a rank,
  /// the latest first, by the ranks they have now (a rank another thread
  /// raises meanwhile cannot make the comparisons disagree). The entries
  /// are moved in place, one cycle of the order at a time: no entry is
  /// copied, retained or released, and the sort allocates only its keys.
  ///
  /// Usually the ranks are in order already, or in reverse order: the
  /// chains of the computed values a write marks are deferred with ranks
  /// that never rise (each chain ranks above the one made before it, and
  /// the write marks the last made first; a thread's first chains may
  /// share a rank) or that never fall. The entries are then put in order
  /// in place with no keys: left as they are (falling), each run of one
  /// rank reversed (never rising), or all of them reversed (never
  /// falling). Sorting mux's 100 refreshes on every write cost 5% of its
  /// instructions with `Computed` (callgrind).
  private func sortDeferred() {
    let entries = state.pointee.waves.deferred
    let count = entries.count
    func rank(_ index: Int) -> Int {
      entries[index].flush._withUnsafeGuaranteedRef { $0.rank.load(ordering: .relaxed) }
    }
    var previous = rank(0)
    var neverRising = true
    var falling = true
    var neverFalling = true
    // Where entries of one rank stand side by side, from the first such
    // pair to the last: outside, every run of one rank is one entry.
    var tiedFrom = count
    var tiedTo = 0
    for index in 1..<count {
      let current = rank(index)
      if current > previous { neverRising = false }
      if current >= previous { falling = false }
      if current < previous { neverFalling = false }
      if current == previous {
        tiedFrom = Swift.min(tiedFrom, index - 1)
        tiedTo = index + 1
      }
      if !neverRising && !neverFalling { break }
      previous = current
    }
    // In order already: no run of one rank to reverse.
    if falling { return }
    if neverFalling {
      entries.reverse(0..<count)
      return
    }
    if neverRising {
      // The runs are found by reading the ranks again, between the first
      // and the last pair of one rank (a thread's first chains may share
      // one: kairo broad's 50 refreshes a write have one such pair, and
      // the whole list read again cost 20 instructions an entry): a rank
      // another thread raises meanwhile only moves where a run ends, as
      // one raised just after a sort would, and each entry stays once.
      var runStart = tiedFrom
      previous = rank(tiedFrom)
      for index in (tiedFrom + 1)..<tiedTo {
        let current = rank(index)
        if current != previous {
          entries.reverse(runStart..<index)
          runStart = index
          previous = current
        }
      }
      entries.reverse(runStart..<tiedTo)
      return
    }
    var keys = entries.indices.map { (rank: rank($0), index: $0) }
    keys.sort { $0.rank != $1.rank ? $0.rank > $1.rank : $0.index > $1.index }
    // The entry at `keys[j].index` goes to `j`. Each cycle of that order
    // is followed from its smallest position `i`, swapping the next entry
    // of the cycle into place; a position done points at itself.
    for i in keys.indices {
      var j = i
      while keys[j].index != i {
        let next = keys[j].index
        entries.swapAt(j, next)
        keys[j].index = j
        j = next
      }
      keys[j].index = j
    }
  }

  /// Sends a deferred entry's combine, `flush`, through its gate, or
  /// `hop` when it has one, then releases both, which the entry retained
  /// (`flush` only when not `pinned`: a pinned entry's pin goes later, see
  /// `deferRefresh(_:)`).
  ///
  /// When the gate is idle, the value handed to it is the combine
  /// unretained and this thread's mark, and the closure captures nothing:
  /// no allocation, and no reference counting but the entry's own release.
  /// The entry's retain (or pin) keeps the combine alive until the run
  /// returns.
  /// When the gate is busy (another thread runs the chain), the queued
  /// send holds the combine strongly, as it runs after this returns.
  private func send(_ flush: Unmanaged<WaveFlush>, through hop: Unmanaged<DeliveryGate>?, pinned: Bool) {
    let gate = hop ?? flush._withUnsafeGuaranteedRef { Unmanaged.passUnretained($0.gate) }
    let runner = self.runner
    let sent = gate._withUnsafeGuaranteedRef { gate in
      // A static function, which captures nothing.
      gate.runIfIdle((flush, runner), to: Self.sendUnretained, in: self)
    }
    if !sent {
      let flush = flush.takeUnretainedValue()
      gate._withUnsafeGuaranteedRef { $0.queue(runner, { flush.send(from: $0) }, in: self) }
    }
    // The run is over, or queued, holding the flush.
    letGo(flush, pinned: pinned)
    hop?.release()
  }

  /// Lets go of the flush of an entry whose send is over: releases it,
  /// or leaves its pin for the thread's next hold of the graph's lock
  /// (see `deferRefresh(_:)`).
  @inline(__always)
  private func letGo(_ flush: Unmanaged<WaveFlush>, pinned: Bool) {
    if pinned {
      state.pointee.waves.unpins.append(flush)
    } else {
      flush.release()
    }
  }

  /// Runs a computed value's refresh (`flush`, whose `refreshes` is set)
  /// at once, on this thread, without the flush's gate, for an entry with
  /// no causes and no hop; then lets go of `flush` (`letGo(_:pinned:)`),
  /// as `send(_:through:pinned:)` does. The gate is not needed: refreshes
  /// claim their broadcasts in the order of their versions, under the
  /// graph's lock (see `ComputedBox.refresh()`), and nothing else of the
  /// flush is touched (a refresh keeps no thread in it, `deferredBy`).
  /// Skipping it saves its claim, an atomic operation, and the run's
  /// bookkeeping: about 90 instructions per refresh that sends
  /// (Performance.md, "Refreshes without the flush's gate").
  private func refresh(_ flush: Unmanaged<WaveFlush>, pinned: Bool) {
    flush._withUnsafeGuaranteedRef { $0.sendLatest() }
    letGo(flush, pinned: pinned)
  }

  /// The run of `send(_:through:)` on an idle gate: `flush` is kept
  /// alive by the entry being sent.
  private static func sendUnretained(_ request: (flush: Unmanaged<WaveFlush>, runner: Int)) {
    request.flush._withUnsafeGuaranteedRef { $0.send(from: request.runner) }
  }
}

/// A run of a chain postponed past `DeliveryContext.nestingLimit` nested
/// runs: the causes of its value, and the run, on a gate the postponing
/// thread has claimed.
struct Postponed {
  let causes: Causes
  let run: () -> Void
}
