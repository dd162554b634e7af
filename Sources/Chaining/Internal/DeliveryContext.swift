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
/// causes are a plain buffer of unretained gates, each kept alive by the
/// delivery it belongs to or by the queued value whose causes were installed.
@usableFromInline
struct DeliveryContext {
  @usableFromInline
  struct State {
    @usableFromInline var depth = 0
    @usableFromInline var count = 0
    @usableFromInline var capacity = 0
    @usableFromInline var causes: UnsafeMutablePointer<Unmanaged<DeliveryGate>>? = nil
    /// The causes past the first `DeliveryContext.scanned`, also kept as a
    /// set, so that `isCaused(by:)` costs O(1) however deep the delivery.
    @usableFromInline var deep = CauseSet()
    /// How many waves this thread is inside: deliveries of a write, and
    /// batches (see `Wave.swift`). Nonzero, a combine defers its value.
    @usableFromInline var wave = 0
    /// How many combines wait in `deferred`, plus the gates in `turns`:
    /// read on every wave's end, so kept apart from the arrays.
    @usableFromInline var deferredCount = 0
    /// Gates whose queue this thread joined from inside a delivery while
    /// their running thread was past its limit: it waits for its turn at
    /// each once its wave ends (see `deferTurn(_:)`).
    var turns: [DeliveryGate] = []
    /// The combines that changed in the current wave, in the order they
    /// first changed; sent when the wave ends.
    var deferred: [WaveFlush.Entry] = []
    /// The rank of the combine being sent by the wave's end, plus one, or
    /// `Int.min` when none is: what a combine reached from here learns as
    /// its least rank. Not 0: the combines of a `flatMapLatest`'s inner
    /// chains have ranks below 0 (see `LatestInnerChain.rankBase`).
    var level = Int.min
    /// A counter for the ranks combines get when they are built, on this
    /// thread: a combine built inside another's build (`a.combine(b).combine(c)`)
    /// gets a lower rank than the outer one.
    var builtRank = 0
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

  @usableFromInline
  static func makeCurrent() -> DeliveryContext {
    let state = UnsafeMutablePointer<State>.allocate(capacity: 1)
    state.initialize(to: State())
    _chaining_set_thread_context(state)
    // Only so that the context is freed when the thread ends.
    pthread_setspecific(contextKey, state)
    return DeliveryContext(state: state)
  }

  /// This thread's mark in a gate it claims: the address of its state,
  /// which is at least 8-byte aligned (its low bits are left for flags),
  /// and unique among the threads alive.
  @inlinable
  var runner: Int { Int(bitPattern: state) }

  /// How many chains this thread is running.
  @inlinable
  var depth: Int {
    get { state.pointee.depth }
    nonmutating set { state.pointee.depth = newValue }
  }

  /// Marks the start of a run of `gate`'s chain on this thread.
  @inlinable @inline(__always)
  func enter(_ gate: DeliveryGate) {
    state.pointee.depth += 1
    push(gate)
  }

  /// Marks the end of the chain's own steps; `leave()` follows once the
  /// gate is released.
  @inlinable @inline(__always)
  func popCause() {
    let count = state.pointee.count - 1
    state.pointee.count = count
    if count >= Self.scanned { removeDeep(state.pointee.causes.unsafelyUnwrapped[count]) }
  }

  /// How many causes `isCaused(by:)` searches in the buffer: a delivery
  /// through a few chains (almost all of them) costs a short search and
  /// nothing more; the causes past these are also kept in `deep`, a set.
  @inlinable
  static var scanned: Int { 16 }

  /// Marks the end of the run started by `enter(_:)`.
  @inlinable @inline(__always)
  func leave() {
    state.pointee.depth -= 1
  }

  @inlinable @inline(__always)
  func push(_ gate: DeliveryGate) {
    let count = state.pointee.count
    if count == state.pointee.capacity { grow() }
    state.pointee.causes.unsafelyUnwrapped[count] = Unmanaged.passUnretained(gate)
    state.pointee.count = count + 1
    if count >= Self.scanned { addDeep(gate) }
  }

