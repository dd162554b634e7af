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
/// under this value's claim, and no lock: several threads reading a
/// changed value wait for one evaluation. Reading a value updates what it
/// reads first, recursively; past the last 64 KiB of the reading thread's
/// stack, that goes on on a new thread of 4 MiB, which the reader waits
/// for, so a chain of computed values tens of thousands deep is read on
/// any thread, its deepest closures on the new threads. A clean value
/// that fits in a word (an `Int`, a `Bool`, a `Double`) is read without a
/// lock once it has been read since its last change; other reads take a
/// lock that all computed values share, for a few instructions. Inside
/// the closure, a holder whose value fits in a word is read without its
/// own lock when the closure reads its holders in the order of its last
/// evaluation. Keep the closure free of writes: a holder it writes and
/// reads would mark the value changed again.
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
/// `onChange`, without evaluating the value. The holders the closure
/// reads are not registered themselves: this value's read covers them.
///
/// ### Cycles
/// A computed value that reads itself, directly or through others, stops
/// with a message naming the cycle, on the thread that evaluates it:
/// `Computed.value: a computed value reads itself: first -> second ->
/// first`. A cycle read on several threads at once, each waiting for
/// another's evaluation, stops too, on the last thread to wait, with the
/// values of every thread in its message.
public final class Computed<Value>: Swift.Sendable {
  /// The value's state, what `Computed` values that read it hold.
  @usableFromInline let box: ComputedBox<Value>

  /// A computed value whose every evaluation counts as a change.
  ///
  /// Inlinable, so that the code that stores an evaluation's result is
  /// specialized in your module for `Value` (see `ComputedBox`).
  ///
  /// - Parameters:
  ///   - name: What the cycle check's message calls it; its type when nil.
  ///   - compute: The closure, evaluated on the reading thread (see
  ///     "Threads").
  @inlinable
  public init(name: String? = nil, _ compute: @escaping () -> Value) {
    box = ComputedBox(
      name: name ?? "Computed<\(Value.self)>",
      evaluate: { slots, _ in
        (slots + 1).initialize(to: compute())
        return true
      },
      replace: { ComputedBox.replace($0) }
    )
  }

  /// A computed value whose evaluation equal to the previous one is no
  /// change: what reads it is not evaluated again.
  ///
  /// Inlinable, so that the code that stores and compares an evaluation's
  /// result is specialized in your module for `Value` (see `ComputedBox`).
  @inlinable
  public init(name: String? = nil, _ compute: @escaping () -> Value) where Value: Equatable {
    box = ComputedBox(
      name: name ?? "Computed<\(Value.self)>",
      evaluate: { slots, hasValue in
        (slots + 1).initialize(to: compute())
        if hasValue && slots[0] == slots[1] {
          (slots + 1).deinitialize(count: 1)
          return false
        }
        return true
      },
      replace: { ComputedBox.replace($0) }
    )
  }

  deinit {
    // No chain is left (each keeps this value), nor a computed value that
    // reads it (each keeps it too): the flush of the chains' refreshes,
    // which holds the box, is no longer needed.
    box.detachFlush()
  }

  /// The value, evaluated first if a dependency changed since the last
  /// evaluation. Read inside another computed value's closure, it makes
  /// this one a dependency of that one.
  ///
  /// Any thread may read it. A clean value that is trivial and fits in a
  /// word (an `Int`, a `Bool`, a `Double`) is read without a lock, once
  /// it has been read since its last change (inside another computed
  /// value's closure, once another computed value has read it); any other
  /// read takes the graph's lock, which every computed value shares, for
  /// a moment.
  @inlinable
  public var value: Value {
    @inline(__always) get {
      // A clean value that fits in a word is read without the lock (see
      // `ComputedNode`, "Reads without the lock"): here, so that its bits
      // become the value in code specialized for it.
      let state = DeliveryContext.current.state
      if ComputedBox<Value>.fitsInWord, state.pointee.trackingCount != 0, let (bits, version) = box.readPublished() {
        let value = ComputedSource.value(ofBits: bits, as: Value.self)
        Tracking.recordComputedRead(of: box, owner: self, version: version, in: state)
        return value
      }
      return readOutsideEvaluation(in: state)
    }
  }

