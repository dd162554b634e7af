import Benchmark
import Chaining

/// The cellx scenario of the js-reactivity-benchmark (its shape and counts,
/// after Riim's cellx): `layers` layers of four values, each computed from
/// two of the layer before, with one effect per value; four writes to the
/// first layer in one batch. Chaining builds each value as a holder fed by
/// a chain (`sendTo`, `combine` of two); the floor recomputes every layer
/// in a loop. The cost is per value of the graph, at three sizes.
func cellxBenchmarks() {
  for layers in [1000, 2500, 5000] {
    // The graph of holders, and the same graph of `Computed` values, each
    // with a chain as its effect.
    let graphs: [(name: String, make: () -> any CellxWritable)] = [
      ("cellx \(layers): chaining", { CellxGraph(layers: layers) }),
      ("cellx \(layers) computed: chaining", { CellxComputedGraph(layers: layers) }),
    ]
    for (name, make) in graphs {
      Benchmark(name) { benchmark in
        let graph = make()
        let rounds = Suite.size(10, smoke: 1)
        benchmark.measure(operations: rounds * layers * 4) {
          for round in 0..<rounds { graph.write(round) }
        }
        benchmark.expectDelivery(graph.effects)
        graph.invalidate()
      }
    }

    // Invalidating every observer of the graph: 8 per layer.
    Benchmark("cellx teardown \(layers): chaining") { benchmark in
      let graph = CellxGraph(layers: layers)
      benchmark.measure(operations: layers * 8) { graph.invalidate() }
    }

    Benchmark("cellx \(layers): floor") { benchmark in
      // The floor of the README: a closure per value, called in order,
      // each reading two values of the layer before, and an effect each.
      let counter = Counter()
      var values = Array(repeating: 0, count: (layers + 1) * 4)
      let nodes: [(inout [Int], Int) -> Void] = identity([
        { values, base in values[base + 4] = values[base + 1] },
        { values, base in values[base + 5] = values[base] &- values[base + 2] },
        { values, base in values[base + 6] = values[base + 1] &+ values[base + 3] },
        { values, base in values[base + 7] = values[base + 2] },
      ])
      let effect: (Int) -> Void = identity { counter.total &+= $0 }
      let rounds = Suite.size(10, smoke: 1)
      benchmark.measure(operations: rounds * layers * 4) {
        for round in 0..<rounds {
          let start = CellxGraph.start(round)
          (values[0], values[1], values[2], values[3]) = start
          for layer in 0..<layers {
            for index in 0..<4 {
              nodes[index](&values, layer * 4)
              effect(values[layer * 4 + 4 + index])
            }
          }
        }
      }
      benchmark.expectDelivery(counter)
    }
  }
}

/// The cellx graph built of holders and chains. It keeps every holder: a
/// chain holds the holder it sends to weakly, and without them the graph
/// stops at the first layer.
/// A cellx graph: written round by round, its effects counted.
protocol CellxWritable {
  var effects: Counter { get }
  func write(_ round: Int)
  func invalidate()
}

final class CellxGraph: CellxWritable {
  let start: [ValueHolder<Int>]
  let end: [ValueHolder<Int>]
  let effects = Counter()
  private var observers: [Observer] = []
  /// Every holder: a chain holds the holder it sends to weakly.
  private var holders: [ValueHolder<Int>] = []

  init(layers: Int) {
    let start = (1...4).map { ValueHolder($0) }
    var layer = start
    for _ in 0..<layers {
      let previous = layer
      let next = (0..<4).map { _ in ValueHolder(0) }
      holders += next
      observers.append(previous[1].chain().sendTo(next[0]).sync())
      observers.append(previous[0].chain().combine(previous[2].chain()).map { $0 &- $1 }.sendTo(next[1]).sync())
      observers.append(previous[1].chain().combine(previous[3].chain()).map { $0 &+ $1 }.sendTo(next[2]).sync())
      observers.append(previous[2].chain().sendTo(next[3]).sync())
      for holder in next {
        observers.append(holder.chain().do { [effects] in effects.total &+= $0 }.end())
      }
      layer = next
    }
    self.start = start
    end = layer
  }

  /// The first layer's values in round `round`: cellx's two sets, in turn.
  static func start(_ round: Int) -> (Int, Int, Int, Int) {
    round % 2 == 0 ? (4, 3, 2, 1) : (1, 2, 3, 4)
  }

  /// Writes round `round`'s values to the first layer, in one batch.
  func write(_ round: Int) { Self.write(round, to: start) }

  /// Writes round `round`'s values to `start`, a first layer, in one batch.
  static func write(_ round: Int, to start: [ValueHolder<Int>]) {
    let values = Self.start(round)
    withBatchedUpdates {
      start[0].value = values.0
      start[1].value = values.1
      start[2].value = values.2
      start[3].value = values.3
    }
  }

  func invalidate() {
    for observer in observers { observer.invalidate() }
  }
}

/// The cellx graph of `Computed` values: each value of a layer computed
/// from two of the layer before, read with `value`, and a chain on each
/// as its effect. The first layer is holders, written as in `CellxGraph`.
final class CellxComputedGraph: CellxWritable {
  let start: [ValueHolder<Int>]
  let effects = Counter()
  private var observers: [Observer] = []

  init(layers: Int) {
    let start = (1...4).map { ValueHolder($0) }
    var layer: [() -> Int] = start.map { holder in { holder.value } }
    for _ in 0..<layers {
      let previous = layer
      let next = [
        Computed { previous[1]() },
        Computed { previous[0]() &- previous[2]() },
        Computed { previous[1]() &+ previous[3]() },
        Computed { previous[2]() },
      ]
      for value in next {
        observers.append(value.chain().do { [effects] in effects.total &+= $0 }.end())
      }
      layer = next.map { value in { value.value } }
    }
    self.start = start
  }

  /// Writes round `round`'s values to the first layer, in one batch.
  func write(_ round: Int) { CellxGraph.write(round, to: start) }

  func invalidate() {
    for observer in observers { observer.invalidate() }
  }
}
