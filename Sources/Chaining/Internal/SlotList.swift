// MARK: - SlotList

/// The observers, in subscription order; `nil` for a removed one.
///
/// Its own storage rather than an array, so that a delivering thread can
/// walk it with plain loads: reading an array out of an object would
/// retain and release its buffer on every broadcast.
///
/// The first slot is in the list itself (`head`), the others in a buffer
/// (`rest`), made when a second observer comes. Most senders in a graph
/// of holders have one observer: the next link. Their delivery then
/// loads the observer from the list, where it loaded the buffer's
/// address first and the observer from the buffer, a cache miss more per
/// hop in a graph too large for the cache (`holder chain 100000`); and a
/// list of one allocates no buffer.
@usableFromInline
final class SlotList {
  // Not generic, so that code working on it needs no generic metadata.
  /// Slot 0, retained by hand, so that reading it is a plain load.
  @usableFromInline @exclusivity(unchecked) var head: Unmanaged<SubscriptionBase>?
  /// Slots 1 to `count - 1`, initialized, with room for `capacity`; nil
  /// until a second slot is needed.
  @usableFromInline @exclusivity(unchecked) var rest: UnsafeMutablePointer<SubscriptionBase?>?
  @usableFromInline @exclusivity(unchecked) var count = 0
  @exclusivity(unchecked) private var capacity = 0

  /// A list with room for `capacity` slots before it allocates.
  init(capacity: Int) {
    if capacity > 1 { grow(to: capacity - 1) }
  }

  /// A list with the same slots as `other`.
  convenience init(copying other: SlotList) {
    self.init(capacity: other.count + other.count / 2)
    head = other.head?.retain()
    if other.count > 1 { rest.unsafelyUnwrapped.initialize(from: other.rest.unsafelyUnwrapped, count: other.count - 1) }
    count = other.count
  }

  deinit {
    removeAll()
    rest?.deallocate()
  }

  subscript(index: Int) -> SubscriptionBase? {
    get { index == 0 ? head?.takeUnretainedValue() : rest.unsafelyUnwrapped[index - 1] }
    set {
      if index == 0 {
        let old = head
        head = newValue.map { Unmanaged.passRetained($0) }
        old?.release()
      } else {
        rest.unsafelyUnwrapped[index - 1] = newValue
      }
    }
  }

  func append(_ subscription: SubscriptionBase) {
    if count == 0 {
      head = Unmanaged.passRetained(subscription)
    } else {
      if count - 1 == capacity { grow(to: Swift.max(4, capacity * 2)) }
      (rest.unsafelyUnwrapped + (count - 1)).initialize(to: subscription)
    }
    count += 1
  }

  /// Gives `rest` room for `capacity` slots, keeping those it holds.
  private func grow(to capacity: Int) {
    let grown = UnsafeMutablePointer<SubscriptionBase?>.allocate(capacity: capacity)
    if let rest {
      grown.moveInitialize(from: rest, count: Swift.max(0, count - 1))
      rest.deallocate()
    }
    rest = grown
    self.capacity = capacity
  }

  /// Empties a list that has no observer left.
  func removeAll() {
    clear(from: 0)
    count = 0
  }

  /// Releases the slots from `start` on; `count` is the caller's to set.
  private func clear(from start: Int) {
    if start == 0, let old = head {
      head = nil
      old.release()
    }
    let first = Swift.max(start, 1)
    if count > first { (rest.unsafelyUnwrapped + (first - 1)).deinitialize(count: count - first) }
  }

  /// Moves the observers to the front, in order, updating their indexes.
  func compact() {
    var kept = 0
    for index in 0..<count {
      guard let subscription = self[index] else { continue }
      subscription.index = Int32(kept)
      // Slot `index` is past `kept` from here on, and released below.
      if kept != index { self[kept] = subscription }
      kept += 1
    }
    clear(from: kept)
    count = kept
  }

  /// Calls `body` with each subscription, unretained, in slot order: the
  /// head, then the rest, with no test of the index per slot. `count` is
  /// read once, as by a loop over `0..<count`; `rest` at each slot.
  ///
  /// The list keeps every subscription alive, and each keeps its gate
  /// and handler. Borrowing them, rather than copying each reference out,
  /// saves three retain/release pairs per observer per value.
  @inlinable @inline(__always)
  func forEachEntry(_ body: (Unmanaged<SubscriptionBase>) -> Void) {
    let count = self.count
    if count == 0 { return }
    if let head { body(head) }
    var index = 0
    while index < count - 1 {
      // A `SubscriptionBase?` is a nullable reference.
      if let entry = UnsafeRawPointer(rest.unsafelyUnwrapped + index).load(as: UnsafeRawPointer?.self) {
        body(Unmanaged.fromOpaque(entry))
      }
      index += 1
    }
  }
}
