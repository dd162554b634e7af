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
/// The lock is held for marks, claims, checks of the dependencies'
/// versions and list changes only, never while user code runs: an
/// evaluation runs under its node's claim
/// (`ComputedNode.updatingThread`), and what the walk must tell runs
/// after unlocking (`Effect`), but for a refresh of a value's chains
/// that only joins the thread's wave (`ComputedNode.notify`), which runs
/// nothing then. Threads that read clean computed values
/// take it briefly, one at a time; `ComputedTests` (8 readers, thread
/// sanitizer) check it, and `Verification/Computed.pml` models the marks
/// and the claim.
enum ComputedGraph {
  /// The lock, with the marking walk's stack: reused by every walk, so a
  /// walk allocates nothing once the graph's widest walk has run (see
  /// `GraphLock`, for how it is given back). Never freed: unmanaged, so
  /// that taking it retains nothing. Each thread's state keeps it too, for
  /// the updates (`DeliveryContext.State.graphLock`): on Linux, each
  /// function that reaches a global made on first use calls the runtime's
  /// `swift_once`.
  static let lock = Unmanaged.passRetained(GraphLock())

  /// Runs `body` under the lock, with the walk's stack.
  @inline(__always)
  static func withLock<Result>(_ body: (inout NodeList) -> Result) -> Result {
    lock._withUnsafeGuaranteedRef { $0.withLock(body) }
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
    // A write outside every chain's run, in a wave (the common case): the
    // refreshes join the wave at once, with no effect to run after
    // unlocking (see `ComputedNode.notify`).
    let wave =
      DeliveryContext(state: state).isInWave && state.pointee.count == 0 && state.pointee.base == nil
      ? state : nil
    // Through the thread's reference: reaching the static calls
    // `swift_once` on Linux (see `DeliveryContext.State.graphLock`).
    state.pointee.graphLock._withUnsafeGuaranteedRef {
      $0.withLock(runner: Int(bitPattern: state)) { stack in
        for index in source.dependents.indices {
          source.dependents[index]._withUnsafeGuaranteedRef {
            $0.notify(.dirty, pushingTo: &stack, effects: &state.pointee.computedEffects, wave: wave)
          }
        }
        while let next = stack.popLast() {
          next._withUnsafeGuaranteedRef {
            $0.notify(.check, pushingTo: &stack, effects: &state.pointee.computedEffects, wave: wave)
          }
        }
      }
    }
    if state.pointee.computedEffects.count != start { runEffects(from: start, in: state) }
  }

  /// Runs the effects a walk collected from `start` on, then drops them.
  /// An effect may write a holder (an `onChange` does), whose walk adds
  /// and runs its own effects past these before returning.
  private static func runEffects(from start: Int, in state: UnsafeMutablePointer<DeliveryContext.State>) {
    let end = state.pointee.computedEffects.count
    for index in start..<end {
      switch state.pointee.computedEffects[index] {
      case .observation(let observation):
        observation._withUnsafeGuaranteedRef { $0.changed() }
        observation.release()
      case .refresh(let flush):
        // A write made inside a chain's run, or outside a wave: through
        // the flush's gate (the common case joined the wave in `changed`).
        flush._withUnsafeGuaranteedRef {
          $0.gate.deliver($0, to: ComputedNode.refresh, dropsEchoes: false, in: .current)
        }
        flush.release()
      }
    }
    state.pointee.computedEffects.removeAll(from: start)
  }
}

// MARK: - ComputedSource

/// What a computed value can depend on: a holder (its `HolderObservation`)
/// or another computed value (its `ComputedNode`).
@usableFromInline
class ComputedSource: @unchecked Swift.Sendable {
  // @unchecked: `dependents` is guarded by `ComputedGraph.lock`, and
  // `publishedWords` is reached only atomically.

  /// The source's stamp and value as a word, for reads without the lock:
  /// a computed value's (see `ComputedNode`, "Reads without the lock"),
  /// or a holder's, for reads inside evaluations (see `HolderStore`,
  /// "Reads inside evaluations without the lock"). Reached only through
  /// `publishedStamp` and `publishedBits` (see `AtomicReference`: "Where
  /// the word lives"); must stay the first stored property.
  final var publishedWords: (stamp: UInt, bits: UInt) = (0, 0)

