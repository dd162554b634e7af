// The soak run: many threads broadcasting, subscribing, invalidating and
// binding two ways at once, for a fixed number of rounds, with exact
// expected counts at the end of each. Built in release (the optimizer's
// inlining of the delivery path is part of what it checks) and run by
// .ci/run; `swift run -c release ChainingSoak [rounds]` runs it here.
// Exits with a message naming the round and the count that was wrong.

import Chaining
import Foundation
import Synchronization

let rounds = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 400
let senders = 3
let valuesPerSender = 20_000

/// Runs `body(index)` on `count` threads at once; returns when all have ended.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
  let started = DispatchSemaphore(value: 0)
  let go = DispatchSemaphore(value: 0)
  let done = DispatchGroup()
  for index in 0..<count {
    done.enter()
    Thread {
      started.signal()
      go.wait()
      body(index)
      done.leave()
    }.start()
  }
  for _ in 0..<count { started.wait() }
  for _ in 0..<count { go.signal() }
  done.wait()
}

func expect(_ condition: Bool, _ message: @autoclosure () -> String, round: Int) {
  if !condition {
    FileHandle.standardError.write(Data("ChainingSoak: round \(round): \(message())\n".utf8))
    exit(1)
  }
}

/// What one chain received: how many values, and whether each sender's
/// values came in the order sent.
final class Tally: @unchecked Swift.Sendable {
  // @unchecked: a chain runs one value at a time, and each value's writes
  // happen before the next value's run (the chain's gate orders them); the
  // totals are read after every thread has ended.
  var count = 0
  var next = Array(repeating: 0, count: senders)
  var outOfOrder = 0

  func receive(_ value: Int) {
    let sender = value / valuesPerSender
    let sequence = value % valuesPerSender
    if sequence != next[sender] { outOfOrder += 1 }
    next[sender] = sequence + 1
    count += 1
  }
}

/// Broadcasts from several threads while other threads subscribe and
/// invalidate: every chain that stays gets every value, each sender's in
/// order; a chain gets nothing after its `invalidate()` returned.
func broadcastWhileChurning(round: Int) {
  let notifier = Notifier<Int>()
  let tallies = (0..<4).map { _ in Tally() }
  let observers = tallies.map { tally in notifier.chain().do { tally.receive($0) }.end() }
  let lateValues = Atomic<Int>(0)
  let churned = Atomic<Int>(0)
  onThreads(senders + 1) { index in
    if index < senders {
      for sequence in 0..<valuesPerSender {
        notifier.notify(value: index * valuesPerSender + sequence)
      }
    } else {
      for _ in 0..<valuesPerSender / 4 {
        let ended = Atomic<Bool>(false)
        let observer = notifier.chain().do { _ in
          if ended.load(ordering: .acquiring) { lateValues.add(1, ordering: .relaxed) }
        }.end()
        observer.invalidate()
        ended.store(true, ordering: .releasing)
        churned.add(1, ordering: .relaxed)
      }
    }
  }
  for (index, tally) in tallies.enumerated() {
    expect(tally.count == senders * valuesPerSender, "chain \(index) got \(tally.count) values", round: round)
    expect(tally.outOfOrder == 0, "chain \(index) got \(tally.outOfOrder) values out of order", round: round)
  }
  expect(lateValues.load(ordering: .relaxed) == 0, "values after invalidate() returned", round: round)
  expect(churned.load(ordering: .relaxed) == valuesPerSender / 4, "churn did not finish", round: round)
  withExtendedLifetime(observers) {}
}

/// Two holders bound both ways with `bind(to:)`, written from several
/// threads at once at both ends: once the writers have ended, both hold the
/// same value, and a chain on each has that value last. (Two chains sending
/// to each other, `sendTo` both ways, stop their loop too, but crossing
/// writes can leave each holder with the other's value: Threading.md.)
func twoWayBinding(round: Int) {
  let left = ValueHolder(-1)
  let right = ValueHolder(-1)
  let pool = ObserverPool()
  left.bind(to: right).addTo(pool)
  let lastLeft = Mutex(-1)
  let lastRight = Mutex(-1)
  left.chain().do { value in lastLeft.withLock { $0 = value } }.sync().addTo(pool)
  right.chain().do { value in lastRight.withLock { $0 = value } }.sync().addTo(pool)
  onThreads(senders + 1) { index in
    for sequence in 0..<valuesPerSender / 2 {
      let value = index * valuesPerSender + sequence
      if (index + sequence) % 2 == 0 { left.value = value } else { right.value = value }
    }
  }
  expect(left.value == right.value, "the binding did not settle: \(left.value), \(right.value)", round: round)
  expect(lastLeft.withLock { $0 } == left.value, "the left chain ended on another value", round: round)
  expect(lastRight.withLock { $0 } == right.value, "the right chain ended on another value", round: round)
  pool.invalidate()
  left.value = -2
  expect(right.value != -2, "the binding outlived its pool's invalidate()", round: round)
}

