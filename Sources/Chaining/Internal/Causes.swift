import _ChainingThreadContext

// MARK: - Causes that travel

/// Pushed first when a node of causes is installed, so that the buffer is
/// not empty then and `isCaused(by:)` keeps its one-compare exit for a
/// delivery with no cause at all: a key of the form of a gate's id (odd)
/// that no gate is given (the first is 17, see `DeliveryGate.id`), so the
/// search never finds it.
let installedMark: UInt = 1

/// One link of a persistent list of causes: the gates' ids a capture
/// added on top of its parent's, outermost first. Immutable once made,
/// shared by every value captured on the same path (see
/// `DeliveryContext.capture()`).
@usableFromInline
final class CauseNode {
  /// The causes before these; nil at the root.
  private(set) var parent: CauseNode?
  /// This link's causes: their gates' ids (`DeliveryGate.id`).
  let ids: [UInt]
  /// How many causes the list has, this link's and its parents'.
  let count: Int
  /// The causes as a table, when there are more than
  /// `DeliveryContext.scanned`: the parent's, grown in place when the
  /// parent is its last node and it is not frozen, so that making a link
  /// costs O(its ids) and `contains` O(1), however long the path.
  let path: CausePath?
  /// The buffer's count when the capturing thread made it: this link
  /// describes the buffer's causes `end - ids.count ..< end` on top of
  /// the installed ones (for that thread's `memo` only).
  let end: Int

  init(parent: CauseNode?, ids: [UInt], end: Int) {
    // What the path needs is read before `parent` and `ids` are stored,
    // their last uses: they move into the node with no retain of their
    // own, and the path comes back owned. In the other order, the parent,
    // the ids and the path were each retained again and released: 8% of
    // cellx's time (perf).
    let parentCount = parent?.count ?? 0
    let count = parentCount + ids.count
    path = count > DeliveryContext.scanned ? Self.path(extending: parent, parentCount: parentCount, with: ids) : nil
    self.count = count
    self.end = end
    self.parent = parent
    self.ids = ids
  }

  /// The table of a node of more than `DeliveryContext.scanned` causes
  /// on `parent`, the node's own `ids` added (see `path`).
  private static func path(extending parent: CauseNode?, parentCount: Int, with ids: [UInt]) -> CausePath {
    let path: CausePath
    if let parentPath = parent?.path {
      path =
        !parentPath.frozen && parentPath.tip == parentCount
        ? parentPath : CausePath(base: parentPath, limit: parentCount)
    } else {
      path = CausePath(base: nil, limit: 0)
      path.append(parent?.all ?? [])
    }
    path.append(ids)
    return path
  }

  /// Whether the gate whose id is `id` is one of the causes.
  func contains(id: UInt) -> Bool {
    if let path { return path.contains(id, below: count) }
    var node: CauseNode? = self
    while let current = node {
      if current.ids.contains(id) { return true }
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

  /// All the causes' ids, outermost first.
  var all: [UInt] {
    var links: [CauseNode] = []
    var node: CauseNode? = self
    while let current = node {
      links.append(current)
      node = current.parent
    }
    return links.reversed().flatMap(\.ids)
  }
}

/// The chains a queued value had passed through when it was queued: their
/// gates' ids (`DeliveryGate.id`), which keep no gate alive and are never
/// given to another gate.
///
/// @unchecked: created by the queuing thread, read once by the delivering
/// thread after the hand-over through a lock.
@usableFromInline
struct Causes: @unchecked Swift.Sendable {
  /// The only cause, when there is exactly one, or the first of two; then
  /// `copied` and `node` are empty. 0 when there is none.
  @usableFromInline let single: UInt
  /// The second of exactly two causes, kept without allocating; or 0.
  @usableFromInline let second: UInt
  /// A few causes (up to `DeliveryContext.scanned`; a capture keeps one
  /// or two in `single` and `second`), outermost first, captured with
  /// none installed.
  @usableFromInline let copied: [UInt]
  /// The causes, when there are more, or they came installed.
  @usableFromInline let node: CauseNode?

  /// No cause.
  @usableFromInline static var none: Causes { Causes(copied: []) }

  /// The causes whose ids are `ids`, outermost first: copied, or a node
  /// when there are more than `DeliveryContext.scanned`.
  @usableFromInline
  init(ids: [UInt]) {
    if ids.count > DeliveryContext.scanned {
      self.init(node: CauseNode(parent: nil, ids: ids, end: ids.count))
    } else {
      self.init(copied: ids)
    }
  }

  @usableFromInline
  init(single: UInt, second: UInt = 0) {
    self.single = single
    self.second = second
    copied = []
    node = nil
  }

  @usableFromInline
  init(copied: [UInt]) {
    single = 0
    second = 0
    self.copied = copied
    node = nil
  }

  @usableFromInline
  init(node: CauseNode) {
    single = 0
    second = 0
    copied = []
    self.node = node
  }

  /// The causes' ids, outermost first.
  var ids: [UInt] {
    if single != 0 { return second != 0 ? [single, second] : [single] }
    return node?.all ?? copied
  }
}

/// The causes of deep paths as one table of gates' ids, each with the
/// position it was first added at: a node of `count` causes on the path
/// has as causes the keys at positions below `count`, so every node of a
/// path that grows link by link shares one table, and adding a link costs
/// O(its gates), however long the path (`CauseNode.path`).
///
/// A node made from a node that is not the path's last (its `count` is
/// below `tip`), or from a path that is `frozen`, starts a path of its own
/// on top of it (`base`, of which it sees the positions below `baseLimit`):
/// the table only ever grows at its tip. Positions at or past a node's
/// count, of links made since on other branches, are not its causes.
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
  #if CHAINING_INTERNAL_CHECKS
  /// The making thread's `DeliveryContext.runner`: only it grows the path.
  let maker = DeliveryContext.current.runner
  #endif

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

  /// Adds `ids` at the next positions (an id already there keeps its
  /// first).
  func append(_ ids: [UInt]) {
    #if CHAINING_INTERNAL_CHECKS
    precondition(!frozen, "CausePath: grown once frozen")
    precondition(
      DeliveryContext.current.runner == maker,
      "CausePath: grown by a thread that did not make it"
    )
    #endif
    reserve(ids.count)
    for id in ids {
      table.insert(id, at: tip)
      tip += 1
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

  /// Whether the gate whose id is `key` is at a position below `count`,
  /// here or in the bases.
  func contains(_ key: UInt, below count: Int) -> Bool {
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
