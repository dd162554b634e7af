import Chaining
import Testing

/// Seeded random graphs of holders, maps and combines (#24): after each root
/// write or batch, every combine has sent only pairs equal to a
/// recomputation from the holders' values, exactly once if one of its
/// sources changed, and not at all otherwise. Leaves of the graph select
/// one of two holders by a third's parity with `flatMapLatest` (#36): they
/// send only values of the holder selected at the wave's end, the last one
/// its final value, and nothing in a wave that changed neither the
/// selection nor the selected holder.
@Suite struct GlitchFreePropertyTests {
  /// How a holder of the graph gets its value.
  enum Node {
    case root
    /// `holders[from] * factor + offset`, written by a chain.
    case map(from: Int, factor: Int, offset: Int)
    /// `holders[first] * 31 + holders[second]`, written by a combine;
    /// `combine` indexes the recorders.
    case combine(first: Int, second: Int, combine: Int)
    /// `holders[even]` when `holders[selector]` is even, else
    /// `holders[odd]`, written by a `flatMapLatest`; a leaf, read by no
    /// other node; `select` indexes the selection recorders.
    case select(selector: Int, even: Int, odd: Int, select: Int)

    var isRoot: Bool {
      if case .root = self { return true }
      return false
    }

    /// For a selection: the holder it follows when the selector holds
    /// `value`.
    func selected(by value: Int) -> Int {
      guard case .select(_, let even, let odd, _) = self else { preconditionFailure("not a selection") }
      return value.isMultiple(of: 2) ? even : odd
    }
  }

  /// The values every holder should hold, computed from the roots.
  static func recompute(_ nodes: [Node], roots: [Int: Int]) -> [Int] {
    var values: [Int] = []
    for (index, node) in nodes.enumerated() {
      switch node {
      case .root: values.append(roots[index]!)
      case .map(let from, let factor, let offset): values.append(values[from] &* factor &+ offset)
      case .combine(let first, let second, _): values.append(values[first] &* 31 &+ values[second])
      case .select(let selector, _, _, _): values.append(values[node.selected(by: values[selector])])
      }
    }
    return values
  }

  /// Which holders delivered a value in the wave of `writes`: a root for
  /// each write that changed it, a map's holder whenever its source's value
  /// moved, even back to where it was, and a combine's holder only when its
  /// one send at the wave's end changed it.
  static func changes(_ nodes: [Node], before: [Int], after: [Int], writes: [(Int, Int)]) -> [Bool] {
    sequences(nodes, before: before, after: after, writes: writes).map { $0.count > 1 }
  }

  /// The values each holder delivered in the wave of `writes`, its value
  /// before first (see `changes`); for a selection, its value before and
  /// after.
  static func sequences(_ nodes: [Node], before: [Int], after: [Int], writes: [(Int, Int)]) -> [[Int]] {
    func deduped(_ values: [Int]) -> [Int] {
      values.enumerated().filter { $0.offset == 0 || values[$0.offset - 1] != $0.element }.map(\.element)
    }
    var sequences: [[Int]] = []
    for (index, node) in nodes.enumerated() {
      switch node {
      case .root:
        sequences.append(deduped([before[index]] + writes.filter { $0.0 == index }.map(\.1)))
      case .map(let from, let factor, let offset):
        sequences.append(deduped(sequences[from].map { $0 &* factor &+ offset }))
      case .combine(let first, let second, _):
        let sends = sequences[first].count > 1 || sequences[second].count > 1
        sequences.append(sends ? deduped([before[index], after[index]]) : [before[index]])
      case .select:
        sequences.append(deduped([before[index], after[index]]))
      }
    }
    return sequences
  }

  @Test(arguments: 0..<40)
  func everyCombineSendsOneUntornPairPerWaveThatChangedIt(seed: Int) {
    check(seed: seed, builtInOrder: true)
  }

  /// The same graphs, their links built in a shuffled order (a combine
  /// often before the combines that feed it), every holder starting at its
  /// final value, so that no `sync()` changes one: each link is first used
  /// by a write, and the order comes from the build alone (#36).
  @Test(arguments: 0..<40)
  func linksBuiltInAnyOrderAreGlitchFreeFromTheirFirstWrite(seed: Int) {
    check(seed: seed, builtInOrder: false)
  }

