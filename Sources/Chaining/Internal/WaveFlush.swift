// MARK: - WaveFlush

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

  /// The storage of `rank`, `sentNothing` and the pins, reached only
  /// through them: must stay the first stored property (see
  /// `AtomicReference`: "Where the word lives"). The pins share the hint's
  /// word, in half words: a field of their own made the object 8 bytes
  /// longer (88 → 96, a larger size class), and cellx with `Computed` at
  /// 5,000 layers, whose 20,000 flushes outgrow the caches, slower (an
  /// 8-byte field alone: 1.82 and 2.07 s → 3.08 and 2.30 s for 400
  /// writes, `perf stat`, six runs each).
  @usableFromInline var words: (rank: Int, sentNothing: UInt32, pins: UInt32) = (Int.min, 0, 0)

  /// A deferred combine in a thread's list. Trivial: its references are
  /// retained and released by hand, so that the list (`Waves.deferred`)
  /// appends and removes without reference counting or uniqueness checks.
  struct Entry: BitwiseCopyable {
    /// Retained by the entry (see `DeliveryContext.deferFlush(_:)`), or
    /// pinned (`pinned`).
    let flush: Unmanaged<WaveFlush>
    /// The gate to send through, retained, when the sides run under
    /// another gate than the chain's (a hop's before the combine, or the
    /// join's own, see `JoinSides`); nil for the chain's gate (see
    /// `DeliveryContext.deferFlush(_:)`).
    let hop: Unmanaged<DeliveryGate>?
    /// The causes of the value that made it change first, when there were
    /// others than the gate, so that a binding loop through the combine
    /// still settles: past `DeliveryContext.scanned`, a captured node;
    /// with a node installed, that node, and the ids pushed on top of it
    /// in `arena`; otherwise nil, with two to `scanned` in `arena` alone.
    /// Retained by the entry, released once it is sent.
    let causes: Unmanaged<CauseNode>?
    /// Where the causes' ids are in the thread's `flushCauses`
    /// (empty when none are there).
    var arena: Range<Int> { pinned ? 0..<0 : arenaBounds.lower..<arenaBounds.upper }
    /// `arena`'s bounds: a `Range` is not bitwise copyable. (-1, -1) marks
    /// a pinned entry, whose arena is empty: a field of its own made every
    /// entry 8 bytes longer (48, from 40), in lists of 20,000 entries a
    /// wave for cellx with `Computed` at 5,000 layers.
    private let arenaBounds: (lower: Int, upper: Int)
    /// Whether the entry keeps `flush` alive by a pin (`WaveFlush.pin()`)
    /// rather than a retain: a computed value's refresh deferred by the
    /// marking walk (`DeliveryContext.deferRefresh(_:)`).
    var pinned: Bool { arenaBounds.lower < 0 }

    init(
      flush: Unmanaged<WaveFlush>,
      hop: Unmanaged<DeliveryGate>?,
      causes: Unmanaged<CauseNode>?,
      arena: Range<Int>,
      pinned: Bool = false
    ) {
      self.flush = flush
      self.hop = hop
      self.causes = causes
      arenaBounds = pinned ? (-1, -1) : (arena.lowerBound, arena.upperBound)
    }
  }

  /// The gate of the combine's chain: where its sides run, unless a hop
  /// comes before it.
  let gate: DeliveryGate
  /// Sends the pair of latest values, when both sides have one. Called
  /// under the gate the sides run under.
  let sendLatest: () -> Void
  /// For the flush of a computed value's refreshes, that value, which
  /// `sendLatest` holds: the wave's end asks it whether its chains have
  /// had its version before taking the gate (`ComputedNode.isSent(runner:)`).
  /// Nil for a combine.
  let refreshes: Unmanaged<ComputedNode>?

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
  /// For the flush of a computed value's refreshes (`refreshes`), 1 when
  /// its last refresh sent nothing, else 0: only then does the wave's end
  /// ask the value whether its chains have had its version
  /// (`ComputedNode.isSent(runner:)`) before the refresh. For a value
  /// that changes at every refresh, asking would take the graph's lock
  /// once more for nothing (5% of a write to one value with a chain,
  /// callgrind). A hint: stored by a refresh under the graph's lock, read
  /// by any thread's wave, relaxed, as either answer is correct (a stale
  /// one costs one hold of the lock more, or one refresh more).
  var sentNothing: AtomicReference<UInt32> {
    @inline(__always) get { AtomicReference(in: self, offset: MemoryLayout<Int>.stride) }
  }

  /// For the flush of a computed value's refreshes, the pins: how many
  /// entries of threads' wave lists keep it alive without a retain (see
  /// `DeliveryContext.deferRefresh(_:)`), in the low 31 bits, pinned by
  /// the marking walk and unpinned once their sends are over; and in the
  /// top bit, whether the value let go of this flush while pinned
  /// (`ComputedBox.detachFlush()`): an orphan, whose reference the pins
  /// took over, for the last unpin to release. Under `ComputedGraph.lock`,
  /// read and written plainly: its own half word, beside the hint's, which
  /// is atomic (distinct memory locations: no race). A pin per entry: 31
  /// bits are far more than threads' lists hold.
  private var pinWord: UnsafeMutablePointer<UInt32> {
    @inline(__always) get {
      (_getUnsafePointerToStoredProperties(self) + MemoryLayout<Int>.stride + MemoryLayout<UInt32>.stride)
        .assumingMemoryBound(to: UInt32.self)
    }
  }

  /// The orphan bit of the pins (see `pinWord`).
  private static var orphanBit: UInt32 { 1 << 31 }

  /// Adds the pin of an entry (see `DeliveryContext.deferRefresh(_:)`).
  /// Under `ComputedGraph.lock`.
  @inline(__always)
  func pin() {
    pinWord.pointee &+= 1
  }

  /// Whether entries pin this flush. Under `ComputedGraph.lock`.
  var isPinned: Bool { pinWord.pointee & ~Self.orphanBit != 0 }

  /// Marks the flush an orphan: its value let go of it while pinned, and
  /// the pins take over its reference. Under `ComputedGraph.lock`.
  func orphan() {
    pinWord.pointee |= Self.orphanBit
  }

  /// Removes a pin; returns whether it was an orphan's last, which the
  /// caller must then release, after unlocking. Under `ComputedGraph.lock`.
  @inline(__always)
  func removePin() -> Bool {
    let pins = pinWord.pointee &- 1
    pinWord.pointee = pins
    return pins == Self.orphanBit
  }

  /// Removes the pin of an entry that is done with this flush, unless it
  /// is the last pin of an orphan, which must then be released, after
  /// unlocking, and may free the value and run a deinit: that is left to
  /// the wave's end (`DeliveryContext.unpinRefreshes()`), and this returns
  /// false. Under `ComputedGraph.lock`, which the caller holds for its own
  /// reasons (a refresh, or the question before skipping one), so the pin
  /// costs no atomic operation of its own.
  @inline(__always)
  func unpin() -> Bool {
    if pinWord.pointee == Self.orphanBit | 1 { return false }
    pinWord.pointee &-= 1
    return true
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
    refreshes = nil
  }

  /// Creates the flush of the refreshes of `node`'s chains, whose
  /// `sendLatest` must hold `node` strongly: this flush does not.
  init(gate: DeliveryGate, refreshing node: ComputedNode, sendLatest: @escaping () -> Void) {
    self.gate = gate
    self.sendLatest = sendLatest
    refreshes = .passUnretained(node)
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
    learn(level: context.state.pointee.waves.level)
    let runner = context.runner
    if deferredBy == runner || (!alsoDeferredBy.isEmpty && alsoDeferredBy.contains(runner)) { return }
    if deferredBy == 0 {
      deferredBy = runner
    } else {
      alsoDeferredBy.append(runner)
    }
    context.deferFlush(self)
  }

  /// Raises the rank to `level`, the level a value came at, when it is
  /// below. Atomic: no gate needed.
  @inline(__always)
  func learn(level: Int) {
    if level > rank.load(ordering: .relaxed) { _ = raise(to: level) }
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
