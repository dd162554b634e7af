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
    /// The causes a queued or deferred value brought with it, installed by
    /// `run(with:adding:_:)`: shared with the value, not copied into the
    /// buffer, which holds only the causes pushed since. Nil when none.
    @usableFromInline var base: CauseNode? = nil
    /// The last node `capture()` made, for the buffer's first `memoCount`
    /// causes on top of `base`: the next capture shares it and adds only
    /// the causes pushed since. Nil, with `memoCount` 0, when there is none.
    var memo: CauseNode? = nil
    @usableFromInline var memoCount = 0
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
    // Aligned to 64 bytes: the low six bits of `runner` are left for a
    // gate's flags and generation (`DeliveryGate.idleBits`).
    let state = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<State>.size, alignment: 64)
      .bindMemory(to: State.self, capacity: 1)
    state.initialize(to: State())
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
    state.pointee.depth += 1
    push(gate)
  }

  /// Marks the end of the chain's own steps; `leave()` follows once the
  /// gate is released.
  @inlinable @inline(__always)
  func popCause() {
    let count = state.pointee.count - 1
    state.pointee.count = count
    if count >= Self.scanned { removeDeep(state.pointee.causes.unsafelyUnwrapped[count], at: count) }
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
    state.pointee.base.unsafelyUnwrapped.contains(gate)
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
  @usableFromInline
  func capture() -> Causes {
    let count = state.pointee.count
    if state.pointee.base == nil && count <= Self.scanned {
      guard count > 0, let causes = state.pointee.causes else { return .none }
      if count == 1 { return Causes(single: causes[0].takeUnretainedValue()) }
      // Two: a combine's side reached from a holder's chain, the common
      // case of a deferred combine: kept inline too.
      if count == 2 {
        return Causes(single: causes[0].takeUnretainedValue(), second: causes[1].takeUnretainedValue())
      }
      // A few causes: copied, as cheap as a node and installed by pushing.
      return Causes(copied: (0..<count).map { causes[$0].takeUnretainedValue() })
    }
    return Causes(node: captureNode())
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
    let saved = state.pointee.count
    let own = saved == 0 ? [] : (0..<saved).map { state.pointee.causes.unsafelyUnwrapped[$0] }
    let savedBase = state.pointee.base
    let savedMemo = state.pointee.memo
    let savedMemoCount = state.pointee.memoCount
    state.pointee.count = 0
    state.pointee.deep.removeAll()
    state.pointee.memo = nil
    state.pointee.memoCount = 0
    if let node = causes.node {
      state.pointee.base = node
      push(installedMark)
    } else {
      state.pointee.base = nil
      if let single = causes.single {
        push(single)
        if let second = causes.second { push(second) }
      } else {
        for cause in causes.copied { push(cause) }
      }
    }
    if let gate { push(gate) }
    body()
    state.pointee.count = 0
    state.pointee.deep.removeAll()
    state.pointee.base = savedBase
    state.pointee.memo = savedMemo
    state.pointee.memoCount = savedMemoCount
    for cause in own { push(cause.takeUnretainedValue()) }
    withExtendedLifetime(causes) {}
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
  /// The causes as a set, when there are more than `DeliveryContext.scanned`:
  /// its parent's set with this link's gates added, sharing the rest
  /// (a persistent trie), so that making a link costs O(its gates) and
  /// `contains` O(1), however long the path.
  let set: CauseTrie?
  /// The buffer's count when the capturing thread made it: this link
  /// describes the buffer's causes `end - gates.count ..< end` on top of
  /// the installed ones (for that thread's `memo` only).
  let end: Int

  init(parent: CauseNode?, gates: [DeliveryGate], end: Int) {
    self.parent = parent
    self.gates = gates
    self.end = end
    count = (parent?.count ?? 0) + gates.count
    if count <= DeliveryContext.scanned {
      set = nil
    } else {
      var set = parent?.set ?? CauseTrie.empty
      for gate in parent?.set == nil ? (parent?.all ?? []) + gates : gates {
        CauseTrie.insert(CauseSet.key(gate), into: &set)
      }
      self.set = set
    }
  }

  /// Whether `gate` is one of the causes.
  func contains(_ gate: DeliveryGate) -> Bool {
    if let set { return set.contains(CauseSet.key(gate)) }
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

/// A persistent set of gate addresses: a hash array mapped trie whose
/// nodes are never changed once shared. `insert` copies the path it
/// changes (at most 13 nodes, usually 2 or 3) and shares the rest; the
/// nodes only it holds (those of the set being made) it changes in place.
/// It holds the causes of a deep path (`CauseNode.set`) without a copy of
/// the path per link.
///
/// A key's hash is a bijection of the address, so two gates never share
/// one: two keys end in different slots by the last level at the latest,
/// and no collision lists are needed.
final class CauseTrie: @unchecked Swift.Sendable {
  // @unchecked: immutable once made; shared by the nodes of the causes a
  // value carries to another thread, handed over through a lock.
  enum Slot {
    case key(UInt)
    case node(CauseTrie)
  }

  /// Which of the 32 slots of this level are used.
  private(set) var bitmap: UInt32
  /// The used slots, in the order of their bits.
  private(set) var slots: [Slot]

  init(bitmap: UInt32, slots: [Slot]) {
    self.bitmap = bitmap
    self.slots = slots
  }

  static let empty = CauseTrie(bitmap: 0, slots: [])

  /// A bijection of `key` (an odd multiplication, then an xor-shift, each
  /// invertible) that spreads the aligned addresses over every level.
  static func hash(_ key: UInt) -> UInt {
    let mixed = key &* 0x9E37_79B9_7F4A_7C15
    return mixed ^ (mixed >> 32)
  }

  /// The slot of `hash` at the level that starts at bit `shift`.
  static func bit(_ hash: UInt, _ shift: Int) -> UInt32 {
    1 << UInt32(truncatingIfNeeded: (hash >> UInt(shift)) & 31)
  }

  func contains(_ key: UInt) -> Bool {
    let hash = Self.hash(key)
    var node = self
    var shift = 0
    while true {
      let bit = Self.bit(hash, shift)
      if node.bitmap & bit == 0 { return false }
      switch node.slots[(node.bitmap & (bit &- 1)).nonzeroBitCount] {
      case .key(let other): return other == key
      case .node(let child):
        node = child
        shift += 5
      }
    }
  }

  /// Adds `key` to `set`: in place in the nodes only `set` holds, in
  /// copies of the others on its path.
  static func insert(_ key: UInt, into set: inout CauseTrie) {
    insert(key, hash(key), 0, into: &set)
  }

  private static func insert(_ key: UInt, _ hash: UInt, _ shift: Int, into node: inout CauseTrie) {
    if !isKnownUniquelyReferenced(&node) { node = CauseTrie(bitmap: node.bitmap, slots: node.slots) }
    let bit = Self.bit(hash, shift)
    let index = (node.bitmap & (bit &- 1)).nonzeroBitCount
    if node.bitmap & bit == 0 {
      node.slots.insert(.key(key), at: index)
      node.bitmap |= bit
      return
    }
    switch node.slots[index] {
    case .key(let other):
      if other != key { node.slots[index] = .node(pair(other, Self.hash(other), key, hash, shift + 5)) }
    case .node(var child):
      // Out of the slot while it changes, so that a child only this set
      // holds is changed in place.
      node.slots[index] = .key(0)
      insert(key, hash, shift + 5, into: &child)
      node.slots[index] = .node(child)
    }
  }

  /// A node holding two different keys from `shift` on.
  private static func pair(_ first: UInt, _ firstHash: UInt, _ second: UInt, _ secondHash: UInt, _ shift: Int)
    -> CauseTrie
  {
    let firstBit = bit(firstHash, shift)
    let secondBit = bit(secondHash, shift)
    if firstBit == secondBit {
      return CauseTrie(bitmap: firstBit, slots: [.node(pair(first, firstHash, second, secondHash, shift + 5))])
    }
    let slots: [Slot] = firstBit < secondBit ? [.key(first), .key(second)] : [.key(second), .key(first)]
    return CauseTrie(bitmap: firstBit | secondBit, slots: slots)
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
