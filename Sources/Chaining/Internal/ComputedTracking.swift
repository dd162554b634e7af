// MARK: - Tracking

/// The evaluations in progress on each thread, innermost last: reads made
/// by the closure of the innermost are its dependencies.
///
/// A read is matched against the last evaluation's dependencies in their
/// order: while the closure reads the same sources in the same order, as
/// it almost always does, a read only updates a version in place, and the
/// evaluation allocates, retains and subscribes nothing. The evaluation's
/// state is in its node (`matched`, `added`), which the evaluating thread
/// has claimed, and the thread keeps only the innermost node.
@usableFromInline
enum Tracking {
  /// Runs `node`'s evaluation with its reads tracked, and returns whether
  /// the value changed. Under the node's claim. When the closure read
  /// other sources than last time, or in another order (`rewires(_:)`),
  /// `rewire(_:)` then rewrites the dependencies.
  @inline(__always)
  static func evaluate(_ node: ComputedNode, in state: UnsafeMutablePointer<DeliveryContext.State>) -> Bool {
    node.trackingParent = state.pointee.tracking
    node.matched = 0
    state.pointee.tracking = Unmanaged.passUnretained(node)
    state.pointee.trackingCount += 1
    state.pointee.lastReadOwner = 0
    state.pointee.lastComputedRead = nil
    let changed = node.evaluate()
    state.pointee.lastReadOwner = 0
    state.pointee.lastComputedRead = nil
    state.pointee.trackingCount -= 1
    state.pointee.tracking = node.trackingParent
    return changed
  }

  /// Whether the evaluation that just ran read other sources than the
  /// last one, or in another order. Almost always false, and then the
  /// dependencies are as they were, with the versions now read.
  @inline(__always)
  static func rewires(_ node: ComputedNode) -> Bool {
    node.matched != node.dependencies.count || !node.added.isEmpty
  }

  /// Up to how many entries' room `rewire(_:)` keeps in a node's
  /// `added` (see there).
  static var keptAddedCapacity: Int { 16 }

  /// Rewrites `node`'s dependencies after an evaluation that `rewires(_:)`:
  /// those read again in order first, then the others read. Returns where
  /// the new dependencies are, and how many were dropped: copied to
  /// `dropped`, which has room for every dependency past those matched
  /// in order, still retained. Under the node's claim.
  ///
  /// Allocates nothing: the ones kept move down in place, and the
  /// caller's room for the dropped ones is on its stack
  /// (`ComputedNode.finishRewiredUpdate`). Arrays for both, and a walk of
  /// `added` as an array, cost a value whose dependencies change at every
  /// write (kairo unstable with `Computed`) an allocation and four
  /// retains and releases a write.
  static func rewire(
    _ node: ComputedNode,
    droppingInto dropped: UnsafeMutablePointer<ComputedDependency>
  ) -> (added: Range<Int>, dropped: Int) {
    let matched = node.matched
    // Past the ones read in order: the old ones read again, out of order,
    // are kept (with the version now read; the retain of its entry in
    // `added` is given back), moved down over the ones dropped before
    // them (never past their own place); the others are dropped. Then
    // the new ones.
    var kept = matched
    var droppedCount = 0
    for old in matched..<node.dependencies.count {
      let dependency = node.dependencies[old]
      if let index = node.added.firstIndex(where: { $0.reads(dependency.source) }) {
        var again = dependency
        again.version = node.added[index].version
        node.dependencies[kept] = again
        kept += 1
        node.added[index].release()
        node.added.remove(at: index)
      } else {
        (dropped + droppedCount).initialize(to: dependency)
        droppedCount += 1
      }
    }
    node.dependencies.removeAll(from: kept)
    let start = kept
    for index in node.added.indices { node.dependencies.append(node.added[index]) }
    // Its room kept for the next evaluation that reads something new
    // when this one dropped a dependency (a value whose dependencies
    // change at every write allocated it each time), unless it grew
    // large. Not after a first evaluation, which adds every dependency:
    // each value would keep the room for good.
    node.added.removeAll(keepingCapacity: droppedCount != 0 && node.added.capacity <= keptAddedCapacity)
    return (start..<node.dependencies.count, droppedCount)
  }

  /// Records a read of `source` (kept alive by `owner`) at `version` into
  /// the innermost evaluation on this thread. Called when
  /// `trackingCount` is not 0, by every tracked read (a holder's
  /// `HolderStore.readUpdating(observedBy:_:)`; `Computed.value` and
  /// `ComputedBox.read(owner:in:)` through
  /// `recordComputedRead(of:owner:version:in:)`).
  ///
  /// The usual read, the next of the last evaluation's reads in order with
  /// no read out of order before it, only updates a version in place, and
  /// is inlined into the caller: a call and its checks cost about 35
  /// instructions per read. Any other read takes
  /// `recordReadInAnyOrder(of:owner:version:in:)`.
  @inlinable @inline(__always)
  static func recordRead(
    of source: ComputedSource,
    owner: AnyObject,
    version: UInt64,
    in state: UnsafeMutablePointer<DeliveryContext.State>
  ) {
    if !recordReadIfInOrder(of: source, version: version, in: state) {
      recordReadInAnyOrder(of: source, owner: owner, version: version, in: state)
    }
  }

