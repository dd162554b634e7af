import Observation

// MARK: - ComputedGraph

/// The graph of computed values: their marks and versions, and the links
/// between each source (a holder, or a computed value) and the computed
/// values that read it on their last evaluation, all under one lock.
///
/// Push, then pull. A changed holder marks the computed values that read
/// it `dirty`, and those mark what reads them `check`; nothing is
/// evaluated then. A read updates the value: `check` asks each dependency
/// for its version (updating a computed one first) and evaluates only if
/// one of them changed; `dirty` evaluates. An evaluation equal to the
/// previous one keeps the version, so what reads it is not evaluated.
///
/// ### Why one lock
/// The marking walk goes from a source through every computed value that
/// can see the change, and each list it walks holds its nodes unretained:
/// a retain per node on every write cost more than the walk itself, and a
/// weak reference moves every retain and release of its object to the
/// runtime's slow path (40% of kairo's diamond, measured). Under one lock
/// an unretained entry is safe: a node leaves every list it is in, under
/// that lock, in its `deinit`, before any of its stored properties goes;
/// so while the walk sees it, the node and what it owns are still there.
/// The walk retains what it must use after unlocking (the Observation
/// registrar, a chain's flush), which its node owns: retaining those is
/// safe for the same reason, where retaining the node (which may already
/// be waiting in its `deinit` for this lock) would not be.
///
/// The lock is held for marks, claims and list changes only, never while
/// user code runs: an evaluation runs under its node's claim
/// (`ComputedNode.updatingThread`), and what the walk must tell runs
/// after unlocking (`Effect`). Threads that read clean computed values
/// take it briefly, one at a time; `ComputedTests` (8 readers, thread
/// sanitizer) check it, and `Verification/Computed.pml` models the marks
/// and the claim.
enum ComputedGraph {
  /// The lock, with the marking walk's stack: reused by every walk, so a
  /// walk allocates nothing once the graph's widest walk has run. Never
  /// freed: unmanaged, so that taking it retains nothing.
  private static let lock = Unmanaged.passRetained(Protected(NodeList()))

  /// Runs `body` under the lock, with the walk's stack.
  @inline(__always)
  static func withLock<Result>(_ body: (inout NodeList) -> Result) -> Result {
    lock._withUnsafeGuaranteedRef { $0.withLock(body) }
  }

  /// Takes the lock without a closure (see `Protected.manualLock()`).
  @inline(__always)
  static func manualLock() {
    lock._withUnsafeGuaranteedRef { $0.manualLock() }
  }

  /// Gives back the lock `manualLock()` took.
  @inline(__always)
  static func manualUnlock() {
    lock._withUnsafeGuaranteedRef { $0.manualUnlock() }
  }

  /// What a walk must do after unlocking, for one node it marked: tell
  /// Observation, or refresh the value's chains. Retained by the entry.
  enum Effect {
    case observation(Unmanaged<ComputedObservation>)
    case refresh(Unmanaged<WaveFlush>)
  }

  /// Marks what read `source` on its last evaluation: its computed
  /// dependents `dirty`, theirs `check`. Called by a holder's write, in
  /// the write's wave, after its delivery; runs the marks' effects after
  /// unlocking.
  static func changed(_ source: ComputedSource) {
    let state = DeliveryContext.current.state
    let start = state.pointee.computedEffects.count
    withLock { stack in
      for index in source.dependents.indices {
        source.dependents[index]._withUnsafeGuaranteedRef {
          $0.notify(.dirty, pushingTo: &stack, effects: &state.pointee.computedEffects)
        }
      }
      while let next = stack.popLast() {
        next._withUnsafeGuaranteedRef { $0.notify(.check, pushingTo: &stack, effects: &state.pointee.computedEffects) }
      }
    }
    runEffects(from: start, in: state)
  }

