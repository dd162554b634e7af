// MARK: - flatMapLatest

extension Chain {
  /// Turns each value into a chain, and passes on the values of the latest
  /// one only.
  ///
  /// Use it when a value selects another source to follow: the selected
  /// item's title, the current account's balance. Each value that reaches
  /// this step calls `transform`, which returns a chain, usually started
  /// from something the value holds (`item.title.chain()`), with any steps
  /// of its own. The step finishes that chain, drops the one it followed
  /// before, and from then on passes on what the new one delivers. When the
  /// new chain's source is ``Fetchable``, its current value is sent at once,
  /// as ``sync()`` would send it.
  ///
  /// ```swift
  /// final class Folder {
  ///   let title: ValueHolder<String>
  ///   init(_ title: String) { self.title = ValueHolder(title) }
  /// }
  ///
  /// let inbox = Folder("Inbox")
  /// let archive = Folder("Archive")
  /// let selected = ValueHolder(inbox)
  /// let observer = selected.chain()
  ///   .flatMapLatest { folder in folder.title.chain() }
  ///   .do { print("title:", $0) }
  ///   .sync()
  /// // Prints "title: Inbox"
  /// inbox.title.value = "Inbox (1)"
  /// // Prints "title: Inbox (1)"
  /// selected.value = archive
  /// // Prints "title: Archive"
  /// inbox.title.value = "Inbox (2)"  // no longer followed: prints nothing
  /// archive.title.value = "Old mail"
  /// // Prints "title: Old mail"
  /// ```
  ///
  /// - Parameters:
  ///   - transform: Called with every value that reaches this step; returns
  ///     the chain to follow from then on, unfinished (without `end()` or
  ///     `sync()`): the step consumes and finishes it.
  ///   - isolation: Where `transform` runs. Leave it out: it is the
  ///     isolation of the code that builds the chain. Built on an actor (in
  ///     a `@MainActor` type, an `actor`), `transform` runs on that actor,
  ///     at once when the value arrives there and nothing waits, otherwise
  ///     queued there, in order. Built in nonisolated code, it runs on the
  ///     delivering thread.
  /// - Returns: A chain of the values of the latest inner chain.
  ///
  /// ### When values are sent
  /// - ``sync()`` sends the outer source's current value to `transform`, and
  ///   the inner chain it returns sends its own current value when its source
  ///   is ``Fetchable``: the chain is synced through both. ``end()`` sends
  ///   nothing until the outer source sends; then the same happens.
  /// - After a switch, no value of the replaced inner chain reaches the later
  ///   steps, even one that another thread was delivering: the values of the
  ///   new one follow those of the old one, never the other way round.
  /// - Inside a wave (a write and what its delivery causes, or a
  ///   ``withBatchedUpdates(_:)`` closure), the inner values are sent at
  ///   the wave's end, in order, each once, without those of an inner chain
  ///   that the wave replaced: a wave that changes the old inner source and
  ///   switches sends only what the new selection delivers.
  ///
  /// ### Threads
  /// `transform` runs where `isolation` says. The later steps run on the
  /// thread that delivers the inner chain's value: the thread that writes
  /// the inner source, the thread that switched (for the value sent on a
  /// switch), another thread already delivering through this step, or the
  /// actor a step of the inner chain moved to. So the returned chain may
  /// deliver on any thread: a later step written on an actor hops back to
  /// it. The inner values enter the later steps through a gate of this step,
  /// one value at a time, in the order they reach it, with their causes.
  ///
  /// ### Retention
  /// The finished observer holds `transform` (and what it captures)
  /// strongly, and the inner chain it returned last: that chain holds its
  /// source as any chain does (not at all, unless it was started from
  /// `retain()`). The replaced inner chain is ended and released at the
  /// switch. Invalidating or releasing the observer ends the inner chain
  /// too, and releases all of it.
  ///
  /// ### Reentrancy
  /// A handler of the later steps may write to the outer or to the inner
  /// source: that value was caused by this chain's own delivery, so the
  /// chain skips it as an echo, whichever source it enters through (it does
  /// not switch on a selection it wrote itself), and a two-way binding
  /// through the step settles. The source's other chains receive it.
  public consuming func flatMapLatest<Inner, InnerSource>(
    _ transform: @escaping (Value) -> Chain<Inner, InnerSource>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Inner, Source> {
    isolated(to: isolation).appendingFlatMapLatest(transform).onAnyThread()
  }

  /// The step of ``flatMapLatest(_:isolation:)``, after its hop.
  consuming func appendingFlatMapLatest<Inner, InnerSource>(
    _ transform: @escaping (Value) -> Chain<Inner, InnerSource>
  ) -> Chain<Inner, Source> {
    // As `sync()` would: it is available when the source is fetchable.
    let fetching = InnerSource.self is any Fetchable.Type
    let build = self.build
    return Chain<Inner, Source>(isolation: isolation) { given, context in
      let downstream: (Inner) -> Void
      if let given { downstream = given } else { downstream = { _ in } }
      let step = LatestInnerChain(
        transform: transform,
        fetching: fetching,
        outerGate: context.gate,
        downstream: downstream
      )
      context.addHopGate(step.gate)
      context.addInvalidationHandler { step.end() }
      // A switch sends at the wave's end: the step ranks above what feeds
      // it, as a combine does (see `RankGraph`).
      RankGraph.beginBuilding(step.flush, in: context)
      build({ value in step.switchTo(value) }, context)
      RankGraph.endBuilding(in: context)
    }
  }
}

// MARK: - LatestInnerChain

/// The inner chain of one finished chain's ``Chain/flatMapLatest(_:isolation:)``
/// step, and the gate its values enter the rest of the chain through.
///
/// Outer values call `switchTo(_:)` one at a time: they arrive through the
/// outer chain's gate (or a hop's), which runs one value at a time. Each one
/// finishes a new inner chain, whose values go through `gate` to the later
/// steps. Each inner chain is numbered: a value whose chain is no longer the
/// latest is dropped at the gate, so a value that another thread was
/// delivering when the chain was replaced never follows the new chain's
/// values (invalidating the old observer from inside a delivery, as a switch
/// does, does not wait for that thread).
///
/// A switch can run inside an inner delivery on the same thread, through a
/// command that is never an echo: a suspender resumed by a later step
/// replays the held outer value. The number is checked again before the new
/// observer is kept, so that even nested switches keep only the latest.
///
/// A value of an inner chain runs the later steps with the outer chain's
/// gate among its causes, as if it had come through that gate: a value that
/// a later step writes back to the outer source is an echo, and the outer
/// gate skips it, as for the chain's other steps.
final class LatestInnerChain<Value, Inner, InnerSource: Chainable>: @unchecked Swift.Sendable {
  // @unchecked: the mutable state is in `state`, under its lock; the other
  // stored properties are constants. `transform` runs only in `switchTo`,
  // which the outer chain calls one value at a time; `downstream` runs
  // only inside `gate`. Values that are not `Swift.Sendable` cross threads
  // here as they would without the step: the inner source's sender owns
  // them, and the gate only moves them.