  /// `value` past a read inside an evaluation of a value published for
  /// it, which is inlined into the reader: out of line, so that each read
  /// in a closure costs no call (a closure that reads a computed value 20
  /// times called the whole getter each time, a sixth of its
  /// instructions).
  @inlinable @inline(never)
  func readOutsideEvaluation(in state: UnsafeMutablePointer<DeliveryContext.State>) -> Value {
    if ComputedBox<Value>.fitsInWord, state.pointee.trackingCount == 0, let bits = box.readObservedPublished() {
      return ComputedSource.value(ofBits: bits, as: Value.self)
    }
    return box.read(owner: self, in: state)
  }
}

// MARK: - ComputedBox

/// A computed value's closure, value and chains: the node that computed
/// values reading it hold, and that its `Computed` wraps.
@usableFromInline
final class ComputedBox<Value>: ComputedNode, @unchecked Swift.Sendable {
  // @unchecked: `cached` is written only under the claim and the graph's
  // lock, and read under either; `evaluated` only under the claim.

  /// Runs the closure into `slots[1]` and returns whether the result is a
  /// change, given whether `slots[0]` holds a value: with an `Equatable`
  /// value, a result equal to it is none, and is destroyed at once.
  ///
  /// This and `replace` are made by `Computed`'s inlinable initializers,
  /// so they are specialized in the module that creates the value: this
  /// class's own code is generic, and each copy, comparison or
  /// destruction of a `Value` in it is a call through its type's
  /// witnesses (with the closures `() -> Value` and `==`, about 70
  /// instructions per evaluation of an `Int`, callgrind). The two take the
  /// place of the closure and `==` (same size: a node grew by 8 bytes once,
  /// and cellx with `Computed` slowed by a quarter). In an object of its
  /// own, retained by hand: the deinit releases it, and with it what the
  /// closure reads, before `ComputedNode`'s deinit looks for releases
  /// left to do (see `ComputedNode.releaseDeferred(_:)`); a stored
  /// closure would be released after every deinit, and a `var` one,
  /// which the deinit could clear, was retained and released around each
  /// call (59 instructions per evaluation, callgrind).
  private let evaluation: Unmanaged<ComputedEvaluation<Value>>
  /// Moves `slots[1]` over `slots[0]`, both initialized. Returns whether
  /// the old value waits in `slots[1]` to be destroyed; a value that needs
  /// no release is overwritten, and `slots[1]` is left as if empty.
  private let replaceInto: (UnsafeMutablePointer<Value>) -> Bool
  /// The value (`cached`), initialized by the first evaluation (the mark
  /// is `dirty` until then); and an evaluation's result until `commit`,
  /// then the value it replaced, until `dropEvaluated` (`evaluated`).
  private let cached = allocateSlots()
  private var evaluated: UnsafeMutablePointer<Value> { cached + 1 }
  /// The chains on this value: a changed value is broadcast to them.
  let core = _SenderCore<Value>()
  // The flags last, side by side: stored properties are laid out in
  // order, and a flag between two words takes a word of its own. With
  // `ComputedNode`'s flags side by side too, the published words left a
  // node as large as before (248 usable bytes in glibc's allocator,
  // measured).
  /// Whether `cached` is initialized. Under the claim.
  @exclusivity(unchecked) private var hasValue = false
  /// Whether `evaluated` holds a replaced value to drop. Under the claim.
  @exclusivity(unchecked) private var hasEvaluated = false

  /// A box whose evaluations run `evaluate` and whose commits run
  /// `replace` (see `evaluation` and `replaceInto`).
  @usableFromInline
  init(
    name: String,
    evaluate: @escaping (UnsafeMutablePointer<Value>, Bool) -> Bool,
    replace: @escaping (UnsafeMutablePointer<Value>) -> Bool
  ) {
    evaluation = .passRetained(ComputedEvaluation(evaluate))
    replaceInto = replace
    super.init(name: name, publishesWord: Self.fitsInWord)
  }

  /// Whether a value is trivial and fits in a word, so that a clean one
  /// is published for reads without the lock (see `ComputedNode`, "Reads
  /// without the lock").
  @inlinable
  static var fitsInWord: Bool { publishes(Value.self) }

  /// The bits of a value that `fitsInWord`: the word at its slot, whose
  /// bytes past the value's (the next slot's, or the allocation's
  /// padding) are never read back as part of it (`Computed.value` loads
  /// only the value's own bytes). The slots' allocation is a word or more
  /// for such a value, and aligned as one (`allocateSlots()`).
  @inline(__always)
  private var cachedBits: UInt {
    UnsafeRawPointer(cached).load(as: UInt.self)
  }

