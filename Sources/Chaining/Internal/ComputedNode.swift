import _ChainingThreadContext

// MARK: - ComputedNode

/// The state of a computed value that is not generic: its mark, version,
/// dependencies and dependents. Subclassed once, by `ComputedBox`, which
/// holds the closure and the value.
@usableFromInline
class ComputedNode: ComputedSource, @unchecked Swift.Sendable {
  // @unchecked: the marks, versions, claim and lists are guarded by
  // `ComputedGraph.lock`; `dependencies` and the value's slots by the
  // claim (`updatingThread`).

  enum Mark: UInt8 { case clean, check, dirty }

  /// What the cycle check's message calls this value.
  let name: String
  /// Tells Observation of changes; the walk retains it (see `ComputedGraph`).
  let observation = ComputedObservation.make()

  // Under `ComputedGraph.lock` (the flags side by side: stored
  // properties are laid out in order, and a flag between two words takes
  // a word of its own):
  @exclusivity(unchecked) final var mark = Mark.dirty
  /// Whether a thread waits for the claim to be given back.
  @exclusivity(unchecked) final var hasWaiters = false
  /// Whether the value was read outside an evaluation since Observation
  /// was last told of a change: only then is it told of the next.
  @exclusivity(unchecked) final var observed = false
  /// Whether the stamp is not 0 (see "Reads without the lock").
  @exclusivity(unchecked) final var isPublished = false
  /// Whether `sentVersion` holds a version, once a chain is subscribed.
  @exclusivity(unchecked) final var hasSent = false
  /// Whether the value is trivial and fits in a word, so that a clean
  /// value is published for reads without the lock (see "Reads without
  /// the lock"). Set once.
  final let publishesWord: Bool
  /// Incremented by every evaluation that changed the value.
  @exclusivity(unchecked) final var version: UInt64 = 0
  /// The version last broadcast to the chains (see `hasSent`): set by a
  /// refresh in the same hold of the lock in which it reads the value it
  /// broadcasts and claims that broadcast (see `isSent(runner:)` and
  /// `ComputedBox.refresh()`).
  @exclusivity(unchecked) final var sentVersion: UInt64 = 0
  /// Incremented by every mark: an update that started before one leaves
  /// the mark it set.
  @exclusivity(unchecked) final var notifications: UInt64 = 0
  /// The claim: the thread (its `DeliveryContext.runner`) updating the
  /// value, or 0. One update at a time: another thread that finds the
  /// node claimed waits for it (`waitForUpdate(runner:)`); the same thread
  /// finding it claimed is a cycle.
  @exclusivity(unchecked) final var updatingThread = 0
  /// The flush of the refreshes of the value's chains, made when the
  /// first chain subscribes; the walk retains it.
  @exclusivity(unchecked) final var flush: WaveFlush?

  /// The dependencies of the last evaluation. Under the claim, or in
  /// `deinit`.
  @usableFromInline @exclusivity(unchecked) final var dependencies = DependencyList()

  // Under the claim, while this node updates on the claiming thread (kept
  // here rather than in arrays of the thread's, whose appends cost a
  // uniqueness check and a retain each):
  /// The node updating on this thread when this one began.
  @exclusivity(unchecked) final var updatingParent: Unmanaged<ComputedNode>?
  /// The node evaluating on this thread when this one's evaluation began.
  @exclusivity(unchecked) final var trackingParent: Unmanaged<ComputedNode>?
  /// How many of the dependencies the evaluation read again, in order.
  @usableFromInline @exclusivity(unchecked) final var matched = 0
  /// The sources the evaluation read that were not next in that order,
  /// retained.
  @usableFromInline @exclusivity(unchecked) final var added: [ComputedDependency] = []
  /// The notification count when the update claimed the node.
  @exclusivity(unchecked) final var seenNotifications: UInt64 = 0
  /// How many of the dependencies the update's check found unmoved, in
  /// order (see `updateLoop(from:to:runner:state:)`).
  @exclusivity(unchecked) final var checkedDependencies = 0

  init(name: String, publishesWord: Bool) {
    self.name = name
    self.publishesWord = publishesWord
  }

  // MARK: Reads without the lock

