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
    /// The stack address below which a run of a chain is postponed
    /// (`stackReserve` above the thread's lowest), or 0 when the thread's
    /// stack is unknown. Next to `depth`: both are read on every delivery.
    @usableFromInline var stackLimit: UInt = 0
    @usableFromInline var count = 0
    @usableFromInline var capacity = 0
    @usableFromInline var causes: UnsafeMutablePointer<Unmanaged<DeliveryGate>>? = nil
    /// The causes past the first `DeliveryContext.scanned`, also kept as a
    /// set, so that `isCaused(by:)` costs O(1) however deep the delivery.
    @usableFromInline var deep = CauseSet()
    /// The causes a queued or deferred value brought with it, installed by
    /// `run(with:adding:_:)`: shared with the value, not copied into the
    /// buffer, which holds only the causes pushed since. Nil when none.
    @usableFromInline var base: CauseNode? = nil
    /// The table of the last `CausePath` freed on this thread, emptied,
    /// kept for the next path that outgrows its own: a write through a
    /// long chain makes a path as long, and would otherwise allocate (and
    /// fault in) a table as large for each write.
    var spareTable = CauseSet()
    /// `base`, unretained, for `isBaseCause(_:)`: a search on every hop
    /// of a postponed or queued run that costs no reference counting.
    /// The `run(with:adding:_:)` that installed the node keeps it alive.
    var baseRef: Unmanaged<CauseNode>? = nil
    /// The last node `capture()` made, for the buffer's first `memoCount`
    /// causes on top of `base`: the next capture shares it and adds only
    /// the causes pushed since. Nil, with `memoCount` 0, when there is none.
    var memo: CauseNode? = nil
    @usableFromInline var memoCount = 0
    /// How many waves this thread is inside: deliveries of a write, and
    /// batches (see `Wave.swift`). Nonzero, a combine defers its value.
    @usableFromInline var wave = 0
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
    /// first changed; sent when the wave ends.
    var deferred: [WaveFlush.Entry] = []
    /// Whether `deferred` is sorted for `takeLowestRanked()`: cleared by
    /// every entry deferred.
    var deferredSorted = false
    /// The causes of deferred combines that have a few (`Entry.arena`),
    /// each retained until its entry is sent: one buffer, reused wave
    /// after wave, so deferring a combine reached through several chains
    /// allocates nothing. Emptied down to `flushCausesFloor` when a
    /// flush ends; a wave of its own (`runAsOwnWave`) raises the floor
    /// over the entries of the wave it interrupts.
    var flushCauses: [Unmanaged<DeliveryGate>] = []
    var flushCausesFloor = 0
    /// The rank of the combine being sent by the wave's end, plus one, or
    /// `Int.min` when none is: what a combine reached from here learns as
    /// its least rank. Not 0: the combines of a `flatMapLatest`'s inner
    /// chains have ranks below 0 (see `LatestInnerChain.rankBase`).
    var level = Int.min
    /// A counter for the ranks combines get when they are built, on this
    /// thread: a combine built inside another's build (`a.combine(b).combine(c)`)
    /// gets a lower rank than the outer one.
    var builtRank = 0
    /// The parts of the chains this thread is building whose values reach
    /// a `sendTo` target or a join next, innermost last (see
    /// `RankGraph.beginBuilding(_:in:)`).
    var buildFrames: [BuildFrame] = []
    /// The innermost evaluation of a computed value in progress on this
    /// thread: the reads it makes are its dependencies (see `Tracking`).
    /// The others follow through `ComputedNode.trackingParent`.
    var tracking: Unmanaged<ComputedNode>?
    /// How many evaluations are in progress on this thread, read by every
    /// holder read.
    @usableFromInline var trackingCount = 0
    /// The innermost computed value being updated on this thread, for the
    /// cycle check's message; the others follow through
    /// `ComputedNode.updatingParent`.
    var updating: Unmanaged<ComputedNode>?
    /// The effects of the marking walks in progress on this thread (see
    /// `ComputedGraph.changed(_:)`).
    var computedEffects: [ComputedGraph.Effect] = []
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
    state.pointee.depth >= Self.nestingLimit || _chaining_stack_address() < state.pointee.stackLimit
  }

  /// Marks the end of the run started by `enter(_:)`.
  @inlinable @inline(__always)
  func leave() {
    state.pointee.depth &-= 1
  }

  @inlinable @inline(__always)
  func push(_ gate: DeliveryGate) {
    let count = state.pointee.count
    if count == state.pointee.capacity { grow() }
    state.pointee.causes.unsafelyUnwrapped[count] = Unmanaged.passUnretained(gate)
    state.pointee.count = count &+ 1
    if count >= Self.scanned { addDeep(gate) }
  }

  /// Adds a cause past the first `scanned` to `deep`.
  @usableFromInline @inline(never)
  func addDeep(_ gate: DeliveryGate) {
    state.pointee.deep.insert(gate)
  }

  /// Takes a cause past the first `scanned` out of `deep`.
  @usableFromInline @inline(never)
  func removeDeep(_ gate: Unmanaged<DeliveryGate>, at count: Int) {
    state.pointee.deep.remove(gate.takeUnretainedValue())
    // Here rather than on every pop: `memo` describes more than
    // `scanned` causes, so the first pop below it comes this way.
    if count < state.pointee.memoCount { dropMemo(to: count) }
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
    // Not 0 while a node is installed: `installedMark` is pushed with it.
    if count == 0 { return false }
    let causes = state.pointee.causes.unsafelyUnwrapped
    let target = Unmanaged.passUnretained(gate).toOpaque()
    for index in 0..<min(count, Self.scanned) where causes[index].toOpaque() == target {
      return true
    }
    if count > Self.scanned && isDeepCause(gate) { return true }
    return state.pointee.base != nil && isBaseCause(gate)
  }

  /// Whether `gate` is among the installed causes of a queued value.
  @usableFromInline @inline(never)
  func isBaseCause(_ gate: DeliveryGate) -> Bool {
    state.pointee.baseRef.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.contains(gate) }
  }

  /// The causes, retained, for a value that is queued for later. One
  /// cause (a chain written straight on its source: the common case) is
  /// kept without allocating.
  ///
  /// Up to `scanned` causes, with none installed, an array. Otherwise a
  /// node of a persistent list, in O(causes pushed since the last
  /// capture): it shares the installed causes (`base`) and the last
  /// capture's node (`memo`) while that one still describes the bottom of
  /// the buffer, so a deep delivery that captures at each level (each
  /// deferred combine of a graph of combines) does not copy its path
  /// each time, which made its cost grow with the square of the depth.
  ///
  /// `confined`: the causes stay on this thread (a run postponed by
  /// `DeliveryGate.postpone`, a combine deferred to the wave's end), so
  /// the node's path may go on growing in place. Otherwise the path is
  /// frozen first (see `CausePath`).
  @usableFromInline
  func capture(confined: Bool = false) -> Causes {
    let count = state.pointee.count
    if state.pointee.base == nil && count <= Self.scanned {
      guard count > 0, let causes = state.pointee.causes else { return .none }
      if count == 1 { return Causes(single: causes[0].takeUnretainedValue()) }
      // Two (a value queued after a holder's chain and one more): kept
      // inline too. A deferred combine keeps a few in the thread's
      // buffer instead (`WaveFlush.Entry.arena`).
      if count == 2 {
        return Causes(single: causes[0].takeUnretainedValue(), second: causes[1].takeUnretainedValue())
      }
      // A few causes: copied, as cheap as a node and installed by pushing.
      return Causes(copied: (0..<count).map { causes[$0].takeUnretainedValue() })
    }
    let node = captureNode()
    if !confined { node.path?.freeze() }
    return Causes(node: node)
  }

  /// The node for `capture()`: `base` with the causes pushed since added.
  /// Past `scanned` causes, it shares `memo`, the node of the last such
  /// capture, and becomes the new one: a short buffer is copied whole.
  @usableFromInline @inline(never)
  func captureNode() -> CauseNode {
    let count = state.pointee.count
    // The buffer's own causes start after `installedMark`.
    let first = state.pointee.base == nil ? 0 : 1
    let memo = count > Self.scanned ? state.pointee.memo : nil
    let start = memo == nil ? first : state.pointee.memoCount
    let parent = memo ?? state.pointee.base
    if start == count, let parent { return parent }
    let causes = state.pointee.causes.unsafelyUnwrapped
    let node = CauseNode(parent: parent, gates: (start..<count).map { causes[$0].takeUnretainedValue() }, end: count)
    if count > Self.scanned {
      state.pointee.memo = node
      state.pointee.memoCount = count
    }
    return node
  }

  /// The buffer has been popped below what `memo` describes: steps back to
  /// the node that describes at most its first `count` causes (its own
  /// nodes are contiguous in the buffer, the first one's parent `base`).
  @usableFromInline @inline(never)
  func dropMemo(to count: Int) {
    let first = state.pointee.base == nil ? 0 : 1
    var node = state.pointee.memo
    var covered = state.pointee.memoCount
    while covered > count, let current = node {
      covered = current.end - current.gates.count
      node = current.parent
    }
    if covered <= first {
      node = nil
      covered = 0
    }
    state.pointee.memo = node
    state.pointee.memoCount = covered
  }

  /// Runs `body` with `causes` (plus `gate`, when given) installed, then
  /// restores the thread's own causes.
  ///
  /// A node is installed as `base`, in O(1): the buffer then holds only
  /// what is pushed during `body`, and `isCaused(by:)` asks the node.
  @usableFromInline
  func run(with causes: Causes, adding gate: DeliveryGate? = nil, _ body: () -> Void) {
    replacingCauses(
      {
        if let node = causes.node {
          state.pointee.base = node
          state.pointee.baseRef = Unmanaged.passUnretained(node)
          push(installedMark)
        } else if let single = causes.single {
          push(single)
          if let second = causes.second { push(second) }
        } else {
          for cause in causes.copied { push(cause) }
        }
        if let gate { push(gate) }
      },
      body
    )
    withExtendedLifetime(causes) {}
  }

  /// Runs `body` with the causes `flushCauses[range]` installed (a
  /// deferred combine's, see `WaveFlush.Entry.arena`), then releases them.
  func run(withFlushCauses range: Range<Int>, _ body: () -> Void) {
    replacingCauses(
      {
        for index in range { push(state.pointee.flushCauses[index].takeUnretainedValue()) }
      },
      body
    )
    for index in range { state.pointee.flushCauses[index].release() }
  }

  /// Runs `body` with the thread's causes replaced by what `install`
  /// pushes (or installs as `base`), then restores them.
  private func replacingCauses(_ install: () -> Void, _ body: () -> Void) {
    let saved = state.pointee.count
    let own = saved == 0 ? [] : (0..<saved).map { state.pointee.causes.unsafelyUnwrapped[$0] }
    let savedBase = state.pointee.base
    let savedMemo = state.pointee.memo
    let savedMemoCount = state.pointee.memoCount
    state.pointee.count = 0
    state.pointee.deep.removeAll()
    state.pointee.memo = nil
    state.pointee.memoCount = 0
    state.pointee.base = nil
    state.pointee.baseRef = nil
    install()
    body()
    state.pointee.count = 0
    state.pointee.deep.removeAll()
    state.pointee.base = savedBase
    state.pointee.baseRef = savedBase.map { Unmanaged.passUnretained($0) }
    state.pointee.memo = savedMemo
    state.pointee.memoCount = savedMemoCount
    for cause in own { push(cause.takeUnretainedValue()) }
  }
}

