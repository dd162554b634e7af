// MARK: - Waves

// A wave is a write and everything its delivery causes on the same thread,
// synchronously: the deliveries of a sender's broadcast (and of what its
// handlers write meanwhile, nested), a `sync()`'s fetches, one value a hop
// or a timer delivers, or a `withBatchedUpdates` closure. The thread's
// `DeliveryContext.State.wave` counts the waves it is inside; the outermost
// one's end sends the combines that changed in it (`flushWave()`), each
// once, built from its sides' final values. Nothing here is shared between
// threads: the counter and the list are the thread's own, so they need no
// atomics. What a combine keeps is touched only under the gate its sides
// run under: its chain's, or a hop's when a hop comes before it.

extension DeliveryContext {
  /// Whether the thread is inside a wave: a combine then defers its value.
  @inlinable @inline(__always)
  var isInWave: Bool { state.pointee.wave != 0 }

  /// Marks the start of a wave, or of a nested one.
  @inlinable @inline(__always)
  func beginWave() {
    // Wrapping: a thread nests far fewer than `Int.max` waves.
    state.pointee.wave &+= 1
  }

  /// Marks the end of a wave started by `beginWave()`; the outermost one
  /// sends what its combines deferred. Cheap when none did: two loads and
  /// a branch on every broadcast.
  @inlinable @inline(__always)
  func endWave() {
    let wave = state.pointee.wave &- 1
    state.pointee.wave = wave
    if state.pointee.deferredCount != 0 { endWave(deferring: wave) }
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
      wave: state.pointee.wave, count: state.pointee.deferredCount,
      deferred: state.pointee.deferred, turns: state.pointee.turns,
      postponed: state.pointee.postponed, level: state.pointee.level,
      floor: state.pointee.flushCausesFloor
    )
    // The interrupted wave's entries keep their causes below this floor.
    state.pointee.flushCausesFloor = state.pointee.flushCauses.count
    state.pointee.wave = 0
    state.pointee.deferredCount = 0
    state.pointee.deferred = []
    state.pointee.turns = []
    state.pointee.postponed = []
    state.pointee.level = Int.min
    inWave(body)
    state.pointee.wave = saved.wave
    state.pointee.deferredCount = saved.count
    state.pointee.deferred = saved.deferred
    state.pointee.deferredSorted = false
    state.pointee.turns = saved.turns
    state.pointee.postponed = saved.postponed
    state.pointee.level = saved.level
    state.pointee.flushCausesFloor = saved.floor
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
    // by the gate's run (`enter`, or `run(with:adding:)` for a queued
    // value). It is the chain's gate, or a hop's for a combine after a
    // hop: sending through it keeps the send serial with the sides, on the
    // hop's queue or actor. Compared unretained: the gate is running on
    // this thread right now, so it is alive; the entry retains a hop's
    // gate from then on, and `flush` retains its chain's. Checked by
    // `GlitchFreeTests.aHopEndsTheWaveAndEachDeliveryAfterItStartsOne` (a
    // combine after hops) under the thread sanitizer.
    let count = state.pointee.count
    let own = Unmanaged.passUnretained(flush.gate)
    let innermost = count == 0 ? own : state.pointee.causes.unsafelyUnwrapped[count - 1]
    // Past `scanned`, or with causes installed, a node; a few, in the
    // thread's buffer; the gate alone, none.
    var causes: Causes? = nil
    var arena = 0..<0
    if count > Self.scanned || state.pointee.base != nil {
      causes = capture(confined: true)
    } else if count > 1 {
      arena = retainFlushCauses()
    }
    state.pointee.deferredSorted = false
    state.pointee.deferred.append(
      WaveFlush.Entry(
        // Retained here, released by `send(_:)` once the pair is sent or
        // queued: the entry keeps the combine alive even when a handler of
        // this wave invalidates its chain (its gate then drops the send).
        flush: .passRetained(flush),
        hop: innermost.toOpaque() == own.toOpaque() ? nil : innermost.retain(),
        causes: causes,
        arena: arena
      )
    )
    state.pointee.deferredCount += 1
  }

  /// Appends the buffer's causes, retained, to `flushCauses`, and returns
  /// where they are.
  private func retainFlushCauses() -> Range<Int> {
    let start = state.pointee.flushCauses.count
    let causes = state.pointee.causes.unsafelyUnwrapped
    for index in 0..<state.pointee.count { state.pointee.flushCauses.append(causes[index].retain()) }
    return start..<state.pointee.flushCauses.count
  }

  /// Waits for a turn at `gate` once this thread's wave ends: for a
  /// writer inside a delivery whose value `gate` queued while its running
  /// thread was past `DeliveryGate.handOffLimit`. Waiting there could
  /// deadlock (this thread may hold a gate the running thread's handlers
  /// feed); at the wave's end it holds none, and waits as a writer from
  /// outside every delivery does. Already counted in the gate's waiters;
  /// the turn takes it out.
  func deferTurn(_ gate: DeliveryGate) {
    state.pointee.turns.append(gate)
    state.pointee.deferredCount += 1
  }

  /// Postpones `run`, a run of a chain whose gate this thread has
  /// claimed, with the causes of its value, until the thread's stack is
  /// shallow again: the end of the current write made outside every
  /// delivery, or of the wave (see `DeliveryGate.postpone(_:_:in:)`).
  func postpone(causes: Causes, _ run: @escaping () -> Void) {
    state.pointee.postponed.append(Postponed(causes: causes, run: run))
    state.pointee.deferredCount += 1
  }

  /// Runs the postponed runs, oldest first, with the runs they postpone
  /// in turn, until none is left. Each starts from this frame, so the
  /// stack nests at most `nestingLimit` runs deeper than here.
  func runPostponed() {
    while !state.pointee.postponed.isEmpty {
      let batch = state.pointee.postponed
      state.pointee.postponed = []
      state.pointee.deferredCount -= batch.count
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
  @usableFromInline
  func flushWave() {
    state.pointee.wave += 1
    while state.pointee.deferredCount != 0 {
      if !state.pointee.postponed.isEmpty {
        runPostponed()
        continue
      }
      state.pointee.deferredCount -= 1
      if state.pointee.deferred.isEmpty {
        let gate = state.pointee.turns.removeFirst()
        // Outside every delivery, as a writer that waits at once; inside
        // one (a wave that ended within a run), it only tries its turn.
        gate.awaitTurn(in: self, waits: depth == 0)
        continue
      }
      let entry = takeLowestRanked()
      let saved = state.pointee.level
      state.pointee.level = entry.flush._withUnsafeGuaranteedRef { $0.rank.load(ordering: .relaxed) } &+ 1
      // Through the gate the combine's sides ran under, as any value of
      // its chain: run at once when idle, queued behind the run of another
      // thread otherwise. Not an echo: that gate's runs in this wave are
      // done, and its send is meant to reach the chain.
      if let causes = entry.causes {
        run(with: causes) { send(entry) }
      } else if !entry.arena.isEmpty {
        run(withFlushCauses: entry.arena) { send(entry) }
      } else if state.pointee.count == 0 && state.pointee.base == nil {
        send(entry)
      } else {
        // The wave ended inside a run of other chains (a hop's drain, say):
        // the value's only cause was the gate, so none of those count.
        run(with: .none) { send(entry) }
      }
      state.pointee.level = saved
    }
    // Every entry of this flush was sent and released its causes.
    let floor = state.pointee.flushCausesFloor
    if state.pointee.flushCauses.count > floor {
      state.pointee.flushCauses.removeLast(state.pointee.flushCauses.count - floor)
    }
    state.pointee.wave -= 1
  }

  /// Up to how many deferred combines `takeLowestRanked()` searches; more
  /// are sorted.
  static var sortedFlushes: Int { 16 }

  /// Removes and returns the deferred combine of lowest rank, the first of
  /// them when several share it. Most waves defer one combine.
  private func takeLowestRanked() -> WaveFlush.Entry {
    // Indexed in place: a copy of the array would make the removal copy it.
    let count = state.pointee.deferred.count
    if count == 1 { return state.pointee.deferred.removeLast() }
    if count > Self.sortedFlushes {
      // Many at once (the computed values a write marks): sorted once,
      // highest rank first and, within a rank, the latest first, then
      // taken from the end, rather than searched each time (O(n²)). An
      // entry deferred meanwhile asks for another sort.
      if !state.pointee.deferredSorted {
        let ranks = state.pointee.deferred.map {
          $0.flush._withUnsafeGuaranteedRef { $0.rank.load(ordering: .relaxed) }
        }
        let order = ranks.indices.sorted { ranks[$0] != ranks[$1] ? ranks[$0] > ranks[$1] : $0 > $1 }
        state.pointee.deferred = order.map { state.pointee.deferred[$0] }
        state.pointee.deferredSorted = true
      }
      return state.pointee.deferred.removeLast()
    }
    var lowest = 0
    var lowestRank = Int.max
    for index in 0..<count {
      let rank = state.pointee.deferred[index].flush._withUnsafeGuaranteedRef { $0.rank.load(ordering: .relaxed) }
      if rank < lowestRank {
        lowest = index
        lowestRank = rank
      }
    }
    return state.pointee.deferred.remove(at: lowest)
  }

  /// Sends `entry`'s combine through its gate, then releases what the
  /// entry retained.
  ///
  /// When the gate is idle, the value handed to it is the combine
  /// unretained and this thread's mark, and the closure captures nothing:
  /// no allocation, and no reference counting but the entry's own release.
  /// The entry's retain keeps the combine alive until the run returns.
  /// When the gate is busy (another thread runs the chain), the queued
  /// send holds the combine strongly, as it runs after this returns.
  private func send(_ entry: WaveFlush.Entry) {
    let gate = entry.hop ?? entry.flush._withUnsafeGuaranteedRef { Unmanaged.passUnretained($0.gate) }
    let runner = self.runner
    let sent = gate._withUnsafeGuaranteedRef { gate in
      // A static function, which captures nothing.
      gate.runIfIdle((entry.flush, runner), to: Self.sendUnretained, in: self)
    }
    if !sent {
      let flush = entry.flush.takeUnretainedValue()
      gate._withUnsafeGuaranteedRef { $0.queue(runner, { flush.send(from: $0) }, in: self) }
    }
    entry.flush.release()
    entry.hop?.release()
  }

  /// The run of `send(_:)` on an idle gate: `flush` is kept alive by the
  /// entry being sent.
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

/// What a combine keeps to send its pair at the end of a wave: its chain's
/// gate, its rank, the threads whose list it waits in, and how to send.
///
/// The combine's typed state (each side's latest value, the downstream
/// closure) lives in the chain's closures, built in the client's module
/// (`Chain.combinePair`), so that its code is specialized there; this
/// class is not generic, so sending from a wave's end costs no generic
/// metadata lookup.
@usableFromInline
final class WaveFlush: @unchecked Swift.Sendable {
  // @unchecked: `deferredBy`, `alsoDeferredBy` and the state `sendLatest`
  // reads are touched only under `gate` (the chain's runs are serial), or
  // a hop's gate before the combine; `rank` is atomic.

  /// The storage of `rank`, reached only through it: must stay the first
  /// stored property (see `AtomicReference`: "Where the word lives").
  @usableFromInline var rankStorage = Int.min

  /// A deferred combine in a thread's list.
  struct Entry {
    /// Retained by the entry (see `DeliveryContext.deferFlush(_:)`).
    let flush: Unmanaged<WaveFlush>
    /// The gate to send through, retained, when the sides run under
    /// another gate than the chain's (a hop's before the combine, or the
    /// join's own, see `JoinSides`); nil for the chain's gate (see
    /// `DeliveryContext.deferFlush(_:)`).
    let hop: Unmanaged<DeliveryGate>?
    /// The causes of the value that made it change first, when there were
    /// others than the gate, so that a binding loop through the combine
    /// still settles: past `DeliveryContext.scanned`, or with causes
    /// installed, a captured node; otherwise, with two to `scanned`, in
    /// `arena`.
    let causes: Causes?
    /// Where the causes are in the thread's `flushCauses`, retained
    /// (empty when none are there).
    let arena: Range<Int>
  }

  /// The gate of the combine's chain: where its sides run, unless a hop
  /// comes before it.
  let gate: DeliveryGate
  /// Sends the pair of latest values, when both sides have one. Called
  /// under the gate the sides run under.
  let sendLatest: () -> Void
  /// The combine's rank: only raised. Atomic because the flushing thread
  /// reads it to choose the next combine while another thread may run the
  /// chain; relaxed, as it only orders the sends of one thread's list and
  /// a stale rank costs at worst one more send, never a wrong value.
  /// The order is checked by
  /// `GlitchFreeTests.combineBuiltBeforeTheCombineItReadsStillSendsAfterIt`
  /// and the property test (both fail when ranks are ignored); the
  /// cross-thread reads by `wavesOnSeveralThreadsSendExactlyOncePerWaveEach`
  /// under the thread sanitizer.
  ///
  /// Raised when the chain is built, by its sides (see `RankGraph`), and
  /// at each later build that links a chain into it; each raise is a
  /// compare-and-swap that keeps the highest, so a raise on one thread
  /// never undoes another's.
  @usableFromInline var rank: AtomicReference<Int> {
    @inline(__always) get { AtomicReference(in: self) }
  }
  /// This combine's place in the graph of ranks (see `RankGraph`). Under
  /// `RankGraph.lock`.
  @exclusivity(unchecked) var rankLinks: RankLinks?
  /// The threads (their `DeliveryContext.runner`) whose list holds this
  /// combine: one entry per thread, so that each thread's wave that
  /// changed a side sends once, even while another thread's wave holds it
  /// too. Under the gate. Almost always no thread or one: that one is kept
  /// in `deferredBy` (0 for none), any other in `alsoDeferredBy`, so that
  /// the common case touches no array.
  @exclusivity(unchecked) var deferredBy = 0
  @exclusivity(unchecked) var alsoDeferredBy: [Int] = []

  /// Creates the flush of a combine being built into the chain of `gate`;
  /// `takeRank()` follows once its sides are built.
  @usableFromInline
  init(gate: DeliveryGate, sendLatest: @escaping () -> Void) {
    self.gate = gate
    self.sendLatest = sendLatest
  }

  deinit {
    // Set only by a thread that holds this flush, so read after its last
    // release without the graph's lock.
    rankLinks?.end()
  }

  /// Takes the next rank of the building thread. Called after the sides
  /// are built, so that a combine built inside them (a nested combine,
  /// `a.combine(b).combine(c)`) ranks below this one; before the gate
  /// opens, so before any value arrives.
  @usableFromInline
  func takeRank() {
    let state = DeliveryContext.current.state
    _ = raise(to: state.pointee.builtRank)
    state.pointee.builtRank += 1
  }

  /// Builds a join's sides (`body`), then takes the next rank of the
  /// building thread and links the sides' sources and joins to this one
  /// (see `RankGraph`).
  @usableFromInline
  func buildSides(in context: _ChainContext, _ body: () -> Void) {
    RankGraph.beginBuilding(self, in: context)
    body()
    takeRank()
    RankGraph.endBuilding(in: context)
  }

  /// Called under the gate when a side has stored a new value: inside a
  /// wave, joins the thread's list and returns true (the pair is sent at
  /// the wave's end); outside one, returns false and the caller sends at
  /// once, as before waves existed.
  @inlinable @inline(__always)
  func defers() -> Bool {
    let context = DeliveryContext.current
    if !context.isInWave { return false }
    changed(in: context)
    return true
  }

  /// Learns the level the value came at, and joins the thread's list
  /// unless already in it.
  @usableFromInline
  func changed(in context: DeliveryContext) {
    let level = context.state.pointee.level
    if level > rank.load(ordering: .relaxed) { _ = raise(to: level) }
    let runner = context.runner
    if deferredBy == runner || (!alsoDeferredBy.isEmpty && alsoDeferredBy.contains(runner)) { return }
    if deferredBy == 0 {
      deferredBy = runner
    } else {
      alsoDeferredBy.append(runner)
    }
    context.deferFlush(self)
  }

  /// Called under the gate for the entry of the thread `runner`, by the
  /// end of its wave (the gate may run it on another thread, when that
  /// thread was running the chain then).
  func send(from runner: Int) {
    if deferredBy == runner {
      deferredBy = 0
    } else if let index = alsoDeferredBy.firstIndex(of: runner) {
      alsoDeferredBy.remove(at: index)
    }
    sendLatest()
  }
}

extension WaveFlush: Ranked {
  /// A join's pair waits for the wave's end: it ranks above what feeds it.
  var joinsWave: Bool { true }

  var rankLevel: Int { rank.load(ordering: .relaxed) }

  /// Raises the rank to `level` unless it is already as high: a
  /// compare-and-swap loop, as a building thread (under
  /// `RankGraph.lock`) and a flushing one (`changed(in:)`) may raise it
  /// at once. Relaxed, as every read of the rank. Modeled in
  /// `Verification/RankPlaces.pml`, where a load and a store instead let
  /// a lower rank land last.
  func raise(to level: Int) -> Bool {
    var current = rank.load(ordering: .relaxed)
    while current < level {
      let (exchanged, original) = rank.compareExchange(expected: current, desired: level, ordering: .relaxed)
      if exchanged { return true }
      current = original
    }
    return false
  }
}