  // A read of a clean value that is trivial and fits in a word (an `Int`,
  // a `Bool`, a `Double`) takes no lock: a seqlock of two atomic words,
  // written under the graph's lock. `publishedStamp` is the version plus
  // one, shifted left by one, while the node is clean and
  // `publishedBits` holds its value, and 0 otherwise; its low bit is
  // `observed`. A mark that takes the node out of `clean` stores 0 before
  // anything changes (and before it clears `observed`); the value, its
  // bits and the version change only while the node is not clean (a
  // commit, under the claim, stores the bits then); becoming clean stores
  // the stamp, if other computed values read the node or a read outside
  // an evaluation has (`observed`), and so does a read under the lock
  // inside an evaluation that finds the node clean (the reading value
  // becomes its dependent when its evaluation ends). Both stores
  // release. A reader loads the stamp (acquiring), the bits (acquiring),
  // and the stamp again: the same stamp, not 0, means the bits are the
  // value at that version (a value changed in between has a new version,
  // so a new stamp; an evaluation equal to the last keeps the version and
  // the bits).
  // Anything else, and the read takes the lock as before.
  //
  // Inside an evaluation any such stamp will do. Outside one, a read must
  // also leave `observed` set, so that the next mark tells Observation
  // (see `read(owner:in:)`): it takes the bits only from a stamp whose
  // low bit is set, which a node has only while clean and `observed`
  // (the mark that clears `observed` stores 0 first). The first read
  // outside an evaluation after a mark takes the lock, sets `observed`
  // and publishes the bit; the reads after it, on any thread, take no
  // lock until the next mark. So threads that read clean values share no
  // lock, where they used to take the graph's in turn.
  //
  // `Verification/ComputedRead.pml` models it, with six mutants that spin
  // catches (no second load of the stamp, the bits stored after it, no
  // store of 0 on a mark, the low bit set without `observed`, `observed`
  // cleared before that store, a read in an evaluation that publishes a
  // node not clean);
  // `ComputedTests` reads published values on 4 threads while a fifth
  // writes, inside and outside evaluations, under the thread sanitizer
  // too, and checks that Observation is told of a change after a read
  // without the lock.

  /// Takes the value out of reads without the lock: before the mark that
  /// takes it out of `clean`. Under the graph's lock.
  @inline(__always)
  final func unpublish() {
    if isPublished {
      publishedStamp.store(0, ordering: .relaxed)
      isPublished = false
    }
  }

  /// Publishes the value and version for reads without the lock, if the
  /// node is clean and other computed values read it, or reads outside
  /// an evaluation have since the last mark (`observed`), or an
  /// evaluation reads it now (`read`). Not otherwise: a value read by
  /// chains alone, the end of a graph, would pay two stores per update
  /// and two per mark for nothing (3% of kairo mux's time, measured). A
  /// value that gains its first reader is published by that read. Under
  /// the graph's lock and the claim, or with the node clean.
  @inline(__always)
  final func publishIfClean(read: Bool = false) {
    guard publishesWord, mark == .clean, read || observed || dependents.count != 0 else { return }
    // The bits were stored by the last commit (`ComputedBox.commit()`).
    let stamp = (UInt(truncatingIfNeeded: version) &+ 1) << 1 | (observed ? 1 : 0)
    publishedStamp.store(stamp, ordering: .releasing)
    isPublished = true
  }

  /// The published value's bits, or nil when the value is not clean,
  /// published and `observed` now; for a read outside an evaluation,
  /// which registers with Observation when it takes them. The next mark
  /// then tells Observation, as after a read under the lock. Not inlined
  /// into the reader's module: the registrar is the library's.
  @usableFromInline
  final func readObservedPublished() -> UInt? {
    guard let (bits, _) = readPublished(observed: true) else { return nil }
    observation.access()
    return bits
  }

  deinit {
    // See `ComputedGraph`: after this, no walk sees the node.
    ComputedGraph.withLock { _ in
      for index in dependencies.indices { dependencies[index].withSource { $0.removeDependent(self) } }
    }
    // Releasing a dependency may free it, and what it holds in turn,
    // inside this deinit: close to the end of the stack, the releases
    // wait for a frame further up (see `releaseDeferred(_:)`).
    let state = DeliveryContext.current.state
    if DeliveryContext(state: state).isNearStackEnd {
      for index in dependencies.indices { state.pointee.deferredDependencies.append(dependencies[index]) }
    } else {
      for index in dependencies.indices { dependencies[index].release() }
      if !state.pointee.isReleasingComputed,
        !state.pointee.deferredDependencies.isEmpty || !state.pointee.deferredObjects.isEmpty
      {
        Self.releaseDeferred(state)
      }
    }
    dependencies.deallocate()
  }

  /// Releases what freed computed values left to release, one at a
  /// time, until nothing is left, on the thread whose `state` this is.
  ///
  /// Freeing a chain of computed values, each holding the one before
  /// (its closure captures it, its dependencies retain it), frees each
  /// inside the deinit of the one after: a chain tens of thousands deep
  /// would overflow any stack. A deinit closer than
  /// `DeliveryContext.stackReserve` to the end of the stack adds what it
  /// holds to `deferredDependencies` and `deferredObjects` instead, and
  /// returns; the first deinit further up that finds them there, outside
  /// this loop, releases them here. Each release frees values down to the
  /// same depth again, which add theirs, so the stack stays within the
  /// reserve, and nothing is left when the first deinit returns.
  /// `ComputedTests` frees a chain of 20,000 values on a thread of 512 KiB.
  static func releaseDeferred(_ state: UnsafeMutablePointer<DeliveryContext.State>) {
    state.pointee.isReleasingComputed = true
    while !state.pointee.deferredDependencies.isEmpty || !state.pointee.deferredObjects.isEmpty {
      // Taken out of the thread's state before anything is released: a
      // release frees values whose deinits add to the state's lists. (A
      // closure in an array of `Any`, released as `removeLast()` returned
      // it, was released in a release build before the array's count went
      // down: the append of the deinit it ran was lost, and the array
      // corrupted.)
      let dependencies = state.pointee.deferredDependencies
      let objects = state.pointee.deferredObjects
      state.pointee.deferredDependencies = []
      state.pointee.deferredObjects = []
      for dependency in dependencies { dependency.release() }
      for object in objects { object.release() }
    }
    state.pointee.isReleasingComputed = false
  }