/// Pushed first when a node of causes is installed, so that the buffer is
/// not empty then and `isCaused(by:)` keeps its one-compare exit for a
/// delivery with no cause at all; never a value's gate, so the search
/// never finds it. (An object of the module, made once, never freed.)
let installedMark = DeliveryGate(held: false)

/// One link of a persistent list of causes: the gates a capture added on
/// top of its parent's, outermost first. Immutable once made, shared by
/// every value captured on the same path (see `DeliveryContext.capture()`).
@usableFromInline
final class CauseNode {
  /// The causes before these; nil at the root.
  private(set) var parent: CauseNode?
  /// This link's gates, retained.
  let gates: [DeliveryGate]
  /// How many causes the list has, this link's and its parents'.
  let count: Int
  /// The causes as a table, when there are more than
  /// `DeliveryContext.scanned`: the parent's, grown in place when the
  /// parent is its last node and it is not frozen, so that making a link
  /// costs O(its gates) and `contains` O(1), however long the path.
  let path: CausePath?
  /// The buffer's count when the capturing thread made it: this link
  /// describes the buffer's causes `end - gates.count ..< end` on top of
  /// the installed ones (for that thread's `memo` only).
  let end: Int

  init(parent: CauseNode?, gates: [DeliveryGate], end: Int) {
    self.parent = parent
    self.gates = gates
    self.end = end
    let parentCount = parent?.count ?? 0
    count = parentCount + gates.count
    if count <= DeliveryContext.scanned {
      path = nil
      return
    }
    let path: CausePath
    if let parentPath = parent?.path {
      path =
        !parentPath.frozen && parentPath.tip == parentCount
        ? parentPath : CausePath(base: parentPath, limit: parentCount)
    } else {
      path = CausePath(base: nil, limit: 0)
      path.append(parent?.all ?? [])
    }
    path.append(gates)
    self.path = path
  }

