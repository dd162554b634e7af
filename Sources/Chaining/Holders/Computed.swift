import Observation

// MARK: - Computed

/// A value derived from holders and other computed values: evaluated when
/// read after one of them changed, cached until then.
///
/// ```swift
/// let a = ValueHolder(1)
/// let b = ValueHolder(2)
/// let sum = Computed { a.value + b.value }
/// print(sum.value)
/// // Prints "3"
/// a.value = 10
/// print(sum.value)
/// // Prints "12"
/// ```
///
/// ### Dependencies
/// What the closure reads on an evaluation (the `value` of a holder, of
/// an `ObservedValue` or of another `Computed`, the `raw` or `count` of a
/// collection holder, through read-only views too) is what the value
/// depends on until the next one: `Computed { flag.value ? a.value : b.value }`
/// depends on `flag` and `b`, not `a`, while `flag` is false, and a write
/// of `a` then evaluates nothing.
///
/// ### When it evaluates
/// Never on its own: `value` evaluates when a dependency changed since the
/// last evaluation (the first read evaluates), and returns the cached
/// value otherwise. With an `Equatable` value, an evaluation equal to the
/// previous one is no change: a computed value that reads this one is not
/// evaluated again, and its chains get nothing. A chain on the value
/// (``chain()``) evaluates it at the end of each wave that changed a
/// dependency, and sends it when it changed: once per wave, after what
/// the wave's writes reach that it reads, so never a torn value, in a
/// diamond of computed values, or beside the holders it is made from in a
/// `combine`.
///
/// ### Threads
/// `value` may be read on any thread. The closure runs on the reading
/// thread (for a chain, the thread whose wave changed a dependency),
/// under a lock of this value: several threads reading a changed value
/// wait for one evaluation. Keep it free of writes: a holder it writes
/// and reads would mark the value changed again.
///
/// ### Retention
/// A computed value holds what it read on its last evaluation, strongly:
/// the holders and computed values it depends on. It is held by your
/// references, by computed values that read it, and by its chains (a
/// value nobody holds still changes with what it reads, so a chain keeps
/// it, as `chain(_:on:)` keeps its source). A holder does not hold the
/// computed values that read it.
///
/// ### Observation
/// Reading `value` inside `withObservationTracking` (a SwiftUI `body`)
/// registers the read; the first change of a dependency afterwards calls
/// `onChange`, without evaluating the value.
///
/// ### Cycles
/// A computed value that reads itself, directly or through others, stops
/// with a message naming the cycle, on the thread that evaluates it:
/// `Computed.value: a computed value reads itself: first -> second ->
/// first`. (A cycle evaluated from two threads at once may deadlock
/// instead.)
public final class Computed<Value>: @unchecked Swift.Sendable {
  // @unchecked: `cached` is written only while `node`'s evaluation lock
  // and its state lock are held, and read under either.

  let node: ComputedNode
  private let compute: () -> Value
  private let areEqual: ((Value, Value) -> Bool)?
  @exclusivity(unchecked) private var cached: Value?

  /// Registers reads with Observation and tells it of changes: an object
  /// of a generic class made once, whose methods find this type's
  /// metadata in it rather than in the runtime's caches on every read.
  private var observation: ComputedObservation<Value>!
  /// The chains on this value: a changed value is broadcast to them.
  let core = _SenderCore<Value>()
  /// The gate the refreshes for chains run through, one at a time.
  private let refreshGate = DeliveryGate(held: false)
  /// Refreshes the value for its chains at a wave's end, ranked above what
  /// it read (see `RankGraph`).
  private var flush: WaveFlush!
  /// The version last broadcast to the chains, once one is subscribed:
  /// under `refreshGate` after that.
  private let sent = Protected<UInt64?>(nil)

  /// A computed value whose every evaluation counts as a change.
  ///
  /// - Parameters:
  ///   - name: What the cycle check's message calls it; its type when nil.
  ///   - compute: The closure, evaluated on the reading thread.
  public init(name: String? = nil, _ compute: @escaping () -> Value) {
    self.compute = compute
    areEqual = nil
    node = ComputedNode(name: name ?? "Computed<\(Value.self)>", core: core)
    connect()
  }

  /// A computed value whose evaluation equal to the previous one is no
  /// change: what reads it is not evaluated again.
  public init(name: String? = nil, _ compute: @escaping () -> Value) where Value: Equatable {
    self.compute = compute
    areEqual = { $0 == $1 }
    node = ComputedNode(name: name ?? "Computed<\(Value.self)>", core: core)
    connect()
  }

