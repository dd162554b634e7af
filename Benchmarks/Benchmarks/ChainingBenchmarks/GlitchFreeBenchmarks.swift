import Benchmark
import Chaining

/// Glitch-free `combine`: a diamond from one holder, and a batch of ten
/// writes into a combine of ten holders. Chaining only: OpenCombine's
/// `combineLatest` has no waves (it would send the torn pairs), and the
/// floor has no combine.
func glitchFreeBenchmarks() {
  let sends = Suite.sends

  // One holder, two maps, combined: one pair per write, sent at the end
  // of the write's wave.
  Benchmark("combine diamond: chaining") { benchmark in
    let source = ValueHolder(0)
    let counter = Counter()
    let observer = source.chain().map { $0 &* 10 }.combine(source.chain().map { $0 &* 100 })
      .do { counter.total &+= $0 &+ $1 }
      .end()
    benchmark.measure(operations: sends) {
      for value in 1...sends {
        source.value = value
      }
    }
    benchmark.expectDelivery(counter)
    observer.invalidate()
  }

  // Ten holders combined (a nested 5-tuple and a 5-tuple, paired), all ten
  // written in one `withBatchedUpdates`: one value per batch.
  Benchmark("batch 10 into combine 10: chaining") { benchmark in
    let holders = (0..<10).map { _ in ValueHolder(0) }
    let counter = Counter()
    let first = holders[0].chain().combine(holders[1].chain()).combine(holders[2].chain())
      .combine(holders[3].chain()).combine(holders[4].chain())
    let second = holders[5].chain().combine(holders[6].chain()).combine(holders[7].chain())
      .combine(holders[8].chain()).combine(holders[9].chain())
    let observer = first.combine(second).do { counter.total &+= $0.0.0 &+ $0.1.4 }.end()
    let batches = sends / 10
    benchmark.measure(operations: batches) {
      for value in 1...batches {
        withBatchedUpdates {
          for holder in holders { holder.value = value }
        }
      }
    }
    benchmark.expectDelivery(counter)
    observer.invalidate()
  }

  // `Chain.combine(_:_:)` of N holders, one write at a time: the cost of
  // one write grows with N only by the array it sends (N values copied).
  // Three sizes a decade apart.
  for count in [10, 100, 1000] {
    Benchmark("combine many \(count), one write: chaining") { benchmark in
      let holders = (0..<count).map { _ in ValueHolder(0) }
      let counter = Counter()
      let observer = Chain.combine(holders) { $0.chain() }.do { counter.total &+= $0.count }.sync()
      let writes = max(sends / count, 100)
      benchmark.measure(operations: writes) {
        for value in 1...writes {
          holders[value % count].value = value
        }
      }
      benchmark.expectDelivery(counter)
      observer.invalidate()
    }
  }
}