  /// Evaluates the closure, its reads tracked, and keeps the result
  /// aside; returns whether it differs from the value. Under the claim.
  func evaluate() -> Bool { fatalError("ComputedNode.evaluate: abstract") }

  /// Makes the result kept aside the value. Returns whether the old value
  /// waits aside in its place, for `dropEvaluated()` to release once the
  /// lock is given back (its deinit may run user code); a value that
  /// needs no release (an `Int`) is overwritten, and then the lock need
  /// not be given back and taken again. Under the claim and the graph's
  /// lock.
  func commit() -> Bool { fatalError("ComputedNode.commit: abstract") }

  /// Releases the old value `commit()` kept aside. Under the claim, after
  /// unlocking the graph's lock.
  func dropEvaluated() { fatalError("ComputedNode.dropEvaluated: abstract") }

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
  ///
  /// With `wave`, the state of a thread whose write was made in a wave
  /// outside every chain's run, a refresh of the chains joins that wave's
  /// end at once (`DeliveryContext.deferRefresh(_:)`, which runs no user
  /// code, so it may run under the lock) rather than as an effect.
  @inline(__always)
  final func notify(
    _ new: Mark,
    pushingTo stack: inout NodeList,
    effects: inout TrivialList<ComputedGraph.Effect>,
    wave: UnsafeMutablePointer<DeliveryContext.State>?
  ) {
    notifications &+= 1
    let old = mark
    if old == .clean { unpublish() }
    if new == .dirty || old == .clean { mark = new }
    if observed {
      observed = false
      effects.append(.observation(Unmanaged.passRetained(observation)))
    }
    guard mark != old || updatingThread != 0 else { return }
    // Not `if let`: binding the optional cost a retain and a release more
    // per marked node with chains.
    if flush != nil {
      if let wave {
        // Pinned, not retained (see `DeliveryContext.deferRefresh(_:)`).
        flush.unsafelyUnwrapped.pin()
        DeliveryContext(state: wave).deferRefresh(.passUnretained(flush.unsafelyUnwrapped))
      } else {
        effects.append(.refresh(.passRetained(flush.unsafelyUnwrapped)))
      }
    }
    stack.append(contentsOf: dependents)
  }

  /// The run of a refresh effect under the flush's gate, for a write
  /// made inside a chain's run (whose causes the wave's entry keeps) or
  /// outside a wave: joins the wave's end, or sends at once. A write
  /// outside every run, in a wave, skips the gate
  /// (`DeliveryContext.deferRefresh(_:)`).
  static func refresh(_ flush: WaveFlush) {
    let context = DeliveryContext.current
    if context.isInWave {
      // Not `flush.changed(in:)`: a refresh keeps no thread in the flush
      // (`deferredBy`), which the wave's end may skip the gate to clear
      // (see `isSent(runner:)`); a second entry sends nothing.
      flush.learn(level: context.state.pointee.waves.level)
      context.deferFlush(flush)
    } else {
      flush.sendLatest()
    }
  }

