import Benchmark
import Chaining
import OpenCombine

/// One observer behind a chain of `depth` `map` steps: the cost per value
/// of the steps between a sender and the handler. Then a holder with
/// `map`, `filter` and `do`, the typical binding of a model property.
///
/// Each chain is written out, as users write chains and as the OpenCombine
/// pipelines are, and so is each floor: a hand-written pipeline of one
/// closure per step.
func chainDepthBenchmarks() {
  let sends = Suite.sends

  for depth in [1, 5, 10] {
    Benchmark("chain depth \(depth): chaining") { benchmark in
      let notifier = Notifier<Int>()
      let counter = Counter()
      let observer = chainingMaps(notifier, depth: depth, counter: counter)
      benchmark.measure(operations: sends) {
        for value in 0..<sends { notifier.notify(value: value) }
      }
      benchmark.expectDelivery(counter)
      observer.invalidate()
    }

    Benchmark("chain depth \(depth): floor") { benchmark in
      let counter = Counter()
      let handlers: [(Int) -> Void] = identity([floorMaps(depth: depth, counter: counter)])
      benchmark.measure(operations: sends) {
        for value in 0..<sends {
          for handler in handlers { handler(value) }
        }
      }
      benchmark.expectDelivery(counter)
    }

    Benchmark("chain depth \(depth): opencombine") { benchmark in
      let subject = PassthroughSubject<Int, Never>()
      let counter = Counter()
      let cancellable = openCombineMaps(subject, depth: depth, counter: counter)
      benchmark.measure(operations: sends) {
        for value in 0..<sends { subject.send(value) }
      }
      benchmark.expectDelivery(counter)
      cancellable.cancel()
    }
  }

  // A chain of holders, each `map`ped and sent to the next: one write runs
  // through all of them. The cost per holder, at three lengths a decade
  // apart (issue #36: it grew with the length, a cause list searched per
  // hop).
  for length in [1000, 10000, 100_000] {
    Benchmark("holder chain \(length): chaining") { benchmark in
      let holders = (0...length).map { _ in ValueHolder(0) }
      let counter = Counter()
      let observers = (0..<length).map { index in
        holders[index].chain().map { $0 &+ 1 }.sendTo(holders[index + 1]).end()
      }
      let last = holders[length].chain().do { counter.total &+= $0 }.end()
      let writes = Suite.size(max(100_000 / length, 10), smoke: 2)
      benchmark.measure(operations: writes * length) {
        for value in 1...writes { holders[0].value = value &* 1_000_000 }
      }
      benchmark.expectDelivery(counter)
      last.invalidate()
      for observer in observers { observer.invalidate() }
    }
  }

  // Building that chain, with a combine that writes its first holder:
  // from the source on, each link raises only the holder it writes; from
  // the end back, the combine, built last, raises every holder once (the
  // order of a wave's end is known when chains are built, see
  // `RankGraph`). The cost per link, at three lengths a decade apart.
  for length in [1000, 10000, 100_000] {
    for fromTheEnd in [false, true] {
      Benchmark("holder chain build \(length): \(fromTheEnd ? "from the end" : "from the source")") { benchmark in
        let source = ValueHolder(1)
        let holders = (0...length).map { _ in ValueHolder(0) }
        let counter = Counter()
        let last = holders[length].chain().do { counter.total &+= $0 }.end()
        var observers: [Observer] = []
        observers.reserveCapacity(length + 1)
        func writer() -> Observer {
          source.chain().combine(source.chain()).map { $0 &+ $1 }.sendTo(holders[0]).end()
        }
        benchmark.measure(operations: length + 1) {
          if !fromTheEnd { observers.append(writer()) }
          for step in 0..<length {
            let index = fromTheEnd ? length - 1 - step : step
            observers.append(holders[index].chain().map { $0 &+ 1 }.sendTo(holders[index + 1]).end())
          }
          if fromTheEnd { observers.append(writer()) }
        }
        source.value = 2
        benchmark.expectDelivery(counter)
        // The holders too: a chain holds the holder it sends to weakly.
        blackHole(holders)
        last.invalidate()
        for observer in observers { observer.invalidate() }
      }
    }
  }

  Benchmark("holder set: chaining") { benchmark in
    let holder = ValueHolder(-1)
    let counter = Counter()
    let observer = holderSetChain(holder, counter: counter)
    benchmark.measure(operations: sends) {
      for value in 0..<sends { holder.value = value }
    }
    benchmark.expectDelivery(counter)
    observer.invalidate()
  }

  Benchmark("holder set: floor") { benchmark in
    let counter = Counter()
    var stored = -1
    let handlers: [(Int) -> Void] = identity([
      { value in
        let doubled = value * 2
        if doubled % 3 != 0 { counter.total &+= doubled }
      }
    ])
    benchmark.measure(operations: sends) {
      for value in 0..<sends where value != stored {
        stored = value
        for handler in handlers { handler(value) }
      }
    }
    benchmark.expectDelivery(counter)
    blackHole(stored)
  }

  Benchmark("holder set: opencombine") { benchmark in
    let subject = CurrentValueSubject<Int, Never>(-1)
    let counter = Counter()
    let cancellable =
      subject
      .map { $0 * 2 }
      .filter { $0 % 3 != 0 }
      .sink { counter.total &+= $0 }
    benchmark.measure(operations: sends) {
      for value in 0..<sends { subject.value = value }
    }
    benchmark.expectDelivery(counter)
    cancellable.cancel()
  }
}

