import Observation

// MARK: - HolderStore

/// A holder's state together with the observers of its events.
///
/// Every write runs under the lock and decides there which events
/// it broadcasts, so the broadcasts reach every chain in the order of the
/// writes, whatever threads make them. The events are delivered after
/// unlocking. The state shares the core's lock: a write takes one lock,
/// both to change the state and to claim the delivery of its events.
@usableFromInline
final class HolderStore<State, Event>: @unchecked Swift.Sendable {
  // @unchecked: `value` is guarded by `core.state`'s lock, and `core`
  // guards itself.

  @usableFromInline let core = _SenderCore<Event>(claimsUnderLock: true)
  /// The holder's state. Guarded by `core.state`'s lock: reach it only
  /// through `withLock`.
  @usableFromInline @exclusivity(unchecked) var value: State
  /// The holder's Observation registrar, made the first time its state is
  /// read through an accessor that registers the read (see
  /// `read(observedBy:_:)`), and never changed after. Until then a
  /// changing write pays one load and one branch for Observation, not the
  /// registrar's lock and key path lookup.
  ///
  /// Written once, under the lock, from `nil`. A write that sees it set
  /// under the lock reads it again after unlocking without the lock: the
  /// lock orders that read after the one write, and nothing writes it
  /// again. The thread sanitizer run (`HolderObservationTests`) checks it.
  @usableFromInline @exclusivity(unchecked) var observation: HolderObservation?
  /// How many events the writes have broadcast: one more for each, counted
  /// under the lock with the change. A two-way binding compares it to the
  /// count it last saw, to tell whether a write it has not yet handled came
  /// in between (see `replace(with:ifVersion:event:)`). Guarded by the lock.
  @usableFromInline @exclusivity(unchecked) var version: UInt64 = 0
  /// Whether the state was read through an accessor that registers with
  /// Observation, outside a computed value's evaluation, since a write
  /// last told Observation: only then does the next changing write tell
  /// it (a read inside an evaluation is covered by the computed value's
  /// own registration). Guarded by the lock.
  @usableFromInline @exclusivity(unchecked) var observationRead = false
  /// Whether a computed value read the holder on its last evaluation: set
  /// by `HolderObservation.dependentsChanged()`, under this lock inside
  /// the graph's (`ComputedGraph`). A write takes it with its change, so
  /// a computed value that becomes a dependent either is marked by the
  /// write, or sees the write's version when it checks the version it
  /// read afterwards (`ComputedNode.updateLocked`,
  /// `Verification/Computed.pml`). Guarded by the lock.
  @usableFromInline @exclusivity(unchecked) var hasDependents = false
  /// Whether the state is published for reads inside evaluations without
  /// the lock, while computed values read it (see "Reads inside
  /// evaluations without the lock"): asked for by the holder, whose every
  /// change of the state goes through a write that counts `version`, and
  /// possible when the state is trivial and fits in a word. Set once.
  @usableFromInline let publishesWord: Bool

  /// A store holding `initial`. With `publishing`, the state is published
  /// while computed values read it, if it `fitsInWord`: the holder must
  /// then change it only through `replace`, `writeEvent`, or `write` and
  /// `writeEvents` with an event for each change, which count `version`
  /// and publish.
  @usableFromInline
  init(_ initial: State, publishing: Bool = false) {
    value = initial
    publishesWord = publishing && Self.fitsInWord
  }

  deinit {
    // The holder is gone: no write will broadcast again.
    core.senderEnded()
  }

  /// Whom a changing write must tell after its delivery, taken under the
  /// lock: nobody; the computed values that read the holder; Observation;
  /// or both.
  @usableFromInline enum Observers: UInt8 {
    case none = 0
    case dependents = 1
    case observation = 2
    case all = 3

    @inlinable var marksDependents: Bool { rawValue & 1 != 0 }
    @inlinable var tellsObservation: Bool { rawValue & 2 != 0 }
  }