/// `combine` of two holders written from several threads: it ends on the
/// pair of their last values.
func combineUnderWrites(round: Int) {
  let first = ValueHolder(0)
  let second = ValueHolder(0)
  let last = Mutex((0, 0))
  let observer = first.chain().combine(second.chain()).do { pair in last.withLock { $0 = pair } }.sync()
  onThreads(senders) { index in
    for sequence in 0..<valuesPerSender / 2 {
      let value = index * valuesPerSender + sequence
      if sequence % 2 == 0 { first.value = value } else { second.value = value }
    }
  }
  let pair = last.withLock { $0 }
  expect(
    pair == (first.value, second.value),
    "combine ended on \(pair), not (\(first.value), \(second.value))",
    round: round
  )
  observer.invalidate()
}

/// Observers added to a pool from several threads while another thread
/// invalidates it: afterwards, after a last `invalidate()`, none of them
/// gets a value.
func poolUnderChurn(round: Int) {
  let notifier = Notifier<Int>()
  let pool = ObserverPool()
  let received = Atomic<Int>(0)
  let added = Atomic<Int>(0)
  onThreads(senders + 1) { index in
    for sequence in 0..<valuesPerSender / 4 {
      if index == senders {
        if sequence % 8 == 0 { pool.invalidate() }
        notifier.notify(value: sequence)
      } else {
        notifier.chain().do { _ in received.add(1, ordering: .relaxed) }.end().addTo(pool)
        added.add(1, ordering: .relaxed)
      }
    }
  }
  pool.invalidate()
  let before = received.load(ordering: .relaxed)
  notifier.notify(value: 0)
  expect(received.load(ordering: .relaxed) == before, "a chain of an invalidated pool got a value", round: round)
  expect(pool.count == 0, "the pool holds \(pool.count) observers", round: round)
  expect(
    added.load(ordering: .relaxed) == senders * (valuesPerSender / 4),
    "not every observer was added",
    round: round
  )
  expect(notifier.observerCount == 0, "\(notifier.observerCount) chains are still subscribed", round: round)
}

/// Producers that never stop on their own (two per side of a `combine`,
/// so that senders and the chain's gate both have threads queuing behind
/// their running thread) while the main thread syncs a new chain on the
/// same holders: every side keeps reaching the steps after the join, and
/// every `sync()` returns. The deadline only turns a stall into a failure
/// (issue #34: a side stopped for seconds, a `sync()` never returned).
func endlessProducers(round: Int) {
  let left = ValueHolder(0)
  let right = ValueHolder(0)
  let pairs = Atomic<Int>(0)
  let lastLeft = Atomic<Int>(-1)
  let leftChanges = Atomic<Int>(0)
  let observer = left.chain().combine(right.chain()).do { pair in
    pairs.add(1, ordering: .relaxed)
    if lastLeft.exchange(pair.0, ordering: .relaxed) != pair.0 { leftChanges.add(1, ordering: .relaxed) }
  }.sync()
  let stop = Atomic<Bool>(false)
  let done = DispatchGroup()
  for producer in 0..<4 {
    done.enter()
    Thread {
      let holder = producer % 2 == 0 ? left : right
      var value = producer
      while !stop.load(ordering: .relaxed) {
        value += 4
        holder.value = value
      }
      done.leave()
    }.start()
  }
  let deadline = ContinuousClock.now + .seconds(30)
  var syncs = 0
  while pairs.load(ordering: .relaxed) < 2_000 || leftChanges.load(ordering: .relaxed) < 200 || syncs < 5 {
    expect(
      ContinuousClock.now < deadline,
      "stalled: \(pairs.load(ordering: .relaxed)) pairs, \(leftChanges.load(ordering: .relaxed)) left changes, \(syncs) syncs",
      round: round
    )
    let seen = Atomic<Int>(0)
    let synced = right.chain().do { _ in seen.add(1, ordering: .relaxed) }.sync()
    expect(seen.load(ordering: .relaxed) >= 1, "sync() sent nothing", round: round)
    synced.invalidate()
    syncs += 1
  }
  stop.store(true, ordering: .relaxed)
  done.wait()
  observer.invalidate()
}