  /// Adds a cause past the first `scanned` to `deep`.
  @usableFromInline @inline(never)
  func addDeep(_ gate: DeliveryGate) {
    state.pointee.deep.insert(gate)
  }

  /// Takes a cause past the first `scanned` out of `deep`.
  @usableFromInline @inline(never)
  func removeDeep(_ gate: Unmanaged<DeliveryGate>) {
    state.pointee.deep.remove(gate.takeUnretainedValue())
  }

  /// Whether `gate` is among the causes past the first `scanned`.
  @usableFromInline @inline(never)
  func isDeepCause(_ gate: DeliveryGate) -> Bool {
    state.pointee.deep.contains(gate)
  }

  @usableFromInline
  func grow() {
    let capacity = max(8, state.pointee.capacity * 2)
    let causes = UnsafeMutablePointer<Unmanaged<DeliveryGate>>.allocate(capacity: capacity)
    if let old = state.pointee.causes {
      causes.moveInitialize(from: old, count: state.pointee.count)
      old.deallocate()
    }
    state.pointee.causes = causes
    state.pointee.capacity = capacity
  }

  /// Whether `gate` is among the causes of the value being delivered.
  @inlinable @inline(__always)
  func isCaused(by gate: DeliveryGate) -> Bool {
    let count = state.pointee.count
    if count == 0 { return false }
    let causes = state.pointee.causes.unsafelyUnwrapped
    let target = Unmanaged.passUnretained(gate).toOpaque()
    for index in 0..<min(count, Self.scanned) where causes[index].toOpaque() == target {
      return true
    }
    return count > Self.scanned && isDeepCause(gate)
  }

  /// The causes, retained, for a value that is queued for later. One
  /// cause (a chain written straight on its source: the common case) is
  /// kept without allocating an array.
  @usableFromInline
  func capture() -> Causes {
    let count = state.pointee.count
    guard count > 0, let causes = state.pointee.causes else { return .none }
    if count == 1 { return Causes(single: causes[0].takeUnretainedValue()) }
    return Causes(gates: (0..<count).map { causes[$0].takeUnretainedValue() })
  }

  /// Runs `body` with `causes` (plus `gate`, when given) installed, then
  /// restores the thread's own causes.
  @usableFromInline
  func run(with causes: Causes, adding gate: DeliveryGate? = nil, _ body: () -> Void) {
    let saved = state.pointee.count
    let own = saved == 0 ? [] : (0..<saved).map { state.pointee.causes.unsafelyUnwrapped[$0] }
    state.pointee.count = 0
    state.pointee.deep.removeAll()
    if let single = causes.single {
      push(single)
    } else {
      for cause in causes.gates { push(cause) }
    }
    if let gate { push(gate) }
    body()
    state.pointee.count = 0
    state.pointee.deep.removeAll()
    for cause in own { push(cause.takeUnretainedValue()) }
    withExtendedLifetime(causes) {}
  }
}

/// The chains a queued value had passed through when it was queued.
///
/// @unchecked: created by the queuing thread, read once by the delivering
/// thread after the hand-over through a lock.
@usableFromInline
struct Causes: @unchecked Swift.Sendable {
  /// The only cause, when there is exactly one; then `gates` is empty.
  @usableFromInline let single: DeliveryGate?
  /// The causes, outermost first, when there are none or two or more.
  @usableFromInline let gates: [DeliveryGate]

  /// No cause.
  @usableFromInline static var none: Causes { Causes(gates: []) }

  @usableFromInline
  init(gates: [DeliveryGate]) {
    single = nil
    self.gates = gates
  }

  @usableFromInline
  init(single: DeliveryGate) {
    self.single = single
    gates = []
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
  state.pointee.causes?.deallocate()
  state.pointee.deep.deallocate()
  state.deinitialize(count: 1)
  state.deallocate()
}
