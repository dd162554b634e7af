import Dispatch

// MARK: - The queue and the hand-over

/// What the delivering thread does when broadcasts were queued while it
/// delivered, and how a thread held by another thread's endless writes
/// takes the delivery over (Verification/SenderCore.pml's `finishLocked`;
/// Verification/CoreHandOver.pml for the hand-over, also checked by
/// `HandOffTests` and `JoinLivenessTests`).
extension _SenderCore {
  /// Delivers the queued broadcasts, batch after batch, then releases the
  /// lists replaced meanwhile and stops delivering.
  ///
  /// Past `DeliveryGate.handOffLimit` broadcasts of other threads, hands
  /// the delivery over to a thread waiting for its turn (`awaitTurn()`)
  /// as soon as one does, and returns, still `delivering`: a thread is
  /// never held by another thread's endless writes to the same sender.
  /// The taker goes on exactly where this thread stopped (the same
  /// function, in a wave of its own), so the order of the broadcasts, the
  /// lists retired meanwhile and the wakes of `awaitRunAlone(of:)` are
  /// handled as if this thread had gone on; and since `delivering` never
  /// clears in between, no other thread claims the delivery meanwhile.
  @usableFromInline
  func finishLocked() {
    let context = DeliveryContext.current
    var othersDelivered = 0
    while true {
      typealias Next = (
        batch: ArraySlice<Pending>, list: Unmanaged<SlotList>?, retired: [SlotList], wakes: Bool
      )
      let (batch, list, retired, wakes) = state.withLock { state -> Next in
        // This thread no longer reads the lists it delivered from, nor
        // runs a chain without claiming its gate.
        let retired = state.retired
        state.retired = []
        let wakes = state.aloneWaiting
        state.aloneWaiting = false
        // Relaxed: under the lock. This thread delivers, so no lock-free
        // claim can change the word, and every other change holds the lock.
        let current = word.load(ordering: .relaxed)
        if state.pending.isEmpty, state.carried.isEmpty {
          state.overLimit = false
          state.finishing = false
          word.store(current.stopped, ordering: .releasing)
          return ([], nil, retired, wakes)
        }
        state.finishing = true
        // Still delivering, from the current list: it is shared again.
        // Relaxed: under the lock, and only the flags change; readers of
        // the list either hold the lock or claim, which fails while
        // `delivering` is set.
        word.store(current.deliveringShared, ordering: .relaxed)
        if !state.carried.isEmpty {
          defer { state.carried = [] }
          return (state.carried, current.list, retired, wakes)
        }
        defer { state.pending = [] }
        return (state.pending[...], current.list, retired, wakes)
      }
      _ = consume retired  // released outside the lock
      if wakes {
        // Under the stripe's lock, which the waiter holds from its check
        // until it sleeps: a wake sent in between would be lost.
        ParkingLot.shared.withLock(self) { ParkingLot.shared.wakeAll(self) }
      }
      if batch.isEmpty { return }
      guard let list else { continue }  // no observer left
      for index in batch.indices {
        let pending = batch[index]
        if pending.sender != context.runner {
          if othersDelivered >= DeliveryGate.handOffLimit {
            let handsOver = state.withLock { state -> Bool in
              state.overLimit = true
              if state.waiters == 0 { return false }
              state.carried = batch[index...]
              state.handedOver = true
              return true
            }
            if handsOver { return }
          }
          othersDelivered += 1
        }
        context.run(with: pending.causes) {
          Self.deliver(pending.value, to: list, below: pending.limit, in: context)
        }
      }
    }
  }

  /// For a thread whose broadcast was queued while the delivering thread
  /// was past `DeliveryGate.handOffLimit`: waits, yielding its processor,
  /// until that thread hands the delivery over (this thread then goes on
  /// with `finishLocked()`), until the queue has been emptied, or for
  /// `DeliveryGate.turnWait` at most (then the delivering thread delivers
  /// the value, as before; the bound is what keeps a lock this thread
  /// holds from deadlocking a handler).
  ///
  /// Why no broadcast is left behind: the delivering thread hands over
  /// only when it finds a waiter under the lock, and every waiter looks
  /// for a hand-over under the lock before it leaves, so one of them
  /// takes it. Checked by Verification/CoreHandOver.pml, `HandOffTests`
  /// and `JoinLivenessTests`.
  @usableFromInline
  func awaitTurn() {
    let start = DispatchTime.now().uptimeNanoseconds
    while true {
      let timedOut = DispatchTime.now().uptimeNanoseconds &- start >= turnWait
      // 0: wait on; 1: take the delivery; 2: leave.
      let step = state.withLock { state -> Int in
        if state.handedOver {
          state.handedOver = false
          state.waiters -= 1
          return 1
        }
        if !state.overLimit || timedOut {
          state.waiters -= 1
          return 2
        }
        return 0
      }
      if step == 1 {
        DeliveryContext.current.inWave { finishLocked() }
        return
      }
      if step == 2 { return }
      yieldProcessor()
    }
  }
}
