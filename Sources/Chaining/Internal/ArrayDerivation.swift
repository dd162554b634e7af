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