  /// Takes whom a changing write must tell. Under the lock, after every
  /// write that counted `version`: it publishes the state and the
  /// version too, for the computed values that read the holder (see
  /// "Reads inside evaluations without the lock").
  @inlinable @inline(__always)
  func takeObservers(changes: Bool = true) -> Observers {
    if observation == nil { return .none }
    if hasDependents && publishesWord { publishLocked() }
    if !changes { return .none }
    if !observationRead { return hasDependents ? .dependents : .none }
    observationRead = false
    return hasDependents ? .all : .observation
  }

  // MARK: Reads inside evaluations without the lock

  // A computed value's evaluation that reads a holder whose state is
  // trivial and fits in a word (a `ValueHolder<Int>`) takes no lock, as
  // the reads of clean computed values do (see `ComputedNode`, "Reads
  // without the lock"): the state and the version are published in the
  // words of the holder's registrar (`ComputedSource.publishedWords`),
  // a seqlock of a stamp, the version plus one shifted left by one, and
  // the state's bits. Under the lock, every write that counts `version`
  // (`takeObservers(changes:)`, which each calls) stores 0 in the stamp,
  // then the bits (releasing), then the new stamp (releasing), while
  // computed values read the holder (`hasDependents`); becoming read by
  // one publishes, and no longer, stores 0. A reader loads the stamp
  // (acquiring), the bits (acquiring) and the stamp again: the same
  // stamp, not 0, means the bits are the state at that version. It is
  // the computed values' protocol, each write a mark, a commit and a
  // publish in one hold of the lock: `Verification/ComputedRead.pml`
  // models it (`HOLDER`), and spin catches the bits stored after the
  // stamp and a write without the store of 0.
  //
  // Only the reads of the evaluation's dependencies in the order of its
  // last evaluation take the words (`Tracking.readPublished(by:in:)`),
  // the usual case: the dependency names the holder, so its source is
  // this store's registrar, and the read only updates its version.
  // Reads outside evaluations still take the lock: they set
  // `observationRead` for Observation. Four threads reading inside
  // evaluations while a fifth writes (`ComputedTests`, under the thread
  // sanitizer too) check it.

  /// Whether the state is trivial and fits in a word, so that it can be
  /// published.
  @inlinable
  static var fitsInWord: Bool { ComputedSource.publishes(State.self) }

  /// Publishes the state and the version in the registrar's words. Under
  /// the lock, with the registrar made. Specialized, but not inlined into
  /// the writes: inlined, the stores cost every write of a holder 2
  /// instructions more, even of one that no computed value reads (icount,
  /// `ValueHolder map*2.guard%3.do set`), in registers saved around them.
  @inlinable @inline(never)
  func publishLocked() {
    let bits = Self.bits(of: value)
    let stamp = (UInt(truncatingIfNeeded: version) &+ 1) << 1
    Unmanaged.passUnretained(observation.unsafelyUnwrapped)._withUnsafeGuaranteedRef { source in
      source.publishedStamp.store(0, ordering: .relaxed)
      source.publishedBits.store(bits, ordering: .releasing)
      source.publishedStamp.store(stamp, ordering: .releasing)
    }
  }

  /// The bits of a state that `fitsInWord`, its bytes first and zeros
  /// after. Cast, for the usual sizes, rather than copied through a
  /// local: taking a local's address makes the function guard its stack
  /// (7 instructions more on every write of a holder when this was
  /// inlined into the writes, callgrind).
  @inlinable @inline(__always)
  static func bits(of state: State) -> UInt {
    switch MemoryLayout<State>.size {
    case 8: return unsafeBitCast(state, to: UInt.self)
    case 4: return UInt(unsafeBitCast(state, to: UInt32.self))
    case 2: return UInt(unsafeBitCast(state, to: UInt16.self))
    case 1: return UInt(unsafeBitCast(state, to: UInt8.self))
    case 0: return 0
    default:
      var bits: UInt = 0
      withUnsafeMutableBytes(of: &bits) { $0.storeBytes(of: state, as: State.self) }
      return bits
    }
  }

  /// Sets `hasDependents`, and publishes the state or stops publishing it.
  /// Under the lock.
  func setHasDependents(_ has: Bool) {
    hasDependents = has
    guard publishesWord else { return }
    if has {
      publishLocked()
    } else {
      observation.unsafelyUnwrapped.publishedStamp.store(0, ordering: .relaxed)
    }
  }