  /// Runs the effects a walk collected from `start` on, then drops them.
  /// An effect may write a holder (an `onChange` does), whose walk adds
  /// and runs its own effects past these before returning.
  private static func runEffects(from start: Int, in state: UnsafeMutablePointer<DeliveryContext.State>) {
    let end = state.pointee.computedEffects.count
    if end == start { return }
    for index in start..<end {
      switch state.pointee.computedEffects[index] {
      case .observation(let observation):
        observation._withUnsafeGuaranteedRef { $0.changed() }
        observation.release()
      case .refresh(let flush):
        flush._withUnsafeGuaranteedRef {
          $0.gate.deliver($0, to: ComputedNode.refresh, dropsEchoes: false, in: .current)
        }
        flush.release()
      }
    }
    state.pointee.computedEffects.removeSubrange(start..<end)
  }
}

// MARK: - ComputedSource

/// What a computed value can depend on: a holder (its `HolderObservation`)
/// or another computed value (its `ComputedNode`).
@usableFromInline
class ComputedSource: @unchecked Swift.Sendable {
  // @unchecked: `dependents` is guarded by `ComputedGraph.lock`.

  /// The computed values that read this source on their last evaluation,
  /// unretained (see `ComputedGraph`). Under `ComputedGraph.lock`.
  @exclusivity(unchecked) final var dependents = NodeList()

  deinit {
    dependents.deallocate()
  }

  /// The version now, brought up to date when it is a computed value, on
  /// the thread `runner` (the caller's `DeliveryContext.runner`).
  func currentVersion(runner: Int) -> UInt64 { fatalError("ComputedSource.currentVersion: abstract") }

  /// The version now if it is known without an evaluation, else nil.
  /// Under `ComputedGraph.lock`.
  func versionIfKnown() -> UInt64? { fatalError("ComputedSource.versionIfKnown: abstract") }

  /// The sender core whose level what reads this source ranks above (see
  /// `RankGraph`).
  var rankNode: any Ranked { fatalError("ComputedSource.rankNode: abstract") }

  /// Called under `ComputedGraph.lock` after `dependents` changed.
  func dependentsChanged() {}

  /// Adds `node`. Under `ComputedGraph.lock`.
  final func addDependent(_ node: ComputedNode) {
    dependents.append(Unmanaged.passUnretained(node))
    dependentsChanged()
  }

  /// Removes `node`. Under `ComputedGraph.lock`.
  final func removeDependent(_ node: ComputedNode) {
    let target = Unmanaged.passUnretained(node).toOpaque()
    if let index = dependents.indices.last(where: { dependents[$0].toOpaque() == target }) {
      dependents.swapRemove(at: index)
    }
    dependentsChanged()
  }
}

/// A dependency read by the last evaluation: the source; the object
/// that keeps it alive (the holder that owns a holder's store, or the
/// `Computed` read); and the source's version then.
///
/// Both references are retained by hand (`retained(_:owner:version:)`
/// and `release()`), so that the struct is trivial: walking and
/// rewriting a node's list then retains nothing, where strong references
/// cost a retain and a release per dependency per check, a third of
/// kairo's diamond. A dependency is retained while it is in a node's
/// `dependencies` or in an evaluation's `ComputedNode.added`, and
/// released when dropped from either (after unlocking: a deinit may run
/// user code) or in the node's `deinit`.
struct ComputedDependency {
  let source: Unmanaged<ComputedSource>
  let owner: Unmanaged<AnyObject>
  var version: UInt64

  static func retained(_ source: ComputedSource, owner: AnyObject, version: UInt64) -> ComputedDependency {
    ComputedDependency(source: .passRetained(source), owner: .passRetained(owner), version: version)
  }

  func release() {
    source.release()
    owner.release()
  }

  /// Whether this is a dependency on `other`.
  func reads(_ other: Unmanaged<ComputedSource>) -> Bool {
    source.toOpaque() == other.toOpaque()
  }

