// Public only so that `current` can be inlinable (see there).
public import _ChainingThreadContext

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

// MARK: - DeliveryContext

/// What the calling thread is delivering: one context per thread, never shared.
///
/// - `depth` counts the chains this thread is running right now. `invalidate()`
///   uses it to avoid waiting while the thread is itself inside a handler.
/// - The *causes* are the chains the value being delivered has already
///   passed through. A value that reaches a chain on that list is an echo of
///   that chain's own delivery (a binding loop) and is dropped. When a value
///   is queued for another thread, its causes travel with it, so a loop that
///   crosses threads is broken the same way as one on a single thread.
///
/// The context is a pointer to the thread's state, which lives until the
/// thread ends: handing it around costs no reference counting, and the
/// causes are a plain buffer of keys: the address of a gate whose run is
/// on this thread's stack (which keeps it alive), or the id of a gate a
/// queued or deferred value passed (`DeliveryGate.id`, installed with the
/// value; the gate itself may be gone).
@usableFromInline
struct DeliveryContext {
  @usableFromInline
  struct State {
    @usableFromInline var depth = 0
    /// The stack address below which a run of a chain is postponed
    /// (`stackReserve` above the thread's lowest), or 0 when the thread's
    /// stack is unknown. Next to `depth`: both are read on every delivery.
    @usableFromInline var stackLimit: UInt = 0
    @usableFromInline var count = 0
    @usableFromInline var capacity = 0
    @usableFromInline var causes: UnsafeMutablePointer<UInt>? = nil
    /// The causes past the first `DeliveryContext.scanned`, also kept as a
    /// set, so that `isCaused(by:)` costs O(1) however deep the delivery.
    @usableFromInline var deep = CauseSet()
    /// How many keys the install of captured causes pushed
    /// (`run(with:adding:_:)`, `run(installing:flushCauses:_:)`): ids (or `installedMark` for a
    /// node in `base`), at the bottom of the buffer, under the addresses
    /// runs push after; 0 when none are installed. Only when it is not 0
    /// does `isCaused(by:)` look for the gate's id as well as its address,
    /// comparing each key below it with the id and each above with the
    /// address (`isInstalledCause(_:count:)`).
    @usableFromInline var installedCount = 0
    /// The causes a queued or deferred value brought with it, installed by
    /// `run(with:adding:_:)` or `run(installing:flushCauses:_:)`: shared with the value, not
    /// copied into the buffer, which holds only the causes pushed since.
    /// Nil when none.
    ///
    /// Unretained: the run that installed the node holds it for as long as
    /// it is installed (the value's causes are its argument, which its
    /// caller keeps alive for the call), and a node saved by a nested
    /// install (`replacingCauses`) belongs to a run further up the same
    /// stack. A search on every hop of a postponed or queued run then
    /// costs no reference counting, nor does an install: a retain and a
    /// release per send of a deferred combine were 4% of cellx's time
    /// (perf). Checked under the address sanitizer by every test that
    /// queues or defers a value with causes.
    @usableFromInline var base: Unmanaged<CauseNode>? = nil
    /// The table of the last `CausePath` freed on this thread, emptied,
    /// kept for the next path that outgrows its own: a write through a
    /// long chain makes a path as long, and would otherwise allocate (and
    /// fault in) a table as large for each write.
    var spareTable = CauseSet()
    /// The last node `capture()` made, for the buffer's first `memoCount`
    /// causes on top of `base`: the next capture shares it and adds only
    /// the causes pushed since. Nil, with `memoCount` 0, when there is none.
    var memo: CauseNode? = nil
    @usableFromInline var memoCount = 0
    /// The thread's waves: see `Waves` (Wave.swift), where what they do is.
    @usableFromInline var waves = Waves()
    /// A counter for the ranks combines get when they are built, on this
    /// thread: a combine built inside another's build (`a.combine(b).combine(c)`)
    /// gets a lower rank than the outer one.
    var builtRank = 0
    /// The parts of the chains this thread is building whose values reach
    /// a `sendTo` target or a join next, innermost last (see
    /// `RankGraph.beginBuilding(_:in:)`).
    var buildFrames: [BuildFrame] = []
    /// `ComputedGraph.lock`, which lives as long as the process: taken
    /// through this reference (`ComputedNode.lockGraph(runner:)`), it
    /// costs a load from the thread's state rather than a call of the
    /// runtime's `swift_once`, which each function reaching the static
    /// makes on Linux.
    let graphLock = ComputedGraph.lock
    /// The innermost evaluation of a computed value in progress on this
    /// thread: the reads it makes are its dependencies (see `Tracking`).
    /// The others follow through `ComputedNode.trackingParent`.
    @usableFromInline var tracking: Unmanaged<ComputedNode>?
    /// How many evaluations are in progress on this thread, read by every
    /// holder read.
    @usableFromInline var trackingCount = 0
    /// The holder (its address's bits) that the innermost evaluation on
    /// this thread last read through its published words and recorded as a
    /// dependency, or 0 (a word, not an optional pointer: compared with the
    /// holder in one instruction, where an optional's `==` tested for nil
    /// too, 4 instructions more a read again); with `lastReadBits`, the
    /// bits that read took. A read again of that holder takes those bits
    /// from here (`Tracking.readAgain(by:in:)`), without the evaluation's
    /// dependencies or the holder's words: the value of the read that set
    /// them, which the dependency covers (a holder read again is recorded
    /// at its first read's version), as a read again through the words
    /// would take it when nothing wrote the holder since. Another thread's
    /// write since marks the value, which then evaluates again, as when a
    /// read took the new value. This thread's own write of a holder that
    /// computed values read clears it
    /// (`HolderStore.deliverObserved(_:_:)`), so that a read after it takes
    /// the words again and sees the write. Every write of a holder set here
    /// comes there: only a read of a dependency of the last evaluation sets
    /// it (`Tracking.readPublished(by:in:)`, `readPublishedAgain(by:in:)`;
    /// a first evaluation never does), so the evaluating value is among the
    /// holder's dependents until its evaluation ends (its claim keeps its
    /// dependencies), and a write of a holder with dependents marks them
    /// there.
    ///
    /// Set by `Tracking.readPublished(by:in:)` when it recorded the read
    /// (or found it recorded: `Tracking.readPublishedAgain(by:in:)`);
    /// cleared when an evaluation begins and when it ends
    /// (`Tracking.evaluate(_:in:)`), so that 0 is all a thread
    /// outside evaluations sees, and an evaluation inside another never
    /// sees the outer one's holder, nor the outer one its. So the holder
    /// is a dependency of the evaluation reading it again, and nothing is
    /// left to record. Unretained and never dereferenced: the dependency
    /// keeps the holder until the evaluation has ended. Only this thread
    /// reads and writes them. `ComputedTests`
    /// (`aHolderReadAgainIsTakenFromTheThreadOnlyInTheEvaluationThatReadItLast`)
    /// fails without either clearing (one gives a wrong value) and without
    /// the setting;
    /// `aHolderReadAgainAfterTheEvaluationWroteItSeesTheWrite` without the
    /// clearings on writes.
    @usableFromInline var lastReadOwner: UInt = 0
    @usableFromInline var lastReadBits: UInt = 0
    /// A computed value (its node's address) that the innermost
    /// evaluation on this thread has read and recorded as a dependency,
    /// or nil: the last read of one that was not the next in order. A
    /// read again of it records nothing
    /// (`Tracking.recordComputedRead(of:owner:version:in:)`), since a
    /// source read again is recorded already, at the version of its first
    /// read, and a dependency once recorded stays so until the
    /// evaluation ends. Cleared when an evaluation begins and when it
    /// ends, as `lastReadOwner` is, so that an evaluation inside another
    /// never takes the outer one's read for its own, nor the outer one
    /// the inner one's. Unretained and never dereferenced: only compared,
    /// and the dependency keeps the node until the evaluation has ended
    /// (so no other node takes its address meanwhile). Only this thread
    /// reads and writes it. `ComputedTests`
    /// (`aComputedReadAgainIsRecordedOnlyOnceInTheEvaluationThatReadIt`)
    /// fails without either clearing and without the setting.
    @usableFromInline var lastComputedRead: UnsafeMutableRawPointer? = nil
    /// The address of this thread's hold word for the graph's lock when
    /// it is biased to this thread (see `GraphLock`, "Biased to the thread
    /// that takes it"), taken the first time it is, given back when the
    /// thread ends; `BiasWords.none` until then.
    var holdWord = -1
    /// The innermost computed value being updated on this thread, for the
    /// cycle checks' messages; the others follow through
    /// `ComputedNode.updatingParent`. Written under the graph's lock (see
    /// `waitingFor`).
    var updating: Unmanaged<ComputedNode>?
    /// The computed value whose claim this thread waits for
    /// (`ComputedNode.waitForUpdate(runner:)`), or nil. Written by this
    /// thread and read by others, with `updating`, under the graph's
    /// lock: a thread about to wait follows the waits from the claim it
    /// waits for, to stop a cycle of threads waiting for each other
    /// (`ComputedNode.stopIfWaitingForItself(runner:)`). Unretained: the
    /// waiting thread's caller holds the value while it waits.
    var waitingFor: Unmanaged<ComputedNode>?
    /// Whether `ComputedNode.releaseDeferred(_:)` runs on this thread:
    /// the deinits it causes leave `deferredDependencies` and
    /// `deferredObjects` to it.
    var isReleasingComputed = false
    /// The dependencies of computed values freed close to the end of this
    /// thread's stack, still retained, waiting to be released by a frame
    /// further up (`ComputedNode.releaseDeferred(_:)`).
    var deferredDependencies: [ComputedDependency] = []
    /// The closures of computed values freed close to the end of this
    /// thread's stack (`ComputedEvaluation`), still retained, and so what
    /// they capture, waiting likewise.
    var deferredObjects: [Unmanaged<AnyObject>] = []
    /// The effects of the marking walks in progress on this thread (see
    /// `ComputedGraph.changed(_:)`): a list of trivial elements, so that
    /// an append checks no uniqueness and dropping a walk's effects is a
    /// store (`removeAll(from:)`), where an array's `removeSubrange` was
    /// about 7% of a write's instructions through one `Computed`
    /// (callgrind).
    var computedEffects = TrivialList<ComputedGraph.Effect>()
    /// The lock under which this thread runs code of the user's, and which
    /// code that is (`Protected.Callout` in the low bits of the lock's
    /// address), or 0: read only when a lock is found taken, to stop a
    /// call back into it with a message (see `Protected.callingOut`).
    @usableFromInline var callout: UInt = 0
  }

