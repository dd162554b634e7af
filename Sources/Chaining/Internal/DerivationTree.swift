// MARK: - DerivationTree

/// Where a derived view's elements stand: two treaps sharing one pool of
/// nodes, one node per element of the source.
/// - The *source tree*, in the source's order (an implicit treap: a node's
///   place is the number of nodes before it), counts in each subtree the
///   nodes and those included, so that a place in the source and a place
///   in the view are found together in one descent.
/// - The *sorted tree* holds the included nodes only, in the view's order
///   when the view sorts: by the comparison, which the caller passes in,
///   and among nodes it finds equal by the order in which they entered
///   the view (`sequence`).
///
/// Both are searched by descent from their root, without parent links, in
/// O(log n) expected time; recursion is as deep as the tree, O(log n). A
/// node's priority is a pseudo-random number from a fixed seed, so the
/// shapes, and the costs, are the same at every run.
struct DerivationTree {
  struct Node {
    var sourceLeft = -1
    var sourceRight = -1
    /// The nodes in this subtree of the source tree.
    var sourceSize = 1
    /// The included nodes in this subtree of the source tree.
    var sourceIncluded = 0
    var sortedLeft = -1
    var sortedRight = -1
    /// The nodes in this subtree of the sorted tree.
    var sortedSize = 1
    var priority: UInt32
    var included = false
    /// When the node entered the view: the order among equal elements.
    var sequence: UInt64 = 0
  }

  var nodes: [Node] = []
  /// Nodes given back, to use again.
  var free: [Int] = []
  var sourceRoot = -1
  var sortedRoot = -1
  var nextSequence: UInt64 = 0
  private var random: UInt64 = 0x9E37_79B9_7F4A_7C15

  /// A new node, not in either tree: a free one, or one past the end.
  mutating func makeNode() -> Int {
    // xorshift64*: the priorities only need to look random to the treap.
    random ^= random >> 12
    random ^= random << 25
    random ^= random >> 27
    let priority = UInt32(truncatingIfNeeded: (random &* 0x2545_F491_4F6C_DD1D) >> 32)
    if let node = free.popLast() {
      nodes[node] = Node(priority: priority)
      return node
    }
    nodes.append(Node(priority: priority))
    return nodes.count - 1
  }

  // MARK: Walks

  /// Calls `body` with each node of the source, in its order.
  func forEachInSource(_ body: (Int) -> Void) {
    inOrder(sourceRoot, left: { $0.sourceLeft }, right: { $0.sourceRight }, body)
  }

  /// Calls `body` with each node of the view, in its order.
  func forEachInView(sorted: Bool, _ body: (Int) -> Void) {
    if sorted {
      inOrder(sortedRoot, left: { $0.sortedLeft }, right: { $0.sortedRight }, body)
    } else {
      forEachInSource { node in if nodes[node].included { body(node) } }
    }
  }

  /// Calls `body` with each node of the tree at `root`, in order, without
  /// recursion.
  private func inOrder(_ root: Int, left: (Node) -> Int, right: (Node) -> Int, _ body: (Int) -> Void) {
    var stack: [Int] = []
    var node = root
    while node >= 0 || !stack.isEmpty {
      while node >= 0 {
        stack.append(node)
        node = left(nodes[node])
      }
      let top = stack.removeLast()
      body(top)
      node = right(nodes[top])
    }
  }

  /// The node at `index` of the view.
  func nodeAtView(_ index: Int, sorted: Bool) -> Int {
    var index = index
    if sorted {
      var node = sortedRoot
      while true {
        let left = size(sorted: nodes[node].sortedLeft)
        if index < left {
          node = nodes[node].sortedLeft
        } else if index == left {
          return node
        } else {
          index -= left + 1
          node = nodes[node].sortedRight
        }
      }
    }
    var node = sourceRoot
    while true {
      let left = included(nodes[node].sourceLeft)
      let here = nodes[node].included ? 1 : 0
      if index < left {
        node = nodes[node].sourceLeft
      } else if index < left + here {
        return node
      } else {
        index -= left + here
        node = nodes[node].sourceRight
      }
    }
  }

  // MARK: The source tree

  func size(_ node: Int) -> Int { node < 0 ? 0 : nodes[node].sourceSize }
  func included(_ node: Int) -> Int { node < 0 ? 0 : nodes[node].sourceIncluded }

  private mutating func updateSource(_ node: Int) {
    let left = nodes[node].sourceLeft
    let right = nodes[node].sourceRight
    nodes[node].sourceSize = 1 + size(left) + size(right)
    nodes[node].sourceIncluded = (nodes[node].included ? 1 : 0) + included(left) + included(right)
  }

  /// Puts the lone `node` at place `index` of the source.
  mutating func insertSource(_ node: Int, at index: Int, included: Bool) {
    nodes[node].sourceLeft = -1
    nodes[node].sourceRight = -1
    nodes[node].included = included
    updateSource(node)
    let (before, after) = splitSource(sourceRoot, index)
    sourceRoot = mergeSource(mergeSource(before, node), after)
  }

  /// Takes the node at place `index` out of the source.
  mutating func removeSource(at index: Int) {
    let (before, rest) = splitSource(sourceRoot, index)
    let (_, after) = splitSource(rest, 1)
    sourceRoot = mergeSource(before, after)
  }

  private mutating func mergeSource(_ left: Int, _ right: Int) -> Int {
    if left < 0 { return right }
    if right < 0 { return left }
    if nodes[left].priority > nodes[right].priority {
      nodes[left].sourceRight = mergeSource(nodes[left].sourceRight, right)
      updateSource(left)
      return left
    }
    nodes[right].sourceLeft = mergeSource(left, nodes[right].sourceLeft)
    updateSource(right)
    return right
  }

