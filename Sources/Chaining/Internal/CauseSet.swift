// MARK: - CauseSet

/// The causes of a deep delivery past the ones `DeliveryContext.isCaused(by:)`
/// searches in its buffer: a multiset of gates, so that a chain thousands of
/// holders deep finds whether a gate is a cause in O(1) per hop instead of
/// searching the whole list (which made a write's cost grow with the square
/// of the depth).
///
/// Thread-local, like the context that owns it: no lock, no atomics. An
/// open-addressing table of keys (a running gate's address, or a captured
/// gate's id: see `DeliveryContext`'s "Keys") with a count each (a key may
/// be a cause twice),
/// probed linearly; a removal shifts the entries after it back, so that
/// there are no tombstones. At most half full.
@usableFromInline
struct CauseSet {
  /// The keys; 0 marks an empty slot.
  var keys: UnsafeMutablePointer<UInt>? = nil
  /// How many times each slot's gate is a cause.
  var counts: UnsafeMutablePointer<Int>? = nil
  /// The number of slots: 0, or a power of two.
  var capacity = 0
  /// The number of slots in use.
  var occupied = 0

  /// The slot a key's probe starts at.
  func home(of key: UInt) -> Int {
    // Gates are at least 16-byte aligned, and ids are 1 modulo 16: the
    // low bits say nothing.
    Int(truncatingIfNeeded: (key >> 4) &* 0x9E37_79B9_7F4A_7C15) & (capacity - 1)
  }

  /// The slot holding `key`, or nil.
  func slot(of key: UInt) -> Int? {
    guard capacity > 0, let keys else { return nil }
    var index = home(of: key)
    while keys[index] != 0 {
      if keys[index] == key { return index }
      index = (index + 1) & (capacity - 1)
    }
    return nil
  }

  func contains(key: UInt) -> Bool {
    slot(of: key) != nil
  }

  /// The value of `key`'s slot (its count, or its position in a
  /// `CausePath`), or nil when it is not there.
  func value(of key: UInt) -> Int? {
    slot(of: key).map { counts.unsafelyUnwrapped[$0] }
  }

  /// Adds `key` with `value` unless it is there (a `CausePath`'s use:
  /// the value is a position, and a key keeps its first).
  mutating func insert(_ key: UInt, at value: Int) {
    if slot(of: key) == nil { add(key, value) }
  }

  /// Adds every key of this set, with its value, to `other`, which is
  /// empty and large enough (at most half full afterwards).
  func move(into other: inout CauseSet) {
    guard let keys, let counts else { return }
    for index in 0..<capacity where keys[index] != 0 {
      other.add(keys[index], counts[index])
    }
  }

  /// Adds one occurrence of `key`.
  mutating func insert(key: UInt) {
    if let index = slot(of: key) {
      counts.unsafelyUnwrapped[index] += 1
    } else {
      add(key, 1)
    }
  }

  /// Puts `key`, which is not there, in its first free slot with `value`.
  private mutating func add(_ key: UInt, _ value: Int) {
    if (occupied + 1) * 2 > capacity { grow() }
    let keys = keys.unsafelyUnwrapped
    var index = home(of: key)
    while keys[index] != 0 { index = (index + 1) & (capacity - 1) }
    keys[index] = key
    counts.unsafelyUnwrapped[index] = value
    occupied += 1
  }

  /// Removes one occurrence of `key`, which must be there.
  mutating func remove(key: UInt) {
    guard var hole = slot(of: key) else {
      preconditionFailure("CauseSet.remove(key:): \(key) is not a cause")
    }
    let keys = keys.unsafelyUnwrapped
    let counts = counts.unsafelyUnwrapped
    counts[hole] -= 1
    if counts[hole] > 0 { return }
    keys[hole] = 0
    occupied -= 1
    // Shift back each later entry of the run whose probe would otherwise
    // cross the hole: one whose home is not cyclically in (hole, index].
    var index = hole
    while true {
      index = (index + 1) & (capacity - 1)
      if keys[index] == 0 { return }
      let start = home(of: keys[index])
      let stays = hole <= index ? (hole < start && start <= index) : (hole < start || start <= index)
      if stays { continue }
      keys[hole] = keys[index]
      counts[hole] = counts[index]
      keys[index] = 0
      hole = index
    }
  }

  /// Empties the set, keeping its slots.
  mutating func removeAll() {
    guard occupied > 0, let keys else { return }
    keys.update(repeating: 0, count: capacity)
    occupied = 0
  }

  /// Frees the slots.
  mutating func deallocate() {
    keys?.deallocate()
    counts?.deallocate()
    self = CauseSet()
  }

  private mutating func grow() {
    let oldKeys = keys
    let oldCounts = counts
    let oldCapacity = capacity
    capacity = max(16, capacity * 2)
    keys = .allocate(capacity: capacity)
    keys.unsafelyUnwrapped.initialize(repeating: 0, count: capacity)
    counts = .allocate(capacity: capacity)
    counts.unsafelyUnwrapped.initialize(repeating: 0, count: capacity)
    guard let oldKeys, let oldCounts else { return }
    for old in 0..<oldCapacity where oldKeys[old] != 0 {
      var index = home(of: oldKeys[old])
      while keys.unsafelyUnwrapped[index] != 0 { index = (index + 1) & (capacity - 1) }
      keys.unsafelyUnwrapped[index] = oldKeys[old]
      counts.unsafelyUnwrapped[index] = oldCounts[old]
    }
    oldKeys.deallocate()
    oldCounts.deallocate()
  }

  /// A running gate's key: its address (see `DeliveryContext`'s "Keys").
  @inlinable @inline(__always)
  static func key(_ gate: DeliveryGate) -> UInt {
    UInt(bitPattern: Unmanaged.passUnretained(gate).toOpaque())
  }
}