  /// Brings the value up to date on the thread `runner` and returns
  /// whether its chains have had its version already: then a refresh has
  /// nothing to send, and the wave skips it (see
  /// `DeliveryContext.flushWave()`). Any thread.
  ///
  /// Why a skip is safe: `sentVersion` is set to a version only by a
  /// refresh that, in the same hold of the graph's lock, reads the value
  /// and claims its broadcast on the chains' core, or queues it behind
  /// the thread delivering; the core delivers in the order of its claims
  /// (see `ComputedBox.refresh()`). So a `sentVersion` equal to the
  /// version now means a broadcast of this value was made, or is under way
  /// and will end after every earlier one: the chains end with it, as if
  /// this refresh had run and sent nothing. A version that differs goes
  /// to the refresh, which looks again. The update comes first:
  /// compared before it, a version about to move would look sent.
  /// `Verification/ComputedRefresh.pml` models it, with mutants spin
  /// catches (the comparison before the update; the skip recording the
  /// version as sent; the broadcast claimed after the unlock).
  ///
  /// With `pinned`, the flush of a pinned entry (see
  /// `DeliveryContext.deferRefresh(_:)`): when the chains have had the
  /// version, nothing touches the flush or this node after the unlock
  /// (when no thread waits to be woken), so its pin is removed in the
  /// same hold of the lock; otherwise it is left to a later hold
  /// (`WaveFlush.unpin()`). The pins the thread's earlier sends left go in
  /// this hold too (`DeliveryContext.unpinSent(in:)`).
  ///
  /// With `holds`, the lock is held already, kept from the question
  /// before. With `keepsLock`, a question whose chains have had the
  /// version keeps the lock for the next one, unless threads wait to be
  /// woken (see `DeliveryContext.flushWave()`, "Questions in one hold");
  /// `holds` says on return whether it did.
  @inline(__always)
  final func isSent(runner: Int, unpinning pinned: WaveFlush?, holdingLock holds: inout Bool, keepsLock: Bool) -> Bool {
    if !holds { lockGraph(runner: runner) }
    let wakes = mark == .clean ? false : updateLocked(runner: runner)
    let sent = chainsHaveVersion
    let state = DeliveryContext.state(runner: runner)
    if !state.pointee.waves.unpins.isEmpty { DeliveryContext.unpinSent(in: state) }
    if sent, let pinned, wakes || !pinned.unpin() { state.pointee.waves.unpins.append(.passUnretained(pinned)) }
    holds = sent && keepsLock && !wakes
    if !holds { unlock(waking: wakes, runner: runner) }
    return sent
  }

  /// Whether the chains have had the current version: a broadcast of it
  /// was made, or is under way (see `isSent(runner:)`). Under the lock.
  @inline(__always)
  final var chainsHaveVersion: Bool { hasSent && sentVersion == version }

  /// Takes the graph's lock and brings the value up to date on the thread
  /// `runner`, so that the caller reads what it needs under the lock and
  /// then calls `unlock(waking:)` with the result. By hand rather than
  /// with a closure, for `ComputedBox`, whose closures would capture a
  /// generic value (see `ComputedBox.current(version:)`).
  @inline(__always)
  final func lockUpdated(runner: Int) -> Bool {
    lockGraph(runner: runner)
    return mark == .clean ? false : updateLocked(runner: runner)
  }

  /// Takes the graph's lock on the thread `runner` (the caller's), without
  /// a closure (a closure that copied a generic value out would look up
  /// its metadata on every call), through the thread's own reference to
  /// it (`DeliveryContext.State.graphLock`): on Linux, each
  /// function that reaches the static calls the runtime's `swift_once`,
  /// 5% of kairo deep's time with `Computed` (perf).
  @inline(__always)
  final func lockGraph(runner: Int) {
    DeliveryContext.graphLock(runner: runner)._withUnsafeGuaranteedRef { $0.lock(runner: runner) }
  }

  /// Gives back the lock `lockGraph(runner:)` took.
  @inline(__always)
  final func unlockGraph(runner: Int) {
    DeliveryContext.graphLock(runner: runner)._withUnsafeGuaranteedRef { $0.unlock() }
  }

