import Dispatch
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

  /// The writers waiting in `awaitTurn(in:)`. Guarded by the stripe's lock.
  @exclusivity(unchecked) var waiters = 0

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

  /// `turnWait`, which only tests change (before any value arrives), so
  /// that a waiter outlasts a thread that the machine's load holds back.
  @exclusivity(unchecked) var turnWait = DeliveryGate.turnWait

  /// Whether a thread that reaches `handOffLimit` hands the gate over:
  /// true for a chain's gate, a join's and `flatMapLatest`'s, whose steps
  /// run on whichever thread delivers; false for a hop's, whose steps must
  /// run on its queue or actor, the only place its values come from.
  let handsOff: Bool

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
      let queued = ParkingLot.shared.withLock(self) { () -> Bool in
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
    word.store(Self.released(from: idle), ordering: .releasing)
    // The light side: a thread that sets a request fences, then loads `word`.
    _chaining_light_fence()
    // Relaxed: the fences order the flags (this light side against the
    // heavy side in `queue` and `closeBusy`, each after setting its flag),
    // and what they stand for, the queue and the parked waiters, is read
    // under the stripe's lock, whose acquisition orders it.
    return requests.load(ordering: .relaxed)
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
  private func wakeCloser(if requested: Int) {
    guard requested & Self.waiting != 0 else { return }
    // Under the stripe's lock, which the waiter holds from its check until
    // it sleeps: a wake sent in between would be lost.
    ParkingLot.shared.withLock(self) { ParkingLot.shared.wakeAll(self) }
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
    let (flagged, waits) = ParkingLot.shared.withLock(self) { () -> (Bool, Bool) in
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
        ParkingLot.shared.withLock(self) { waiters -= 1 }
        // A count of its own: a turn runs up to `handOffLimit` values of
        // others, so two threads past the limit cannot hand the gate back
        // and forth without running anything.
        drain(in: context, claimed: idle)
        return
      }
      let goesOn = ParkingLot.shared.withLock(self) { overLimit }
      if !goesOn || DispatchTime.now().uptimeNanoseconds &- start >= turnWait { break }
      yieldProcessor()
    }
    ParkingLot.shared.withLock(self) { waiters -= 1 }
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
      ParkingLot.shared.withLock(self) { overLimit = false }
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
      let batch = ParkingLot.shared.withLock(self) { () -> ArraySlice<Queued> in
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
            let handsOver = ParkingLot.shared.withLock(self) { () -> Bool in
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
    return ParkingLot.shared.withLock(self) { waiters > 0 }
  }

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
  private func closeBusy(runner: Int) {
    let dropped = ParkingLot.shared.withLock(self) { () -> [Queued] in
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
