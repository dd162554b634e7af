// MARK: - The causes

/// The causes of the value being delivered, on the thread's stack of
/// keys: pushed and popped by each run, searched for echoes, captured
/// when a value is queued or deferred, and installed again when it runs
/// (Internals.md, "Echoes").
///
/// ### Keys
/// A run pushes its gate's address: the gate is alive while its run is
/// on the stack, and the address costs nothing to compare. A captured
/// cause is the gate's id (`DeliveryGate.id`): the value may wait while
/// the gate is freed, and its address given to a new gate. Installing
/// captured causes pushes their ids first, and counts them
/// (`installedCount`); only then does `isCaused(by:)` look for the gate's
/// id too, among those. The two kinds never collide: an address is a
/// multiple of 16, an id is 1 modulo 16.
/// `CauseSetTests` checks the search against the whole list, installed
/// and captured at random, and that a freed gate's address given to a new
/// one is not taken for a cause.
extension DeliveryContext {
  @inlinable @inline(__always)
  func push(_ gate: DeliveryGate) {
    push(key: CauseSet.key(gate))
  }

  /// Pushes a cause's key: a running gate's address, or a captured id.
  @inlinable @inline(__always)
  func push(key: UInt) {
    let count = state.pointee.count
    if count == state.pointee.capacity { grow() }
    state.pointee.causes.unsafelyUnwrapped[count] = key
    state.pointee.count = count &+ 1
    if count >= Self.scanned { addDeep(key) }
  }

  /// Adds a cause past the first `scanned` to `deep`.
  @usableFromInline @inline(never)
  func addDeep(_ key: UInt) {
    state.pointee.deep.insert(key: key)
  }

  /// Takes a cause past the first `scanned` out of `deep`.
  @usableFromInline @inline(never)
  func removeDeep(_ key: UInt, at count: Int) {
    state.pointee.deep.remove(key: key)
    // Here rather than on every pop: `memo` describes more than
    // `scanned` causes, so the first pop below it comes this way.
    if count < state.pointee.memoCount { dropMemo(to: count) }
  }

  /// Whether `key` is among the causes past the first `scanned`.
  @usableFromInline @inline(never)
  func isDeepCause(_ key: UInt) -> Bool {
    state.pointee.deep.contains(key: key)
  }

  /// The id of the cause `key`: itself when it is one, else the id of the
  /// gate at that address, whose run is on this thread's stack.
  @inline(__always)
  static func id(of key: UInt) -> UInt {
    if key & 1 != 0 { return key }
    return gate(at: key)._withUnsafeGuaranteedRef { $0.id }
  }

  /// The running gate whose address is the key `key`.
  @inline(__always)
  static func gate(at key: UInt) -> Unmanaged<DeliveryGate> {
    Unmanaged.fromOpaque(UnsafeRawPointer(bitPattern: key).unsafelyUnwrapped)
  }

  @usableFromInline
  func grow() {
    let capacity = max(8, state.pointee.capacity * 2)
    let causes = UnsafeMutablePointer<UInt>.allocate(capacity: capacity)
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
    if state.pointee.installedCount != 0 { return isInstalledCause(gate, count: count) }
    return holds(CauseSet.key(gate), count: count)
  }

  /// Whether the buffer's `count` causes hold `key`: searched in the
  /// first `scanned`, asked of `deep` past them.
  @inlinable @inline(__always)
  func holds(_ key: UInt, count: Int) -> Bool {
    let causes = state.pointee.causes.unsafelyUnwrapped
    for index in 0..<min(count, Self.scanned) where causes[index] == key {
      return true
    }
    return count > Self.scanned && isDeepCause(key)
  }

  /// Whether `gate` is among the causes when captured causes are
  /// installed (`installedCount` is not 0): its id among the installed
  /// causes, or its address (a run on this thread's stack) among the keys
  /// runs pushed since. The install pushed ids only (or `installedMark` under a node
  /// in `base`, with the ids of a deferred combine on top, if any), the
  /// buffer's first `installedCount` keys, and runs push addresses above
  /// them: so each key is compared once, with the id below
  /// `installedCount` and with the address above, in the first `scanned`;
  /// past them `deep` is asked for the id only when the installed ids pass
  /// `scanned`, and for the address only when the buffer does. No gate's
  /// id is `installedMark`. `CauseSetTests` checks the search against the
  /// whole list, with nodes, ids on top of nodes and runs installed at
  /// random.
  @usableFromInline @inline(never)
  func isInstalledCause(_ gate: DeliveryGate, count: Int) -> Bool {
    let id = gate.id
    let installed = state.pointee.installedCount
    let scanned = min(count, Self.scanned)
    let ids = min(installed, scanned)
    let causes = state.pointee.causes.unsafelyUnwrapped
    for index in 0..<ids where causes[index] == id { return true }
    let key = CauseSet.key(gate)
    for index in ids..<scanned where causes[index] == key { return true }
    if let base = state.pointee.base, base._withUnsafeGuaranteedRef({ $0.contains(id: id) }) {
      return true
    }
    if installed > Self.scanned, isDeepCause(id) { return true }
    return count > max(installed, Self.scanned) && isDeepCause(key)
  }

