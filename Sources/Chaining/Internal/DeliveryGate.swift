import _ChainingThreadContext

// MARK: - DeliveryGate

/// Serializes the deliveries into one finished chain and makes invalidation final.
///
/// Every value that enters a chain, from any of its sources or from `sync()`,
/// passes through the chain's gate:
/// - A value that has already passed through this chain (an echo coming back
///   through a binding loop, on this thread or another) is dropped. This is
///   what lets two-way bindings settle, whatever the value type.
/// - Otherwise, when nobody is running the chain, the calling thread runs it
///   at once.
/// - When the chain is running (on another thread, or further up this
///   thread's stack), the value is queued and run right after the values
///   before it. The sending thread does not wait for the runner (but for
///   its turn, 1 ms at most, past `handOffLimit`), so chains feeding each
///   other from several threads cannot deadlock.
/// - A thread that holds the gate runs at most `handOffLimit` values that
///   other threads queued, then hands the gate over to one of those
///   threads, which waits for its turn (see `awaitTurn(in:)`): no thread
///   is held by another thread's endless writes, and a writer that
///   outpaces the chain is slowed to its pace.
///
/// `close()` makes sure no run starts afterwards and, unless that could
/// deadlock, waits for a run in progress on another thread to finish.
///
/// ### The fast path
/// Two words: `word` says who runs the chain, `requests` what other threads
/// ask of that runner (run what they queued, wake a waiting `close()`, stop).
/// A value claims an idle gate with one compare-and-swap of `word`, checks
/// that nothing is requested, runs the chain, and releases the gate with a
/// plain store: one atomic read-modify-write per value instead of two.
///
/// A store cannot see a request made meanwhile, so the runner reads
/// `requests` after it: a thread that queues a value or waits sets its flag
/// first and reads `word` after, and one of the two sees the other's write.
/// Each side needs a full fence between its write and its read. The
/// runner's is the light side of an asymmetric fence (a compiler barrier
/// where the kernel has a process-wide barrier), and the thread that
/// queues or waits pays for the heavy side (that barrier): see
/// `ChainingFences.h`. The heavy side is skipped when the runner is the
/// calling thread itself, further up its stack, and paid once per run of
/// queued values, not once per value. A thread that queues a value and then
/// finds the gate idle runs the queue itself.
///
/// A chain whose only source is one sender core needs no claim at all: that
/// core already delivers one value at a time. Such a gate is marked `alone`
/// when the chain starts, and the core, when its list has this chain alone,
/// runs it without claiming the gate (`deliverAlone`). The core then tells
/// every `invalidate()` call whether to wait (`_SenderCore.awaitRunAlone(of:)`).

@usableFromInline
final class DeliveryGate: @unchecked Swift.Sendable {
  // @unchecked: `pending` is guarded by the gate's ParkingLot stripe; the
  // thread named in `word` is the only one running the chain.

  /// The storage of `word` and `requests`, in that order, reached only
  /// through them: must stay the first stored property (see
  /// `AtomicReference`: "Where the word lives").
  @usableFromInline var words: (word: Int, requests: Int)

  /// In `word`: set when the chain starts, when its only source is one
  /// sender core: that core's deliveries may then run it without claiming
  /// (see the type's discussion). Never cleared.
  @usableFromInline static let alone = 1

  /// In `word`, bits 1 to 5: the generation, changed by every release
  /// (wrapping at 32), so that a thread that released the gate can claim
  /// it again only if nobody claimed it meanwhile (`reclaim(from:in:)`).
  @usableFromInline static let generations = 0b11_1110
  /// One generation.
  @usableFromInline static let generation = 0b10
  /// What an idle `word` may hold: `alone` and the generation. The
  /// running thread's mark (`DeliveryContext.runner`, 64-byte aligned)
  /// is the rest.
  @usableFromInline static let idleBits = 0b11_1111

  /// The idle word a release of a claim from `idle` stores: the next
  /// generation.
  @inlinable @inline(__always)
  static func released(from idle: Int) -> Int {
    (idle &+ generation) & idleBits
  }

  /// In `requests`: values are queued in `pending`. Set and cleared under
  /// the stripe's lock; set means `pending` has values, or had them and the
  /// thread that runs them has not yet looked.
  @usableFromInline static let queued = 1
  /// In `requests`: a `close()` waits for the run to end. Never cleared.
  @usableFromInline static let waiting = 2
  /// In `requests`: set once by `close()`; no run starts afterwards.
  @usableFromInline static let closed = 4
  /// In `requests`: set by the gate's observer, only after `closed`, once
  /// no run made without claiming the gate can be in progress (see
  /// `Observer.isSettled`). Never cleared; the gate itself never reads it.
  @usableFromInline static let settled = 8

