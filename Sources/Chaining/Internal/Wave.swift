import Synchronization

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
    state.pointee.wave += 1
  }

  /// Marks the end of a wave started by `beginWave()`; the outermost one
  /// sends what its combines deferred. Cheap when none did: two loads and
  /// a branch on every broadcast.
  @inlinable @inline(__always)
  func endWave() {
    let wave = state.pointee.wave - 1
    state.pointee.wave = wave
    if wave == 0, state.pointee.deferredCount != 0 { flushWave() }
  }

  /// Runs `body` as one wave (or inside the current one).
  @inlinable @inline(__always)
  func inWave(_ body: () -> Void) {
    beginWave()
    body()
    endWave()
  }

  /// Adds `flush` to the wave's deferred combines. Called under the
  /// combine's gate, which has just added this thread to `flush.deferredBy`.
  func deferFlush(_ flush: WaveFlush) {
    // The gate the combine's side runs under: the innermost cause, pushed
    // by the gate's run (`enter`, or `run(with:adding:)` for a queued
    // value). It is the chain's gate, or a hop's for a combine after a
    // hop: sending through it keeps the send serial with the sides, on the
    // hop's queue or actor. Unretained read: the gate is running on this
    // thread right now, so it is alive, and the entry's causes (captured
    // below, which include it) retain it from then on. Checked by
    // `GlitchFreeTests.aHopEndsTheWaveAndEachDeliveryAfterItStartsOne` (a
    // combine after hops) under the thread sanitizer.
    let count = state.pointee.count
    let gate = count == 0 ? flush.gate : state.pointee.causes.unsafelyUnwrapped[count - 1].takeUnretainedValue()
    state.pointee.deferred.append(WaveFlush.Entry(flush: flush, gate: gate, causes: capture()))
    state.pointee.deferredCount += 1
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
  @usableFromInline
  func flushWave() {
    state.pointee.wave += 1
    while state.pointee.deferredCount != 0 {
      var lowest = 0
      var lowestRank = Int.max
      for (index, entry) in state.pointee.deferred.enumerated() {
        let rank = entry.flush.rank.load(ordering: .relaxed)
        if rank < lowestRank {
          lowest = index
          lowestRank = rank
        }
      }
      let entry = state.pointee.deferred.remove(at: lowest)
      state.pointee.deferredCount -= 1
      let saved = state.pointee.level
      state.pointee.level = lowestRank + 1
      // Through the gate the combine's sides ran under, as any value of
      // its chain: run at once when idle, queued behind the run of another
      // thread otherwise. Not an echo: that gate's runs in this wave are
      // done, and its send is meant to reach the chain.
      let flush = entry.flush
      run(with: entry.causes) {
        entry.gate.deliver(runner, to: flush.send(from:), dropsEchoes: false, in: self)
      }
      state.pointee.level = saved
    }
    state.pointee.wave -= 1
  }
}

/// What a combine keeps to send its pair at the end of a wave: its chain's
/// gate, its rank, and the threads whose list it waits in.
@usableFromInline
class WaveFlush: @unchecked Swift.Sendable {
  // @unchecked: `deferredBy` and the subclasses' state are touched only
  // under `gate` (the chain's runs are serial); `rank` is atomic.

  /// A deferred combine in a thread's list, with the causes of the value
  /// that made it change first, so that a binding loop through the
  /// combine still settles.
  struct Entry {
    let flush: WaveFlush
    /// The gate to send through (see `DeliveryContext.deferFlush(_:)`).
    let gate: DeliveryGate
    let causes: Causes
  }

  /// The gate of the combine's chain: where its sides run, unless a hop
  /// comes before it.
  let gate: DeliveryGate
  /// The combine's rank: only raised. Atomic because the flushing thread
  /// reads it to choose the next combine while another thread may run the
  /// chain; relaxed, as it only orders the sends of one thread's list and
  /// a stale rank costs at worst one more send, never a wrong value.
  /// The order is checked by
  /// `GlitchFreeTests.combineBuiltBeforeTheCombineItReadsStillSendsAfterIt`
  /// and the property test (both fail when ranks are ignored); the
  /// cross-thread reads by `wavesOnSeveralThreadsSendExactlyOncePerWaveEach`
  /// under the thread sanitizer.
  let rank: Atomic<Int>
  /// The threads (their `DeliveryContext.runner`) whose list holds this
  /// combine: one entry per thread, so that each thread's wave that
  /// changed a side sends once, even while another thread's wave holds it
  /// too. Under the gate; almost always empty or one element.
  @exclusivity(unchecked) var deferredBy: [Int] = []

  init(gate: DeliveryGate) {
    self.gate = gate
    let context = DeliveryContext.current
    rank = Atomic(context.state.pointee.builtRank)
  }

  /// Called under the gate when a side changed inside a wave: learns the
  /// level the value came at, and joins the thread's list unless already
  /// in it.
  final func changed(in context: DeliveryContext) {
    let level = context.state.pointee.level
    if level > rank.load(ordering: .relaxed) { rank.store(level, ordering: .relaxed) }
    let runner = context.runner
    if deferredBy.contains(runner) { return }
    deferredBy.append(runner)
    context.deferFlush(self)
  }

  /// Called under the gate for the entry of the thread `runner`, by the
  /// end of its wave (the gate may run it on another thread, when that
  /// thread was running the chain then).
  final func send(from runner: Int) {
    if let index = deferredBy.firstIndex(of: runner) { deferredBy.remove(at: index) }
    sendLatest()
  }

  /// Sends the latest values, when there is a value to send.
  func sendLatest() {}
}

/// The state of one `combine` of one finished chain.
@usableFromInline
final class Combiner<First, Second>: WaveFlush, @unchecked Swift.Sendable {
  // @unchecked: as `WaveFlush`: touched only under the chain's gate.
  @exclusivity(unchecked) private var first: First?
  @exclusivity(unchecked) private var second: Second?
  private let downstream: ((First, Second)) -> Void

  init(gate: DeliveryGate, downstream: @escaping ((First, Second)) -> Void) {
    self.downstream = downstream
    super.init(gate: gate)
  }

  /// Builds a combine of two chains into `context`: each side's values
  /// go to a `Combiner`, which sends the pairs to `downstream`.
  @usableFromInline
  static func build(
    _ build: (_ downstream: ((First) -> Void)?, _ context: _ChainContext) -> Void,
    _ otherBuild: (_ downstream: ((Second) -> Void)?, _ context: _ChainContext) -> Void,
    downstream: @escaping ((First, Second)) -> Void,
    context: _ChainContext
  ) {
    // The sides first: a combine built inside them (a nested combine)
    // takes a lower rank than this one.
    var combiner: Combiner?
    build({ combiner.unsafelyUnwrapped.receive(first: $0) }, context)
    otherBuild({ combiner.unsafelyUnwrapped.receive(second: $0) }, context)
    let created = Combiner(gate: context.gate, downstream: downstream)
    DeliveryContext.current.state.pointee.builtRank += 1
    // Set before the gate opens (`start(fetching:)`), so before any value
    // reaches the closures above.
    combiner = created
  }

  /// A value from the first side.
  func receive(first value: First) {
    first = value
    changed()
  }

  /// A value from the second side.
  func receive(second value: Second) {
    second = value
    changed()
  }

  /// Sends at once outside a wave (as before waves existed), defers to the
  /// wave's end inside one.
  private func changed() {
    let context = DeliveryContext.current
    if context.isInWave {
      changed(in: context)
    } else {
      sendLatest()
    }
  }

  override func sendLatest() {
    if let first, let second { downstream((first, second)) }
  }
}