  @usableFromInline let state: UnsafeMutablePointer<State>

  @usableFromInline
  init(state: UnsafeMutablePointer<State>) {
    self.state = state
  }

  /// The calling thread's context, created on first use and freed when the
  /// thread ends.
  ///
  /// Inlinable, so that a delivery specialized in a client module reads the
  /// slot itself rather than calling into this module: about ten
  /// instructions less per broadcast. The C module is imported `public` for
  /// that; clients need not import it.
  @inlinable
  static var current: DeliveryContext {
    // A C thread-local: one load, where `pthread_getspecific` costs a call
    // and a lazily created key's lookup on every delivery.
    if let raw = _chaining_get_thread_context() {
      return DeliveryContext(state: raw.assumingMemoryBound(to: State.self))
    }
    return makeCurrent()
  }

  /// The thread's first delivery: never inlined, so that the callers of
  /// `current` stay small. Left to the optimizer, it was inlined into a
  /// holder's setter and into subscriptions once the module grew:
  /// `icount`'s subscribe+invalidate row took 2,208 instructions, 2,180
  /// with it kept out.
  @usableFromInline @inline(never)
  static func makeCurrent() -> DeliveryContext {
    // Aligned to 64 bytes: the low six bits of `runner` are left for a
    // gate's flags and generation (`DeliveryGate.idleBits`).
    let state = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<State>.size, alignment: 64)
      .bindMemory(to: State.self, capacity: 1)
    state.initialize(to: State())
    let low = _chaining_stack_low()
    if low != 0 { state.pointee.stackLimit = low + Self.stackReserve }
    _chaining_set_thread_context(state)
    // Only so that the context is freed when the thread ends.
    pthread_setspecific(contextKey, state)
    return DeliveryContext(state: state)
  }

  /// This thread's mark in a gate it claims: the address of its state,
  /// which is 64-byte aligned (its low six bits are left for the gate's
  /// flags and generation), and unique among the threads alive.
  @inlinable
  var runner: Int { Int(bitPattern: state) }

  /// The graph lock of computed values, from the state of the thread
  /// `runner` (`State.graphLock`). Only on that thread.
  @inline(__always)
  static func graphLock(runner: Int) -> Unmanaged<GraphLock> {
    state(runner: runner).pointee.graphLock
  }

  /// The state of the thread `runner`, whose address `runner` is.
  @inline(__always)
  static func state(runner: Int) -> UnsafeMutablePointer<State> {
    UnsafeMutablePointer<State>(bitPattern: runner).unsafelyUnwrapped
  }

  /// How many chains this thread is running.
  @inlinable
  var depth: Int {
    get { state.pointee.depth }
    nonmutating set { state.pointee.depth = newValue }
  }

  /// Marks the start of a run of `gate`'s chain on this thread.
  @inlinable @inline(__always)
  func enter(_ gate: DeliveryGate) {
    // Wrapping, here and in the other counts of a run: a thread nests
    // far fewer than `Int.max` runs, and the overflow check costs an
    // instruction per delivery.
    state.pointee.depth &+= 1
    push(gate)
  }

  /// Marks the end of the chain's own steps; `leave()` follows once the
  /// gate is released.
  @inlinable @inline(__always)
  func popCause() {
    let count = state.pointee.count &- 1
    state.pointee.count = count
    if count >= Self.scanned { removeDeep(state.pointee.causes.unsafelyUnwrapped[count], at: count) }
  }

  /// How many causes `isCaused(by:)` searches in the buffer: a delivery
  /// through a few chains (almost all of them) costs a short search and
  /// nothing more; the causes past these are also kept in `deep`, a set.
  @inlinable
  static var scanned: Int { 16 }

  /// How many runs of chains may nest on one thread's stack. A delivery
  /// that would start one more is postponed (see `postpone(causes:_:)`):
  /// a chain of 100,000 holders delivers on a 512 KB stack. A link of a
  /// chain of holders (a holder, a `map`, a `sendTo`) takes about 220
  /// bytes of stack in a release build (`DepthTests`), so this many take
  /// some 30 KB, a handler's own frames aside.
  @inlinable
  static var nestingLimit: Int { 128 }

  /// How much of a thread's stack a delivery leaves free: a run that would
  /// start with less left is postponed too, whatever the count, so that
  /// frames larger than a release build's (a debug or sanitized build,
  /// handlers with large locals) cannot overflow a small stack either. It
  /// must hold one run of a chain and what it calls until the next check.
  static var stackReserve: UInt { 64 * 1024 }

  /// Whether a run of a chain starting here must be postponed: past
  /// `nestingLimit` runs, or closer than `stackReserve` to the end of the
  /// stack. A load, an address and two compares per delivery.
  @inlinable @inline(__always)
  var mustPostpone: Bool {
    state.pointee.depth >= Self.nestingLimit || isNearStackEnd
  }

  /// Whether the calling code runs closer than `stackReserve` to the end
  /// of this thread's stack (never when the stack is unknown). Inlined, so
  /// that the address compared is the caller's frame. Also where a
  /// computed value's update moves to a new thread, and where a freed one
  /// leaves its releases to a frame further up (`ComputedNode`).
  @inlinable @inline(__always)
  var isNearStackEnd: Bool {
    _chaining_stack_address() < state.pointee.stackLimit
  }

  /// Marks the end of the run started by `enter(_:)`.
  @inlinable @inline(__always)
  func leave() {
    state.pointee.depth &-= 1
  }
}

