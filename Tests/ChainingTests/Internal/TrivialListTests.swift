import Testing

@testable import Chaining

/// `TrivialList`, the buffer of a computed value's dependencies, of the
/// marking walk and of a wave's deferred combines: each operation agrees
/// with an array doing the same, through growth.
@Suite struct TrivialListTests {
  /// Random operations, each checked against an array: the elements and
  /// their order after every step. A wave takes its deferred combines out
  /// of the middle with `remove(at:)` and expects the others' order kept
  /// (the first of equal ranks goes first); its sort moves them with
  /// `swapAt` and `reverse(_:)`.
  @Test func randomOperationsAgreeWithAnArray() {
    var list = TrivialList<Int>()
    var other = TrivialList<Int>()
    var model: [Int] = []
    var random = SplitMix64(seed: 37)
    var mismatches = 0
    var next = 0
    var longest = 0
    for _ in 0..<20_000 {
      switch random.next() % 8 {
      case 0, 1:
        list.append(next)
        model.append(next)
        next += 1
      case 2:
        // A node's dependents pushed in one step, 0 to 5 of them.
        for _ in 0..<Int(random.next() % 6) {
          other.append(next)
          next += 1
        }
        list.append(contentsOf: other)
        for index in other.indices { model.append(other[index]) }
        other.removeAll(from: 0)
      case 3 where !model.isEmpty:
        let index = Int(random.next() % UInt64(model.count))
        if list.remove(at: index) != model.remove(at: index) { mismatches += 1 }
      case 4 where !model.isEmpty:
        if list.removeLast() != model.removeLast() { mismatches += 1 }
      case 5 where !model.isEmpty:
        let i = Int(random.next() % UInt64(model.count))
        let j = Int(random.next() % UInt64(model.count))
        list.swapAt(i, j)
        model.swapAt(i, j)
        // And the elements between them reversed, as a wave's end puts
        // deferred combines in order.
        list.reverse(min(i, j)..<max(i, j))
        model[min(i, j)..<max(i, j)].reverse()
      case 6 where !model.isEmpty:
        let index = Int(random.next() % UInt64(model.count))
        list.swapRemove(at: index)
        model.swapAt(index, model.count - 1)
        model.removeLast()
      case 7 where model.count > 40:
        // Back to a few, as a walk's stack or a wave's list empties.
        let start = Int(random.next() % 8)
        list.removeAll(from: start)
        model.removeSubrange(start...)
      default:
        if list.popLast() != model.popLast() { mismatches += 1 }
      }
      if list.count != model.count || list.indices.contains(where: { list[$0] != model[$0] }) {
        mismatches += 1
      }
      longest = max(longest, model.count)
    }
    #expect(mismatches == 0)
    // Grown from empty past 4, 8, 16 and 32 elements.
    #expect(longest > 32)
    list.deallocate()
    other.deallocate()
  }
}
