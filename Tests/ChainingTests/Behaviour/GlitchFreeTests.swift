import Chaining
import ChainingTesting
import Dispatch
import Testing

/// Glitch-free propagation (#24): a combine sends one value per wave, built
/// from every side's final value in that wave; `withBatchedUpdates` makes
/// one wave of several writes.
@Suite struct GlitchFreeTests {
  // MARK: - One wave, one combined value

  @Test func diamondFromOneSourceSendsOnePairPerWrite() {
    let source = ValueHolder(1)
    let received = Recorder<(Int, Int)>()
    let observer = source.chain().map { $0 * 10 }.combine(source.chain().map { $0 * 100 })
      .do { received.append($0) }.sync()
    #expect(received.history.map { [$0.0, $0.1] } == [[10, 100]])
    source.value = 2
    source.value = 3
    // Never (20, 100) nor (30, 200): those pairs never existed.
    #expect(received.history.map { [$0.0, $0.1] } == [[10, 100], [20, 200], [30, 300]])
    withExtendedLifetime(observer) {}
  }

  @Test func diamondThroughIntermediateHoldersSendsOnePairPerWrite() {
    let source = ValueHolder(1)
    let tens = ValueHolder(0)
    let hundreds = ValueHolder(0)
    let received = Recorder<(Int, Int)>()
    let observers = [
      source.chain().map { $0 * 10 }.sendTo(tens).sync(),
      source.chain().map { $0 * 100 }.sendTo(hundreds).sync(),
      tens.chain().combine(hundreds.chain()).do { received.append($0) }.sync(),
    ]
    source.value = 2
    #expect(received.history.map { [$0.0, $0.1] } == [[10, 100], [20, 200]])
    withExtendedLifetime(observers) {}
  }

  @Test func combineSendsAfterTheWavesOtherDeliveries() {
    let source = ValueHolder(1)
    let log = Recorder<String>()
    let observers = [
      source.chain().combine(source.chain()).do { log.append("pair \($0) \($1)") }.end(),
      source.chain().do { log.append("single \($0)") }.end(),
    ]
    source.value = 2
    #expect(log.history == ["single 2", "pair 2 2"])
    withExtendedLifetime(observers) {}
  }

  @Test func combineWhoseSourceChangesOnceSendsWhatItSentBefore() {
    let first = ValueHolder("Ann")
    let last = ValueHolder("Lee")
    let received = Recorder<String>()
    let observer = first.chain().combine(last.chain()).map { "\($0) \($1)" }.do { received.append($0) }.sync()
    last.value = "Kim"
    first.value = "Bea"
    #expect(received.history == ["Ann Lee", "Ann Kim", "Bea Kim"])
    withExtendedLifetime(observer) {}
  }