  /// Records a read of `source` at `version` into the innermost
  /// evaluation on this thread if it is the next of the last evaluation's
  /// reads in order with no read out of order before it, and returns
  /// whether it was.
  @inlinable @inline(__always)
  static func recordReadIfInOrder(
    of source: ComputedSource,
    version: UInt64,
    in state: UnsafeMutablePointer<DeliveryContext.State>
  ) -> Bool {
    state.pointee.tracking.unsafelyUnwrapped._withUnsafeGuaranteedRef { node in
      node.added.isEmpty && recordReadInOrder(of: Unmanaged.passUnretained(source), version: version, into: node)
    }
  }

  /// `recordRead(of:owner:version:in:)` for a read of a computed value,
  /// `node`. A read that is not the next in order looks at the thread's
  /// `lastComputedRead` first: a computed value found there is recorded
  /// already in this evaluation, so the read records nothing (see
  /// `DeliveryContext.State.lastComputedRead`). So reads that alternate
  /// between a holder and a computed value (`for _ in 0..<20 { total +=
  /// flag.value ? a.value : b.value }`, `a` and `b` computed) each take
  /// one comparison, where each read of the computed value after the
  /// first went through `recordReadInAnyOrder(of:owner:version:in:)`
  /// (about 45 instructions; kairo unstable with `Computed`, 5,551 to
  /// 4,787 a write, callgrind). Set there only: a read in order costs
  /// what it did (setting it at every read cost kairo triangle 3.5% more
  /// instructions).
  @inlinable @inline(__always)
  static func recordComputedRead(
    of node: ComputedNode,
    owner: AnyObject,
    version: UInt64,
    in state: UnsafeMutablePointer<DeliveryContext.State>
  ) {
    if recordReadIfInOrder(of: node, version: version, in: state) { return }
    let address = Unmanaged.passUnretained(node).toOpaque()
    if state.pointee.lastComputedRead == address { return }
    recordReadInAnyOrder(of: node, owner: owner, version: version, in: state)
    state.pointee.lastComputedRead = address
  }

  /// Records a read of `read` at `version` into `node`'s evaluation if it
  /// is the next of the last evaluation's reads in order, and returns
  /// whether it was: only the version is updated in place.
  @inlinable @inline(__always)
  static func recordReadInOrder(
    of read: Unmanaged<ComputedSource>,
    version: UInt64,
    into node: ComputedNode
  ) -> Bool {
    let matched = node.matched
    guard matched < node.dependencies.count, node.dependencies[matched].reads(read) else { return false }
    node.dependencies[matched].version = version
    node.matched = matched + 1
    return true
  }

  /// A holder's published value (see `HolderStore`, "Reads inside
  /// evaluations without the lock") for a read by the innermost
  /// evaluation on this thread, recorded: when the read is the next of
  /// the last evaluation's reads in order and that one was of the holder
  /// `owner`, only its version is updated in place, as by
  /// `recordRead(of:owner:version:in:)`. A holder this evaluation read
  /// already, among the last `lookBack` matched in order, is taken too,
  /// recorded already (`readPublishedAgain(by:in:)`). Returns the bits and the
  /// dependency's source, or nil, having recorded nothing, for any other
  /// read, or when the value is not published now: the caller then reads
  /// under the holder's lock. Called when `trackingCount` is not 0. A
  /// read it takes becomes the thread's `lastReadOwner`, so that a read
  /// again of the holder takes `readAgain(by:in:)` (one that follows a
  /// read under the lock takes the lock too, and records nothing:
  /// `recordReadInAnyOrder(of:owner:version:in:)` finds it matched last).
  ///
  /// A dependency read through `owner` has as its source the registrar
  /// of the one store that `owner` reads through (see
  /// `HolderStore.read(observedBy:_:)`), so the published words read are
  /// that store's.
  @inlinable @inline(__always)
  static func readPublished(
    by owner: AnyObject,
    in state: UnsafeMutablePointer<DeliveryContext.State>
  ) -> (bits: UInt, source: Unmanaged<ComputedSource>)? {
    let owner = Unmanaged.passUnretained(owner).toOpaque()
    return state.pointee.tracking.unsafelyUnwrapped._withUnsafeGuaranteedRef { node in
      let matched = node.matched
      guard node.added.isEmpty, matched < node.dependencies.count,
        node.dependencies[matched].owner.toOpaque() == owner
      else { return readPublishedAgain(by: owner, in: state) }
      let source = node.dependencies[matched].source
      guard let (bits, version) = source._withUnsafeGuaranteedRef({ $0.readPublished() }) else { return nil }
      node.dependencies[matched].version = version
      node.matched = matched + 1
      state.pointee.lastReadOwner = UInt(bitPattern: owner)
      state.pointee.lastReadBits = bits
      return (bits, source)
    }
  }