  /// The gate the inner values enter the later steps through. A hop gate of
  /// the outer observer: closed when it is invalidated.
  let gate = DeliveryGate(held: false)
  private let transform: (Value) -> Chain<Inner, InnerSource>
  /// Whether a new inner chain sends its current value, as `sync()` would.
  private let fetching: Bool
  /// The outer observer's gate, a cause of every value this step passes on.
  private let outerGate: DeliveryGate
  private let downstream: (Inner) -> Void
  private let state = Protected(State())
  /// Sends the values of the wave's inner chain at the wave's end (see
  /// `pending`).
  private(set) var flush: WaveFlush!
  /// Inside a wave: the inner values that arrived, in order, each with
  /// the number of its chain; at the wave's end, those whose chain is
  /// still the latest are sent. So a wave that writes the inner source and
  /// switches sends only what the final selection delivers: never a value
  /// of a chain the wave replaced. Touched only under `gate`, as the
  /// flush's sends.
  @exclusivity(unchecked) private var pending: [(value: Inner, generation: UInt)] = []
  /// The building thread's next combine rank when this step was built:
  /// every combine after the step takes this rank or a higher one. The
  /// combines of an inner chain, built later, take ranks far below it
  /// (`innerRanks`), so that a wave's end sends them before the combines
  /// after the step, as it would had they been built with the chain.
  private let rankBase: Int

