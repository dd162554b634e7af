// MARK: - Subscribing

/// Subscribing and unsubscribing: the changes of the observer list, made
/// under the lock, in place or on a copy (Verification/SenderCore.pml's
/// `insert`, `remove`, `change` and `changeInPlace`).
extension _SenderCore {
  /// Adds an observer at the end of the list.
  ///
  /// Returns the entry as its non-generic base, so that callers need no
  /// generic metadata for it.
  func subscribe(
    gate: DeliveryGate,
    dropsEchoes: Bool = true,
    handler: consuming @escaping (Value) -> Void
  ) -> SubscriptionBase {
    // Made before taking the lock: the allocation needs no lock, and the
    // handler moves into the entry rather than being copied into a closure.
    let subscription = makeSubscription(gate: gate, dropsEchoes: dropsEchoes, handler: handler)
    state.withLock { insert(subscription, in: &$0) }
    return subscription
  }

  /// Adds an entry made by `makeSubscription` at the end of the list,
  /// under the lock the caller holds.
  func insert(_ subscription: SubscriptionBase, in state: inout State) {
    subscription.serial = state.nextSerial
    state.nextSerial += 1
    state.live += 1
    if !state.observerWaiters.isEmpty { resumeObserverWaiters(in: &state) }
    change(&state) { list in
      subscription.index = Int32(list.count)
      list.append(subscription)
    }
  }

  /// Removes an observer in O(1) amortized time, under the lock the
  /// caller holds. Removing twice does nothing.
  func remove(_ subscription: SubscriptionBase, in state: inout State) {
    // Holds nothing whose release runs user code (see `watchEnd`).
    if !state.endWatchers.isEmpty { state.endWatchers[ObjectIdentifier(subscription)] = nil }
    let index = Int(subscription.index)
    // Relaxed: under the lock, and the pointer changes only under it.
    guard let list = word.load(ordering: .relaxed).list,
      list._withUnsafeGuaranteedRef({ index >= 0 && index < $0.count && $0[index] === subscription })
    else { return }
    state.live -= 1
    let live = state.live
    change(&state) { list in
      list[index] = nil
      subscription.index = -1
      let empty = list.count - live
      if empty > 32, empty > live {
        list.compact()
      }
    }
  }

  /// Applies `body` to the current list, under the lock the caller holds.
  ///
  /// In place when no thread reads the list unlocked; otherwise on a copy
  /// that replaces it, the old list being kept until the delivery ends.
  /// With no observer left the list is dropped, so that a broadcast then
  /// costs one atomic load. `body` may run twice, the first time on a copy
  /// that is thrown away.
  func change(_ state: inout State, _ body: (SlotList) -> Void) {
    // Relaxed: under the lock. The pointer changes only under it; the
    // flags may change (a claim, a stop), and each branch below either
    // checks them with a compare-and-swap or relies on `unshared`, while
    // which the word changes only under the lock (the stop then fails its
    // compare-and-swap and takes the lock in `finishLocked()`).
    var current = word.load(ordering: .relaxed)
    while true {
      if !current.isDelivering {
        // Idle: keep the lock-free claim out while changing in place.
        let (exchanged, original) = word.compareExchange(
          expected: current,
          desired: current.changingInPlace,
          ordering: .acquiring
        )
        if !exchanged {
          current = original
          continue
        }
        word.store(.empty.pointing(to: changeInPlace(current, &state, body)), ordering: .releasing)
        return
      }
      if current.isUnshared {
        // Nobody reads the list unlocked, and the word cannot change
        // meanwhile: the delivering thread stops under this lock.
        word.store(current.pointing(to: changeInPlace(current, &state, body)), ordering: .releasing)
        return
      }
      // The delivering thread reads the current list: change a copy.
      let old = current.list
      let copy = old?._withUnsafeGuaranteedRef { SlotList(copying: $0) } ?? SlotList(capacity: 0)
      body(copy)
      let pointer = state.live > 0 ? UInt(bitPattern: Unmanaged.passUnretained(copy).toOpaque()) : 0
      let (exchanged, original) = word.compareExchange(
        expected: current,
        desired: current.replaced(by: pointer),
        ordering: .acquiringAndReleasing
      )
      if !exchanged {
        // The delivery ended meanwhile: start over.
        current = original
        continue
      }
      if pointer != 0 { _ = Unmanaged.passRetained(copy) }
      if let old { state.retired.append(old.takeRetainedValue()) }
      return
    }
  }

  /// Applies `body` to the list `current` points at, in place, taking the
  /// spare one when there is none. Returns the word's new pointer: 0, the
  /// list becoming the spare, when no observer is left.
  func changeInPlace(_ current: SenderWord, _ state: inout State, _ body: (SlotList) -> Void) -> UInt {
    let list: Unmanaged<SlotList>
    if let existing = current.list {
      list = existing
    } else {
      list = state.spare.take() ?? Unmanaged.passRetained(SlotList(capacity: 0))
    }
    list._withUnsafeGuaranteedRef(body)
    if state.live > 0 { return UInt(bitPattern: list.toOpaque()) }
    list._withUnsafeGuaranteedRef { $0.removeAll() }
    // A spare may be there already: a change made while a delivery runs
    // from no list (`finishLocked()` delivering a queued batch after every
    // observer left) copies from nothing rather than take it, so the word
    // gets a list while the spare is kept. Release that one, empty (so its
    // release runs no user code under the lock), rather than lose it.
    // Found and checked by Verification/SenderCore.pml (issue #20).
    state.spare.take()?.release()
    state.spare = list
    return 0
  }
}
