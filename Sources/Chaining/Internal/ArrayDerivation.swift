// MARK: - ArrayDerivation

/// The state of a ``DerivedArrayHolder``: its source's elements, which of
/// them pass the filter, and the order of those that do, kept so that one
/// event of the source costs O(log n) to turn into the view's events.
///
/// The elements are stored here, by node; where they stand is in a
/// `DerivationTree`, which is not generic: generic code that is not
/// specialized looks up the metadata of every array of a generic type it
/// touches, which made an event cost 20 µs instead of 1.
///
/// The view's elements as an array are made on demand, in O(n), and kept
/// until the next change (`cached`). Guarded by the view's store's lock,
/// like every holder's state.
struct ArrayDerivation<Element> {
  typealias Event = ArrayHolder<Element>.Event

  let isIncluded: ((Element) -> Bool)?
  let areInIncreasingOrder: ((Element, Element) -> Bool)?
  private var tree = DerivationTree()
  /// The element of each node in the trees.
  private let elements = ElementSlots<Element>()
  /// The view's elements, made by `view` and dropped by every change.
  private var cached: [Element]? = []

  init(isIncluded: ((Element) -> Bool)?, areInIncreasingOrder: ((Element, Element) -> Bool)?) {
    self.isIncluded = isIncluded
    self.areInIncreasingOrder = areInIncreasingOrder
  }

  // MARK: Reading

  /// The number of elements in the source.
  var sourceCount: Int { tree.size(tree.sourceRoot) }

  /// The number of elements in the view.
  var count: Int { tree.included(tree.sourceRoot) }

  private var sorts: Bool { areInIncreasingOrder != nil }

  /// The view's elements, in its order. O(n) after a change, O(1) again
  /// until the next.
  mutating func view() -> [Element] {
    if let cached { return cached }
    var made: [Element] = []
    made.reserveCapacity(count)
    tree.forEachInView(sorted: sorts) { made.append(element($0)) }
    cached = made
    return made
  }

  /// The source's elements, in its order. O(n).
  func sourceElements() -> [Element] {
    var made: [Element] = []
    made.reserveCapacity(sourceCount)
    tree.forEachInSource { made.append(element($0)) }
    return made
  }

  /// The view's element at `index`, which must be in `0..<count`. O(log n).
  func element(atView index: Int) -> Element {
    if let cached { return cached[index] }
    return element(tree.nodeAtView(index, sorted: sorts))
  }

  // MARK: Changes from the source

  /// Applies one event of the source and returns the view's events for
  /// it, each one applied to the view as it was after the one before.
  mutating func apply(_ event: Event) -> [Event] {
    switch event {
    case .fetched(let all), .set(let all):
      let wasEmpty = count == 0
      reset(to: all)
      if wasEmpty && count == 0 { return [] }
      return [.set(view())]
    case .inserted(let index, let element):
      return insert(element, at: index)
    case .removed(let index, _):
      return remove(at: index)
    case .replaced(let index, let element):
      return replace(at: index, with: element)
    case .moved(let from, let to, _):
      return move(from: from, to: to)
    }
  }

  private mutating func reset(to all: [Element]) {
    tree.forEachInSource { elements.remove(at: $0) }
    tree = DerivationTree()
    cached = nil
    // Inserts at the end: O(n log n).
    for element in all {
      let node = makeNode(element)
      let passes = passes(element)
      tree.insertSource(node, at: tree.size(tree.sourceRoot), included: passes)
      if passes { enterSorted(node) }
    }
  }

  private mutating func insert(_ element: Element, at index: Int) -> [Event] {
    cached = nil
    let node = makeNode(element)
    let passes = passes(element)
    tree.insertSource(node, at: index, included: passes)
    guard passes else { return [] }
    enterSorted(node)
    return [.inserted(at: viewIndex(node, atSource: index), element: element)]
  }