  /// The two slots, `cached` and `evaluated`: at least two words, aligned
  /// as a word and zeroed, so that `cachedBits` reads initialized bytes
  /// within the allocation.
  private static func allocateSlots() -> UnsafeMutablePointer<Value> {
    let byteCount = Swift.max(2 * MemoryLayout<Value>.stride, 2 * MemoryLayout<UInt>.size)
    let slots = UnsafeMutableRawPointer.allocate(
      byteCount: byteCount,
      alignment: Swift.max(MemoryLayout<Value>.alignment, MemoryLayout<UInt>.alignment)
    )
    slots.initializeMemory(as: UInt8.self, repeating: 0, count: byteCount)
    return slots.bindMemory(to: Value.self, capacity: 2)
  }

  /// `replaceInto` as `Computed`'s initializers make it.
  @inlinable
  static func replace(_ slots: UnsafeMutablePointer<Value>) -> Bool {
    if _isPOD(Value.self) {
      slots.pointee = (slots + 1).move()
      return false
    }
    // The old value waits in `slots[1]`, to be released after unlocking:
    // its deinit may run user code.
    swap(&slots[0], &slots[1])
    return true
  }

  /// The value and its version, brought up to date.
  ///
  /// The graph's lock is taken and given back by hand here: a closure
  /// that copied `Value` out would look up `Optional<Value>`'s metadata in
  /// the runtime's caches on every read, a third of a clean read's time.
  ///
  /// The version comes back through `version`, not in a tuple: a tuple
  /// with `Value` in it is looked up in the runtime's caches every time.
  func current(version: inout UInt64) -> Value {
    current(version: &version, runner: DeliveryContext.current.runner)
  }

  /// `current(version:)`, for the thread `runner` (the caller's). For a
  /// read by an evaluation (`tracked`), whose dependency the value
  /// becomes, the value is published as one with dependents is, so that
  /// the evaluation's reads of it again take no lock either. Until the
  /// evaluation ends, the reader is not among `dependents` yet: a value
  /// read only then (one side of `flag ? a : b`, picked again) took the
  /// graph's lock at each of its reads.
  @inline(__always)
  private func current(version: inout UInt64, runner: Int, tracked: Bool = false) -> Value {
    let wakes = lockUpdated(runner: runner)
    if tracked, !isPublished { publishIfClean(read: true) }
    let value = cached.pointee
    version = self.version
    unlock(waking: wakes, runner: runner)
    return value
  }

  /// The value, brought up to date.
  func current() -> Value {
    var version: UInt64 = 0
    return current(version: &version)
  }

  /// `Computed.value`: registers the read with Observation outside an
  /// evaluation, and as a dependency inside one (where the reading
  /// value's own registration covers it). A dependency holds `owner`,
  /// the `Computed` read. `state` is the reading thread's.
  @usableFromInline
  func read(owner: AnyObject, in state: UnsafeMutablePointer<DeliveryContext.State>) -> Value {
    if state.pointee.trackingCount != 0 {
      var version: UInt64 = 0
      let value = current(version: &version, runner: Int(bitPattern: state), tracked: true)
      Tracking.recordComputedRead(of: self, owner: owner, version: version, in: state)
      return value
    }
    observation.access()
    let runner = Int(bitPattern: state)
    lockGraph(runner: runner)
    // Before the update: a write made while it runs tells Observation.
    observed = true
    let wakes: Bool
    if mark == .clean {
      // Clean already: published with `observed` now, so that the next
      // reads take no lock (the update publishes otherwise).
      publishIfClean()
      wakes = false
    } else {
      wakes = updateLocked(runner: runner)
    }
    let value = cached.pointee
    unlock(waking: wakes, runner: runner)
    return value
  }

  deinit {
    if hasValue { cached.deinitialize(count: 1) }
    if hasEvaluated { evaluated.deinitialize(count: 1) }
    UnsafeMutableRawPointer(cached).deallocate()
    // The closure holds what it reads, released here rather than with
    // the stored properties: before `ComputedNode`'s deinit, which runs
    // next and releases what the values freed meanwhile left to release
    // (see `ComputedNode.releaseDeferred(_:)`); close to the end of the
    // stack, left to release itself.
    let state = DeliveryContext.current.state
    if DeliveryContext(state: state).isNearStackEnd {
      state.pointee.deferredObjects.append(Unmanaged.fromOpaque(evaluation.toOpaque()))
    } else {
      evaluation.release()
    }
  }