  /// The causes, as ids, for a value that is queued for later. One
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
  /// `DeliveryGate.postpone`; a combine deferred to the wave's end takes
  /// `captureNode()` the same way), so the node's path may go on growing
  /// in place. Otherwise the path is frozen first (see `CausePath`).
  @usableFromInline
  func capture(confined: Bool = false) -> Causes {
    let count = state.pointee.count
    if state.pointee.base == nil && count <= Self.scanned {
      guard count > 0, let causes = state.pointee.causes else { return .none }
      if count == 1 { return Causes(single: Self.id(of: causes[0])) }
      // Two (a value queued after a holder's chain and one more): kept
      // inline too. A deferred combine keeps a few in the thread's
      // buffer instead (`WaveFlush.Entry.arena`).
      if count == 2 {
        return Causes(single: Self.id(of: causes[0]), second: Self.id(of: causes[1]))
      }
      // A few causes: copied, as cheap as a node and installed by pushing.
      return Causes(copied: (0..<count).map { Self.id(of: causes[$0]) })
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
    let onMemo = count > Self.scanned && state.pointee.memo != nil
    // On the base, the buffer's own causes start after `installedMark`.
    let start = onMemo ? state.pointee.memoCount : state.pointee.base == nil ? 0 : 1
    if start == count {
      if onMemo { return state.pointee.memo.unsafelyUnwrapped }
      if let base = state.pointee.base { return base.takeUnretainedValue() }
    }
    let causes = state.pointee.causes.unsafelyUnwrapped
    // The memo moves into the new node, which takes its place; the base is
    // read into the argument. Through a local, either was retained once
    // more for the call and released after.
    let node = CauseNode(
      parent: onMemo ? state.pointee.memo.take() : state.pointee.base?.takeUnretainedValue(),
      ids: (start..<count).map { Self.id(of: causes[$0]) },
      end: count
    )
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
      covered = current.end - current.ids.count
      node = current.parent
    }
    if covered <= first {
      node = nil
      covered = 0
    }
    state.pointee.memo = node
    state.pointee.memoCount = covered
  }

  /// Runs `body` with `causes`, then `gate`, when given, installed; then
  /// restores the thread's own causes.
  ///
  /// A node is installed as `base`, in O(1): the buffer then holds only
  /// what is pushed on top of it, and `isCaused(by:)` asks the node and
  /// searches the buffer.
  @usableFromInline
  func run(with causes: Causes, adding gate: DeliveryGate? = nil, _ body: () -> Void) {
    replacingCauses(
      {
        if causes.node != nil {
          // Not bound to a local, which would retain and release it: the
          // argument keeps it alive.
          state.pointee.base = Unmanaged.passUnretained(causes.node.unsafelyUnwrapped)
          push(key: installedMark)
        } else if causes.single != 0 {
          push(key: causes.single)
          if causes.second != 0 { push(key: causes.second) }
        } else if !causes.copied.isEmpty {
          for id in causes.copied { push(key: id) }
        }
        state.pointee.installedCount = state.pointee.count
        if let gate { push(gate) }
      },
      body
    )
    withExtendedLifetime(causes) {}
  }

  /// Runs `body` with a deferred combine's causes (`WaveFlush.Entry`)
  /// installed: `node`, when given, then the ids `flushCauses[range]`;
  /// then restores the thread's own causes. The caller keeps `node` alive
  /// for the call. `isCaused(by:)` then asks the node and searches the
  /// buffer: the causes `node.all + flushCauses[range]`, as a node made
  /// of them would be, without making it.
  func run(installing node: Unmanaged<CauseNode>?, flushCauses range: Range<Int>, _ body: () -> Void) {
    replacingCauses(
      {
        if let node {
          state.pointee.base = node
          push(key: installedMark)
        }
        for index in range { push(key: state.pointee.waves.flushCauses[index]) }
        state.pointee.installedCount = state.pointee.count
      },
      body
    )
  }

  /// Runs `body` with the thread's causes replaced by what `install`
  /// pushes (or installs as `base`), then restores them.
  func replacingCauses(_ install: () -> Void, _ body: () -> Void) {
    let saved = state.pointee.count
    let own = saved == 0 ? [] : (0..<saved).map { state.pointee.causes.unsafelyUnwrapped[$0] }
    let savedBase = state.pointee.base
    // Moved out and back: the saved memo costs no retain and release.
    let savedMemo = state.pointee.memo.take()
    let savedMemoCount = state.pointee.memoCount
    let savedInstalledCount = state.pointee.installedCount
    state.pointee.installedCount = 0
    state.pointee.count = 0
    state.pointee.deep.removeAll()
    state.pointee.memoCount = 0
    state.pointee.base = nil
    install()
    body()
    state.pointee.count = 0
    state.pointee.deep.removeAll()
    state.pointee.base = savedBase
    state.pointee.memo = savedMemo
    state.pointee.memoCount = savedMemoCount
    state.pointee.installedCount = savedInstalledCount
    for key in own { push(key: key) }
  }
}