  /// Builds a random graph from `seed`, then checks every wave of 25
  /// random writes and batches. `builtInOrder`: the links are built from
  /// the roots on, each `sync()` setting its holder; otherwise in a
  /// shuffled order, every holder made with its value.
  func check(seed: Int, builtInOrder: Bool) {
    var random = SplitMix64(seed: UInt64(seed))
    var nodes: [Node] = []
    var roots: [Int: Int] = [:]
    let rootCount = 3
    for index in 0..<rootCount {
      roots[index] = Int.random(in: 0..<4, using: &random)
      nodes.append(.root)
    }
    var recorderCount = 0
    for index in rootCount..<14 {
      if Bool.random(using: &random) {
        let from = Int.random(in: 0..<index, using: &random)
        let factor = Int.random(in: 1..<4, using: &random)
        let offset = Int.random(in: 0..<5, using: &random)
        nodes.append(.map(from: from, factor: factor, offset: offset))
      } else {
        // The same holder on both sides is allowed: a diamond of its own.
        let first = Int.random(in: 0..<index, using: &random)
        let second = Int.random(in: 0..<index, using: &random)
        nodes.append(.combine(first: first, second: second, combine: recorderCount))
        recorderCount += 1
      }
    }
    // Three selections, leaves of the graph.
    let inner = nodes.count
    for select in 0..<3 {
      let selector = Int.random(in: 0..<inner, using: &random)
      let even = Int.random(in: 0..<inner, using: &random)
      let odd = Int.random(in: 0..<inner, using: &random)
      nodes.append(.select(selector: selector, even: even, odd: odd, select: select))
    }
    var expected = Self.recompute(nodes, roots: roots)
    let holders = nodes.indices.map { index in
      ValueHolder(builtInOrder ? (nodes[index].isRoot ? expected[index] : 0) : expected[index])
    }
    let recorders = (0..<recorderCount).map { _ in Recorder<(Int, Int)>() }
    // Each selection records what it sends.
    let selections = (0..<3).map { _ in Recorder<Int>() }
    var builds: [() -> Observer] = []
    for (index, node) in nodes.enumerated() {
      let holder = holders[index]
      switch node {
      case .root:
        continue
      case .map(let from, let factor, let offset):
        builds.append { holders[from].chain().map { $0 &* factor &+ offset }.sendTo(holder).sync() }
      case .combine(let first, let second, let combine):
        let recorder = recorders[combine]
        builds.append {
          holders[first].chain().combine(holders[second].chain())
            .do { recorder.append($0) }
            .map { $0 &* 31 &+ $1 }
            .sendTo(holder)
            .sync()
        }
      case .select(let selector, let even, let odd, let select):
        let recorder = selections[select]
        builds.append {
          holders[selector].chain()
            .flatMapLatest { $0.isMultiple(of: 2) ? holders[even].chain() : holders[odd].chain() }
            .do { recorder.append($0) }
            .sendTo(holder)
            .sync()
        }
      }
    }
    if !builtInOrder { builds.shuffle(using: &random) }
    let observers = builds.map { $0() }
    #expect(holders.map(\.value) == expected)

    for wave in 0..<25 {
      let before = expected
      let counts = recorders.map(\.count)
      let selectionCounts = selections.map(\.count)
      // A write to one root, or a batch of writes to several.
      var planned: [(Int, Int)] = []
      for _ in 0..<Int.random(in: 1...3, using: &random) {
        planned.append((Int.random(in: 0..<rootCount, using: &random), Int.random(in: 0..<4, using: &random)))
      }
      for (root, value) in planned { roots[root] = value }
      expected = Self.recompute(nodes, roots: roots)
      if planned.count == 1 {
        holders[planned[0].0].value = planned[0].1
      } else {
        withBatchedUpdates {
          for (root, value) in planned { holders[root].value = value }
        }
      }
      #expect(holders.map(\.value) == expected, "seed \(seed), wave \(wave)")
      let changes = Self.changes(nodes, before: before, after: expected, writes: planned)
      for node in nodes {
        guard case .combine(let first, let second, let combine) = node else { continue }
        let sent = Array(recorders[combine].history.dropFirst(counts[combine]))
        let changed = changes[first] || changes[second]
        #expect(sent.count == (changed ? 1 : 0), "seed \(seed), wave \(wave), combine \(combine)")
        for pair in sent {
          #expect(
            [pair.0, pair.1] == [expected[first], expected[second]],
            "seed \(seed), wave \(wave), combine \(combine)"
          )
        }
      }
      let sequences = Self.sequences(nodes, before: before, after: expected, writes: planned)
      for (index, node) in nodes.enumerated() {
        guard case .select(let selector, _, _, let select) = node else { continue }
        let sent = Array(selections[select].history.dropFirst(selectionCounts[select]))
        let followed = node.selected(by: expected[selector])
        // A switch (the selector delivered) or a change of the holder it
        // follows sends; nothing else does.
        let sends = sequences[selector].count > 1 || sequences[followed].count > 1
        #expect(sent.isEmpty != sends, "seed \(seed), wave \(wave), selection \(select)")
        // Only values the followed holder took in the wave, the last one
        // its final value: never one of the holder the wave switched from.
        #expect(
          sent.allSatisfy(sequences[followed].contains),
          "seed \(seed), wave \(wave), selection \(select): \(sent)"
        )
        if let last = sent.last { #expect(last == expected[index], "seed \(seed), wave \(wave), selection \(select)") }
      }
    }
    withExtendedLifetime(observers) {}
  }
}
