// MARK: - SenderWord

/// A sender core's atomic word as a value: a pointer to the current
/// observer list (0 when there is no observer) and four flags in its low
/// bits, with the word's transitions.
///
/// The names are those of Verification/SenderCore.pml, which models the
/// word across threads: its `D`, `C`, `Q` and `U` are ``delivering``,
/// ``changing``, ``queued`` and ``unshared``, and each transition below
/// names the model's step (an `inline` there) that makes it. The core
/// (SenderCore.swift and its extensions) holds the word in an
/// `AtomicReference` and decides, under its lock or with a
/// compare-and-swap, which transition to make; this type only computes
/// words. The legal words while the core's lock is free are checked by
/// `_SenderCore._invariantCheck` in builds with `CHAINING_INTERNAL_CHECKS`.
@usableFromInline @frozen
struct SenderWord: AtomicWord {
  /// The list's address, or 0, with the flags in the low bits (a list is
  /// an object, so its address leaves them free).
  @usableFromInline var bits: UInt

  @inlinable @inline(__always)
  init(bits: UInt) { self.bits = bits }

  /// No observer and no flag: the word of a new core, and of an idle one
  /// whose last observer left.
  @inlinable @inline(__always)
  static var empty: SenderWord { SenderWord(bits: 0) }

  // MARK: The flags

  /// `D`: a thread delivers; the list it claimed stays unchanged.
  @inlinable @inline(__always)
  static var delivering: UInt { 1 }
  /// `C`: the list is being changed in place, under the lock; keeps the
  /// lock-free claim out.
  @inlinable @inline(__always)
  static var changing: UInt { 2 }
  /// `Q`: broadcasts are queued (or a waiter is), so the delivering thread
  /// must not just stop: its lock-free stop fails and it takes the lock.
  @inlinable @inline(__always)
  static var queued: UInt { 4 }
  /// `U`: set while delivering, once no thread reads the current list
  /// unlocked (it replaced the one being read): it may be changed in place.
  @inlinable @inline(__always)
  static var unshared: UInt { 8 }
  /// The bits that are not the pointer.
  @inlinable @inline(__always)
  static var flags: UInt { 15 }

  // MARK: Reading

  /// The list the word points at, unretained.
  @inlinable @inline(__always)
  var list: Unmanaged<SlotList>? {
    UnsafeRawPointer(bitPattern: pointer).map { Unmanaged.fromOpaque($0) }
  }

  /// The pointer alone: the word with every flag cleared.
  @inlinable @inline(__always)
  var pointer: UInt { bits & ~Self.flags }

  /// Whether no flag is set: with a list, the lock-free claim may take it.
  @inlinable @inline(__always)
  var hasNoFlag: Bool { bits & Self.flags == 0 }

  /// `D` is set.
  @inlinable @inline(__always)
  var isDelivering: Bool { bits & Self.delivering != 0 }

  /// `C` is set.
  @inlinable @inline(__always)
  var isChanging: Bool { bits & Self.changing != 0 }

  /// `U` is set.
  @inlinable @inline(__always)
  var isUnshared: Bool { bits & Self.unshared != 0 }

  // MARK: Transitions

  /// The claim of a delivery, `D` set: the model's `broadcast` (the
  /// lock-free claim) and `claimLocked` when nobody delivers.
  @inlinable @inline(__always)
  var claimed: SenderWord { SenderWord(bits: bits | Self.delivering) }

  /// `Q` set, so that the delivering thread looks at the queue before it
  /// stops: the model's `claimLocked` when a thread delivers, and
  /// `awaitRunAlone`.
  @inlinable @inline(__always)
  var queuedBehind: SenderWord { SenderWord(bits: bits | Self.queued) }

  /// The model's `claimLocked`: ``claimed`` when nobody delivers, else
  /// ``queuedBehind``.
  @inlinable @inline(__always)
  var claimedOrQueued: SenderWord { isDelivering ? queuedBehind : claimed }

  /// The model's `finish` and `finishLocked` when the queue is empty: the
  /// list kept, every flag cleared.
  @inlinable @inline(__always)
  var stopped: SenderWord { SenderWord(bits: pointer) }

  /// `finishLocked` going on with a queued batch: `D` alone, the list
  /// shared again.
  @inlinable @inline(__always)
  var deliveringShared: SenderWord { SenderWord(bits: pointer | Self.delivering) }

  /// The model's `change` on an idle word: `C` set while the list is
  /// changed in place.
  @inlinable @inline(__always)
  var changingInPlace: SenderWord { SenderWord(bits: bits | Self.changing) }

  /// The model's `change`: the word pointing at `pointer` (0 for no
  /// list), this word's flags kept.
  @inlinable @inline(__always)
  func pointing(to pointer: UInt) -> SenderWord { SenderWord(bits: pointer | (bits & Self.flags)) }

  /// The model's `change` on a copy while a thread delivers: the word
  /// pointing at the copy, flags kept, `U` set.
  @inlinable @inline(__always)
  func replaced(by pointer: UInt) -> SenderWord { SenderWord(bits: pointer | (bits & Self.flags) | Self.unshared) }
}

extension AtomicReference where Value == SenderWord {
  /// Sets `flag` with one atomic or, rather than a compare-and-swap loop.
  @inlinable @inline(__always)
  func set(_ flag: UInt, ordering: AtomicOrdering) {
    _ = UInt.atomicFetchOr(pointer.asUInt, flag, ordering.rawValue)
  }
}