  /// Runs `body` with the state and the core's state, under the core's lock.
  @inlinable @inline(__always)
  func withLock<Result>(_ body: (inout State, inout _SenderCore<Event>.State) -> Result) -> Result {
    // The core and its lock live as long as this store: borrowing the
    // lock's object saves a retain and a release on every write.
    Unmanaged.passUnretained(core.state)._withUnsafeGuaranteedRef { state in
      state.withLock { body(&value, &$0) }
    }
  }

  /// Runs `body`, code of the user's called inside `withLock` or
  /// `write`, marked as `call` (see `Protected.callingOut(_:_:)`).
  @inlinable @inline(__always)
  func callingOut<Result>(_ call: Callout, _ body: () -> Result) -> Result {
    core.state.callingOut(call, body)
  }

  /// Subscribes a finished chain and, in the same step, takes the value its
  /// `sync()` sends.
  ///
  /// Under the lock no write can come in between: every write made
  /// before is in the fetched value and reaches the chain no other way, and
  /// every write made after reaches it as an event. `fetched` runs under the
  /// lock and returns `nil` when there is nothing to fetch.
  ///
  /// A subscription with `dropsEchoes` false gets every write, even one
  /// its own delivery caused: a derived view's feed, which must see every
  /// change of its source (see `DerivedArrayHolder`).
  func attach(
    _ context: _ChainContext,
    _ handler: @escaping (Event) -> Void,
    dropsEchoes: Bool = true,
    fetched: (inout State) -> Event?
  ) {
    let subscription = core.makeSubscription(gate: context.gate, dropsEchoes: dropsEchoes, handler: handler)
    let value = withLock { state, coreState in
      core.insert(subscription, in: &coreState)
      return fetched(&state)
    }
    context.add(subscription)
    if let value {
      context.addFetch { handler(value) }
    }
  }

  /// Replaces the whole state with `newValue` and broadcasts `event(newValue)`,
  /// unless the two are equal (see `areEqual`): the setter of the value holders.
  ///
  /// `==` runs under the lock, so that comparing and storing are one step;
  /// the old value is released after unlocking.
  @inlinable @inline(__always)
  func replace(with newValue: State, event: (State) -> Event) {
    // Inlined with `nil`, the version check and the result fold away.
    _ = replace(with: newValue, ifVersion: nil, event: event)
  }

  /// `replace(with:event:)`, made only if no write has broadcast since the
  /// write counted `expected` in `version` (always, when `expected` is
  /// nil): a compare-and-set of the state for a two-way binding, which
  /// must not overwrite a newer write with an older value from the other
  /// side.
  ///
  /// Returns `nil`, and changes nothing, when the version is not
  /// `expected`; otherwise the version after the call (`expected` when
  /// `newValue` equals the state and nothing is broadcast).
  @inlinable @inline(__always)
  func replace(with newValue: State, ifVersion expected: UInt64?, event: (State) -> Event) -> UInt64? {
    // Not `write`: its type-erased garbage would box the old value.
    typealias Outcome = (_SenderCore<Event>.Claim, State?, Observers, UInt64?)
    let lock = core.state.calloutAddress
    let (claim, old, observers, after) = withLock { stored, coreState -> Outcome in
      if let expected, version != expected { return (.none, nil, .none, nil) }
      // Unchanged: `expected`, the version, or nil when there is none.
      if areEqual(stored, newValue, under: lock, .equality) { return (.none, nil, .none, expected) }
      let old = stored
      stored = newValue
      version &+= 1
      return (core.claim(event(newValue), in: &coreState), old, takeObservers(), version)
    }
    _ = consume old
    // `.deliver`, or `.awaitTurn` (the delivering thread is past its
    // limit, see `_SenderCore.awaitTurn()`): both go through `run`.
    if observers != .none {
      deliverObserved(observers) { if case .none = claim {} else { core.run(claim, event(newValue)) } }
    } else if case .none = claim {
    } else {
      core.run(claim, event(newValue))
    }
    return after
  }

  /// Reads the state and `version` together, under the lock.
  func readVersioned() -> (State, version: UInt64) {
    withLock { state, _ in (state, version) }
  }