  private func connect() {
    observation = ComputedObservation(self)
    flush = WaveFlush(gate: refreshGate) { [weak self] in self?.refresh() }
    flush.takeRank()
    node.flush = flush
    RankGraph.link(flush, to: core)
    // Unowned: the node evaluates only for a reader of this value, or for
    // a computed value that read it, whose dependency holds it.
    node.evaluator = { [unowned self] in self.evaluate() }
    // Weak: a holder's write may reach the node while this value is freed.
    node.invalidated = { [weak self] in self?.observation.changed() }
    node.notified = { [weak self] in self?.scheduleRefresh() }
  }

  /// A dependency may have changed: with chains on this value, refresh it
  /// at the end of the wave (at once outside one), through `refreshGate`.
  private func scheduleRefresh() {
    guard sent.withLock({ $0 }) != nil else { return }
    refreshGate.deliver(
      (),
      to: { [self] _ in
        let context = DeliveryContext.current
        if context.isInWave {
          flush.changed(in: context)
        } else {
          refresh()
        }
      },
      dropsEchoes: false,
      in: DeliveryContext.current
    )
  }

  /// Under `refreshGate`: brings the value up to date and broadcasts it to
  /// the chains if its version moved since the last broadcast.
  private func refresh() {
    let now = current()
    let changed = sent.withLock { sent in
      guard sent != now.version else { return false }
      sent = now.version
      return true
    }
    if changed { core.broadcast(now.value) }
  }

  /// The value and its version, brought up to date.
  private func current() -> (value: Value, version: UInt64) {
    // Clean: the cached value, under the state lock alone. The lock's
    // result is not generic: a tuple with `Value` in it would be looked up
    // in the runtime's metadata caches on every read.
    var value: Value?
    let version = node.state.withLock { state -> UInt64? in
      guard state.mark == .clean else { return nil }
      value = cached
      return state.version
    }
    if let version { return (value.unsafelyUnwrapped, version) }
    return node.update { self.cached.unsafelyUnwrapped }
  }

  /// The value, evaluated first if a dependency changed since the last
  /// evaluation. Read inside another computed value's closure, it makes
  /// this one a dependency of that one.
  public var value: Value {
    observation.access()
    let (value, version) = current()
    if DeliveryContext.current.state.pointee.trackingCount != 0 {
      Tracking.recordRead(of: node, owner: self, version: version)
    }
    return value
  }

  /// Evaluates the closure, with its reads tracked; returns whether the
  /// value changed. Called with the evaluation lock held.
  private func evaluate() -> Bool {
    // Called by `node` with its evaluation lock held: no other thread
    // writes `cached`, which is written under the state lock too, for the
    // readers of a clean value.
    let new = compute()
    let changed = cached.map { old in areEqual.map { !$0(old, new) } ?? true } ?? true
    node.state.withLock { _ in cached = new }
    return changed
  }
}

// MARK: - ComputedNode

/// The state of a computed value that is not generic: its mark, version,
/// dependencies and dependents.
///
/// Push, then pull. A changed holder marks the computed values that read
/// it `dirty`, and those mark what reads them `check`; nothing is
/// evaluated then. A read updates the value: `check` asks each dependency
/// for its version (updating a computed one first) and evaluates only if
/// one of them changed; `dirty` evaluates. An evaluation equal to the
/// previous one keeps the version, so what reads it is not evaluated.
final class ComputedNode: @unchecked Swift.Sendable {
  enum Mark { case clean, check, dirty }

  /// What the cycle check's message calls this value.
  let name: String
  /// The sender core of the value's chains: what reads this value ranks
  /// above it.
  unowned let rankCore: any Ranked

  init(name: String, core: any Ranked) {
    self.name = name
    rankCore = core
  }

  struct State {
    var mark = Mark.dirty
    /// Incremented by every evaluation that changed the value.
    var version: UInt64 = 0
    /// Incremented by every notification: an update that started before
    /// one leaves the mark it set.
    var notifications: UInt64 = 0
    /// Set while an update that found the node marked runs.
    var updating = false
    var dependents = ComputedDependents()
  }

  let state = Protected(State())
  /// Evaluates the closure (set once by the `Computed` that owns this
  /// node, which this node never outlives while it is read); returns
  /// whether the value changed.
  @exclusivity(unchecked) var evaluator: (() -> Bool)!
  /// Tells Observation that the value changed: called when a clean value
  /// is first marked, so once per change a reader has seen. Set once.
  @exclusivity(unchecked) var invalidated: (() -> Void)!
  /// Called on every notification: refreshes the value for its chains.
  @exclusivity(unchecked) var notified: (() -> Void)!
  /// The flush of the value's refreshes, the node of `RankGraph` that what
  /// it reads is linked to. Set once. Unowned: the `Computed` that owns
  /// this node owns the flush, and the node reads it only while that
  /// value evaluates; a weak reference would move the flush, retained on
  /// every wave it joins, to slower reference counting.
  @exclusivity(unchecked) unowned(unsafe) var flush: WaveFlush?
  /// Held while the value is updated: one evaluation at a time. Its state
  /// is the dependencies of the last evaluation.
  let evaluation = Protected([ComputedDependency]())