  /// Whether `gate` is one of the causes.
  func contains(_ gate: DeliveryGate) -> Bool {
    if let path { return path.contains(gate, below: count) }
    var node: CauseNode? = self
    while let current = node {
      if current.gates.contains(where: { $0 === gate }) { return true }
      node = current.parent
    }
    return false
  }

  deinit {
    // Unlinked one at a time: releasing a list thousands of links long by
    // recursion would overflow the stack
    // (`CauseSetTests.aLongListOfCausesIsReleasedWithoutRecursion`).
    var next = parent
    parent = nil
    while next != nil, isKnownUniquelyReferenced(&next) {
      let following = next.unsafelyUnwrapped.parent
      next.unsafelyUnwrapped.parent = nil
      next = following
    }
  }

  /// All the causes, outermost first.
  var all: [DeliveryGate] {
    var links: [CauseNode] = []
    var node: CauseNode? = self
    while let current = node {
      links.append(current)
      node = current.parent
    }
    return links.reversed().flatMap(\.gates)
  }
}

/// The chains a queued value had passed through when it was queued.
///
/// @unchecked: created by the queuing thread, read once by the delivering
/// thread after the hand-over through a lock.
@usableFromInline
struct Causes: @unchecked Swift.Sendable {
  /// The only cause, when there is exactly one, or the first of two; then
  /// `copied` and `node` are empty.
  @usableFromInline let single: DeliveryGate?
  /// The second of exactly two causes, kept without allocating.
  @usableFromInline let second: DeliveryGate?
  /// A few causes (two to `DeliveryContext.scanned`), outermost first,
  /// captured with none installed.
  @usableFromInline let copied: [DeliveryGate]
  /// The causes, when there are more, or they came installed.
  @usableFromInline let node: CauseNode?

