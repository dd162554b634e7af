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

  @usableFromInline
  init(_ initial: State) {
    value = initial
  }

  deinit {
    // The holder is gone: no write will broadcast again.
    core.senderEnded()
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

  /// Subscribes a finished chain and, in the same step, takes the value its
  /// `sync()` sends.
  ///
  /// Under the lock no write can come in between: every write made
  /// before is in the fetched value and reaches the chain no other way, and
  /// every write made after reaches it as an event. `fetched` runs under the
  /// lock and returns `nil` when there is nothing to fetch.
  func attach(
    _ context: _ChainContext,
    _ handler: @escaping (Event) -> Void,
    fetched: (inout State) -> Event?
  ) {
    let subscription = core.makeSubscription(gate: context.gate, handler: handler)
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
    // Not `write`: its type-erased garbage would box the old value.
    let (claim, old) = withLock { stored, coreState -> (_SenderCore<Event>.Claim, State?) in
      if areEqual(stored, newValue) { return (.none, nil) }
      let old = stored
      stored = newValue
      return (core.claim(event(newValue), in: &coreState), old)
    }
    _ = consume old
    if case .deliver = claim { core.run(claim, event(newValue)) }
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
  /// unlocking, since a deinit may run user code.
  @discardableResult
  func writeEvents<Result>(
    _ update: (inout State) -> (events: [Event], result: Result, garbage: Any?)
  ) -> Result {
    let (claim, events, result, garbage) = withLock { state, coreState in
      let (events, result, garbage) = update(&state)
      let claim = core.claim(contentsOf: events, in: &coreState)
      return (claim, events, result, garbage)
    }
    _ = consume garbage
    if let first = events.first { core.run(claim, first) }
    return result
  }

  /// Changes the state and broadcasts at most one event.
  ///
  /// The common case of `writeEvents(_:)`, without building an array.
  @inlinable @inline(__always)
  func write(_ update: (inout State) -> (event: Event?, garbage: Any?)) {
    let (claim, event, garbage) = withLock { state, coreState -> (_SenderCore<Event>.Claim, Event?, Any?) in
      let (event, garbage) = update(&state)
      guard let event else { return (.none, nil, garbage) }
      return (core.claim(event, in: &coreState), event, garbage)
    }
    _ = consume garbage
    if let event { core.run(claim, event) }
  }

  /// Changes the state and broadcasts exactly the event `update` returns.
  ///
  /// The common case of `write(_:)` for a change that always sends one
  /// event and releases nothing: no optionals to check after unlocking.
  @inlinable @inline(__always)
  func writeEvent(_ update: (inout State) -> Event) {
    let (claim, event) = withLock { state, coreState -> (_SenderCore<Event>.Claim, Event) in
      let event = update(&state)
      return (core.claim(event, in: &coreState), event)
    }
    core.run(claim, event)
  }
}
