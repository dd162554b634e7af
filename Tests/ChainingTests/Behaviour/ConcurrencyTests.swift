import Chaining
import Dispatch
import Testing

@Suite(.serialized) struct ConcurrencyTests {
  @Test func everyValueFromManyThreadsReachesEveryObserverExactlyOnceInPerThreadOrder() {
    let threads = 4
    let perThread = 5_000
    let notifier = Notifier<Int>()
    let recorders = (0..<3).map { _ in Recorder<Int>() }
    let observers = recorders.map { recorder in notifier.chain().do { recorder.append($0) }.end() }

    race(threads: threads) { thread in
      for index in 0..<perThread {
        notifier.notify(value: thread * perThread + index)
      }
    }

    for recorder in recorders {
      let history = recorder.history
      #expect(history.count == threads * perThread)
      #expect(Set(history).count == threads * perThread)
      for thread in 0..<threads {
        let fromThread = history.filter { $0 / perThread == thread }
        #expect(fromThread == Array(thread * perThread..<(thread + 1) * perThread))
      }
    }
    withExtendedLifetime(observers) {}
  }

  @Test func observersLiveThroughoutSeeEveryValueWhileOthersComeAndGo() {
    let broadcasters = 2
    let perThread = 4_000
    let notifier = Notifier<Int>()
    let steady = Recorder<Int>()
    let churned = Recorder<Int>()
    let observer = notifier.chain().do { steady.append($0) }.end()

    race(threads: broadcasters + 2) { thread in
      if thread < broadcasters {
        for index in 0..<perThread { notifier.notify(value: index) }
      } else {
        // Chain and invalidate while values are in flight.
        for _ in 0..<2_000 {
          let temporary = notifier.chain().map { $0 + 1 }.do { churned.append($0) }.end()
          temporary.invalidate()
        }
      }
    }

    #expect(steady.count == broadcasters * perThread)
    #expect(churned.count <= 2 * broadcasters * perThread)
    let counts = Dictionary(grouping: steady.history, by: { $0 }).mapValues(\.count)
    #expect(counts.count == perThread)
    #expect(counts.values.allSatisfy { $0 == broadcasters })
    observer.invalidate()
  }

  @Test func aChainNeverRunsOnTwoThreadsAtOnceWhetherOrNotItIsItsSendersOnlyObserver() {
    // The steady chain runs without claiming its gate while it is the only
    // observer, and through the gate while a temporary one is subscribed.
    // Its state has no lock: the overlap count and the thread sanitizer
    // catch two runs at once.
    final class Tally: @unchecked Swift.Sendable {
      var running = 0
      var overlaps = 0
      var total = 0
    }
    let broadcasters = 3
    let perThread = 3_000
    let notifier = Notifier<Int>()
    let tally = Tally()
    let observer = notifier.chain().do { value in
      tally.running += 1
      if tally.running != 1 { tally.overlaps += 1 }
      tally.total += value
      tally.running -= 1
    }.end()

    race(threads: broadcasters + 1) { thread in
      if thread < broadcasters {
        for _ in 0..<perThread { notifier.notify(value: 1) }
      } else {
        for _ in 0..<1_000 {
          notifier.chain().do { _ in }.end().invalidate()
        }
      }
    }

    #expect(tally.total == broadcasters * perThread)
    #expect(tally.overlaps == 0)
    observer.invalidate()
  }

  @Test func boundReceiverEndsOnTheHoldersLatestValueAfterConcurrentWrites() {
    let holder = ValueHolder(-1)
    let mirror = ValueHolder(-2)
    let writes = Recorder<Int>()
    let observers = [
      holder.chain().sendTo(mirror).sync(),
      holder.chain().do { writes.append($0) }.end(),
    ]
    race(threads: 4) { thread in
      for index in 0..<2_500 {
        holder.value = thread * 10_000 + index
      }
    }
    #expect(mirror.value == holder.value)
    // Every write changed the value, so every write was broadcast once.
    #expect(writes.count == 4 * 2_500)
    withExtendedLifetime(observers) {}
  }

  @Test func twoWayBindingWrittenFromBothEndsOnTwoThreadsNeitherDeadlocksNorLoops() {
    let a = ValueHolder(Box(number: 0))
    let b = ValueHolder(Box(number: 0))
    let crossings = Recorder<Int>()
    let observers = [
      a.chain().do { crossings.append($0.number) }.sendTo(b).sync(),
      b.chain().do { crossings.append($0.number) }.sendTo(a).end(),
    ]
    race(threads: 2) { thread in
      for index in 1...2_000 {
        if thread == 0 { a.value = Box(number: index) } else { b.value = Box(number: -index) }
      }
    }
    // Every write crosses once each way, and its echo is dropped, whichever
    // thread delivers it: 1 for the sync (made before the b→a chain
    // existed), 2 for each of the 4_000 writes.
    #expect(crossings.count == 1 + 2 * 4_000)
    // Once the threads are done, one more write settles both sides.
    a.value = Box(number: 99)
    #expect(b.value.number == 99)
    withExtendedLifetime(observers) {}
  }

  @Test func chainingAndInvalidatingOnManyThreadsKeepsTheObserverListConsistent() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    race(threads: 4) { thread in
      var mine: [Observer] = []
      for round in 0..<1_000 {
        mine.append(notifier.chain().do { received.append($0) }.end())
        if round % 3 == 0 { mine.removeFirst().invalidate() }
      }
      for observer in mine { observer.invalidate() }
    }
    // All observers are gone: a broadcast now reaches nobody.
    let before = received.count
    notifier.notify(value: 1)
    #expect(received.count == before)
    let after = notifier.chain().do { received.append($0) }.end()
    notifier.notify(value: 2)
    #expect(received.count == before + 1)
    withExtendedLifetime(after) {}
  }

  @Test func observersReleasedOnOtherThreadsDuringBroadcastsNeverCrash() {
    let holder = ValueHolder(0)
    let total = Recorder<Int>()
    let pool = ObserverPool()
    for _ in 0..<50 { holder.chain().do { total.append($0) }.end().addTo(pool) }
    let written = DispatchSemaphore(value: 0)
    let writer = spawn {
      for value in 1...5_000 {
        holder.value = value
        if value == 100 { written.signal() }
      }
    }
    written.wait()
    pool.invalidate()
    let countAfterInvalidate = total.count
    writer.wait()
    #expect(total.count == countAfterInvalidate)
    #expect(countAfterInvalidate >= 100)
  }
}