  @Test func combineReadingWhatAnotherCombineWritesNeverSendsATornTuple() {
    // source -> (a, b) -> sum; sum and source -> report. `report` reads
    // `sum`, which the first combine writes inside the same wave.
    let source = ValueHolder(1)
    let sum = ValueHolder(0)
    let received = Recorder<(Int, Int)>()
    let observers = [
      source.chain().map { $0 * 10 }.combine(source.chain().map { $0 * 100 }).map { $0 + $1 }.sendTo(sum).sync(),
      source.chain().combine(sum.chain()).do { received.append($0) }.sync(),
    ]
    source.value = 2
    source.value = 3
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 110], [2, 220], [3, 330]])
    withExtendedLifetime(observers) {}
  }

  @Test func combineBuiltBeforeTheCombineItReadsStillSendsAfterIt() {
    // As above, but `report` subscribes to `source` first: the rank it
    // learns when the first combine's sync writes `sum` orders the sends.
    let source = ValueHolder(1)
    let sum = ValueHolder(0)
    let received = Recorder<(Int, Int)>()
    let report = source.chain().combine(sum.chain()).do { received.append($0) }.sync()
    let writer = source.chain().map { $0 * 10 }.combine(source.chain().map { $0 * 100 }).map { $0 + $1 }
      .sendTo(sum).sync()
    source.value = 2
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 0], [1, 110], [2, 220]])
    withExtendedLifetime((report, writer)) {}
  }

  @Test func aLinkFirstUsedByAWriteSendsTwiceInThatWaveOnly() {
    // The known limit (Combining.md): `report` is built first, so it ranks
    // below `writer`, and `writer` writes `sum` only from 2 on, so no sync
    // taught `report` its order. The first wave that writes `sum` sends
    // `report` before the write and again after it; from then on it knows
    // its rank and sends once.
    let source = ValueHolder(1)
    let sum = ValueHolder(0)
    let received = Recorder<(Int, Int)>()
    let report = source.chain().combine(sum.chain()).do { received.append($0) }.sync()
    let writer = source.chain().map { $0 * 10 }.combine(source.chain().map { $0 * 100 })
      .do { if $0 >= 20 { sum.value = $0 + $1 } }.sync()
    source.value = 2
    source.value = 3
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 0], [2, 0], [2, 220], [3, 330]])
    withExtendedLifetime((report, writer)) {}
  }

  @Test func aSendToFirstUsedByAWriteIsOrderedByItsBuild() {
    // As above, but `writer` writes `sum` through `sendTo`, which the
    // build sees (#36): `report` ranks above `writer` from the start, and
    // the first wave that writes `sum` sends it once, untorn.
    let source = ValueHolder(1)
    let sum = ValueHolder(0)
    let received = Recorder<(Int, Int)>()
    let report = source.chain().combine(sum.chain()).do { received.append($0) }.sync()
    let writer = source.chain().map { $0 * 10 }.combine(source.chain().map { $0 * 100 })
      .filter { $0.0 >= 20 }.map { $0 + $1 }.sendTo(sum).sync()
    source.value = 2
    source.value = 3
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 0], [2, 220], [3, 330]])
    withExtendedLifetime((report, writer)) {}
  }

  @Test func anOrderBuiltLastReachesThroughHoldersBuiltBefore() {
    // writer -> first -> (map) -> second, read by `report`: built from the
    // end back, each sync writing the value the holder already has, so no
    // wave passes a link before the first write. The writer's rank reaches
    // `report` through both holders' links.
    let source = ValueHolder(1)
    let first = ValueHolder(11)
    let second = ValueHolder(12)
    let received = Recorder<(Int, Int)>()
    let report = source.chain().combine(second.chain()).do { received.append($0) }.sync()
    let link = first.chain().map { $0 + 1 }.sendTo(second).sync()
    let writer = source.chain().combine(source.chain().map { $0 * 10 }).map { $0 + $1 }.sendTo(first).sync()
    source.value = 2
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 12], [2, 23]])
    withExtendedLifetime((report, link, writer)) {}
  }

  @Test func anInnerSourceWrittenByACombineBuiltLaterSendsBeforeTheCombineAfterTheStep() {
    // `report` follows `inner` through `flatMapLatest`, then combines it
    // with `source`; `writer`, built after, writes `inner` from `source`.
    // The inner chain's link orders `writer` first (#36).
    let source = ValueHolder(1)
    let inner = ValueHolder(11)
    let selector = ValueHolder(0)
    let received = Recorder<(Int, Int)>()
    let report = selector.chain()
      .flatMapLatest { _ in inner.chain() }
      .combine(source.chain())
      .do { received.append($0) }
      .sync()
    let writer = source.chain().combine(source.chain().map { $0 * 10 }).map { $0 + $1 }.sendTo(inner).sync()
    source.value = 2
    #expect(received.history.map { [$0.0, $0.1] } == [[11, 1], [22, 2]])
    withExtendedLifetime((report, writer)) {}
  }

  @Test func aHolderBoundToAnotherPassesItsRankOn() {
    // `writer` writes `sum`; `copy` is bound to `sum`, and `report`, built
    // first, reads `copy`: the binding links the two holders both ways, so
    // the first write sends `report` once.
    let source = ValueHolder(1)
    let sum = ValueHolder(11)
    let copy = ValueHolder(11)
    let received = Recorder<(Int, Int)>()
    let report = source.chain().combine(copy.chain()).do { received.append($0) }.sync()
    let binding = copy.bind(to: sum)
    let writer = source.chain().combine(source.chain().map { $0 * 10 }).map { $0 + $1 }.sendTo(sum).sync()
    source.value = 2
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 11], [2, 22]])
    withExtendedLifetime((report, binding, writer)) {}
  }

  @Test func aCombineThatWritesItsOwnSourceBuildsAndSettles() {
    // A loop of links: `a` feeds the combine, which writes `a`. The build
    // walks the loop once and ends; a write settles as a two-way binding
    // does, and a combine built before, reading `a`, sends once per wave.
    let a = ValueHolder(1)
    let b = ValueHolder(5)
    let received = Recorder<(Int, Int)>()
    let report = a.chain().combine(b.chain()).do { received.append($0) }.sync()
    let loop = a.chain().combine(b.chain()).map { Swift.max($0, $1) }.sendTo(a).sync()
    #expect(a.value == 5)
    b.value = 7
    #expect(a.value == 7)
    a.value = 9
    #expect(a.value == 9)
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 5], [5, 5], [7, 7], [9, 7]])
    withExtendedLifetime((report, loop)) {}
  }

  // MARK: - Threads

  @Test func wavesOnSeveralThreadsSendExactlyOncePerWaveEach() {
    let threads = 4
    let perThread = 500
    let sources = (0..<threads).map { _ in ValueHolder(0) }
    let recorders = (0..<threads).map { _ in Recorder<(Int, Int)>() }
    let observers = (0..<threads).map { index in
      sources[index].chain().map { $0 * 10 }.combine(sources[index].chain().map { $0 * 100 })
        .do { recorders[index].append($0) }.end()
    }
    // One combine that every thread's writes reach: counts may merge when
    // two threads meet in it (see Combining.md), values never tear.
    let shared = sources[0].chain().combine(sources[1].chain()).combine(sources[2].chain())
      .combine(sources[3].chain())
    let sharedRecorder = Recorder<(Int, Int, Int, Int)>()
    let sharedObserver = shared.do { sharedRecorder.append($0) }.end()
    race(threads: threads) { thread in
      for index in 1...perThread {
        if index % 2 == 0 {
          withBatchedUpdates {
            sources[thread].value = -index
            sources[thread].value = index
          }
        } else {
          sources[thread].value = index
        }
      }
    }
    for thread in 0..<threads {
      let history = recorders[thread].history.map { [$0.0, $0.1] }
      #expect(history == (1...perThread).map { [$0 * 10, $0 * 100] })
    }
    let sharedHistory = sharedRecorder.history
    #expect(sharedHistory.count <= threads * perThread)
    #expect(sharedHistory.last.map { [$0.0, $0.1, $0.2, $0.3] } == [perThread, perThread, perThread, perThread])
    withExtendedLifetime((observers, sharedObserver)) {}
  }

  @Test func nestedCombineOfOneSourceSendsOneTriplePerWrite() {
    let source = ValueHolder(1)
    let received = Recorder<(Int, Int, Int)>()
    let observer = source.chain().combine(source.chain().map { $0 * 2 }).combine(source.chain().map { $0 * 3 })
      .do { received.append($0) }.end()
    source.value = 2
    source.value = 5
    #expect(received.history.map { [$0.0, $0.1, $0.2] } == [[2, 4, 6], [5, 10, 15]])
    withExtendedLifetime(observer) {}
  }

  @Test func singleSourceChainsSeeEveryValueOfAWave() {
    let source = ValueHolder(0)
    let singles = Recorder<Int>()
    let pairs = Recorder<(Int, Int)>()
    let observers = [
      // Writes the source again from its own handler: 1, then 2 (which
      // this chain, having caused it, skips).
      source.chain().do { if $0 == 1 { source.value = 2 } }.end(),
      source.chain().do { singles.append($0) }.end(),
      source.chain().combine(source.chain().map { -$0 }).do { pairs.append($0) }.end(),
    ]
    source.value = 1
    #expect(singles.history == [1, 2])
    // One wave: the combine sends once, with the final value.
    #expect(pairs.history.map { [$0.0, $0.1] } == [[2, -2]])
    withExtendedLifetime(observers) {}
  }

  @Test func syncSendsOneValueForADiamond() {
    let source = ValueHolder(4)
    let received = Recorder<(Int, Int)>()
    let observer = source.chain().combine(source.chain().map { $0 + 1 }).do { received.append($0) }.sync()
    #expect(received.history.map { [$0.0, $0.1] } == [[4, 5]])
    withExtendedLifetime(observer) {}
  }

  @Test func tupleStillSendsOneSidePerDelivery() {
    let source = ValueHolder(1)
    let received = Recorder<(Int?, Int?)>()
    let observer = source.chain().tuple(source.chain().map { $0 * 10 }).do { received.append($0) }.end()
    source.value = 2
    #expect(received.history.map { [$0.0, $0.1] } == [[2, nil], [nil, 20]])
    withExtendedLifetime(observer) {}
  }

  @Test func mergeStillSendsEveryValue() {
    let source = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = source.chain().merge(source.chain().map { $0 * 10 }).do { received.append($0) }.end()
    source.value = 2
    #expect(received.history == [2, 20])
    withExtendedLifetime(observer) {}
  }

  @Test func twoWayBindingInsideAWaveSettles() {
    let field = ValueHolder("a")
    let model = ValueHolder("a")
    let received = Recorder<(String, String)>()
    let observers = [
      field.chain().sendTo(model).end(),
      model.chain().sendTo(field).end(),
      field.chain().combine(model.chain()).do { received.append($0) }.end(),
    ]
    field.value = "b"
    #expect(model.value == "b")
    #expect(received.history.map { [$0.0, $0.1] } == [["b", "b"]])
    withBatchedUpdates {
      model.value = "c"
      field.value = "d"
    }
    #expect(field.value == "d")
    #expect(model.value == "d")
    #expect(received.history.map { [$0.0, $0.1] } == [["b", "b"], ["d", "d"]])
    withExtendedLifetime(observers) {}
  }

  @Test func aHopEndsTheWaveAndEachDeliveryAfterItStartsOne() {
    let source = ValueHolder(1)
    let queue = DispatchQueue(label: "GlitchFreeTests.hop")
    let received = Recorder<(Int, Int)>()
    let observer = source.chain().receive(on: queue).map { $0 * 10 }
      .combine(source.chain().receive(on: queue).map { $0 * 100 })
      .do { received.append($0) }.sync()
    queue.sync {}
    source.value = 2
    queue.sync {}
    // Each side crosses the queue on its own: the first arrives in a wave
    // of its own, and the combine sends then, as `combineLatest` would.
    #expect(received.history.map { [$0.0, $0.1] } == [[10, 100], [20, 100], [20, 200]])
    withExtendedLifetime(observer) {}
  }

  @Test func aRelayedChangeJoinsTheWaveOfTheInnerWrite() {
    let inner = ValueHolder(1)
    let holder = RelayableValueHolder(inner)
    let received = Recorder<(Int, Int)>()
    let relayed = holder.chain().compactMap { event -> Int? in
      if case .relayed(let value) = event { value } else { nil }
    }
    let observer = inner.chain().combine(relayed).do { received.append($0) }.end()
    inner.value = 2
    inner.value = 3
    // Each write sends one pair, both sides new: never (3, 2).
    #expect(received.history.map { [$0.0, $0.1] } == [[2, 2], [3, 3]])
    withExtendedLifetime(observer) {}
  }

  @Test func aHandlerThatWritesJoinsTheWave() {
    // A one-source handler writes `total` while `count`'s write is being
    // delivered: the combine over both sends once, with both new values.
    let count = ValueHolder(1)
    let total = ValueHolder(10)
    let received = Recorder<(Int, Int)>()
    let observers = [
      count.chain().do { total.value = $0 * 10 }.end(),
      count.chain().combine(total.chain()).do { received.append($0) }.sync(),
    ]
    count.value = 2
    count.value = 3
    // Never (2, 10) nor (3, 20).
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 10], [2, 20], [3, 30]])
    withExtendedLifetime(observers) {}
  }

  @Test func flatMapLatestSwitchesInsideTheWaveOfTheSelection() {
    // A switch syncs the new inner chain inside the selection's wave, so a
    // batch that selects and writes the other side sends one pair; a write
    // to the selected inner source is a wave of its own.
    let selected = ValueHolder(0)
    let inners = [ValueHolder(1), ValueHolder(2)]
    let other = ValueHolder(0)
    let received = Recorder<(Int, Int)>()
    let observer = selected.chain().flatMapLatest { inners[$0].chain() }
      .combine(other.chain())
      .do { received.append($0) }.sync()
    withBatchedUpdates {
      selected.value = 1
      other.value = 5
    }
    inners[1].value = 3
    inners[0].value = 4
    // Never (2, 0); the unselected inner source sends nothing.
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 0], [2, 5], [3, 5]])
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func aTimedDeliveryIsAWaveOfItsOwn() async {
    let clock = TestClock()
    let query = ValueHolder(0)
    let low = ValueHolder(0)
    let high = ValueHolder(0)
    let received = Recorder<(Int, Int)>()
    let observers = [
      // The debounced value writes two holders: one wave, the timer's.
      query.chain().debounce(for: .seconds(1), clock: clock).do { value in
        low.value = value
        high.value = value * 10
      }.end(),
      low.chain().combine(high.chain()).do { received.append($0) }.sync(),
    ]
    query.value = 3
    await clock.advance(by: .seconds(1))
    // Never (3, 0).
    #expect(received.history.map { [$0.0, $0.1] } == [[0, 0], [3, 30]])
    withExtendedLifetime(observers) {}
  }

  // MARK: - withBatchedUpdates

  @Test func batchSendsOnceWithAllTheNewValues() {
    let width = ValueHolder(1)
    let height = ValueHolder(1)
    let areas = Recorder<Int>()
    let widths = Recorder<Int>()
    let observers = [
      width.chain().combine(height.chain()).map { $0 * $1 }.do { areas.append($0) }.sync(),
      width.chain().do { widths.append($0) }.end(),
    ]
    withBatchedUpdates {
      width.value = 3
      width.value = 4
      // Single-source chains see every value, at once; reads see the writes.
      #expect(widths.history == [3, 4])
      #expect(width.value == 4)
      height.value = 5
      #expect(areas.history == [1])
    }
    #expect(areas.history == [1, 20])
    withExtendedLifetime(observers) {}
  }

  @Test func batchWithNoChangeSendsNothing() {
    let width = ValueHolder(1)
    let height = ValueHolder(1)
    let areas = Recorder<Int>()
    let observer = width.chain().combine(height.chain()).map { $0 * $1 }.do { areas.append($0) }.sync()
    withBatchedUpdates { width.value = 1 }
    #expect(areas.history == [1])
    withExtendedLifetime(observer) {}
  }

  @Test func nestedBatchesJoinTheOuterOne() {
    let width = ValueHolder(1)
    let height = ValueHolder(1)
    let areas = Recorder<Int>()
    let observer = width.chain().combine(height.chain()).map { $0 * $1 }.do { areas.append($0) }.end()
    let result = withBatchedUpdates {
      withBatchedUpdates { width.value = 2 }
      #expect(areas.history == [])
      height.value = 3
      return width.value + height.value
    }
    #expect(result == 5)
    #expect(areas.history == [6])
    withExtendedLifetime(observer) {}
  }

  @Test func throwingBatchStillSendsThenRethrows() {
    struct Failure: Error {}
    let width = ValueHolder(1)
    let height = ValueHolder(1)
    let areas = Recorder<Int>()
    let observer = width.chain().combine(height.chain()).map { $0 * $1 }.do { areas.append($0) }.end()
    #expect(throws: Failure.self) {
      try withBatchedUpdates { () throws(Failure) in
        width.value = 2
        height.value = 4
        throw Failure()
      }
    }
    #expect(areas.history == [8])
    withExtendedLifetime(observer) {}
  }

  @Test func anotherThreadsWavesAreSeparateFromABatch() {
    let mine = ValueHolder(0)
    let theirs = ValueHolder(0)
    let shared = ValueHolder(0)
    let minePairs = Recorder<(Int, Int)>()
    let theirPairs = Recorder<(Int, Int)>()
    let observers = [
      mine.chain().combine(shared.chain()).do { minePairs.append($0) }.end(),
      theirs.chain().combine(shared.chain()).do { theirPairs.append($0) }.end(),
    ]
    let inBatch = DispatchSemaphore(value: 0)
    let written = DispatchSemaphore(value: 0)
    let other = spawn {
      inBatch.wait()
      // A wave of this thread's own: sent at its end, during the batch.
      theirs.value = 7
      written.signal()
    }
    withBatchedUpdates {
      mine.value = 1
      shared.value = 2
      inBatch.signal()
      written.wait()
      #expect(theirPairs.history.map { [$0.0, $0.1] } == [[7, 2]])
      #expect(minePairs.history.isEmpty)
    }
    other.wait()
    #expect(minePairs.history.map { [$0.0, $0.1] } == [[1, 2]])
    withExtendedLifetime(observers) {}
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func observedValueReadInsideABatchSeesTheBatchsWrites() {
    let count = ValueHolder(1)
    let queue = DispatchQueue(label: "GlitchFreeTests.observed")
    let doubled = ObservedValue(on: queue) { count.value * 2 }
    let received = Recorder<(Int, Int)>()
    let observer = count.chain().combine(doubled.chain()).do { received.append($0) }.sync()
    withBatchedUpdates {
      count.value = 5
      // The observed value reads on its queue, in waves of that queue's own.
      queue.sync {}
      #expect(doubled.value == 10)
      #expect(received.history.map { [$0.0, $0.1] } == [[1, 2], [5, 10]])
    }
    // The batch's own wave sends once more, with the values held then.
    #expect(received.history.map { [$0.0, $0.1] } == [[1, 2], [5, 10], [5, 10]])
    withExtendedLifetime(observer) {}
  }

  /// Issue #36: the combines of a `flatMapLatest`'s inner chain, built at a
  /// switch, rank below the combines after the step, as if built with the
  /// chain: a wave that switches and changes the other side sends once,
  /// from the new inner value. They took a fresh, higher rank, so the
  /// combine after the step sent first, with the old inner value. Built on
  /// the main actor, as the example (a script's top-level code):
  /// built elsewhere, the combine after the step learned a higher rank at
  /// `sync()` and the order came out right by chance.
  @MainActor @Test func aSwitchToAnInnerChainWithACombineSendsOnceInAWave() {
    let inners = (0..<4).map { (ValueHolder($0 * 100), ValueHolder($0 * 100 + 1)) }
    let selected = ValueHolder(0)
    let other = ValueHolder(0)
    let received = Recorder<[Int]>()
    let observer = selected.chain()
      .flatMapLatest { index in
        inners[index].0.chain().combine(inners[index].1.chain()).map { $0 * 1000 + $1 }
      }
      .combine(other.chain())
      .do { received.append([$0, $1]) }
      .sync()
    #expect(received.history == [[1, 0]])
    withBatchedUpdates {
      other.value = 1
      selected.value = 1
    }
    #expect(received.history == [[1, 0], [100_101, 1]])
    withBatchedUpdates {
      selected.value = 2
      other.value = 2
    }
    #expect(received.history == [[1, 0], [100_101, 1], [200_201, 2]])
    // A write of an inner source alone, in its own wave.
    inners[2].0.value = 300
    #expect(received.history.last == [300_201, 2])
    observer.invalidate()
  }

  /// A wave that changes an inner chain's source and switches away from
  /// it sends only what the final selection delivers (issue #36): the
  /// inner values of a wave are sent at its end, those of a chain the wave
  /// replaced dropped. It sent [2, 4, -2]: 4, `double`'s new value, after
  /// `head` already selected `inverse`.
  @Test func aWaveThatSwitchesSendsOnlyTheFinalSelectionsValues() {
    let head = ValueHolder(1)
    let double = ValueHolder(0)
    let inverse = ValueHolder(0)
    let feeds = [
      head.chain().map { $0 * 2 }.sendTo(double).sync(),
      head.chain().map { -$0 }.sendTo(inverse).sync(),
    ]
    let received = Recorder<Int>()
    let observer = head.chain()
      .flatMapLatest { $0 == 1 ? double.chain() : inverse.chain() }
      .do { received.append($0) }
      .sync()
    #expect(received.history == [2])
    withBatchedUpdates { head.value = 2 }
    #expect(received.history == [2, -2])
    // Every value of the selected chain still arrives, in order, once.
    withBatchedUpdates {
      inverse.value = 7
      inverse.value = 8
    }
    #expect(received.history == [2, -2, 7, 8])
    // Switched back and written in one wave: the new chain's values only.
    withBatchedUpdates {
      inverse.value = 9
      head.value = 1
      double.value = 10
    }
    #expect(received.history == [2, -2, 7, 8, 2, 10])
    observer.invalidate()
    for feed in feeds { feed.invalidate() }
  }
}
