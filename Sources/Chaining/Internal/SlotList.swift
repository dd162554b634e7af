// MARK: - SlotList

/// The observers, in subscription order; `nil` for a removed one.
///
/// Its own storage rather than an array, so that a delivering thread can
/// walk it with plain loads: reading an array out of an object would
/// retain and release its buffer on every broadcast.
@usableFromInline
final class SlotList {
  // Not generic, so that code working on it needs no generic metadata.
  /// `count` initialized slots, room for `capacity`.
  @usableFromInline @exclusivity(unchecked) var base: UnsafeMutablePointer<SubscriptionBase?>
  @usableFromInline @exclusivity(unchecked) var count = 0
  @exclusivity(unchecked) private var capacity: Int

  init(capacity: Int) {
    self.capacity = max(capacity, 4)
    base = .allocate(capacity: self.capacity)
  }

  /// A list with the same slots as `other`.
  convenience init(copying other: SlotList) {
    self.init(capacity: other.count + other.count / 2)
    base.initialize(from: other.base, count: other.count)
    count = other.count
  }

  deinit {
    base.deinitialize(count: count)
    base.deallocate()
  }

  subscript(index: Int) -> SubscriptionBase? {
    get { base[index] }
    set { base[index] = newValue }
  }

  func append(_ subscription: SubscriptionBase) {
    if count == capacity {
      capacity *= 2
      let grown = UnsafeMutablePointer<SubscriptionBase?>.allocate(capacity: capacity)
      grown.moveInitialize(from: base, count: count)
      base.deallocate()
      base = grown
    }
    (base + count).initialize(to: subscription)
    count += 1
  }

  /// Empties a list that has no observer left.
  func removeAll() {
    base.deinitialize(count: count)
    count = 0
  }

  /// Moves the observers to the front, in order, updating their indexes.
  func compact() {
    var kept = 0
    for index in 0..<count {
      guard let subscription = base[index] else { continue }
      subscription.index = Int32(kept)
      base[kept] = subscription
      kept += 1
    }
    (base + kept).deinitialize(count: count - kept)
    count = kept
  }

  /// The subscription in slot `index`, for borrowing without a retain.
  ///
  /// The list keeps every subscription alive, and each keeps its gate
  /// and handler. Borrowing them, rather than copying each reference out,
  /// saves three retain/release pairs per observer per value.
  @inlinable @inline(__always)
  func unmanaged(at index: Int) -> Unmanaged<SubscriptionBase>? {
    // A `SubscriptionBase?` is a nullable reference.
    UnsafeRawPointer(base + index).load(as: UnsafeRawPointer?.self).map { Unmanaged.fromOpaque($0) }
  }
}