  /// The computed values that read this source on their last evaluation,
  /// unretained (see `ComputedGraph`). Under `ComputedGraph.lock`.
  @exclusivity(unchecked) final var dependents = NodeList()

  deinit {
    dependents.deallocate()
  }

  /// The stamp: the version plus one, shifted left by one, while the
  /// value is published (for a computed value, with `observed` in the low
  /// bit); else 0.
  @usableFromInline
  final var publishedStamp: AtomicReference<UInt> {
    @inlinable @inline(__always) get { AtomicReference(in: self) }
  }

  /// The published value's bits.
  @usableFromInline
  final var publishedBits: AtomicReference<UInt> {
    @inlinable @inline(__always) get { AtomicReference(in: self, offset: MemoryLayout<UInt>.stride) }
  }

  /// Whether a value of `type` can be published: trivial, and no larger
  /// than a word of 64 bits (not on 32-bit platforms, whose words cannot
  /// hold the version). A constant in code specialized for `type`.
  @inlinable @inline(__always)
  static func publishes<T>(_ type: T.Type) -> Bool {
    _isPOD(T.self) && MemoryLayout<T>.size <= MemoryLayout<UInt>.size && MemoryLayout<UInt>.size == 8
  }

  /// The value of `type` whose published bits are `bits` (its bytes
  /// first; the bytes past them are not read).
  @inlinable @inline(__always)
  static func value<T>(ofBits bits: UInt, as type: T.Type) -> T {
    withUnsafeBytes(of: bits) { $0.load(as: T.self) }
  }

  /// The published value's bits and version, or nil when the value is
  /// not published now, or, if `observed`, not `observed` too (the
  /// stamp's low bit). For a read inside an evaluation, any stamp will
  /// do.
  @inlinable @inline(__always)
  final func readPublished(observed: Bool = false) -> (bits: UInt, version: UInt64)? {
    let stamp = publishedStamp.load(ordering: .acquiring)
    guard observed ? stamp & 1 != 0 : stamp != 0 else { return nil }
    let bits = publishedBits.load(ordering: .acquiring)
    guard publishedStamp.load(ordering: .relaxed) == stamp else { return nil }
    return (bits, UInt64(stamp >> 1) &- 1)
  }

  /// The version now if it is known without an evaluation, else nil: a
  /// holder's always; a computed value's when it is clean. Under
  /// `ComputedGraph.lock`.
  func versionIfKnown() -> UInt64? { fatalError("ComputedSource.versionIfKnown: abstract") }

  /// The sender core whose level what reads this source ranks above (see
  /// `RankGraph`).
  var rankNode: any Ranked { fatalError("ComputedSource.rankNode: abstract") }

  /// `rankNode`'s place in `RankGraph`, unretained: the node keeps its
  /// place (`Ranked.rankLinks`, set once), and whoever calls this keeps
  /// the source, which keeps the node. Under `RankGraph.lock`.
  func rankPlace() -> Unmanaged<RankLinks> { fatalError("ComputedSource.rankPlace: abstract") }

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
@usableFromInline
struct ComputedDependency: BitwiseCopyable {
  @usableFromInline let source: Unmanaged<ComputedSource>
  @usableFromInline let owner: Unmanaged<AnyObject>
  @usableFromInline var version: UInt64

  static func retained(_ source: ComputedSource, owner: AnyObject, version: UInt64) -> ComputedDependency {
    ComputedDependency(source: .passRetained(source), owner: .passRetained(owner), version: version)
  }

  func release() {
    source.release()
    owner.release()
  }

  /// Whether this is a dependency on `other`.
  @inlinable
  func reads(_ other: Unmanaged<ComputedSource>) -> Bool {
    source.toOpaque() == other.toOpaque()
  }

  /// Calls `body` with the source, which this dependency keeps alive.
  @inline(__always)
  func withSource<Result>(_ body: (ComputedSource) -> Result) -> Result {
    source._withUnsafeGuaranteedRef(body)
  }
}

/// Nodes, unretained (see `ComputedGraph`).
typealias NodeList = TrivialList<Unmanaged<ComputedNode>>

/// A node's dependencies, retained by hand (see `ComputedDependency`).
@usableFromInline typealias DependencyList = TrivialList<ComputedDependency>