  /// Reads the state under the lock.
  @inlinable @inline(__always)
  func read<Result>(_ body: (State) -> Result) -> Result {
    withLock { state, _ in body(state) }
  }

  /// Changes the state and broadcasts the events `update` returns, in order.
  ///
  /// `update` runs under the lock: it must not call out to user code. What
  /// it returns as `garbage` (replaced values, say) is released after
  /// unlocking, since a deinit may run user code. A write that returns
  /// events changed the state, and tells Observation so.
  @discardableResult
  func writeEvents<Result>(
    _ update: (inout State) -> (events: [Event], result: Result, garbage: Any?)
  ) -> Result {
    let (claim, events, result, garbage, observed) = withLock { state, coreState in
      let (events, result, garbage) = update(&state)
      let claim = core.claim(contentsOf: events, in: &coreState)
      version &+= UInt64(events.count)
      return (claim, events, result, garbage, takeObservers(changes: !events.isEmpty))
    }
    _ = consume garbage
    if observed != .none {
      deliverObserved(observed) { if let first = events.first { core.run(claim, first) } }
    } else if let first = events.first {
      core.run(claim, first)
    }
    return result
  }

  /// Changes the state and broadcasts at most one event.
  ///
  /// The common case of `writeEvents(_:)`, without building an array.
  /// `changes` is false for an event that leaves the state as it was (an
  /// element's relayed broadcast): Observation is then not told.
  @inlinable @inline(__always)
  func write(changes: Bool = true, _ update: (inout State) -> (event: Event?, garbage: Any?)) {
    typealias Outcome = (_SenderCore<Event>.Claim, Event?, Any?, Observers)
    let (claim, event, garbage, observed) = withLock { state, coreState -> Outcome in
      let (event, garbage) = update(&state)
      guard let event else { return (.none, nil, garbage, .none) }
      version &+= 1
      return (core.claim(event, in: &coreState), event, garbage, takeObservers(changes: changes))
    }
    _ = consume garbage
    if observed != .none {
      deliverObserved(observed) { if let event { core.run(claim, event) } }
    } else if let event {
      core.run(claim, event)
    }
  }

  /// Changes the state and broadcasts exactly the event `update` returns.
  ///
  /// The common case of `write(_:)` for a change that always sends one
  /// event and releases nothing: no optionals to check after unlocking.
  /// `changes` is false for a resend, which leaves the state as it was.
  @inlinable @inline(__always)
  func writeEvent(changes: Bool = true, _ update: (inout State) -> Event) {
    let (claim, event, observed) = withLock { state, coreState -> (_SenderCore<Event>.Claim, Event, Observers) in
      let event = update(&state)
      version &+= 1
      return (core.claim(event, in: &coreState), event, takeObservers(changes: changes))
    }
    if observed != .none {
      deliverObserved(observed) { core.run(claim, event) }
    } else {
      core.run(claim, event)
    }
  }

  // MARK: Observation

  /// Reads the state under the lock, and registers the read with
  /// Observation: inside `withObservationTracking` (a SwiftUI `body`), the
  /// next changing write calls the tracking's `onChange`. Inside a
  /// computed value's evaluation, the read is a dependency of the value
  /// instead, kept alive by `subject` (the holder), and Observation is not
  /// told: the computed value's own registration covers it.
  ///
  /// The first such read makes the registrar. Every holder registers one
  /// key path for all of its state, so a changing write tells Observation
  /// once.
  ///
  /// A read inside an evaluation of a state published for it takes no
  /// lock (see "Reads inside evaluations without the lock"); a read again
  /// of the holder the evaluation read last finds it in the thread's
  /// state (`Tracking.readAgain(by:in:)`), here in the caller. `subject`
  /// must read through this store only, as every holder does (its store
  /// is a constant): a dependency names it, and stands for this store's
  /// registrar.
  @inlinable @inline(__always)
  func read<Result>(observedBy subject: AnyObject, _ body: (State) -> Result) -> Result {
    let context = DeliveryContext.current.state
    if Self.fitsInWord, let bits = Tracking.readAgain(by: subject, in: context) {
      return body(ComputedSource.value(ofBits: bits, as: State.self))
    }
    return readFirst(observedBy: subject, in: context, body)
  }