  override func evaluate() -> Bool {
    // `cached` is read under the claim, which this thread holds.
    evaluation._withUnsafeGuaranteedRef { $0.evaluate(cached, hasValue) }
  }

  override func commit() -> Bool {
    if !hasValue {
      cached.moveInitialize(from: evaluated, count: 1)
      hasValue = true
    } else {
      hasEvaluated = replaceInto(cached)
    }
    // Not published now: the node is not clean (see `ComputedNode`,
    // "Reads without the lock"); its stamp, stored when it becomes clean,
    // publishes these bits.
    if publishesWord { publishedBits.store(cachedBits, ordering: .releasing) }
    return hasEvaluated
  }

  override func dropEvaluated() {
    if hasEvaluated {
      evaluated.deinitialize(count: 1)
      hasEvaluated = false
    }
  }

  override func link(_ source: ComputedSource, chainsFlush: WaveFlush?) {
    // By places, not `any Ranked`: this class's code is generic, and
    // making its core (a `_SenderCore<Value>`) an existential looked the
    // core's metadata up in the runtime's cache each time, half of a
    // dependency's link (kairo unstable with `Computed`, whose
    // dependencies change at every write). The places and the flush
    // unretained, each kept alive for the walk: the source's place by
    // the source, which the dependency keeps; this core's by this node;
    // the flush by the caller. A retain and a release of each took eight
    // of the 24 a write of unstable (callgrind).
    let flushForLinks = chainsFlush.map { Unmanaged.passUnretained($0) }
    RankGraph.lock.withLock { walk in
      source.rankPlace()._withUnsafeGuaranteedRef { place in
        core.unretainedRankPlace._withUnsafeGuaranteedRef { RankGraph.link(place: place, to: $0, in: &walk) }
        flushForLinks?._withUnsafeGuaranteedRef { flush in
          flush.unretainedLinks._withUnsafeGuaranteedRef { RankGraph.link(place: place, to: $0, in: &walk) }
        }
      }
    }
  }

  override var rankNode: any Ranked { core }

  override func rankPlace() -> Unmanaged<RankLinks> { core.unretainedRankPlace }

  /// Brings the value up to date and broadcasts it to the chains if its
  /// version moved since the last broadcast. So a second refresh in one
  /// wave (a value marked again after a read) sends nothing. Leaves the
  /// flush's hint (`WaveFlush.sentNothing`) for the next refresh. Any
  /// thread, under the flush's gate or not (see
  /// `DeliveryContext.flushWave()`), several at once.
  ///
  /// Refreshes broadcast in the order of their versions: the broadcast is
  /// claimed (or queued behind the thread delivering) in the hold of the
  /// graph's lock that reads the value and records its version as sent,
  /// and the core delivers in the order of its claims
  /// (`_SenderCore.claimBroadcast(_:)`). So the chains' values never go
  /// back, and a version recorded as sent is delivered after every
  /// earlier one (see `isSent(runner:)`). `Verification/ComputedRefresh.pml`
  /// models it; with the claim after the unlock (`MUTANT_CLAIM_AFTER_UNLOCK`),
  /// spin finds a chain left with an older value.
  ///
  /// Also removes, in its hold of the lock, the pins this thread's earlier
  /// sends left (`DeliveryContext.unpinSent(in:)`): a wave of many
  /// refreshes takes no lock of its own for them.
  private func refresh() {
    let state = DeliveryContext.current.state
    let runner = Int(bitPattern: state)
    let wakes = lockUpdated(runner: runner)
    if !state.pointee.waves.unpins.isEmpty { DeliveryContext.unpinSent(in: state) }
    let value = cached.pointee
    let changed = !chainsHaveVersion
    sentVersion = version
    hasSent = true
    if flush != nil {
      // Stored only when it changes: most refreshes leave it.
      let sentNothing = flush.unsafelyUnwrapped.sentNothing
      let hint: UInt32 = changed ? 0 : 1
      if sentNothing.load(ordering: .relaxed) != hint { sentNothing.store(hint, ordering: .relaxed) }
    }
    let claim: _SenderCore<Value>.Claim = changed ? core.claimBroadcast(value) : .none
    unlock(waking: wakes, runner: runner)
    core.run(claim, value)
  }