/// The chain of the `holder set` rows: `map`, `filter` and `do` on
/// `holder`, the typical binding of a model property. Shared with the
/// Observation rows, so that they differ from `holder set` only in
/// Observation's part, and with the main-actor row, whose steps take the
/// caller's isolation through `isolation`.
func holderSetChain(
  _ holder: ValueHolder<Int>,
  counter: Counter,
  isolation: isolated (any Actor)? = #isolation
) -> Observer {
  holder.chain()
    .map { $0 * 2 }
    .filter { $0 % 3 != 0 }
    .do { counter.total &+= $0 }
    .end()
}

/// `depth` `map` steps on `notifier`, then a `do`, written out.
private func chainingMaps(_ notifier: Notifier<Int>, depth: Int, counter: Counter) -> Observer {
  let chain = notifier.chain()
  switch depth {
  case 1:
    return chain.map { $0 &+ 1 }.do { counter.total &+= $0 }.end()
  case 5:
    return chain.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }
      .do { counter.total &+= $0 }.end()
  case 10:
    return chain.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }
      .map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }
      .do { counter.total &+= $0 }.end()
  default:
    fatalError("chainingMaps: no chain written for depth \(depth)")
  }
}

/// A hand-written pipeline of `depth` steps, each adding 1 and calling the
/// next one, then the handler, written out.
private func floorMaps(depth: Int, counter: Counter) -> (Int) -> Void {
  let handler: (Int) -> Void = { counter.total &+= $0 }
  let step: (@escaping (Int) -> Void) -> (Int) -> Void = { next in { next($0 &+ 1) } }
  switch depth {
  case 1:
    return step(handler)
  case 5:
    return step(step(step(step(step(handler)))))
  case 10:
    return step(step(step(step(step(step(step(step(step(step(handler))))))))))
  default:
    fatalError("floorMaps: no pipeline written for depth \(depth)")
  }
}

/// `depth` `map` steps on `subject`, then a sink. Written out because each
/// depth is a different type.
private func openCombineMaps(
  _ subject: PassthroughSubject<Int, Never>,
  depth: Int,
  counter: Counter
) -> AnyCancellable {
  let sink: (Int) -> Void = { counter.total &+= $0 }
  switch depth {
  case 1:
    return subject.map { $0 &+ 1 }.sink(receiveValue: sink)
  case 5:
    return subject.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }
      .sink(receiveValue: sink)
  case 10:
    return subject.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }
      .map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }.map { $0 &+ 1 }
      .sink(receiveValue: sink)
  default:
    fatalError("openCombineMaps: no pipeline written for depth \(depth)")
  }
}