  /// Calls `body` with the source, which this dependency keeps alive.
  @inline(__always)
  func withSource<Result>(_ body: (ComputedSource) -> Result) -> Result {
    source._withUnsafeGuaranteedRef(body)
  }
}

/// A list of trivial elements in a buffer of its own, not an array: a
/// node's dependencies, a source's dependents, the marking walk's stack.
/// Walking an array stored in a class retains and releases its buffer on
/// every walk (the optimizer cannot see that the walk's calls leave it
/// alone), and every write and every check walks these. The elements
/// need no release, so growing is a plain copy and dropping one frees
/// nothing. Its owner frees the buffer (`deallocate()`).
struct TrivialList<Element: BitwiseCopyable> {
  private var base: UnsafeMutablePointer<Element>?
  private(set) var count = 0
  private var capacity = 0

  subscript(index: Int) -> Element {
    get { base.unsafelyUnwrapped[index] }
    nonmutating set { base.unsafelyUnwrapped[index] = newValue }
  }

  var indices: Range<Int> { 0..<count }

  mutating func append(_ element: Element) {
    if count == capacity {
      let grown = UnsafeMutablePointer<Element>.allocate(capacity: Swift.max(4, capacity * 2))
      if let base {
        grown.moveInitialize(from: base, count: count)
        base.deallocate()
      }
      base = grown
      capacity = Swift.max(4, capacity * 2)
    }
    (base.unsafelyUnwrapped + count).initialize(to: element)
    count += 1
  }

  mutating func popLast() -> Element? {
    if count == 0 { return nil }
    count -= 1
    return base.unsafelyUnwrapped[count]
  }

  /// Drops the elements from `start` on.
  mutating func removeAll(from start: Int) {
    count = start
  }

  /// Drops the element at `index`, moving the last one into its place.
  mutating func swapRemove(at index: Int) {
    count -= 1
    base.unsafelyUnwrapped[index] = base.unsafelyUnwrapped[count]
  }

  /// Frees the buffer.
  func deallocate() {
    base?.deallocate()
  }
}

/// Nodes, unretained (see `ComputedGraph`).
typealias NodeList = TrivialList<Unmanaged<ComputedNode>>

/// A node's dependencies, retained by hand (see `ComputedDependency`).
typealias DependencyList = TrivialList<ComputedDependency>

// MARK: - ComputedNode

/// The state of a computed value that is not generic: its mark, version,
/// dependencies and dependents. Subclassed once, by `ComputedBox`, which
/// holds the closure and the value.
class ComputedNode: ComputedSource, @unchecked Swift.Sendable {
  // @unchecked: the marks, versions, claim and lists are guarded by
  // `ComputedGraph.lock`; `dependencies` and the value's slots by the
  // claim (`updatingThread`).

  enum Mark: UInt8 { case clean, check, dirty }

  /// What the cycle check's message calls this value.
  let name: String
  /// Tells Observation of changes; the walk retains it (see `ComputedGraph`).
  let observation = ComputedObservation.make()

  // Under `ComputedGraph.lock`:
  @exclusivity(unchecked) final var mark = Mark.dirty
  /// Incremented by every evaluation that changed the value.
  @exclusivity(unchecked) final var version: UInt64 = 0
  /// Incremented by every mark: an update that started before one leaves
  /// the mark it set.
  @exclusivity(unchecked) final var notifications: UInt64 = 0
  /// The claim: the thread (its `DeliveryContext.runner`) updating the
  /// value, or 0. One update at a time: another thread that finds the
  /// node claimed waits for it (`waitForUpdate()`); the same thread
  /// finding it claimed is a cycle.
  @exclusivity(unchecked) final var updatingThread = 0
  /// Whether a thread waits for the claim to be given back.
  @exclusivity(unchecked) final var hasWaiters = false
  /// Whether the value was read outside an evaluation since Observation
  /// was last told of a change: only then is it told of the next.
  @exclusivity(unchecked) final var observed = false
  /// The flush of the refreshes of the value's chains, made when the
  /// first chain subscribes; the walk retains it.
  @exclusivity(unchecked) final var flush: WaveFlush?

