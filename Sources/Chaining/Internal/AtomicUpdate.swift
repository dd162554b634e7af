import Synchronization

// MARK: - Atomic.update

/// The storage of an atomic `Int` or `UInt` on this platform.
#if _pointerBitWidth(_64)
@usableFromInline typealias AtomicWordStorage = _Atomic64BitStorage
#else
@usableFromInline typealias AtomicWordStorage = _Atomic32BitStorage
#endif

extension Atomic where Value.AtomicRepresentation == AtomicWordStorage {
  /// Replaces the value with `next(current)`, by compare-and-swap, retrying
  /// with the new value when another thread changed it meanwhile; `next`
  /// returning `nil` leaves the value as it is. Returns the value `next` was
  /// last given: the one replaced, or the one left.
  ///
  /// The gates and the sender cores change their flag words (an `Int` and
  /// a `UInt`) this way under their locks, where only a lock-free fast path
  /// can race with them. The exchange acquires and releases, and is
  /// sequentially consistent when `sequentiallyConsistent` is true.
  @inlinable @inline(__always)
  func update(sequentiallyConsistent: Bool = false, _ next: (Value) -> Value?) -> Value {
    // Acquiring, not relaxed: when `next` returns nil at once no exchange
    // orders the value read, and callers act on it (`awaitRunAlone(of:)`
    // returns when it finds the delivery stopped, and must see what that
    // delivery's handler wrote, which the stop's releasing exchange
    // publishes).
    var current = load(ordering: .acquiring)
    while let desired = next(current) {
      // The ordering must be a literal, hence the two calls.
      let (exchanged, original) =
        sequentiallyConsistent
        ? compareExchange(expected: current, desired: desired, ordering: .sequentiallyConsistent)
        : compareExchange(expected: current, desired: desired, ordering: .acquiringAndReleasing)
      if exchanged { return current }
      current = original
    }
    return current
  }
}