  /// Gives back the lock `lockUpdated(runner:)` took, and wakes the
  /// threads that wait for the claim if `wakes`.
  @inline(__always)
  final func unlock(waking wakes: Bool, runner: Int) {
    unlockGraph(runner: runner)
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
  /// Claims the node. A `check` then asks each dependency for its
  /// version, in the order of the last evaluation, still under the lock,
  /// and evaluates at the first that moved; a `dirty` evaluates. A
  /// computed dependency that is not clean is brought up to date first,
  /// the same way, in the same loop (`updateLoop(from:to:runner:state:)`),
  /// so a check down a graph takes the lock once. Only an evaluation
  /// runs unlocked: it runs the user's closure. The mark becomes `clean`
  /// unless a mark came meanwhile (then the next read updates again), or
  /// a dependency first read by this evaluation changed before this node
  /// was its dependent (that write told no one). A node another thread
  /// has claimed is waited for, then looked at again.
  ///
  /// Closer than `DeliveryContext.stackReserve` to the end of the
  /// thread's stack, the update moves to a new thread
  /// (`updateOnNewStack(runner:)`). Only here: the loop nests no frames,
  /// and every evaluation it makes runs from its frame, so the stack
  /// grows only through an evaluation's reads, each of which comes here.
  final func updateLocked(runner: Int) -> Bool {
    // The runner is the address of the thread's state.
    let state = DeliveryContext.state(runner: runner)
    var mayMove = true
    while mark != .clean {
      if updatingThread == runner { cycle() }
      if updatingThread != 0 {
        waitForUpdate(runner: runner)
        continue
      }
      if mayMove, DeliveryContext(state: state).isNearStackEnd {
        if updateOnNewStack(runner: runner) { return false }
        // No thread could be made: here, then, once the value has been
        // looked at again (the lock was given back).
        mayMove = false
        continue
      }
      claim(runner: runner, state: state)
      switch checkDependencies(runner: runner) {
      case .done(let moved):
        // The usual case, inlined: no computed dependency to update.
        return finishUpdate(moved: moved, runner: runner, state: state)
      case .update(let dependency):
        return Self.updateLoop(from: Unmanaged.passUnretained(self), to: dependency, runner: runner, state: state)
      }
    }
    return false
  }

  /// What a claimed node's check found: a computed dependency to bring
  /// up to date first (neither clean nor claimed), or whether the node
  /// must evaluate.
  enum CheckOutcome {
    case update(Unmanaged<ComputedNode>)
    case done(moved: Bool)
  }

  /// The update of `updateLocked(runner:)`, from `entry` (claimed, its
  /// check come to `first`, a computed dependency neither clean nor
  /// claimed), in a loop rather than a recursion: a node's check that
  /// comes to a computed dependency that is not clean claims it and goes
  /// on with its check, and once that dependency is done (evaluated, or
  /// found unmoved and made clean), goes back to the node that read it,
  /// which compares the dependency's version with the one it read. The
  /// nodes claimed are the thread's `updating`, each with the one that
  /// read it as its `updatingParent`, so the way back is that list;
  /// where each node's check stands is in the node
  /// (`checkedDependencies`), with the notification count at its claim
  /// (`seenNotifications`). A recursion through three functions per node
  /// (the update, the check of the dependencies, and a dependency's
  /// version) took as many instructions but a third more time on a chain
  /// of 50 values, likely its returns mispredicted past the depth the
  /// processor predicts; and after a write it nested as deep as the
  /// chain, moving to new threads (Performance.md, "Checking known
  /// dependencies in a loop").
  ///
  /// Claims, waits, marks and evaluations are those of the recursion, in
  /// the same order and under the same holds of the lock:
  /// `Verification/Computed.pml` models a node's claim, check and
  /// evaluation; `Verification/ComputedCycle.pml` models the descent
  /// through claims and the ascent (`path`, `seen`) as this loop makes
  /// them. Nodes are used unretained: `entry` is kept by the caller,
  /// and each node claimed after it by the dependencies of the node that
  /// read it, which its claim keeps unchanged.
  @inline(never)
  private static func updateLoop(
    from entry: Unmanaged<ComputedNode>,
    to first: Unmanaged<ComputedNode>,
    runner: Int,
    state: UnsafeMutablePointer<DeliveryContext.State>
  ) -> Bool {
    var node = entry
    var outcome = CheckOutcome.update(first)
    while true {
      switch outcome {
      case .update(let dependency):
        node = dependency
        outcome = node._withUnsafeGuaranteedRef {
          $0.claim(runner: runner, state: state)
          return $0.checkDependencies(runner: runner)
        }
      case .done(let moved):
        let reader = node._withUnsafeGuaranteedRef { $0.updatingParent }
        let wakes = node._withUnsafeGuaranteedRef { $0.finishUpdate(moved: moved, runner: runner, state: state) }
        let version = node._withUnsafeGuaranteedRef { $0.version }
        if node.toOpaque() == entry.toOpaque() { return wakes }
        if wakes {
          // Woken with the lock given back for the moment (a waiter
          // takes its stripe's lock, then the graph's: never the other
          // way round). The version was read before.
          node._withUnsafeGuaranteedRef {
            $0.unlock(waking: true, runner: runner)
            $0.lockGraph(runner: runner)
          }
        }
        node = reader.unsafelyUnwrapped
        outcome = node._withUnsafeGuaranteedRef { reader in
          if reader.dependencies[reader.checkedDependencies].version != version { return .done(moved: true) }
          reader.checkedDependencies += 1
          return reader.checkDependencies(runner: runner)
        }
      }
    }
  }

  /// Claims the node for an update on the thread `runner`, whose state
  /// is `state`. Under the graph's lock, the node neither clean nor
  /// claimed.
  @inline(__always)
  private func claim(runner: Int, state: UnsafeMutablePointer<DeliveryContext.State>) {
    updatingThread = runner
    seenNotifications = notifications
    updatingParent = state.pointee.updating
    state.pointee.updating = Unmanaged.passUnretained(self)
    checkedDependencies = 0
  }

  /// Goes on with the check of the claimed node's dependencies from
  /// `checkedDependencies`: a `dirty` node evaluates; a dependency whose
  /// version moved since the last evaluation read it ends the check; a
  /// computed dependency that is not clean is brought up to date first
  /// (returned, for the loop to claim), or waited for when another thread
  /// has claimed it, then looked at again. Under the claim and the graph's
  /// lock (which a wait gives back for its duration).
  @inline(__always)
  private func checkDependencies(runner: Int) -> CheckOutcome {
    if mark == .dirty { return .done(moved: true) }
    while checkedDependencies < dependencies.count {
      let dependency = dependencies[checkedDependencies]
      guard let version = dependency.withSource({ $0.versionIfKnown() }) else {
        // Only a computed value's version is ever unknown.
        let next = Unmanaged<ComputedNode>.fromOpaque(dependency.source.toOpaque())
        let claimed = next._withUnsafeGuaranteedRef { $0.updatingThread }
        if claimed == runner { next._withUnsafeGuaranteedRef { $0.cycle() } }
        if claimed != 0 {
          next._withUnsafeGuaranteedRef { $0.waitForUpdate(runner: runner) }
          continue
        }
        return .update(next)
      }
      if version != dependency.version { return .done(moved: true) }
      checkedDependencies += 1
    }
    return .done(moved: false)
  }

  /// Ends the claimed node's update: evaluates if `moved`, else marks it
  /// `clean` if no mark came since the claim; gives the claim back, and
  /// returns whether threads wait for it. Under the claim and the
  /// graph's lock, held on return too.
  @inline(__always)
  private func finishUpdate(
    moved: Bool,
    runner: Int,
    state: UnsafeMutablePointer<DeliveryContext.State>
  ) -> Bool {
    let seen = seenNotifications
    if moved {
      unlockGraph(runner: runner)
      let changed = Tracking.evaluate(self, in: state)
      if Tracking.rewires(self) {
        finishRewiredUpdate(changed: changed, seen: seen, runner: runner, state: state)
      } else {
        lockGraph(runner: runner)
        state.pointee.updating = updatingParent
        finishEvaluation(changed: changed, seen: seen, runner: runner)
      }
    } else {
      state.pointee.updating = updatingParent
      if notifications == seen {
        mark = .clean
        publishIfClean()
      }
    }
    updatingThread = 0
    let wakes = hasWaiters
    hasWaiters = false
    return wakes
  }

  /// Brings the value up to date on a new thread, whose stack
  /// (`newStackSize`) is its own, for a caller close to the end of its
  /// thread's stack. An evaluation's reads update what they read,
  /// evaluating it in turn, so the first read of a chain of computed
  /// values tens of thousands deep (whose evaluations have yet to find
  /// their dependencies) nests as deep: it goes on on a new thread each
  /// time a stack runs short, rather than overflow it. (A check of
  /// dependencies found before nests nothing: see
  /// `updateLoop(from:to:runner:state:)`.)
  ///
  /// The calling thread waits for the new one, its wait noted as a wait
  /// for a claim is (`DeliveryContext.State.waitingFor`), so that a cycle
  /// through the new thread stops with its message
  /// (`stopIfWaitingForItself(runner:)`): the new thread claims this
  /// value, and a wait of its own for a claim of the calling thread's
  /// comes back to it. Any mark, claim or wait meanwhile is as for an
  /// update on another thread. The closure then runs on the new thread,
  /// not the reading one. Returns false, having done nothing, when no
  /// thread could be made. Under the graph's lock, held on return too;
  /// the new thread wakes the threads waiting for the claim.
  /// `Verification/ComputedCycle.pml` models the move (`HOPS`): without
  /// the note (`MUTANT_MOVE_UNNOTED`), spin finds a cycle through the new
  /// thread waiting forever. `ComputedTests` reads a chain of computed
  /// values too deep for its thread's stack, and a cycle as deep.
  @inline(never)
  private func updateOnNewStack(runner: Int) -> Bool {
    let state = DeliveryContext.state(runner: runner)
    state.pointee.waitingFor = Unmanaged.passUnretained(self)
    unlockGraph(runner: runner)
    var update = { [self] in
      let runner = DeliveryContext.current.runner
      lockGraph(runner: runner)
      let wakes = mark == .clean ? false : updateLocked(runner: runner)
      unlock(waking: wakes, runner: runner)
    }
    // The closure stays on this frame, which waits for the thread to end.
    let status = withUnsafeMutablePointer(to: &update) { update in
      _chaining_run_on_new_thread(
        Self.newStackSize,
        { update in update.unsafelyUnwrapped.assumingMemoryBound(to: (() -> Void).self).pointee() },
        update
      )
    }
    lockGraph(runner: runner)
    state.pointee.waitingFor = nil
    return status == 0
  }

  /// The stack of a thread that `updateOnNewStack(runner:)` makes: 4
  /// MiB, taken as the stack grows. Not more: the thread sanitizer keeps a
  /// fixed record of each thread's calls (65,536), which a chain of
  /// computed values 16 MiB deep overflowed in a debug build; 8 MiB did
  /// not (`ComputedTests`' chain too deep for its reading thread, under
  /// `swift test --sanitize=thread`).
  static var newStackSize: Int { 4 << 20 }

  /// `finishUpdate(moved:runner:state:)` after an evaluation that read
  /// other dependencies than the last one (`Tracking.rewires(_:)`): with
  /// the graph's lock given back, rewrites the dependencies, then takes
  /// the lock and finishes the evaluation. The dropped dependencies wait
  /// on this frame's stack until they are released. Out of line: inlined
  /// into the update loop, it cost values that never rewire 1.7% more
  /// instructions (kairo mux with `Computed`), 2.1% (deep), in register
  /// moves around it.
  @inline(never)
  private func finishRewiredUpdate(
    changed: Bool,
    seen: UInt64,
    runner: Int,
    state: UnsafeMutablePointer<DeliveryContext.State>
  ) {
    // Room for every dependency past those read in order: at most that
    // many are dropped.
    let room = Swift.max(dependencies.count - matched, 1)
    withUnsafeTemporaryAllocation(of: ComputedDependency.self, capacity: room) { buffer in
      let (added, droppedCount) = Tracking.rewire(self, droppingInto: buffer.baseAddress.unsafelyUnwrapped)
      lockGraph(runner: runner)
      state.pointee.updating = updatingParent
      finishEvaluation(
        changed: changed,
        added: added,
        dropped: UnsafeBufferPointer(start: buffer.baseAddress, count: droppedCount),
        seen: seen,
        runner: runner
      )
    }
  }

  /// What `updateLocked(runner:)` does after an evaluation, under the
  /// claim and the graph's lock: links the new dependencies and unlinks
  /// the dropped ones, keeps a changed value, marks the node `clean` if
  /// nothing came since the mark `seen`, and releases what is no longer
  /// needed (with the lock given back meanwhile: a deinit may run user
  /// code).
  private func finishEvaluation(
    changed: Bool,
    added: Range<Int>,
    dropped: UnsafeBufferPointer<ComputedDependency>,
    seen: UInt64,
    runner: Int
  ) {
    for index in added { dependencies[index].withSource { $0.addDependent(self) } }
    for dependency in dropped { dependency.withSource { $0.removeDependent(self) } }
    var keeps = false
    if changed {
      keeps = commit()
      version &+= 1
    }
    if notifications == seen {
      mark = .clean
      for index in added where dependencies[index].withSource({ $0.versionIfKnown() }) != dependencies[index].version {
        mark = .check
        break
      }
      publishIfClean()
    }
    if keeps || !dropped.isEmpty || !added.isEmpty {
      // The flush the new dependencies link to, read in this hold of the
      // lock rather than in one of each link's own. One installed after
      // it links every dependency itself (`ComputedBox.makeFlush()`), the
      // new ones included: they are in `dependencies` already.
      let chainsFlush = added.isEmpty ? nil : flush
      // Still claimed: readers of the clean value go on, and no other
      // thread touches the slots or the dependencies.
      unlockGraph(runner: runner)
      dropEvaluated()
      for dependency in dropped { dependency.release() }
      for index in added { dependencies[index].withSource { link($0, chainsFlush: chainsFlush) } }
      lockGraph(runner: runner)
    }
  }

  /// `finishEvaluation(changed:added:dropped:seen:runner:)` for an
  /// evaluation that read what the last one read, in the same order (the
  /// usual case): no dependency to link, unlink or release.
  @inline(__always)
  private func finishEvaluation(changed: Bool, seen: UInt64, runner: Int) {
    var keeps = false
    if changed {
      keeps = commit()
      version &+= 1
    }
    if notifications == seen {
      mark = .clean
      publishIfClean()
    }
    if keeps {
      unlockGraph(runner: runner)
      dropEvaluated()
      lockGraph(runner: runner)
    }
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
  ///
  /// First, a thread that would wait for itself stops with a message
  /// (`stopIfWaitingForItself(runner:)`); then it notes what it waits
  /// for (`DeliveryContext.State.waitingFor`), in the same hold of the
  /// graph's lock, until it holds the lock again after the wait.
  private func waitForUpdate(runner: Int) {
    stopIfWaitingForItself(runner: runner)
    let state = DeliveryContext.state(runner: runner)
    state.pointee.waitingFor = Unmanaged.passUnretained(self)
    hasWaiters = true
    unlockGraph(runner: runner)
    ParkingLot.shared.wait(for: self) {
      ComputedGraph.withLock { _ in
        if updatingThread == 0 { return true }
        hasWaiters = true
        return false
      }
    }
    lockGraph(runner: runner)
    state.pointee.waitingFor = nil
  }

  /// Stops with a message naming the cycle when the thread that claimed
  /// this value waits, directly or through the claims of other threads,
  /// for a claim the calling thread (`runner`) holds: each would wait
  /// for the other forever. Values that read each other, read on two
  /// threads at once, come here rather than to `cycle()`: each thread
  /// claims one of them, then reads the other.
  ///
  /// Under the graph's lock, which guards the claims and every thread's
  /// `updating` and `waitingFor`. A thread notes its wait in the same
  /// hold of the lock as this check, so of the threads that come to wait
  /// for each other, the last to check sees every other's wait.
  /// `Verification/ComputedCycle.pml` models it; with the wait noted
  /// after the lock is given back (`MUTANT_NOTE_OUTSIDE_LOCK`), or not
  /// followed (`MUTANT_NO_WALK`), spin finds the threads waiting forever.
  /// Nor does it stop a wait that ends: a thread sleeps until the claim
  /// is given back and then looks at the value again, so while its note
  /// stands, the claim it names holds it; the note is cleared when the
  /// wait ends (the model asserts no stop without a cycle, and finds one
  /// with the note left, `MUTANT_NO_CLEAR`). `ComputedTests` reads rings
  /// of 2 and 3 values on as many threads.
  ///
  /// Another thread's state is read through its claim's `runner`, the
  /// state's address: a thread that holds a claim is inside an update,
  /// and its state is freed only when the thread ends. The nodes a note
  /// or an `updating` names are alive: the noting thread's caller holds
  /// the one it waits for, and each node it updates.
  private func stopIfWaitingForItself(runner: Int) {
    var waited: ComputedNode = self
    var claims: [(node: ComputedNode, owner: Int)] = []
    while true {
      let owner = waited.updatingThread
      // An owner seen before is a cycle without this thread: the last of
      // its threads to wait stopped it.
      guard owner != 0, !claims.contains(where: { $0.owner == owner }) else { return }
      claims.append((waited, owner))
      if owner == runner { Self.stopWaitingCycle(claims) }
      let ownerState = DeliveryContext.state(runner: owner)
      guard let next = ownerState.pointee.waitingFor else { return }
      waited = next.takeUnretainedValue()
    }
  }

  /// Stops with the message of `stopIfWaitingForItself(runner:)`: each
  /// claim, the values its thread updates from it inward (the innermost
  /// reads the next claim), and the first claim again.
  private static func stopWaitingCycle(_ claims: [(node: ComputedNode, owner: Int)]) -> Never {
    var names: [String] = []
    for (claimed, owner) in claims {
      names += updates(on: DeliveryContext.state(runner: owner), from: claimed)
    }
    names.append(claims[0].node.name)
    fatalError(
      "Computed.value: a computed value reads itself, through values read on \(claims.count) threads at once "
        + "that would wait for each other forever: \(Self.describeCycle(names))"
    )
  }

  /// The rank nodes of the dependencies of the last evaluation, read
  /// when no update holds the claim (an update that is under way may
  /// change them): those it adds later, it links itself.
  final func dependencyRankNodes() -> [any Ranked] {
    let runner = DeliveryContext.current.runner
    lockGraph(runner: runner)
    precondition(
      updatingThread != runner,
      "Computed.chain(): a chain subscribed to \(name) from inside its own evaluation"
    )
    while updatingThread != 0 { waitForUpdate(runner: runner) }
    let nodes = dependencies.indices.map { dependencies[$0].withSource { $0.rankNode } }
    unlockGraph(runner: runner)
    return nodes
  }

  /// Wakes the threads waiting for the claim, after unlocking.
  final func wakeWaiters() {
    ParkingLot.shared.withLock(self) { ParkingLot.shared.wakeAll(self) }
  }

  /// Links a new dependency's rank to this value's (see `RankGraph`):
  /// to its flush when it has chains (`chainsFlush`, read under the
  /// graph's lock), and to its core, so that what reads this value ranks
  /// above what this value reads.
  func link(_ source: ComputedSource, chainsFlush: WaveFlush?) {
    fatalError("ComputedNode.link: abstract")
  }

  /// Stops with a message naming the cycle through this node: it is
  /// being updated on this thread, which reads it again.
  func cycle() -> Never {
    let names = Self.updates(on: DeliveryContext.current.state, from: self) + [name]
    fatalError("Computed.value: a computed value reads itself: \(Self.describeCycle(names))")
  }

  /// The names of the values the thread of `state` updates, from `outer`
  /// in to its innermost update (following `updatingParent` out from
  /// there), for the cycle checks' messages. Under the graph's lock, for
  /// another thread's state.
  private static func updates(
    on state: UnsafeMutablePointer<DeliveryContext.State>,
    from outer: ComputedNode
  ) -> [String] {
    var names: [String] = []
    var next = state.pointee.updating
    while let node = next?.takeUnretainedValue() {
      names.append(node.name)
      if node === outer { break }
      next = node.updatingParent
    }
    return names.reversed()
  }

  /// The names of a cycle's values joined by arrows, the first and last
  /// eight of a longer one around the count of those left out: a cycle
  /// of a chain thousands deep would otherwise fill the message.
  static func describeCycle(_ names: [String]) -> String {
    guard names.count > 16 else { return names.joined(separator: " -> ") }
    return (names.prefix(8) + ["… \(names.count - 16) more …"] + names.suffix(8)).joined(separator: " -> ")
  }
}