  /// The dependencies of the last evaluation. Under the claim, or in
  /// `deinit`.
  @exclusivity(unchecked) final var dependencies = DependencyList()

  // Under the claim, while this node updates on the claiming thread (kept
  // here rather than in arrays of the thread's, whose appends cost a
  // uniqueness check and a retain each):
  /// The node updating on this thread when this one began.
  @exclusivity(unchecked) final var updatingParent: Unmanaged<ComputedNode>?
  /// The node evaluating on this thread when this one's evaluation began.
  @exclusivity(unchecked) final var trackingParent: Unmanaged<ComputedNode>?
  /// How many of the dependencies the evaluation read again, in order.
  @exclusivity(unchecked) final var matched = 0
  /// The sources the evaluation read that were not next in that order,
  /// retained.
  @exclusivity(unchecked) final var added: [ComputedDependency] = []

  init(name: String) {
    self.name = name
  }

  deinit {
    // See `ComputedGraph`: after this, no walk sees the node.
    ComputedGraph.withLock { _ in
      for index in dependencies.indices { dependencies[index].withSource { $0.removeDependent(self) } }
    }
    for index in dependencies.indices { dependencies[index].release() }
    dependencies.deallocate()
  }

  /// Evaluates the closure, its reads tracked, and keeps the result
  /// aside; returns whether it differs from the value. Under the claim.
  func evaluate() -> Bool { fatalError("ComputedNode.evaluate: abstract") }

  /// Makes the result kept aside the value, and keeps the old value aside
  /// in its place. Under the claim and the graph's lock.
  func commit() { fatalError("ComputedNode.commit: abstract") }

  /// Releases what `evaluate` or `commit` kept aside. Under the claim,
  /// after unlocking the graph's lock: a deinit may run user code.
  func dropEvaluated() { fatalError("ComputedNode.dropEvaluated: abstract") }

  /// Whether `dropEvaluated()` has something to release, once the lock
  /// is given back; a value that needs no release (an `Int`) is dropped
  /// here, under the lock, which then need not be given back and taken
  /// again. Under the claim and the lock.
  func keepsEvaluated() -> Bool { fatalError("ComputedNode.keepsEvaluated: abstract") }

  /// Marks this node, under `ComputedGraph.lock`: `dirty` for a changed
  /// holder it read, `check` for a computed value it read that may have
  /// changed. Pushes its dependents to be marked `check`, and adds the
  /// effects to run after unlocking.
  ///
  /// The dependents are pushed when this node's mark changes, or while it
  /// updates (a dependent that read it meanwhile may be clean): otherwise
  /// they were pushed when it left `clean`, and have not read it since,
  /// as reading it would have brought it back to `clean`. So a write marks
  /// each node of a graph at most twice, not once per path to it.
  @inline(__always)
  final func notify(
    _ new: Mark,
    pushingTo stack: inout NodeList,
    effects: inout [ComputedGraph.Effect]
  ) {
    notifications &+= 1
    let old = mark
    if new == .dirty || old == .clean { mark = new }
    if observed {
      observed = false
      effects.append(.observation(Unmanaged.passRetained(observation)))
    }
    guard mark != old || updatingThread != 0 else { return }
    if let flush { effects.append(.refresh(Unmanaged.passRetained(flush))) }
    for index in dependents.indices { stack.append(dependents[index]) }
  }

  /// The run of a refresh effect under the flush's gate: at the end of
  /// the wave, or at once outside one.
  static func refresh(_ flush: WaveFlush) {
    let context = DeliveryContext.current
    if context.isInWave {
      flush.changed(in: context)
    } else {
      flush.sendLatest()
    }
  }