  private mutating func remove(at index: Int) -> [Event] {
    cached = nil
    let node = tree.nodeAtSource(index)
    var events: [Event] = []
    if tree.nodes[node].included {
      events.append(.removed(at: viewIndex(node, atSource: index), element: element(node)))
      leaveSorted(node)
    }
    tree.removeSource(at: index)
    elements.remove(at: node)
    tree.free.append(node)
    return events
  }

  private mutating func replace(at index: Int, with new: Element) -> [Event] {
    cached = nil
    let node = tree.nodeAtSource(index)
    let was = tree.nodes[node].included
    let passes = passes(new)
    switch (was, passes) {
    case (false, false):
      elements.replace(at: node, with: new)
      return []
    case (false, true):
      elements.replace(at: node, with: new)
      tree.setIncluded(node, atSource: index, true)
      enterSorted(node)
      return [.inserted(at: viewIndex(node, atSource: index), element: new)]
    case (true, false):
      let removed = Event.removed(at: viewIndex(node, atSource: index), element: element(node))
      leaveSorted(node)
      tree.setIncluded(node, atSource: index, false)
      elements.replace(at: node, with: new)
      return [removed]
    case (true, true):
      let old = viewIndex(node, atSource: index)
      guard sorts else {
        elements.replace(at: node, with: new)
        return [.replaced(at: old, element: new)]
      }
      // Out of the sorted tree with the old element, back in with the
      // new one, keeping its place among equal elements.
      withOrder { tree, precedes in tree.removeSorted(node, precedes) }
      elements.replace(at: node, with: new)
      withOrder { tree, precedes in tree.insertSorted(node, precedes) }
      let moved = rank(node)
      if moved == old { return [.replaced(at: old, element: new)] }
      return [.replaced(at: old, element: new), .moved(at: old, to: moved, element: new)]
    }
  }

  private mutating func move(from: Int, to: Int) -> [Event] {
    if from == to { return [] }
    cached = nil
    let node = tree.nodeAtSource(from)
    let included = tree.nodes[node].included
    let old = included ? viewIndex(node, atSource: from) : 0
    tree.removeSource(at: from)
    tree.insertSource(node, at: to, included: included)
    // A sorted view's order does not follow the source's.
    guard included, !sorts else { return [] }
    let new = viewIndex(node, atSource: to)
    return new == old ? [] : [.moved(at: old, to: new, element: element(node))]
  }

  /// Runs the filter again over every element (the holders it reads
  /// changed), and returns the removals, highest index first, then the
  /// insertions, lowest first: applied in order to the view as it was,
  /// they give the view as it is. O(n) filter calls, plus O(k log n) for
  /// k changes in a sorted view.
  mutating func refilter() -> [Event] {
    guard isIncluded != nil else { return [] }
    // The nodes that leave, with their index in the view as it was, and
    // those that enter.
    var leaving: [(node: Int, index: Int)] = []
    var entering: [Int] = []
    var viewIndex = 0
    tree.forEachInSource { node in
      let was = tree.nodes[node].included
      if passes(element(node)) != was {
        if was { leaving.append((node, viewIndex)) } else { entering.append(node) }
      }
      if was { viewIndex += 1 }
    }
    if leaving.isEmpty && entering.isEmpty { return [] }
    cached = nil
    var events: [Event] = []
    events.reserveCapacity(leaving.count + entering.count)
    if sorts { leaving = leaving.map { ($0.node, rank($0.node)) } }
    // Removals from the view as it was, highest first: each index is still
    // the element's own when its event is applied.
    leaving.sort { $0.index > $1.index }
    for (node, index) in leaving {
      events.append(.removed(at: index, element: element(node)))
      leaveSorted(node)
      tree.nodes[node].included = false
    }
    for node in entering {
      tree.nodes[node].included = true
      enterSorted(node)
    }
    tree.recount(tree.sourceRoot)
    // Insertions at their index in the view as it is, lowest first: each
    // lands among elements already in their final order.
    var placed: [(node: Int, index: Int)] = []
    placed.reserveCapacity(entering.count)
    if sorts {
      placed = entering.map { ($0, rank($0)) }.sorted { $0.index < $1.index }
    } else {
      // In the source's order, which is the view's.
      var index = 0
      var next = 0
      tree.forEachInSource { node in
        guard tree.nodes[node].included else { return }
        if next < entering.count && entering[next] == node {
          placed.append((node, index))
          next += 1
        }
        index += 1
      }
    }
    for (node, index) in placed { events.append(.inserted(at: index, element: element(node))) }
    return events
  }