  /// How far back from the last dependency matched in order
  /// `readPublishedAgain(by:in:)` looks.
  static var lookBack: Int { 8 }

  /// `readPublished(by:in:)` for a holder read already by this
  /// evaluation: one of the last `lookBack` dependencies it matched in
  /// order, recorded then, at the version of that first read, as any
  /// source read again is. So reads that alternate between a few
  /// sources (`for _ in 0..<20 { total += flag.value ? a.value : b.value
  /// }`) take no lock: each took the holder's at every read but the
  /// first. Further back, or never read, nil: the caller reads under the
  /// lock, and `recordReadInAnyOrder(of:owner:version:in:)` looks at the
  /// whole list. Out of line: reached only when the read is not the next
  /// in order.
  @usableFromInline
  static func readPublishedAgain(
    by owner: UnsafeMutableRawPointer,
    in state: UnsafeMutablePointer<DeliveryContext.State>
  ) -> (bits: UInt, source: Unmanaged<ComputedSource>)? {
    state.pointee.tracking.unsafelyUnwrapped._withUnsafeGuaranteedRef { node in
      let matched = node.matched
      var index = matched
      while index > Swift.max(matched - lookBack, 0) {
        index -= 1
        guard node.dependencies[index].owner.toOpaque() == owner else { continue }
        let source = node.dependencies[index].source
        guard let (bits, _) = source._withUnsafeGuaranteedRef({ $0.readPublished() }) else { return nil }
        state.pointee.lastReadOwner = UInt(bitPattern: owner)
        state.pointee.lastReadBits = bits
        return (bits, source)
      }
      return nil
    }
  }

  /// The bits the innermost evaluation on this thread took when it last
  /// read the holder `owner` through its words, if that holder is the
  /// one it read last that way, read again (`for _ in 0..<30 { total +=
  /// head.value }`), recorded already; else nil. On any thread, in an
  /// evaluation or not (outside one, `lastReadOwner` is 0: see
  /// `DeliveryContext.State.lastReadOwner`, which says why the bits of
  /// the first read are the ones to take).
  ///
  /// From the thread's state, not the node's dependencies: a read's loads
  /// each wait for the one before (thread, node, dependency list,
  /// dependency, source, stamp), and two fewer of them, and the call
  /// inlined, took 40% off a value that reads its head 30 times
  /// (throwaway program); the bits kept rather than loaded again from
  /// the holder's words (a seqlock's three loads, behind a fourth) took
  /// 4% more off kairo repeated with `Computed` (Performance.md, "A
  /// holder read again takes the bits of its read").
  @inlinable @inline(__always)
  static func readAgain(by owner: AnyObject, in state: UnsafeMutablePointer<DeliveryContext.State>) -> UInt? {
    guard state.pointee.lastReadOwner == UInt(bitPattern: Unmanaged.passUnretained(owner).toOpaque()) else {
      return nil
    }
    return state.pointee.lastReadBits
  }

  /// `recordRead(of:owner:version:in:)` for a read that may come out of
  /// order, or after one that did (a read in order after an earlier read
  /// out of order is matched in place too).
  @usableFromInline
  static func recordReadInAnyOrder(
    of source: ComputedSource,
    owner: AnyObject,
    version: UInt64,
    in state: UnsafeMutablePointer<DeliveryContext.State>
  ) {
    let read = Unmanaged.passUnretained(source)
    state.pointee.tracking.unsafelyUnwrapped._withUnsafeGuaranteedRef { node in
      // The source matched last, read again (`for _ in 0..<30 { total +=
      // head.value }`): recorded already, at the version of its first
      // read, as any source read again is. First, so that such a read
      // looks at one entry rather than at each list in turn.
      let matched = node.matched
      if matched != 0, node.dependencies[matched - 1].reads(read) { return }
      // Read again after an earlier read out of order: already in
      // `added` (matching it in place too would list it twice).
      if !node.added.isEmpty, node.added.contains(where: { $0.reads(read) }) { return }
      if recordReadInOrder(of: read, version: version, into: node) { return }
      if (0..<node.matched).contains(where: { node.dependencies[$0].reads(read) }) { return }
      node.added.append(.retained(source, owner: owner, version: version))
    }
  }
}