  /// No cause.
  @usableFromInline static var none: Causes { Causes(copied: []) }

  /// The causes `gates`, outermost first: copied, or a node when there
  /// are more than `DeliveryContext.scanned`.
  @usableFromInline
  init(gates: [DeliveryGate]) {
    if gates.count > DeliveryContext.scanned {
      self.init(node: CauseNode(parent: nil, gates: gates, end: gates.count))
    } else {
      self.init(copied: gates)
    }
  }

  @usableFromInline
  init(single: DeliveryGate, second: DeliveryGate? = nil) {
    self.single = single
    self.second = second
    copied = []
    node = nil
  }

  @usableFromInline
  init(copied: [DeliveryGate]) {
    single = nil
    second = nil
    self.copied = copied
    node = nil
  }

  @usableFromInline
  init(node: CauseNode) {
    single = nil
    second = nil
    copied = []
    self.node = node
  }

  /// The causes, outermost first.
  var gates: [DeliveryGate] {
    if let single { return second.map { [single, $0] } ?? [single] }
    return node?.all ?? copied
  }
}

/// The causes of deep paths as one table of gate addresses, each with the
/// position it was first added at: a node of `count` causes on the path
/// has as causes the keys at positions below `count`, so every node of a
/// path that grows link by link shares one table, and adding a link costs
/// O(its gates), however long the path (`CauseNode.path`).
///
/// A node made from a node that is not the path's last (its `count` is
/// below `tip`), or from a path that is `frozen`, starts a path of its own
/// on top of it (`base`, of which it sees the positions below `baseLimit`):
/// the table only ever grows at its tip. Positions at or past a node's
/// count, of links made since on other branches (whose gates may be gone
/// and their addresses reused), are not its causes, whatever their key.
///
/// Thread-confined while it grows: only the thread that made it adds to
/// it. A capture whose causes may reach another thread freezes the path
/// of the node it hands out, and the paths below (`freeze()`); a frozen
/// path never changes again, and is read from any thread (the queue or
/// lock that hands the causes over orders the writes before). Checked by
/// `CauseSetTests.capturesShareTheirPathAndInstallsAgreeWithTheWholeList`,
/// and, across threads, by
/// `CauseSetTests.causesHandedToAnotherThreadAreNotGrownUnderIt` under the
/// thread sanitizer (which reports a race in every run without the freeze).
final class CausePath: @unchecked Swift.Sendable {
  // @unchecked: changed only by the making thread until frozen, then
  // immutable (see the type's discussion).