  /// Marks this node (`dirty` for a changed holder it read, `check` for a
  /// computed value it read that may have changed) and its dependents
  /// `check`.
  ///
  /// The dependents are marked when this node's mark changes, or while it
  /// updates (a dependent that read it meanwhile may be clean): otherwise
  /// they were marked when it left `clean`, and have not read it since,
  /// as reading it would have brought it back to `clean`. So a write marks
  /// each node of a graph at most twice, not once per path to it.
  func notify(_ mark: Mark) {
    let (dependents, wasClean) = state.withLock { state -> ([WeakComputedNode], Bool) in
      state.notifications &+= 1
      let old = state.mark
      if mark == .dirty || old == .clean { state.mark = mark }
      let tells = state.mark != old || state.updating
      return (tells ? state.dependents.nodes : [], old == .clean)
    }
    if wasClean { invalidated() }
    notified()
    for dependent in dependents { dependent.node?.notify(.check) }
  }

  func addDependent(_ node: ComputedNode) {
    state.withLock { $0.dependents.add(node) }
  }

  func removeDependent(_ node: ComputedNode) {
    state.withLock { $0.dependents.remove(node) }
  }

  /// The version after bringing the value up to date (as a dependency).
  func currentVersion() -> UInt64 {
    Tracking.enter(self)
    defer { Tracking.leave(self) }
    return evaluation.withLock { updateLocked(&$0) }
  }

  /// Brings the value up to date and returns it with its version.
  func update<Value>(reading read: () -> Value) -> (Value, UInt64) {
    Tracking.enter(self)
    defer { Tracking.leave(self) }
    return evaluation.withLock { dependencies in
      let version = updateLocked(&dependencies)
      return (read(), version)
    }
  }

  /// `update`, with the evaluation lock held.
  private func updateLocked(_ dependencies: inout [ComputedDependency]) -> UInt64 {
    let (mark, seen, version) = state.withLock { state in
      if state.mark != .clean { state.updating = true }
      return (state.mark, state.notifications, state.version)
    }
    if mark == .clean { return version }
    var stale = mark == .dirty
    if !stale {
      stale = dependencies.contains { $0.source.currentVersion() != $0.version }
    }
    var changed = false
    if stale {
      let tracked = Tracking.evaluate(for: self) { changed = evaluator() }
      let old = dependencies
      dependencies = tracked
      resubscribe(from: old, to: tracked)
    }
    return state.withLock { state in
      state.updating = false
      if changed { state.version &+= 1 }
      if state.notifications == seen {
        state.mark = .clean
        // A dependency that changed after it was read, before this node
        // was its dependent, told no one.
        if dependencies.contains(where: { $0.source.currentVersionIfClean() != $0.version }) { state.mark = .check }
      }
      return state.version
    }
  }

  private func resubscribe(from old: [ComputedDependency], to new: [ComputedDependency]) {
    for dependency in new where !old.contains(where: { $0.source === dependency.source }) {
      dependency.source.addDependent(self)
      if let flush { RankGraph.link(dependency.source.rankNode, to: flush) }
    }
    for dependency in old where !new.contains(where: { $0.source === dependency.source }) {
      dependency.source.removeDependent(self)
    }
  }

  deinit {
    for dependency in evaluation.withLock({ $0 }) { dependency.source.removeDependent(self) }
  }
}

/// A weak reference to a computed value's node, in a dependents list.
struct WeakComputedNode {
  weak var node: ComputedNode?
}

/// The computed values that read a source (a holder, or another computed
/// value) on their last evaluation, held weakly; under the source's lock.
struct ComputedDependents {
  private(set) var nodes: [WeakComputedNode] = []

  /// Adds `node`, dropping the nodes that were freed.
  mutating func add(_ node: ComputedNode) {
    nodes.removeAll { $0.node == nil }
    nodes.append(WeakComputedNode(node: node))
  }

  /// Removes `node`, and the nodes that were freed.
  mutating func remove(_ node: ComputedNode) {
    nodes.removeAll { $0.node == nil || $0.node === node }
  }
}