  /// The running thread's `DeliveryContext.runner` (0 when idle), plus
  /// `alone` and the generation. Changed only by a claim, from idle, and
  /// by the runner's release back to idle, in the next generation.
  @usableFromInline var word: AtomicReference<Int> {
    @inline(__always) get { AtomicReference(in: self) }
  }

  /// `queued`, `waiting` and `closed`: set by other threads than the runner.
  @usableFromInline var requests: AtomicReference<Int> {
    @inline(__always) get { AtomicReference(in: self, offset: MemoryLayout<Int>.stride) }
  }

  /// Runs queued while the chain was running. Guarded by the stripe's lock.
  @usableFromInline @exclusivity(unchecked) var pending: [Queued] = []

  /// Set by a thread holding the gate once it has run `handOffLimit`
  /// values of other threads and found more; cleared when a thread that
  /// is under that limit empties the queue, or when the queue is dropped.
  /// A thread past the limit that empties the queue leaves it set until
  /// it has released the gate and found nothing queued (`endCount`): a
  /// writer that queues in between waits for its turn, and the thread,
  /// claiming again for that value, hands over to it rather than run on
  /// (else a writer that queued one value each time could hold it for
  /// ever in `drain`'s loop: `MUTANT_CLEARS_ON_EMPTY` in
  /// `Verification/JoinedChain.pml`). While it is set, a writer from
  /// outside the chain whose value is queued waits for its turn
  /// (`awaitTurn(in:)`). Guarded by the stripe's lock.
  @exclusivity(unchecked) var overLimit = false

  /// Whether a thread that reaches `handOffLimit` hands the gate over:
  /// true for a chain's gate, a join's and `flatMapLatest`'s, whose steps
  /// run on whichever thread delivers; false for a hop's, whose steps must
  /// run on its queue or actor, the only place its values come from.
  let handsOff: Bool

  /// The writers waiting in `awaitTurn(in:)`. Guarded by the stripe's lock.
  /// 32 bits, in one word with `overLimit` and `handsOff`: with `id` the
  /// gate is then 64 bytes, no larger than before it had one.
  @exclusivity(unchecked) var waiters: Int32 = 0

  /// The gate's name among the causes a value carries once it is queued
  /// or deferred (`Causes`): given once, from a counter of the process,
  /// and never given again, so a captured cause needs no reference to
  /// its gate. A retained gate cost a retain when its causes were
  /// captured and a release when they were dropped, a fifth of cellx's
  /// time; an unretained address could be a freed gate's, reused by a
  /// new one, which would then drop a value as its echo. An id is odd
  /// (1 modulo 16), so that it never equals a gate's address (16-byte
  /// aligned) in the thread's buffer of causes (see
  /// `DeliveryContext.push(key:)`). `CauseSetTests` checks both.
  let id: UInt

  /// The next gate's `id`: 64 bits, which no process wraps. Relaxed: the
  /// ids only need to differ.
  private static let ids = AtomicReference<UInt>(allocatedWith: 17)

  /// How many values queued by other threads a thread runs, each time it
  /// holds the gate, before it hands the gate over to a writer waiting for
  /// its turn.
  ///
  /// Values a thread queued itself (a handler's write to its own chain)
  /// are not counted: they still run before its write returns. So a
  /// write, a `sync()` or a selection runs at most 64 of other threads'
  /// values per gate, once another writer waits.
  static let handOffLimit = 64

  /// The longest a writer waits for its turn in `awaitTurn(in:)`, in
  /// nanoseconds: 1 ms.
  static let turnWait: UInt64 = 1_000_000

  /// `turnWait`, which only tests change (before any value arrives), so
  /// that a waiter outlasts a thread that the machine's load holds back.
  @exclusivity(unchecked) var turnWait = DeliveryGate.turnWait

  @usableFromInline
  struct Queued {
    @usableFromInline let causes: Causes
    /// The queuing thread's `DeliveryContext.runner`: values a thread
    /// queued itself are not counted against `handOffLimit`.
    @usableFromInline let sender: Int
    @usableFromInline let run: () -> Void

    @usableFromInline
    init(causes: Causes, sender: Int, run: @escaping () -> Void) {
      self.causes = causes
      self.sender = sender
      self.run = run
    }
  }

