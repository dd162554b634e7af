// MARK: - Waiting for observers

/// What a sender core does besides broadcasting and subscribing: waits for
/// observers, the end of the sender, removal as its subscriptions ask for
/// it, and the wait of an `invalidate()` for a run made without claiming a
/// gate (Verification/SenderCore.pml's `unsubscribe`, `deliversAlone` and
/// `awaitRunAlone`).
extension _SenderCore {
  /// Suspends until at least `count` observers are subscribed, or the task
  /// is cancelled.
  func waitForObservers(_ count: Int) async {
    let key = state.withLock { state -> UInt64 in
      defer { state.nextWait += 1 }
      return state.nextWait
    }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let ready = state.withLock { state -> Bool in
          if state.live >= count || state.cancelledWaits.remove(key) != nil { return true }
          state.observerWaiters[key] = (count, continuation)
          return false
        }
        if ready { continuation.resume() }
      }
    } onCancel: {
      let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
        guard let waiter = state.observerWaiters.removeValue(forKey: key) else {
          state.cancelledWaits.insert(key)
          return nil
        }
        return waiter.continuation
      }
      waiter?.resume()
    }
  }

  /// Resumes the waits that `live` observers satisfy. Under the lock:
  /// resuming a continuation only schedules its task, and runs no user
  /// code.
  func resumeObserverWaiters(in state: inout State) {
    for (key, waiter) in state.observerWaiters where state.live >= waiter.count {
      state.observerWaiters[key] = nil
      waiter.continuation.resume()
    }
  }
}

extension _SenderCore: Ranked {
  /// A core is written at once: it takes the level of what writes it.
  var joinsWave: Bool { false }

  var rankLevel: Int { rankLinks?.level ?? 0 }

  /// `links`, unretained (this core keeps it: `rankLinks` is set once)
  /// and without the protocol: reached from code generic over `Value`
  /// (`ComputedBox`), a call through `Ranked`, or this core made `any
  /// Ranked`, looked this class's metadata up in the runtime's cache
  /// (some 300 instructions) each time. Under `RankGraph.lock`.
  final var unretainedRankPlace: Unmanaged<RankLinks> {
    if let rankLinks { return .passUnretained(rankLinks) }
    return .passUnretained(links)
  }

  func raise(to level: Int) -> Bool { links.raise(to: level) }
}

extension _SenderCore: SubscriptionOwner {
  /// Removes `subscription`; first, when `awaitingAlone`, waits until this
  /// core no longer runs its chain without claiming its gate. Called by the
  /// `invalidate()` call that closed the gate.
  ///
  /// Such a run happens only while a thread delivers, before
  /// `finishLocked()`, from a list of that chain alone: the list it claimed
  /// is then the current one or, when it was replaced meanwhile, the first
  /// one retired. So this waits only for that chain's own handler, never
  /// for another chain's. Like `DeliveryGate.close()`, it does not wait
  /// when called from inside a delivery. With no such run, which is the
  /// common case, the check and the removal take the lock once.
  ///
  /// Returns whether no such run is in progress any more (none was, or
  /// this waited for it): false only from inside a delivery that did not
  /// wait for one.
  @discardableResult
  func unsubscribe(_ subscription: SubscriptionBase, awaitingAlone: Bool) -> Bool {
    let removed = state.withLock { state in
      if awaitingAlone, deliversAlone(to: subscription.gate, in: state) { return false }
      remove(subscription, in: &state)
      return true
    }
    if removed { return true }
    let waits = DeliveryContext.current.depth == 0
    if waits {
      awaitRunAlone(of: subscription.gate)
    }
    state.withLock { remove(subscription, in: &$0) }
    return waits
  }

  /// Whether a thread is delivering from a list whose only entry is a
  /// chain with `gate`, and may run it without claiming the gate. Under
  /// the lock.
  ///
  /// Keyed by the gate rather than the entry, so that a later
  /// `invalidate()` call, which no longer has the entry, can ask too. The
  /// list a delivering thread claimed is never changed in place while it
  /// reads it (see `change(_:_:)`), so the entry stays in it until that
  /// delivery ends, even once removed from the current list.
  ///
  /// The claim and this check pair up, so that either the delivering
  /// thread sees the gate closed and skips the chain, or this sees the
  /// delivery:
  /// - A lock-free claim is a sequentially consistent read-modify-write,
  ///   after which the delivering thread reads the gate; the closer changed
  ///   the gate (another) before this sequentially consistent load.
  /// - A claim under the lock (a holder's) is ordered by the lock: when it
  ///   comes first this sees it; when this comes first, the delivering
  ///   thread's read of the gate comes after the closer's change.
  func deliversAlone(to gate: DeliveryGate, in state: State) -> Bool {
    let current = word.load(ordering: .sequentiallyConsistent)
    if !current.isDelivering || state.finishing { return false }
    let claimed = current.isUnshared ? state.retired.first.map { Unmanaged.passUnretained($0) } : current.list
    guard let claimed else { return false }
    return claimed._withUnsafeGuaranteedRef { $0.count == 1 && $0[0]?.gate === gate }
  }

  /// Runs `onEnd` once, when the sender ends (`senderEnded()`), unless
  /// `subscription` is removed first; at once when it has already ended.
  /// `onEnd` must capture nothing whose release runs user code: it may be
  /// dropped under the lock.
  func watchEnd(of subscription: SubscriptionBase, _ onEnd: @escaping @Sendable () -> Void) {
    let endedAlready = state.withLock { state -> Bool in
      if state.ended { return true }
      state.endWatchers[ObjectIdentifier(subscription)] = onEnd
      return false
    }
    if endedAlready { onEnd() }
  }

  /// Called by a library sender's `deinit`: no value will ever come from
  /// it again. Runs what `watchEnd(of:_:)` registered, after unlocking.
  func senderEnded() {
    let watchers = state.withLock { state -> [@Sendable () -> Void] in
      state.ended = true
      defer { state.endWatchers = [:] }
      return Array(state.endWatchers.values)
    }
    for onEnd in watchers { onEnd() }
  }

  /// Waits until no thread runs the chain with `gate` without claiming it
  /// (until `deliversAlone(to:in:)` turns false). Called by every
  /// `invalidate()` of such a chain from outside a delivery, once its gate
  /// is closed: no such run starts afterwards.
  func awaitRunAlone(of gate: DeliveryGate) {
    ParkingLot.shared.wait(for: self) {
      state.withLock { state in
        guard deliversAlone(to: gate, in: state) else { return true }
        // Make the delivering thread stop through `finishLocked()`, which
        // wakes this one; unless its lock-free stop came first.
        let original = word.update { $0.isDelivering ? $0.queuedBehind : nil }
        if !original.isDelivering { return true }
        state.aloneWaiting = true
        return false
      }
    }
  }
}