  /// `read(observedBy:_:)` past a read again of the holder read last,
  /// which is inlined into the caller and so costs no call: a value that
  /// reads its head 30 times took a fifth less time than with the whole
  /// read out of line (throwaway program).
  @inlinable
  func readFirst<Result>(
    observedBy subject: AnyObject,
    in context: UnsafeMutablePointer<DeliveryContext.State>,
    _ body: (State) -> Result
  ) -> Result {
    if Self.fitsInWord, context.pointee.trackingCount != 0,
      let (bits, source) = Tracking.readPublished(by: subject, in: context)
    {
      // The dependency keeps the registrar, made before it was recorded.
      assert(source.toOpaque() == Unmanaged.passUnretained(observation.unsafelyUnwrapped).toOpaque())
      return body(ComputedSource.value(ofBits: bits, as: State.self))
    }
    return readUpdating(observedBy: subject, in: context) { body($0) }
  }

  /// `read(observedBy:_:)` for a read that may change the state without
  /// changing what it holds: a view that makes and keeps its array on
  /// the first read after a change (`DerivedArrayHolder.raw`).
  @inlinable
  func readUpdating<Result>(observedBy subject: AnyObject, _ body: (inout State) -> Result) -> Result {
    readUpdating(observedBy: subject, in: DeliveryContext.current.state, body)
  }

  /// `readUpdating(observedBy:_:)` on the thread whose state is `context`.
  @inlinable @inline(__always)
  func readUpdating<Result>(
    observedBy subject: AnyObject,
    in context: UnsafeMutablePointer<DeliveryContext.State>,
    _ body: (inout State) -> Result
  ) -> Result {
    // Inside a computed value's evaluation, a dependency; outside one, a
    // read Observation is told of.
    let tracked = context.pointee.trackingCount != 0
    // Unretained: the store keeps its registrar from its first read on
    // (nothing replaces it), and the caller keeps the store. Retaining it
    // cost a retain and a release per read of a computed value's
    // evaluation. A registrar freed early would be a use after free that
    // the address sanitizer run of the suite (`HolderObservationTests`,
    // `ComputedTests`) reports.
    let (result, registered, version) = withLock { state, _ in
      if !tracked { observationRead = true }
      if self.observation == nil { _ = makeObservation() }
      let registered = Unmanaged.passUnretained(self.observation.unsafelyUnwrapped)
      return (body(&state), registered, self.version)
    }
    registered._withUnsafeGuaranteedRef { registered in
      if tracked {
        Tracking.recordRead(of: registered, owner: subject, version: version, in: context)
      } else {
        registered.access()
      }
    }
    return result
  }

  /// Registers a read with Observation, as `read(observedBy:_:)` does,
  /// for a holder that reads its state another way.
  func access(observedBy subject: AnyObject) {
    read(observedBy: subject) { _ in () }
  }

  /// Makes and keeps the registrar. Called under the lock, once.
  @usableFromInline
  func makeObservation() -> HolderObservation {
    let made = HolderObservation.make()
    made.readVersion = { [unowned self] in withLock { _, _ in version } }
    made.setHasDependents = { [unowned self] has in withLock { _, _ in setHasDependents(has) } }
    made.core = core
    observation = made
    return made
  }

  /// Runs `deliver`, the write's delivery, then tells the computed values
  /// that read the holder and Observation that the state changed, as
  /// `observers` says. Called by a write that took `observers` under the
  /// lock, after the change is stored and the lock released (an
  /// `onChange` may read the holder).
  ///
  /// The computed values are told inside the wave of the delivery, so
  /// that the refreshes of those with chains are sent at its end with the
  /// combines (see `Computed`). Observation is told after the delivery, so
  /// that no claim on it is held while `onChange` runs.
  @usableFromInline @inline(never)
  func deliverObserved(_ observers: Observers, _ deliver: () -> Void) {
    // Unretained, as in `readUpdating`: the store keeps its registrar,
    // and the writer keeps the store.
    let observation = Unmanaged.passUnretained(observation.unsafelyUnwrapped)
    if observers.marksDependents {
      let context = DeliveryContext.current
      // A read again of the holder this thread's evaluation read last
      // takes the bits of that read (`Tracking.readAgain(by:in:)`): after
      // this thread's own write, from the delivery's handlers on, it
      // takes the words again and sees the write. Every write of a holder
      // whose bits a read again can take comes here: see
      // `DeliveryContext.State.lastReadOwner`.
      context.state.pointee.lastReadOwner = 0
      context.inWave {
        deliver()
        observation._withUnsafeGuaranteedRef { ComputedGraph.changed($0) }
      }
    } else {
      deliver()
    }
    if observers.tellsObservation { observation._withUnsafeGuaranteedRef { $0.changed() } }
  }
}

