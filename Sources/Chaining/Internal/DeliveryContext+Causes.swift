// MARK: - The causes

/// The causes of the value being delivered, on the thread's stack of
/// gates: pushed and popped by each run, searched for echoes, captured
/// when a value is queued or deferred, and installed again when it runs
/// (Internals.md, "Echoes").
extension DeliveryContext {
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
    // Borrowed: `takeUnretainedValue()` retained and released the gate,
    // on every pop past `scanned` (a tenth of a deep chain's hop).
    gate._withUnsafeGuaranteedRef { state.pointee.deep.remove($0) }
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
        for index in range { push(state.pointee.waves.flushCauses[index].takeUnretainedValue()) }
      },
      body
    )
    for index in range { state.pointee.waves.flushCauses[index].release() }
  }

  /// Runs `body` with the thread's causes replaced by what `install`
  /// pushes (or installs as `base`), then restores them.
  func replacingCauses(_ install: () -> Void, _ body: () -> Void) {
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