/// What a computed value can depend on: a holder's store (through its
/// Observation hook) or another computed value's node.
protocol ComputedSource: AnyObject {
  func addDependent(_ node: ComputedNode)
  func removeDependent(_ node: ComputedNode)
  /// The version now, brought up to date when it is a computed value.
  func currentVersion() -> UInt64
  /// The version now if it is known without an evaluation, else nil.
  func currentVersionIfClean() -> UInt64?
  /// The sender core whose level a computed value that reads this one
  /// ranks above (see `RankGraph`).
  var rankNode: any Ranked { get }
}

extension ComputedNode: ComputedSource {
  func currentVersionIfClean() -> UInt64? {
    state.withLock { $0.mark == .clean ? $0.version : nil }
  }

  var rankNode: any Ranked { rankCore }
}

/// A dependency read by the last evaluation: the source, what keeps it
/// alive (the holder or computed value read), and its version then.
struct ComputedDependency {
  let source: any ComputedSource
  let owner: AnyObject
  let version: UInt64
}

// MARK: - Tracking

/// The evaluations in progress on each thread, innermost last: reads made
/// by the closure of the innermost are its dependencies.
@usableFromInline
enum Tracking {
  final class Frame {
    unowned let node: ComputedNode
    var reads: [ComputedDependency] = []
    init(node: ComputedNode) { self.node = node }
  }

  /// Runs `body`, the evaluation of `node`, and returns what it read.
  static func evaluate(for node: ComputedNode, _ body: () -> Void) -> [ComputedDependency] {
    let state = DeliveryContext.current.state
    let frame = Frame(node: node)
    state.pointee.tracking.append(frame)
    state.pointee.trackingCount += 1
    body()
    state.pointee.trackingCount -= 1
    state.pointee.tracking.removeLast()
    return frame.reads
  }

  /// Notes that `node` is being updated on this thread; stops with a
  /// message when it already is (a computed value that reads itself).
  static func enter(_ node: ComputedNode) {
    let state = DeliveryContext.current.state
    // A set for the check, O(1) at any depth; the list for the message.
    if !state.pointee.updatingSet.insert(ObjectIdentifier(node)).inserted {
      let start = state.pointee.updating.firstIndex { $0 === node } ?? 0
      let cycle = (state.pointee.updating[start...].map(\.name) + [node.name]).joined(separator: " -> ")
      fatalError("Computed.value: a computed value reads itself: \(cycle)")
    }
    state.pointee.updating.append(node)
  }

  static func leave(_ node: ComputedNode) {
    let state = DeliveryContext.current.state
    state.pointee.updating.removeLast()
    state.pointee.updatingSet.remove(ObjectIdentifier(node))
  }

  /// Records a read of `source` at `version` into the innermost
  /// evaluation on this thread, if any.
  @usableFromInline
  static func recordRead(of source: AnyObject, owner: AnyObject, version: UInt64) {
    let state = DeliveryContext.current.state
    guard let frame = state.pointee.tracking.last, let source = source as? any ComputedSource else { return }
    if frame.reads.contains(where: { $0.source === source }) { return }
    frame.reads.append(ComputedDependency(source: source, owner: owner, version: version))
  }
}

extension Computed: Observable {}

// MARK: - A source of chains

extension Computed: Syncable {
  /// The type of the values its chains get: the value's.
  public typealias ChainValue = Value

  /// Starts a chain on this value. The chain keeps the value alive, as a
  /// value that nobody holds still changes with what it reads.
  public func chain() -> Chain<Value, Computed<Value>> {
    Chain(source: self, retained: true)
  }

  /// The value, for `sync()`.
  public func fetchedValue() -> Value { value }

  /// This value's core. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Value>? { core }

  /// Subscribes a finished chain: from now on, a change of the value is
  /// broadcast at the end of the wave that caused it. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Value) -> Void) {
    let version = current().version
    sent.withLock { sent in
      if sent == nil { sent = version }
    }
    context.add(core.subscribe(gate: context.gate, handler: handler))
  }
}

/// A computed value's Observation registrar, with its subject and key path.
final class ComputedObservation<Value>: @unchecked Swift.Sendable {
  // @unchecked: the registrar is `Swift.Sendable`; the other properties
  // are constants.

  let registrar = ObservationRegistrar()
  /// The computed value, which owns this object and outlives its calls.
  unowned(unsafe) let subject: Computed<Value>
  let keyPath: KeyPath<Computed<Value>, Value> = \.value

  init(_ subject: Computed<Value>) {
    self.subject = subject
  }

  /// Registers a read with the tracking in progress on this thread.
  func access() {
    registrar.access(subject, keyPath: keyPath)
  }

  /// Tells the trackings that read the value that it changed.
  func changed() {
    registrar.willSet(subject, keyPath: keyPath)
    registrar.didSet(subject, keyPath: keyPath)
  }
}