  private struct State {
    /// The number of the latest inner chain: only its values pass the gate.
    /// Incremented at each switch, and when the step ends.
    var generation: UInt = 0
    /// The observer of the latest inner chain, once it is started; nil
    /// during a switch and after the end.
    var current: Observer?
    /// Set when the outer observer is invalidated: no inner chain is kept
    /// afterwards.
    var ended = false
  }

  init(
    transform: @escaping (Value) -> Chain<Inner, InnerSource>,
    fetching: Bool,
    outerGate: DeliveryGate,
    downstream: @escaping (Inner) -> Void
  ) {
    self.transform = transform
    self.fetching = fetching
    self.outerGate = outerGate
    self.downstream = downstream
    rankBase = DeliveryContext.current.state.pointee.builtRank
    flush = WaveFlush(gate: gate) { [weak self] in self?.sendPending() }
    // At `rankBase` at least: after the combines of the inner chains
    // (built far below it), before those after it. The build links what
    // feeds the step, before it and in its inner chains, to raise it
    // further when needed (see `RankGraph`).
    flush.takeRank()
  }

  /// How far below `rankBase` an inner chain's combines rank: more than
  /// any chain builds combines, so that they stay below the combines
  /// after this step; a flatMapLatest inside the inner chain goes as far
  /// below again.
  static var innerRanks: Int { 1 << 32 }

  /// Replaces the inner chain with the one `transform(value)` returns.
  ///
  /// Called by the outer chain, inside its delivery: the old observer's
  /// invalidation therefore does not wait for a value of it running on
  /// another thread; the new generation drops that value at the gate.
  func switchTo(_ value: Value) {
    let inner = transform(value)
    // From here on, the values of the replaced chain are dropped.
    let (generation, previous) = state.withLock { state in
      state.generation &+= 1
      defer { state.current = nil }
      return (state.generation, state.current)
    }
    previous?.invalidate()

    let observer = Observer()
    let deliver: (Inner) -> Void = { [self] value in
      guard state.withLock({ $0.generation == generation }) else { return }
      let context = DeliveryContext.current
      if context.isInWave {
        pending.append((value, generation))
        flush.changed(in: context)
        return
      }
      send(value, in: context)
    }
    // The inner chain's combines take ranks below the combines after this
    // step (see `rankBase`), from this thread's counter, restored after.
    let building = DeliveryContext.current.state
    let savedRank = building.pointee.builtRank
    building.pointee.builtRank = rankBase - Self.innerRanks
    // Its sources and joins feed this step's flush (see `RankGraph`).
    RankGraph.beginBuilding(flush, in: observer)
    inner.build(
      { [gate] value in gate.deliver(value, to: deliver, in: DeliveryContext.current) },
      observer
    )
    RankGraph.endBuilding(in: observer)
    building.pointee.builtRank = savedRank
    // Started before anyone else can reach it, as `end()` and `sync()` do:
    // its fetch, if any, runs here, through `gate`.
    observer.start(fetching: fetching)

    // Kept only while it is still the latest: the step may have ended
    // meanwhile (an `invalidate()` made from inside a delivery does not wait
    // for this one).
    let kept = state.withLock { state in
      guard !state.ended, state.generation == generation else { return false }
      state.current = observer
      return true
    }
    if !kept { observer.invalidate() }
  }

  /// Passes an inner value on to the later steps, under `gate`, with the
  /// outer gate among its causes.
  private func send(_ value: Inner, in context: DeliveryContext) {
    context.push(outerGate)
    downstream(value)
    context.popCause()
  }

  /// At a wave's end, under `gate`: sends the values the waves left
  /// pending, in order, each once, those whose inner chain is still the
  /// latest. (Another thread's wave may have left some: its own flush then
  /// finds none left.)
  private func sendPending() {
    let values = pending
    pending = []
    let context = DeliveryContext.current
    for (value, generation) in values where state.withLock({ $0.generation == generation }) {
      send(value, in: context)
    }
  }

  /// Ends the inner chain: run once, when the outer observer is invalidated,
  /// after its gates (`gate` among them) are closed.
  func end() {
    let current = state.withLock { state in
      state.ended = true
      state.generation &+= 1
      defer { state.current = nil }
      return state.current
    }
    current?.invalidate()
  }
}
