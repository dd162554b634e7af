// MARK: - Invariants

#if CHAINING_INTERNAL_CHECKS
extension _SenderCore {
  /// The rules that hold whenever the lock is free (Verification/SenderCore.pml
  /// checks the same word and lists across threads): the live count is the
  /// list's occupied slots, with no list when it is 0; queued broadcasts, a
  /// hand-over, the limit and `finishLocked()` all belong to a delivery,
  /// so the word says `delivering`; no thread is changing the list in
  /// place. Called with the lock held.
  ///
  /// Not checked, because it is not a rule: "a spare list only while the
  /// word has none". A change made while a delivery runs from no list
  /// copies from nothing and leaves the spare where it is (see
  /// `changeInPlace`, and issue #20 in Verification/SenderCore.pml).
  func _invariantCheck(_ state: State) {
    let current = word.load(ordering: .acquiring)
    let occupied = current.list.map { list in
      list._withUnsafeGuaranteedRef { list in (0..<list.count).count { list[$0] != nil } }
    }
    precondition(
      occupied ?? 0 == state.live,
      "_SenderCore: live is \(state.live), the list has \(occupied ?? 0) observers"
    )
    precondition(!current.isChanging, "_SenderCore: the list is being changed outside the lock")
    let delivering = current.isDelivering
    precondition(delivering || state.pending.isEmpty, "_SenderCore: broadcasts queued with nobody delivering")
    precondition(delivering || state.carried.isEmpty, "_SenderCore: a carried batch with nobody delivering")
    precondition(delivering || !state.handedOver, "_SenderCore: handed over with nobody delivering")
    precondition(delivering || !state.finishing, "_SenderCore: finishing with nobody delivering")
    precondition(delivering || !state.overLimit, "_SenderCore: over the limit with nobody delivering")
  }
}
#endif