  /// Splits `node`'s subtree into its first `count` nodes and the rest.
  private mutating func splitSource(_ node: Int, _ count: Int) -> (Int, Int) {
    if node < 0 { return (-1, -1) }
    let left = nodes[node].sourceLeft
    if count <= size(left) {
      let (first, rest) = splitSource(left, count)
      nodes[node].sourceLeft = rest
      updateSource(node)
      return (first, node)
    }
    let (first, rest) = splitSource(nodes[node].sourceRight, count - size(left) - 1)
    nodes[node].sourceRight = first
    updateSource(node)
    return (node, rest)
  }

  /// The node at place `index` of the source.
  func nodeAtSource(_ index: Int) -> Int {
    var node = sourceRoot
    var index = index
    while true {
      let left = size(nodes[node].sourceLeft)
      if index < left {
        node = nodes[node].sourceLeft
      } else if index == left {
        return node
      } else {
        index -= left + 1
        node = nodes[node].sourceRight
      }
    }
  }

  /// The included nodes before place `index` of the source.
  func includedBefore(_ index: Int) -> Int {
    var node = sourceRoot
    var index = index
    var before = 0
    while node >= 0 {
      let left = nodes[node].sourceLeft
      if index <= size(left) {
        node = left
      } else {
        before += included(left) + (nodes[node].included ? 1 : 0)
        index -= size(left) + 1
        node = nodes[node].sourceRight
      }
    }
    return before
  }

  /// Sets the mark of `target`, at place `index` of the source, and the
  /// counts on the way to it.
  mutating func setIncluded(_ target: Int, atSource index: Int, _ isIncluded: Bool) {
    var path: [Int] = []
    var node = sourceRoot
    var index = index
    while node != target {
      path.append(node)
      let left = size(nodes[node].sourceLeft)
      if index < left {
        node = nodes[node].sourceLeft
      } else {
        index -= left + 1
        node = nodes[node].sourceRight
      }
    }
    nodes[target].included = isIncluded
    updateSource(target)
    for node in path.reversed() { updateSource(node) }
  }

  /// Recounts every subtree of `node`'s, after a re-filter changed many
  /// marks. O(n).
  mutating func recount(_ node: Int) {
    guard node >= 0 else { return }
    recount(nodes[node].sourceLeft)
    recount(nodes[node].sourceRight)
    updateSource(node)
  }

  // MARK: The sorted tree

  private func size(sorted node: Int) -> Int { node < 0 ? 0 : nodes[node].sortedSize }

  private mutating func updateSorted(_ node: Int) {
    nodes[node].sortedSize = 1 + size(sorted: nodes[node].sortedLeft) + size(sorted: nodes[node].sortedRight)
  }

  /// Whether `node` comes before `other` in the view, where `less` orders
  /// two nodes by their elements.
  private func precedes(_ node: Int, _ other: Int, _ less: (Int, Int) -> Bool) -> Bool {
    if less(node, other) { return true }
    if less(other, node) { return false }
    return nodes[node].sequence < nodes[other].sequence
  }

  private mutating func mergeSorted(_ left: Int, _ right: Int) -> Int {
    if left < 0 { return right }
    if right < 0 { return left }
    if nodes[left].priority > nodes[right].priority {
      nodes[left].sortedRight = mergeSorted(nodes[left].sortedRight, right)
      updateSorted(left)
      return left
    }
    nodes[right].sortedLeft = mergeSorted(left, nodes[right].sortedLeft)
    updateSorted(right)
    return right
  }

  /// Splits `node`'s subtree into the nodes before `pivot` and the others.
  private mutating func splitSorted(_ node: Int, before pivot: Int, _ less: (Int, Int) -> Bool) -> (Int, Int) {
    if node < 0 { return (-1, -1) }
    if precedes(node, pivot, less) {
      let (first, rest) = splitSorted(nodes[node].sortedRight, before: pivot, less)
      nodes[node].sortedRight = first
      updateSorted(node)
      return (node, rest)
    }
    let (first, rest) = splitSorted(nodes[node].sortedLeft, before: pivot, less)
    nodes[node].sortedLeft = rest
    updateSorted(node)
    return (first, node)
  }

  /// Puts `node` in its place in the sorted tree.
  mutating func insertSorted(_ node: Int, _ less: (Int, Int) -> Bool) {
    nodes[node].sortedLeft = -1
    nodes[node].sortedRight = -1
    nodes[node].sortedSize = 1
    let (before, after) = splitSorted(sortedRoot, before: node, less)
    sortedRoot = mergeSorted(mergeSorted(before, node), after)
  }

  /// Takes `node` out of the sorted tree.
  mutating func removeSorted(_ node: Int, _ less: (Int, Int) -> Bool) {
    let (before, rest) = splitSorted(sortedRoot, before: node, less)
    // `node` is the first of `rest`.
    sortedRoot = mergeSorted(before, dropFirstSorted(rest))
  }

  /// `node`'s subtree without its first node.
  private mutating func dropFirstSorted(_ node: Int) -> Int {
    let left = nodes[node].sortedLeft
    if left < 0 { return nodes[node].sortedRight }
    nodes[node].sortedLeft = dropFirstSorted(left)
    updateSorted(node)
    return node
  }

  /// The nodes before `target` in the sorted tree.
  func rank(_ target: Int, _ less: (Int, Int) -> Bool) -> Int {
    var node = sortedRoot
    var before = 0
    while node >= 0 && node != target {
      if precedes(node, target, less) {
        before += size(sorted: nodes[node].sortedLeft) + 1
        node = nodes[node].sortedRight
      } else {
        node = nodes[node].sortedLeft
      }
    }
    return before + size(sorted: nodes[target].sortedLeft)
  }
}
