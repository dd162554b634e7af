// MARK: - TrivialList

/// A list of trivial elements in a buffer of its own, not an array: a
/// node's dependencies, a source's dependents, the marking walk's stack
/// and its effects, and a thread's deferred combines (`Waves.deferred`).
/// Walking an array stored in a class retains and releases its buffer on
/// every walk (the optimizer cannot see that the walk's calls leave it
/// alone), and every write and every check walks these. The elements
/// need no release, so growing is a plain copy and dropping one frees
/// nothing. Its owner frees the buffer (`deallocate()`).
@usableFromInline
struct TrivialList<Element: BitwiseCopyable> {
  @usableFromInline var base: UnsafeMutablePointer<Element>?
  @usableFromInline private(set) var count = 0
  private var capacity = 0

  @inlinable
  subscript(index: Int) -> Element {
    get { base.unsafelyUnwrapped[index] }
    nonmutating set { base.unsafelyUnwrapped[index] = newValue }
  }

  var indices: Range<Int> { 0..<count }

  mutating func append(_ element: Element) {
    if count == capacity { grow(toHold: count + 1) }
    (base.unsafelyUnwrapped + count).initialize(to: element)
    count += 1
  }

  /// Appends the elements of `other`, making room once: the marking
  /// walk's push of a node's dependents, 4 to 15 instructions less per
  /// node marked than an append each (callgrind, kairo deep and mux with
  /// `Computed`).
  @inline(__always)
  mutating func append(contentsOf other: TrivialList) {
    let added = other.count
    if added == 0 { return }
    if count + added > capacity { grow(toHold: count + added) }
    let destination = base.unsafelyUnwrapped + count
    let source = other.base.unsafelyUnwrapped
    for index in 0..<added { (destination + index).initialize(to: source[index]) }
    count += added
  }

  /// Makes room for `needed` elements, at least doubling.
  private mutating func grow(toHold needed: Int) {
    let grown = Swift.max(needed, 4, capacity * 2)
    let buffer = UnsafeMutablePointer<Element>.allocate(capacity: grown)
    if let base {
      buffer.moveInitialize(from: base, count: count)
      base.deallocate()
    }
    base = buffer
    capacity = grown
  }

  var isEmpty: Bool { count == 0 }

  /// Removes and returns the last element; the list is not empty.
  mutating func removeLast() -> Element {
    guard let last = popLast() else { preconditionFailure("TrivialList.removeLast(): the list is empty") }
    return last
  }

  /// Removes and returns the element at `index`, moving the ones after it
  /// down: the order is kept.
  mutating func remove(at index: Int) -> Element {
    precondition(index >= 0 && index < count, "TrivialList.remove(at:): index \(index) out of 0..<\(count)")
    let base = base.unsafelyUnwrapped
    let removed = base[index]
    (base + index).update(from: base + index + 1, count: count - index - 1)
    count -= 1
    return removed
  }

  /// Exchanges the elements at `i` and `j`.
  func swapAt(_ i: Int, _ j: Int) {
    let base = base.unsafelyUnwrapped
    let element = base[i]
    base[i] = base[j]
    base[j] = element
  }

  /// Reverses the order of the elements in `range`, in place.
  func reverse(_ range: Range<Int>) {
    var low = range.lowerBound
    var high = range.upperBound - 1
    while low < high {
      swapAt(low, high)
      low += 1
      high -= 1
    }
  }

  mutating func popLast() -> Element? {
    if count == 0 { return nil }
    count -= 1
    return base.unsafelyUnwrapped[count]
  }

  /// Drops the elements from `start` on.
  mutating func removeAll(from start: Int) {
    count = start
  }

  /// Drops the element at `index`, moving the last one into its place.
  mutating func swapRemove(at index: Int) {
    count -= 1
    base.unsafelyUnwrapped[index] = base.unsafelyUnwrapped[count]
  }

  /// Frees the buffer.
  func deallocate() {
    base?.deallocate()
  }
}