  /// Drops the flush of the chains' refreshes, and with it the cycle
  /// through its closure. A wave that holds the flush still runs it once,
  /// for no chain.
  func detachFlush() {
    let detached = ComputedGraph.withLock { _ -> WaveFlush? in
      defer { flush = nil }
      // Entries of waves point to it unretained (`WaveFlush.pin()`): they
      // take over this reference, and the last unpin releases it.
      if let flush, flush.isPinned {
        flush.orphan()
        _ = Unmanaged.passRetained(flush)
        return nil
      }
      return flush
    }
    _ = consume detached  // released here, outside the lock
  }

  /// Makes the flush of the chains' refreshes, once, and links it above
  /// what the value reads and below what reads it (see `RankGraph`).
  fileprivate func makeFlush() {
    if ComputedGraph.withLock({ _ in flush != nil }) { return }
    let gate = DeliveryGate(held: false)
    // Strong: the cycle lasts until the `Computed` goes (`detachFlush()`),
    // which its chains outlive. A weak reference would move every retain
    // and release of the box to the runtime's slow path.
    let made = WaveFlush(gate: gate, refreshing: self) { [self] in refresh() }
    made.takeRank()
    let installed = ComputedGraph.withLock { _ -> Bool in
      if flush != nil { return false }
      flush = made
      return true
    }
    guard installed else { return }
    RankGraph.link(made, to: core)
    for source in dependencyRankNodes() { RankGraph.link(source, to: made) }
  }
}

/// The closure of a `ComputedBox`'s evaluations (see
/// `ComputedBox.evaluation`).
final class ComputedEvaluation<Value> {
  let evaluate: (UnsafeMutablePointer<Value>, Bool) -> Bool

  init(_ evaluate: @escaping (UnsafeMutablePointer<Value>, Bool) -> Bool) {
    self.evaluate = evaluate
  }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
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

  /// The value, brought up to date, on the calling thread. `sync()` does
  /// not call it: it sends the value `_subscribe(_:_:)` takes as the
  /// chain subscribes.
  public func fetchedValue() -> Value { box.current() }

  /// Does nothing: `_subscribe(_:_:)` took the value that `sync()`
  /// sends, in the same step as it subscribed. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (Value) -> Void) {}

  /// This value's core. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Value>? { box.core }

  /// Subscribes a finished chain and takes the value its `sync()` sends,
  /// in one step: from now on, a change of the value is broadcast at the
  /// end of the wave that caused it. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Value) -> Void) {
    box.subscribe(context, handler)
  }
}

extension ComputedBox {
  /// Subscribes a finished chain and, with `fetches`, takes the value its
  /// `sync()` sends, in the same step. With `dropsEchoes` false, it gets
  /// the value even when its own delivery caused the change: a derived
  /// view's watch of its filter's reads, which must not miss one.
  ///
  /// The chain joins the core's list in the hold of the graph's lock that
  /// reads the value it fetches, and refreshes claim their broadcasts in
  /// holds of that lock too (see `refresh()`): a refresh that read its
  /// value before claims or queues it for the chains of the time, not this
  /// one, and one after sends a value at least as new as the fetched one,
  /// which `sync()` delivers first. So a chain subscribed while other
  /// threads' refreshes run never gets a value older than one it had.
  /// Fetched before, as `fetchedValue()`, the value could be newer than a
  /// broadcast claimed meanwhile, and the chain went back to that one.
  /// The core's lock is taken inside the graph's, as a refresh takes it.
  func subscribe(
    _ context: _ChainContext,
    dropsEchoes: Bool = true,
    fetches: Bool = true,
    _ handler: @escaping (Value) -> Void
  ) {
    makeFlush()
    // Made before taking the lock, as `_SenderCore.subscribe` does.
    let subscription = core.makeSubscription(gate: context.gate, dropsEchoes: dropsEchoes, handler: handler)
    let runner = DeliveryContext.current.runner
    let wakes = lockUpdated(runner: runner)
    let value: Value? = fetches ? cached.pointee : nil
    if !hasSent {
      hasSent = true
      sentVersion = version
    }
    core.state.withLock { core.insert(subscription, in: &$0) }
    unlock(waking: wakes, runner: runner)
    context.add(subscription)
    if let value { context.addFetch { handler(value) } }
  }
}