// MARK: - HolderObservation

/// A holder's place among the dependencies of computed values, and its
/// Observation registrar: on systems with Observation (iOS 17, macOS 14
/// and later), this is a ``RegisteringHolderObservation``, which has one;
/// before them, reads and changes tell nobody but the computed values.
/// Made by `HolderStore.makeObservation()`, with `make()`.
///
/// Reads and changes name this object, not the holder. A tracking is told
/// by the registrar, whatever the subject; and naming the holder would
/// need a weak reference to it (it owns the store that owns this object),
/// which moves every retain and release of the holder to the runtime's
/// slow path: a `value` read cost 57 ns, 14 once this object named itself
/// (`./compare --filter '(holder|computed) read.*'`).
@usableFromInline
class HolderObservation: ComputedSource, @unchecked Swift.Sendable {
  // @unchecked: `readVersion` and `core` are set once, before the store
  // publishes this object; the dependents are guarded by
  // `ComputedGraph.lock`.

  /// A new object: with a registrar where the system has Observation.
  static func make() -> HolderObservation {
    if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
      return RegisteringHolderObservation()
    }
    return HolderObservation()
  }

  /// Registers an access of the holder's state with the tracking in
  /// progress on this thread, if any. Nothing before Observation.
  @usableFromInline func access() {}

  /// Tells the trackings that read the holder's state that it changed.
  /// Nothing before Observation.
  ///
  /// The change is already stored, so a tracking's `onChange` (called in
  /// `willSet`) that reads the holder sees the new state. A tracking
  /// registered before this call is told. One whose `apply` read the old
  /// state but which is registered only after this call (a write racing
  /// the tracking's `apply`) is not, as with an `@Observable` property.
  func changed() {}

  /// The holder's version, read under its lock. Set once, by the store
  /// that makes this object.
  @exclusivity(unchecked) var readVersion: (() -> UInt64)!
  /// Sets the store's `hasDependents`, under its lock. Set with
  /// `readVersion`.
  @exclusivity(unchecked) var setHasDependents: ((Bool) -> Void)!
  /// The holder's sender core, set with `readVersion`.
  @exclusivity(unchecked) var core: (any Ranked)!

  /// Under `ComputedGraph.lock`: the holder's lock is taken inside it, as
  /// by `versionIfKnown()`, and never the other way round.
  override func dependentsChanged() {
    setHasDependents(dependents.count != 0)
  }

  override func versionIfKnown() -> UInt64? { readVersion() }

  override var rankNode: any Ranked { core }

  override func rankPlace() -> Unmanaged<RankLinks> { core.unretainedLinks }
}

/// A ``HolderObservation`` with Observation's registrar.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class RegisteringHolderObservation: HolderObservation, Observable, @unchecked Swift.Sendable {
  // @unchecked: the registrar is `Swift.Sendable`.

  let registrar = ObservationRegistrar()
  /// What reads and changes name.
  var state: Void { () }
  /// `\.state`, made once: a key path literal is looked up on every use.
  /// Unchecked: a key path is immutable.
  nonisolated(unsafe) static let keyPath: KeyPath<RegisteringHolderObservation, Void> = \.state

  override func access() {
    registrar.access(self, keyPath: Self.keyPath)
  }

  override func changed() {
    registrar.willSet(self, keyPath: Self.keyPath)
    registrar.didSet(self, keyPath: Self.keyPath)
  }
}
