import Benchmark
import Chaining

/// Appends to an array holder with one observer attached: the cost of a
/// growing list that a view follows, per append, against a plain array and
/// a closure call per append. OpenCombine has no observable array.
func arrayHolderBenchmarks() {
  let appends = Suite.sends

  Benchmark("ArrayHolder append: chaining") { benchmark in
    let holder = ArrayHolder<Int>()
    let counter = Counter()
    let observer = holder.chain().do { event in
      if case .inserted(_, let element) = event { counter.total &+= element }
    }.end()
    benchmark.measure(operations: appends) {
      for value in 0..<appends { holder.append(value) }
    }
    benchmark.expectDelivery(counter)
    observer.invalidate()
  }

  Benchmark("ArrayHolder append: floor") { benchmark in
    let counter = Counter()
    var array: [Int] = []
    let handlers: [(Int, Int) -> Void] = identity([{ _, element in counter.total &+= element }])
    benchmark.measure(operations: appends) {
      for value in 0..<appends {
        array.append(value)
        for handler in handlers { handler(array.count - 1, value) }
      }
    }
    benchmark.expectDelivery(counter)
    blackHole(array)
  }
}

/// A filtered and sorted view of an array holder, and `modify`, at three
/// sizes a decade apart (issue #40): what one change of one element costs.
func arrayViewBenchmarks() {
  for size in [1000, 10000, 100_000] {
    // One insert into the holder, then its removal, each delivered to a
    // view of the even elements, sorted backwards: per event of the holder.
    let changes = Suite.size(2000, smoke: 20)
    let elements = (0..<size).map { ($0 &* 7919) % size }

    Benchmark("array view \(size): chaining") { benchmark in
      let holder = ArrayHolder(elements)
      let view = holder.filtered { $0.isMultiple(of: 2) }.sorted(by: >)
      let counter = Counter()
      let observer = view.chain().do { event in
        if case .inserted(let index, _) = event { counter.total &+= index &+ 1 }
      }.end()
      benchmark.measure(operations: 2 * changes) {
        for change in 0..<changes {
          let place = (change &* 31) % size
          holder.insert(2 * change, at: place)
          holder.remove(at: place)
        }
      }
      benchmark.expectDelivery(counter)
      observer.invalidate()
    }

    // By hand: the holder's array, and a sorted array of the even
    // elements kept with a binary search.
    Benchmark("array view \(size): floor") { benchmark in
      var array = elements
      var sorted = elements.filter { $0.isMultiple(of: 2) }.sorted(by: >)
      let counter = Counter()
      let handlers: [(Int) -> Void] = identity([{ counter.total &+= $0 &+ 1 }])
      func place(of element: Int) -> Int {
        var low = 0
        var high = sorted.count
        while low < high {
          let middle = (low + high) / 2
          if sorted[middle] > element { low = middle + 1 } else { high = middle }
        }
        return low
      }
      benchmark.measure(operations: 2 * changes) {
        for change in 0..<changes {
          let at = (change &* 31) % size
          let element = 2 * change
          array.insert(element, at: at)
          let index = place(of: element)
          sorted.insert(element, at: index)
          for handler in handlers { handler(index) }
          array.remove(at: at)
          sorted.remove(at: place(of: element))
        }
      }
      benchmark.expectDelivery(counter)
      blackHole((array, sorted))
    }

    // `modify` changing one element: the copy and the difference are O(n).
    let modifies = Suite.size(max(100_000_000 / (size * 100), 10), smoke: 5)
    Benchmark("array modify one of \(size): chaining") { benchmark in
      let holder = ArrayHolder(elements)
      let counter = Counter()
      let observer = holder.chain().do { event in
        if case .inserted(let index, _) = event { counter.total &+= index &+ 1 }
      }.end()
      benchmark.measure(operations: modifies) {
        for change in 0..<modifies {
          holder.modify { $0[(change &* 31) % size] &+= 1 }
        }
      }
      benchmark.expectDelivery(counter)
      observer.invalidate()
    }
  }
}