/// Gives the calling thread's processor to another thread, as a writer
/// waiting for its turn does between looks (`DeliveryGate.awaitTurn`,
/// `_SenderCore.awaitTurn()`); here, where the C library is imported.
func yieldProcessor() {
  sched_yield()
}

/// The key whose destructor frees a thread's context when the thread
/// ends; created once.
private let contextKey: pthread_key_t = {
  var key = pthread_key_t()
  let status = pthread_key_create(&key, releaseContext)
  precondition(status == 0, "Chaining: pthread_key_create failed with status \(status)")
  return key
}()

#if canImport(Darwin)
private func releaseContext(_ raw: UnsafeMutableRawPointer) {
  freeContext(raw)
}
#else
private func releaseContext(_ raw: UnsafeMutableRawPointer?) {
  if let raw { freeContext(raw) }
}
#endif

private func freeContext(_ raw: UnsafeMutableRawPointer) {
  // A later destructor that delivers makes a new context, freed the same way.
  if _chaining_get_thread_context() == raw { _chaining_set_thread_context(nil) }
  let state = raw.assumingMemoryBound(to: DeliveryContext.State.self)
  #if !canImport(Darwin)
  // Not holding a lock now: its word is 0.
  if state.pointee.holdWord != BiasWords.none { BiasWords.giveBack(state.pointee.holdWord) }
  #endif
  state.pointee.causes?.deallocate()
  state.pointee.deep.deallocate()
  state.pointee.spareTable.deallocate()
  state.pointee.computedEffects.deallocate()
  state.pointee.waves.deferred.deallocate()
  state.pointee.waves.unpins.deallocate()
  state.deinitialize(count: 1)
  state.deallocate()
}