  /// The table of keys and their positions (see `CauseSet` for the
  /// layout, whose counts are positions here).
  @exclusivity(unchecked) private var table = CauseSet()
  /// How many positions are given: the count of the path's last node.
  @exclusivity(unchecked) private(set) var tip: Int
  /// Set once a node of this path may reach another thread: nothing is
  /// added afterwards.
  @exclusivity(unchecked) private(set) var frozen = false
  /// The path this one was made on, and how many of its positions it sees.
  let base: CausePath?
  let baseLimit: Int

  /// A path on the first `limit` positions of `base` (none: 0).
  init(base: CausePath?, limit: Int) {
    self.base = base
    baseLimit = limit
    tip = limit
  }

  /// The calling thread's delivery state, where its spare table is; nil
  /// before its first delivery and while it ends.
  private static var threadState: UnsafeMutablePointer<DeliveryContext.State>? {
    _chaining_get_thread_context()?.assumingMemoryBound(to: DeliveryContext.State.self)
  }

  deinit {
    // Kept by this thread for its next long path when larger than its
    // spare; not while the thread ends (its context is gone then).
    guard let state = Self.threadState, table.capacity > 0 else {
      table.deallocate()
      return
    }
    if table.capacity > state.pointee.spareTable.capacity {
      table.removeAll()
      swap(&table, &state.pointee.spareTable)
    }
    table.deallocate()
  }

  /// Adds `gates` at the next positions (a gate already there keeps its
  /// first).
  func append(_ gates: [DeliveryGate]) {
    reserve(gates.count)
    // Read as addresses (a native class reference is one), which touches
    // no reference count: `CauseSet.key(_:)` of each gate.
    gates.withUnsafeBytes { bytes in
      for offset in stride(from: 0, to: bytes.count, by: MemoryLayout<UInt>.stride) {
        table.insert(bytes.load(fromByteOffset: offset, as: UInt.self), at: tip)
        tip += 1
      }
    }
  }

  /// Makes room for `added` more keys, in the thread's spare table when
  /// the table would grow and the spare is large enough.
  private func reserve(_ added: Int) {
    let needed = table.occupied + added
    guard needed * 2 > table.capacity, let state = Self.threadState,
      needed * 2 <= state.pointee.spareTable.capacity
    else { return }
    var spare = CauseSet()
    swap(&spare, &state.pointee.spareTable)
    table.move(into: &spare)
    table.deallocate()
    table = spare
  }

  /// Whether `gate` is at a position below `count`, here or in the bases.
  func contains(_ gate: DeliveryGate, below count: Int) -> Bool {
    let key = CauseSet.key(gate)
    // Unretained: each path keeps its base alive, and the caller this one.
    var path = Unmanaged.passUnretained(self)
    var limit = count
    while true {
      let next = path._withUnsafeGuaranteedRef { current -> (found: Bool, base: Unmanaged<CausePath>?, limit: Int) in
        if let position = current.table.value(of: key), position < limit { return (true, nil, 0) }
        return (false, current.base.map { Unmanaged.passUnretained($0) }, current.baseLimit)
      }
      if next.found { return true }
      guard let base = next.base else { return false }
      path = base
      limit = next.limit
    }
  }

  /// Marks this path and those below frozen.
  func freeze() {
    var path: CausePath? = self
    while let current = path, !current.frozen {
      current.frozen = true
      path = current.base
    }
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
  state.pointee.spareTable.deallocate()
  state.deinitialize(count: 1)
  state.deallocate()
}