  /// Creates a gate.
  ///
  /// - Parameters:
  ///   - held: Whether the creating thread holds it until
  ///     `start(with:alone:)`: true for a chain's main gate, so that nothing
  ///     runs before `sync()`'s fetched values; false for a hop's.
  ///   - handsOff: Whether a thread running other threads' queued values
  ///     hands the gate over past `handOffLimit` (see `handsOff`).
  init(held: Bool, handsOff: Bool = true) {
    words = (held ? DeliveryContext.current.runner : 0, 0)
    self.handsOff = handsOff
    id = Self.ids.wrappingAdd(16, ordering: .relaxed).oldValue
  }

  /// Runs `body` holding the lock of the gate's ParkingLot stripe, which
  /// guards `pending`, `overLimit` and `waiters`. In builds with
  /// `CHAINING_INTERNAL_CHECKS` it checks `_invariantCheck()` before
  /// unlocking; nothing else otherwise. The same rules as
  /// `ParkingLot.withLock(_:_:)`: no user code, no other lock.
  @inline(__always)
  func withStripeLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    try ParkingLot.shared.withLock(self) {
      let result = try body()
      #if CHAINING_INTERNAL_CHECKS
      _invariantCheck()
      #endif
      return result
    }
  }

  /// Whether `close()` has been called.
  var isClosed: Bool { requests.load(ordering: .acquiring) & Self.closed != 0 }

  /// Whether deliveries may run the chain without claiming the gate. For
  /// tests: the observer keeps its own record (`Observer.aloneSource`).
  ///
  /// Relaxed: `alone` is set once, by `start(with:alone:)`, and read here
  /// only by the thread that started the gate or one that it handed the
  /// gate to afterwards, which orders the two.
  var isAlone: Bool { word.load(ordering: .relaxed) & Self.alone != 0 }

  /// Runs `body(value)` under the gate's rules (see the type's discussion).
  ///
  /// With `dropsEchoes` false, a value this chain caused is run too (after
  /// the current one): for commands to the chain itself, such as a
  /// suspender's changes. `context` is the calling thread's.
  @inlinable @inline(__always)
  func deliver<Value>(
    _ value: Value,
    to body: @escaping (Value) -> Void,
    dropsEchoes: Bool = true,
    in context: DeliveryContext
  ) {
    if dropsEchoes, context.isCaused(by: self) { return }
    if context.mustPostpone {
      postpone(value, body, in: context)
      return
    }
    if !runIfIdle(value, to: body, in: context) {
      queue(value, body, in: context)
    }
  }

  /// Runs `body(value)` when nobody runs the chain, or drops it when the
  /// gate is closed, and returns true; returns false, without running it,
  /// when the chain is running, or when the thread handed the gate over
  /// while running the values queued before it (see `runRequested`): the
  /// caller queues the value then.
  @inlinable @inline(__always)
  func runIfIdle<Value>(_ value: Value, to body: (Value) -> Void, in context: DeliveryContext) -> Bool {
    guard let idle = claim(in: context) else { return false }
    // Sequentially consistent, as the claim: `close()` sets `closed` and
    // then loads `word`, so one of the two sees the other's change.
    if requests.load(ordering: .sequentiallyConsistent) == 0 {
      run(value, body, leaving: idle, in: context)
      return true
    }
    return runRequested(value, body, leaving: idle, in: context)
  }

  /// Claims the gate for the calling thread when nobody runs the chain, and
  /// returns the idle word it claimed from (`alone` and the generation),
  /// to release it from; returns nil when the chain is running.
  ///
  /// Idle in any generation: a compare-and-swap that fails because
  /// another thread claimed and released meanwhile tries again from the
  /// word it found, as the models' one-step "claim if idle" does. (Failing
  /// there would lose nothing, the releasing thread seeing what was queued
  /// by the fences' argument in `queue`, but would send an idle gate's
  /// value the slow way.) Only `reclaim(from:in:)` fails on a new
  /// generation.
  @inlinable @inline(__always)
  func claim(in context: DeliveryContext) -> Int? {
    // Relaxed: only a guess at the idle word. The compare-and-swap below
    // checks it, and when it succeeds it is the read (sequentially
    // consistent, so acquiring) that orders this run after the last
    // release.
    var idle = word.load(ordering: .relaxed) & Self.idleBits
    while true {
      // Sequentially consistent: see `deliver` and `close()`.
      let claimed = word.compareExchange(
        expected: idle,
        desired: idle | context.runner,
        ordering: .sequentiallyConsistent
      )
      if claimed.exchanged { return idle }
      // Running: nil. Idle in another generation: again from there.
      if claimed.original & ~Self.idleBits != 0 { return nil }
      idle = claimed.original
    }
  }

  /// Claims the gate again for the calling thread, which released it to
  /// `released` and then found values queued: only if nobody claimed it
  /// since (the word is still `released`, same generation). Otherwise the
  /// thread that claimed it meanwhile sees `queued` when it releases, and
  /// runs the queue: this one leaves. Without this, a thread could claim
  /// again after each value another thread queued just as it released,
  /// and be held running that thread's values for as long as it writes
  /// (`MUTANT_NO_GEN` in `Verification/JoinedChain.pml`, property
  /// `returns`). A generation that wrapped (32 claims in between) lets it
  /// claim as before this check: never a lost value.
  func reclaim(from released: Int, in context: DeliveryContext) -> Int? {
    // Sequentially consistent, as `claim`.
    let claimed = word.compareExchange(
      expected: released,
      desired: released | context.runner,
      ordering: .sequentiallyConsistent
    )
    return claimed.exchanged ? released : nil
  }

  /// Runs `body(value)` without claiming the gate, when it is `alone`, idle
  /// and nothing is requested; otherwise like `deliver`.
  ///
  /// Only for a sender core delivering from a list that has this chain
  /// alone, while it holds its delivery: nothing else can run the chain
  /// then, and the core's claim, made before, pairs with `close()` (see
  /// `_SenderCore.deliversAlone(to:in:)`).
  @inlinable @inline(__always)
  func deliverAlone<Value>(
    _ value: Value,
    to body: @escaping (Value) -> Void,
    dropsEchoes: Bool,
    in context: DeliveryContext
  ) {
    // The alone path, part 3 of 4 (Internals.md, "The alone path"):
    // 1. `Observer.start(fetching:)` marks the gate `alone`;
    // 2. `_SenderCore.deliver(_:to:in:)` runs a list of one;
    // 3. `DeliveryGate.deliverAlone` runs the chain unclaimed;
    // 4. `Observer.invalidate()` waits for such a run
    //    (`_SenderCore.awaitRunAlone(of:)`).
    // `requests`, sequentially consistent: this load comes after the core's
    // claim, as `close()`'s load of the core comes after its change of
    // `requests`. `word`, acquiring: it pairs with the releasing store of
    // the last release (`releaseReadingRequests`), so that the run that
    // released the gate on another thread (the fetches of `sync()`, or a
    // claimed run) happens before this one. Relaxed, nothing would order
    // the two: the thread sanitizer test `OnlyObserverSyncRaceTests` found
    // it. An acquiring load is a plain load on x86 and `ldar` on ARM.
    guard requests.load(ordering: .sequentiallyConsistent) == 0,
      word.load(ordering: .acquiring) & ~Self.generations == Self.alone
    else {
      deliver(value, to: body, dropsEchoes: dropsEchoes, in: context)
      return
    }
    if dropsEchoes, context.isCaused(by: self) { return }
    // Checked next to `enter`, which loads the same count.
    if context.mustPostpone {
      postpone(value, body, in: context)
      return
    }
    context.enter(self)
    body(value)
    context.popCause()
    context.leave()
  }

  /// Runs `body(value)` on the thread that claimed the gate, then releases
  /// it to `idle` (0, or `alone`).
  @inlinable @inline(__always)
  func run<Value>(_ value: Value, _ body: (Value) -> Void, leaving idle: Int, in context: DeliveryContext) {
    context.enter(self)
    body(value)
    context.popCause()
    release(to: idle, in: context)
    context.leave()
  }

  /// Releases the claimed gate to `idle`, then serves what was requested
  /// meanwhile.
  @inlinable @inline(__always)
  func release(to idle: Int, in context: DeliveryContext) {
    let requested = releaseReadingRequests(to: idle)
    if requested != 0 {
      serve(requested, released: Self.released(from: idle), in: context)
    }
  }

  /// Releases the claimed gate, in the next generation after `idle`
  /// (`released(from:)`), and returns what was requested by then.
  @inlinable @inline(__always)
  func releaseReadingRequests(to idle: Int) -> Int {
    #if CHAINING_INTERNAL_CHECKS
    // Only the runner releases: its mark is in the word until this store.
    _checkRunner("released")
    #endif
    word.store(Self.released(from: idle), ordering: .releasing)
    // The light side: a thread that sets a request fences, then loads `word`.
    _chaining_light_fence()
    // Relaxed: the fences order the flags (this light side against the
    // heavy side in `queue` and `closeBusy`, each after setting its flag),
    // and what they stand for, the queue and the parked waiters, is read
    // under the stripe's lock, whose acquisition orders it.
    return requests.load(ordering: .relaxed)
  }
}
