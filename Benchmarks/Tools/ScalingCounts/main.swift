import Chaining

// Builds one of the graphs whose cost per item the benchmarks measure at
// three sizes (the chain of holders, cellx), then writes it a fixed number
// of times in `counted(_:)`, which `./count-scaling` runs under callgrind:
// the instructions per item at each size, where the benchmarks give the
// time. Flat instructions with a growing time is the graph outgrowing the
// caches, not a search or a copy that grows with it (issue #36).
//
// Usage: ScalingCounts chain|cellx SIZE. Prints the items written (holders
// a write passes through, or values), which the script divides by.

/// Runs `body`, the writes, where callgrind counts (`--toggle-collect`).
@inline(never)
func counted(_ body: () -> Void) {
  body()
}

/// A chain of `length` holders, each `map`ped and sent to the next: the
/// "holder chain" benchmark. Returns the holders written.
func holderChain(length: Int) -> Int {
  let holders = (0...length).map { _ in ValueHolder(0) }
  let observers = (0..<length).map { index in
    holders[index].chain().map { $0 &+ 1 }.sendTo(holders[index + 1]).end()
  }
  let writes = max(100_000 / length, 10)
  counted {
    for value in 1...writes { holders[0].value = value &* 1_000_000 }
  }
  precondition(
    holders[length].value == writes &* 1_000_000 &+ length,
    "ScalingCounts: the chain of \(length) ended at \(holders[length].value)"
  )
  withExtendedLifetime(observers) {}
  return writes * length
}

/// cellx with `layers` layers of four holders, as the "cellx" benchmark
/// builds it, written 10 times. Returns the values written.
func cellx(layers: Int) -> Int {
  let start = (1...4).map { ValueHolder($0) }
  var holders: [ValueHolder<Int>] = []
  var observers: [Observer] = []
  let effects = Runs()
  var layer = start
  for _ in 0..<layers {
    let previous = layer
    let next = (0..<4).map { _ in ValueHolder(0) }
    holders += next
    observers.append(previous[1].chain().sendTo(next[0]).sync())
    observers.append(
      previous[0].chain().combine(previous[2].chain()).map { $0 &- $1 }.sendTo(next[1]).sync()
    )
    observers.append(
      previous[1].chain().combine(previous[3].chain()).map { $0 &+ $1 }.sendTo(next[2]).sync()
    )
    observers.append(previous[2].chain().sendTo(next[3]).sync())
    for holder in next { observers.append(holder.chain().do { _ in effects.count &+= 1 }.end()) }
    layer = next
  }
  effects.count = 0
  let rounds = 10
  counted {
    for round in 0..<rounds {
      let values = round % 2 == 0 ? (4, 3, 2, 1) : (1, 2, 3, 4)
      withBatchedUpdates {
        start[0].value = values.0
        start[1].value = values.1
        start[2].value = values.2
        start[3].value = values.3
      }
    }
  }
  // Every value changes in every round: its effect runs once per round.
  precondition(
    effects.count == rounds * layers * 4,
    "ScalingCounts: cellx \(layers) ran \(effects.count) effects"
  )
  withExtendedLifetime((observers, holders)) {}
  return rounds * layers * 4
}

/// The effects' runs, as the benchmarks' `Counter` counts them: without
/// the exclusivity checks of a captured variable, which would be counted.
final class Runs {
  @exclusivity(unchecked) var count = 0
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let size = Int(arguments[2]), size > 0 else {
  fatalError("usage: ScalingCounts chain|cellx SIZE (got \(arguments.dropFirst()))")
}
switch arguments[1] {
case "chain": print(holderChain(length: size))
case "cellx": print(cellx(layers: size))
default: fatalError("ScalingCounts: no graph named \(arguments[1]); use chain or cellx")
}