  override func currentVersion(runner: Int) -> UInt64 {
    let wakes = lockUpdated(runner: runner)
    let version = self.version
    unlock(waking: wakes)
    return version
  }

  /// Takes the graph's lock and brings the value up to date on the thread
  /// `runner`, so that the caller reads what it needs under the lock and
  /// then calls `unlock(waking:)` with the result. By hand rather than
  /// with a closure, for `ComputedBox`, whose closures would capture a
  /// generic value (see `ComputedBox.current(version:)`).
  @inline(__always)
  final func lockUpdated(runner: Int) -> Bool {
    ComputedGraph.manualLock()
    return mark == .clean ? false : updateLocked(runner: runner)
  }

  /// Gives back the lock `lockUpdated(runner:)` took, and wakes the
  /// threads that wait for the claim if `wakes`.
  @inline(__always)
  final func unlock(waking wakes: Bool) {
    ComputedGraph.manualUnlock()
    if wakes { wakeWaiters() }
  }

  override func versionIfKnown() -> UInt64? {
    mark == .clean ? version : nil
  }

  /// Brings the value up to date, with the graph's lock held on entry
  /// and on return, so that the caller reads the value and version this
  /// update left. Returns whether threads wait for the claim: the caller
  /// wakes them (`wakeWaiters()`) after unlocking.
  ///
  /// Claims the node, then, unlocked: a `check` asks each dependency for
  /// its version, in the order of the last evaluation, and evaluates at
  /// the first that moved; a `dirty` evaluates. The mark becomes `clean`
  /// unless a mark came meanwhile (then the next read updates again), or
  /// a dependency first read by this evaluation changed before this node
  /// was its dependent (that write told no one). A node another thread
  /// has claimed is waited for, then looked at again.
  final func updateLocked(runner: Int) -> Bool {
    while mark != .clean {
      if updatingThread == runner { cycle() }
      if updatingThread != 0 {
        waitForUpdate()
        continue
      }
      updatingThread = runner
      let seen = notifications
      let found = mark
      ComputedGraph.manualUnlock()
      let (stale, changed, added, dropped) = updateClaimed(found, runner: runner)
      ComputedGraph.manualLock()
      for index in added { dependencies[index].withSource { $0.addDependent(self) } }
      for dependency in dropped { dependency.withSource { $0.removeDependent(self) } }
      if changed {
        commit()
        version &+= 1
      }
      if notifications == seen {
        mark = .clean
        for index in added where dependencies[index].withSource({ $0.versionIfKnown() }) != dependencies[index].version
        {
          mark = .check
          break
        }
      }
      if stale, keepsEvaluated() || !dropped.isEmpty || !added.isEmpty {
        // Still claimed: readers of the clean value go on, and no other
        // thread touches the slots or the dependencies.
        ComputedGraph.manualUnlock()
        dropEvaluated()
        for dependency in dropped { dependency.release() }
        for index in added { dependencies[index].withSource { link($0) } }
        ComputedGraph.manualLock()
      }
      updatingThread = 0
      let wakes = hasWaiters
      hasWaiters = false
      return wakes
    }
    return false
  }

  /// The unlocked part of `updateLocked(runner:)`, under the claim:
  /// whether it evaluated, whether the value changed, where the new
  /// dependencies are, and the dropped ones.
  private func updateClaimed(_ found: Mark, runner: Int) -> (Bool, Bool, Range<Int>, [ComputedDependency]) {
    // The runner is the address of the thread's state.
    let state = UnsafeMutablePointer<DeliveryContext.State>(bitPattern: runner).unsafelyUnwrapped
    updatingParent = state.pointee.updating
    state.pointee.updating = Unmanaged.passUnretained(self)
    defer { state.pointee.updating = updatingParent }
    var stale = found == .dirty
    if !stale {
      for index in dependencies.indices {
        let dependency = dependencies[index]
        if dependency.withSource({ $0.currentVersion(runner: runner) }) != dependency.version {
          stale = true
          break
        }
      }
    }
    if !stale { return (false, false, dependencies.count..<dependencies.count, []) }
    let (changed, added, dropped) = Tracking.evaluate(self, in: state)
    return (true, changed, added, dropped)
  }