/// Writes from several threads through a chain of holders deeper than a
/// thread nests runs (past 128, a run is postponed to the write's
/// outermost frame, its chain claimed meanwhile), while another thread
/// subscribes and invalidates chains deep in it: the end gets every write
/// of the first holder, each sender's in order; every holder ends one
/// more than the one before; no chain runs after its `invalidate()`
/// returned.
func deepChainUnderWrites(round: Int) {
  let length = 400
  let writes = 200
  let holders = (0...length).map { _ in ValueHolder(-1) }
  let links = (0..<length).map { index in
    holders[index].chain().map { $0 + 1 }.sendTo(holders[index + 1]).end()
  }
  let tally = Tally()
  let end = holders[length].chain().do { tally.receive($0 - length) }.end()
  let lateValues = Atomic<Int>(0)
  onThreads(senders + 1) { index in
    if index < senders {
      for sequence in 0..<writes { holders[0].value = index * valuesPerSender + sequence }
    } else {
      for turn in 0..<writes {
        let ended = Atomic<Bool>(false)
        let observer = holders[200 + turn % 200].chain().do { _ in
          if ended.load(ordering: .acquiring) { lateValues.add(1, ordering: .relaxed) }
        }.end()
        observer.invalidate()
        ended.store(true, ordering: .releasing)
      }
    }
  }
  expect(tally.count == senders * writes, "the deep chain's end got \(tally.count) values", round: round)
  expect(tally.outOfOrder == 0, "the deep chain's end got \(tally.outOfOrder) values out of order", round: round)
  let first = holders[0].value
  expect(
    holders.indices.allSatisfy { holders[$0].value == first + $0 },
    "the deep chain's holders did not settle on the first one's last write",
    round: round
  )
  expect(lateValues.load(ordering: .relaxed) == 0, "values after invalidate() returned in the deep chain", round: round)
  withExtendedLifetime((links, end)) {}
}

/// Computed values under writes from two threads while two others read
/// them: every read of a diamond is untorn (its two sides come from one
/// write), every value its chain gets too, and once the threads end the
/// chains' last values are the values read then.
func computedUnderWrites(round: Int) {
  let a = ValueHolder(0)
  let b = ValueHolder(0)
  let double = Computed { a.value * 2 }
  let triple = Computed { a.value * 3 }
  let total = Computed { double.value + triple.value }
  let pair = Computed { (a.value, b.value) }
  let torn = Atomic(0)
  let lastTotal = Mutex(-1)
  let lastPair = Mutex((-1, -1))
  let observers = [
    total.chain().do { value in
      if value % 5 != 0 { torn.add(1, ordering: .relaxed) }
      lastTotal.withLock { $0 = value }
    }.sync(),
    pair.chain().do { value in lastPair.withLock { $0 = value } }.sync(),
  ]
  let writes = 5_000
  onThreads(4) { index in
    switch index {
    case 0: for value in 1...writes { a.value = value }
    case 1: for value in 1...writes { b.value = value }
    default:
      for _ in 0..<writes {
        if total.value % 5 != 0 { torn.add(1, ordering: .relaxed) }
        _ = pair.value
      }
    }
  }
  expect(torn.load(ordering: .relaxed) == 0, "\(torn.load(ordering: .relaxed)) torn reads of a diamond", round: round)
  expect(total.value == writes * 5, "the diamond ended on \(total.value)", round: round)
  let sentTotal = lastTotal.withLock { $0 }
  let sentPair = lastPair.withLock { $0 }
  expect(sentTotal == writes * 5, "the diamond's chain ended on \(sentTotal)", round: round)
  expect(sentPair == (writes, writes), "the pair's chain ended on \(sentPair)", round: round)
  for observer in observers { observer.invalidate() }
}

let clock = ContinuousClock()
let start = clock.now
for round in 1...rounds {
  broadcastWhileChurning(round: round)
  twoWayBinding(round: round)
  combineUnderWrites(round: round)
  poolUnderChurn(round: round)
  deepChainUnderWrites(round: round)
  computedUnderWrites(round: round)
  if round % 20 == 0 { endlessProducers(round: round) }
}
print(
  "ChainingSoak: \(rounds) rounds of 6 scenarios on \(senders + 1) threads, and \(rounds / 20) of endless producers, every count exact (\(clock.now - start))"
)