  // MARK: Nodes

  private func element(_ node: Int) -> Element { elements[node] }

  private func passes(_ element: Element) -> Bool { isIncluded?(element) ?? true }

  private mutating func makeNode(_ element: Element) -> Int {
    let node = tree.makeNode()
    elements.initialize(at: node, to: element)
    return node
  }

  /// Runs `body` with the tree and the view's order of two nodes, by
  /// their elements.
  private mutating func withOrder<Result>(
    _ body: (inout DerivationTree, (Int, Int) -> Bool) -> Result
  ) -> Result {
    let order = areInIncreasingOrder.unsafelyUnwrapped
    let base = elements.base
    return body(&tree) { order(base[$0], base[$1]) }
  }

  /// Adds the included `node` to the sorted tree, after the elements
  /// equal to it, when the view sorts.
  private mutating func enterSorted(_ node: Int) {
    guard sorts else { return }
    tree.nodes[node].sequence = tree.nextSequence
    tree.nextSequence += 1
    withOrder { tree, precedes in tree.insertSorted(node, precedes) }
  }

  private mutating func leaveSorted(_ node: Int) {
    guard sorts else { return }
    withOrder { tree, precedes in tree.removeSorted(node, precedes) }
  }

  private mutating func rank(_ node: Int) -> Int {
    withOrder { tree, precedes in tree.rank(node, precedes) }
  }

  /// The view index of the included `node`, at `sourceIndex` in the source.
  private mutating func viewIndex(_ node: Int, atSource sourceIndex: Int) -> Int {
    sorts ? rank(node) : tree.includedBefore(sourceIndex)
  }
}

// MARK: - ElementSlots

/// The elements of a derived view's nodes, one slot per node, initialized
/// while the node is in the trees. Not an array of optionals: unspecialized
/// code looks up the metadata of `Optional<Element>`, and of an array of
/// it, on every access, which was a third of an event's cost. The slot of
/// a node is initialized by `initialize` and emptied by `remove`; the
/// derivation (`ArrayDerivation`) does both, as the node enters and leaves
/// the source tree, and `live` says which slots to empty in `deinit`.
final class ElementSlots<Element> {
  private(set) var base: UnsafeMutablePointer<Element>
  private var capacity = 0
  private var live: [Bool] = []

  init() {
    base = UnsafeMutablePointer.allocate(capacity: 0)
  }

  deinit {
    for (slot, isLive) in live.enumerated() where isLive { (base + slot).deinitialize(count: 1) }
    base.deallocate()
  }

  subscript(slot: Int) -> Element { base[slot] }

  /// Fills the empty `slot`, making room for it when it is past the end.
  func initialize(at slot: Int, to element: Element) {
    if slot >= capacity {
      let grown = Swift.max(slot + 1, capacity * 2, 16)
      let moved = UnsafeMutablePointer<Element>.allocate(capacity: grown)
      for (index, isLive) in live.enumerated() where isLive {
        (moved + index).moveInitialize(from: base + index, count: 1)
      }
      base.deallocate()
      base = moved
      capacity = grown
    }
    while live.count <= slot { live.append(false) }
    (base + slot).initialize(to: element)
    live[slot] = true
  }

  func replace(at slot: Int, with element: Element) {
    base[slot] = element
  }

  /// Empties `slot`, releasing its element.
  func remove(at slot: Int) {
    (base + slot).deinitialize(count: 1)
    live[slot] = false
  }
}

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