  /// Waits, with the graph's lock held on entry and on return, until the
  /// thread that claimed the node gives the claim back.
  ///
  /// The wait checks the claim under the graph's lock inside its stripe's
  /// lock, and sets `hasWaiters` when it sleeps; the thread that gives
  /// the claim back reads `hasWaiters` under the graph's lock and wakes
  /// the stripe after unlocking it. So a claim given back after the
  /// check finds `hasWaiters` set and wakes this thread, or is seen by
  /// the check: no wake is lost (`Verification/Computed.pml`, whose
  /// `MUTANT_CHECK_OUTSIDE_STRIPE`, the check made before the stripe's
  /// lock, leaves a reader asleep).
  /// Nothing takes a stripe of `ParkingLot.shared` with the graph's lock
  /// held, so the nesting cannot deadlock.
  private func waitForUpdate() {
    hasWaiters = true
    ComputedGraph.manualUnlock()
    ParkingLot.shared.wait(for: self) {
      ComputedGraph.withLock { _ in
        if updatingThread == 0 { return true }
        hasWaiters = true
        return false
      }
    }
    ComputedGraph.manualLock()
  }

  /// The rank nodes of the dependencies of the last evaluation, read
  /// when no update holds the claim (an update that is under way may
  /// change them): those it adds later, it links itself.
  final func dependencyRankNodes() -> [any Ranked] {
    let runner = DeliveryContext.current.runner
    ComputedGraph.manualLock()
    precondition(
      updatingThread != runner,
      "Computed.chain(): a chain subscribed to \(name) from inside its own evaluation"
    )
    while updatingThread != 0 { waitForUpdate() }
    let nodes = dependencies.indices.map { dependencies[$0].withSource { $0.rankNode } }
    ComputedGraph.manualUnlock()
    return nodes
  }

  /// Wakes the threads waiting for the claim, after unlocking.
  final func wakeWaiters() {
    ParkingLot.shared.withLock(self) { ParkingLot.shared.wakeAll(self) }
  }

  /// Links a new dependency's rank to this value's (see `RankGraph`):
  /// to its flush when it has chains, and to its core, so that what reads
  /// this value ranks above what this value reads.
  func link(_ source: ComputedSource) {
    fatalError("ComputedNode.link: abstract")
  }

  /// Stops with a message naming the cycle through this node: it is
  /// being updated on this thread, which reads it again.
  func cycle() -> Never {
    var names = [name]
    var next = DeliveryContext.current.state.pointee.updating
    while let node = next?.takeUnretainedValue() {
      names.append(node.name)
      if node === self { break }
      next = node.updatingParent
    }
    names.reverse()
    fatalError("Computed.value: a computed value reads itself: \(names.joined(separator: " -> "))")
  }
}

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
  /// Runs `node`'s evaluation with its reads tracked, and rewrites its
  /// dependencies: those read again in order first, then the others read.
  /// Returns whether the value changed, where the new dependencies are,
  /// and the dropped ones (still retained). Under the node's claim.
  static func evaluate(
    _ node: ComputedNode,
    in state: UnsafeMutablePointer<DeliveryContext.State>
  ) -> (changed: Bool, added: Range<Int>, dropped: [ComputedDependency]) {
    node.trackingParent = state.pointee.tracking
    node.matched = 0
    state.pointee.tracking = Unmanaged.passUnretained(node)
    state.pointee.trackingCount += 1
    let changed = node.evaluate()
    state.pointee.trackingCount -= 1
    state.pointee.tracking = node.trackingParent
    let matched = node.matched
    let old = node.dependencies.count
    if matched == old, node.added.isEmpty { return (changed, old..<old, []) }
    // Past the ones read in order: the old ones read again, out of order,
    // are kept (with the version now read; the retain of its entry in
    // `added` is given back); the others are dropped. Then the new ones.
    var dropped: [ComputedDependency] = []
    var kept: [ComputedDependency] = []
    var new = node.added
    node.added = []
    for old in matched..<node.dependencies.count {
      let dependency = node.dependencies[old]
      if let index = new.firstIndex(where: { $0.reads(dependency.source) }) {
        var again = dependency
        again.version = new[index].version
        kept.append(again)
        new[index].release()
        new.remove(at: index)
      } else {
        dropped.append(dependency)
      }
    }
    node.dependencies.removeAll(from: matched)
    for dependency in kept { node.dependencies.append(dependency) }
    let start = node.dependencies.count
    for dependency in new { node.dependencies.append(dependency) }
    return (changed, start..<node.dependencies.count, dropped)
  }

  /// Records a read of `source` (kept alive by `owner`) at `version` into
  /// the innermost evaluation on this thread. Called when
  /// `trackingCount` is not 0.
  @usableFromInline
  static func recordRead(of source: ComputedSource, owner: AnyObject, version: UInt64) {
    recordRead(of: source, owner: owner, version: version, in: DeliveryContext.current.state)
  }

  /// `recordRead(of:owner:version:)`, with this thread's state.
  @usableFromInline
  static func recordRead(
    of source: ComputedSource,
    owner: AnyObject,
    version: UInt64,
    in state: UnsafeMutablePointer<DeliveryContext.State>
  ) {
    let read = Unmanaged.passUnretained(source)
    state.pointee.tracking.unsafelyUnwrapped._withUnsafeGuaranteedRef { node in
      let matched = node.matched
      // Read again after an earlier read out of order: already in
      // `added` (matching it in place too would list it twice).
      if !node.added.isEmpty, node.added.contains(where: { $0.reads(read) }) { return }
      if matched < node.dependencies.count, node.dependencies[matched].reads(read) {
        node.dependencies[matched].version = version
        node.matched = matched + 1
        return
      }
      if (0..<matched).contains(where: { node.dependencies[$0].reads(read) }) { return }
      node.added.append(.retained(source, owner: owner, version: version))
    }
  }
}

// MARK: - ComputedObservation

/// A computed value's Observation registrar, on systems with Observation
/// (iOS 17, macOS 14 and later): a ``RegisteringComputedObservation``;
/// before them, an object that tells nobody. Reads and changes name this
/// object, so that the walk can retain it without the value (see
/// `ComputedGraph`). A tracking is told by the registrar, whatever the
/// subject.
class ComputedObservation: @unchecked Swift.Sendable {
  // @unchecked: no state here; the subclass's registrar is `Swift.Sendable`.

  /// A new object: with a registrar where the system has Observation.
  static func make() -> ComputedObservation {
    if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
      return RegisteringComputedObservation()
    }
    return ComputedObservation()
  }

  /// Registers a read with the tracking in progress on this thread.
  func access() {}

  /// Tells the trackings that read the value that it changed.
  func changed() {}
}

/// A ``ComputedObservation`` with Observation's registrar.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class RegisteringComputedObservation: ComputedObservation, Observable, @unchecked Swift.Sendable {
  // @unchecked: the registrar is `Swift.Sendable`, and `value` is never
  // stored.

  let registrar = ObservationRegistrar()
  /// What reads and changes name.
  var value: Void { () }
  /// `\.value`, made once: a key path literal is looked up on every use.
  /// Unchecked: a key path is immutable.
  nonisolated(unsafe) static let keyPath: KeyPath<RegisteringComputedObservation, Void> = \.value

  override func access() {
    registrar.access(self, keyPath: Self.keyPath)
  }

  override func changed() {
    registrar.willSet(self, keyPath: Self.keyPath)
    registrar.didSet(self, keyPath: Self.keyPath)
  }
}
