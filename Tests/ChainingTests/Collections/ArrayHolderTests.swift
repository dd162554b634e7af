import Chaining
import Dispatch
import Testing

private typealias IntEvent = ArrayHolder<Int>.Event

@Suite struct ArrayHolderTests {
  // MARK: Reading

  @Test func readingReturnsTheHeldElements() {
    let holder = ArrayHolder([4, 5, 6])
    #expect(holder.raw == [4, 5, 6])
    #expect(holder.count == 3)
    #expect(holder.first == 4)
    #expect(holder.last == 6)
    #expect(holder[0] == 4)
    #expect(holder[2] == 6)
    #expect(holder.element(at: 1) == 5)
    #expect(holder.fetchedValue() == .fetched([4, 5, 6]))
  }

  @Test func emptyHolderHasNoFirstOrLast() {
    let holder = ArrayHolder<Int>()
    #expect(holder.raw == [])
    #expect(holder.count == 0)
    #expect(holder.first == nil)
    #expect(holder.last == nil)
    #expect(holder.fetchedValue() == .fetched([]))
  }

  @Test func readingFollowsWrites() {
    let holder = ArrayHolder([1])
    holder.append(2)
    holder.insert(0, at: 0)
    #expect(holder.raw == [0, 1, 2])
    #expect(holder.count == 3)
    #expect(holder.first == 0)
    #expect(holder.last == 2)
    #expect(holder[1] == 1)
    #expect(holder.element(at: 2) == 2)
  }

  // MARK: Events of each write

  @Test func syncSendsTheWholeArrayAsFetched() {
    let holder = ArrayHolder(["a", "b"])
    let received = Recorder<ArrayHolder<String>.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()
    #expect(received.history == [.fetched(["a", "b"])])
    withExtendedLifetime(observer) {}
  }

  @Test func endSendsNothingUntilAWrite() {
    let holder = ArrayHolder([1, 2])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    #expect(received.history == [])
    holder.append(3)
    #expect(received.history == [.inserted(at: 2, element: 3)])
    withExtendedLifetime(observer) {}
  }

  @Test func setReplacesEverythingAndSendsSet() {
    let holder = ArrayHolder([1, 2, 3])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.set([7, 8])
    #expect(holder.raw == [7, 8])
    holder.set([7, 8])
    holder.set([])
    #expect(holder.raw == [])
    // `set` sends even when the array does not change.
    #expect(received.history == [.set([7, 8]), .set([7, 8]), .set([])])
    withExtendedLifetime(observer) {}
  }

  @Test func appendSendsInsertedAtTheLastIndex() {
    let holder = ArrayHolder([1, 2])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.append(3)
    holder.append(4)
    #expect(holder.raw == [1, 2, 3, 4])
    #expect(received.history == [.inserted(at: 2, element: 3), .inserted(at: 3, element: 4)])
    withExtendedLifetime(observer) {}
  }

  @Test func appendContentsOfSendsOneInsertedPerElementInOrder() {
    let holder = ArrayHolder([1])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.append(contentsOf: [5, 6, 7])
    #expect(holder.raw == [1, 5, 6, 7])
    #expect(
      received.history == [
        .inserted(at: 1, element: 5),
        .inserted(at: 2, element: 6),
        .inserted(at: 3, element: 7),
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func appendContentsOfAnySequenceAppendsItsElements() {
    let holder = ArrayHolder<Int>()
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.append(contentsOf: (1...3).lazy.map { $0 * 10 })
    #expect(holder.raw == [10, 20, 30])
    #expect(
      received.history == [
        .inserted(at: 0, element: 10),
        .inserted(at: 1, element: 20),
        .inserted(at: 2, element: 30),
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func appendContentsOfNothingSendsNothing() {
    let holder = ArrayHolder([1])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.append(contentsOf: [])
    #expect(holder.raw == [1])
    #expect(received.history == [])
    withExtendedLifetime(observer) {}
  }

  @Test func insertSendsInsertedAtTheGivenIndex() {
    let holder = ArrayHolder([1, 2])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.insert(0, at: 0)
    holder.insert(9, at: 3)  // at `count`: the end
    holder.insert(5, at: 2)
    #expect(holder.raw == [0, 1, 5, 2, 9])
    #expect(
      received.history == [
        .inserted(at: 0, element: 0),
        .inserted(at: 3, element: 9),
        .inserted(at: 2, element: 5),
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func removeReturnsTheElementAndSendsRemoved() {
    let holder = ArrayHolder([1, 2, 3])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    let middle = holder.remove(at: 1)
    let last = holder.remove(at: 1)
    #expect(middle == 2)
    #expect(last == 3)
    #expect(holder.raw == [1])
    #expect(received.history == [.removed(at: 1, element: 2), .removed(at: 1, element: 3)])
    withExtendedLifetime(observer) {}
  }

  @Test func removeAllSendsOneEmptySet() {
    let holder = ArrayHolder([1, 2, 3])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.removeAll()
    #expect(holder.raw == [])
    #expect(received.history == [.set([])])
    withExtendedLifetime(observer) {}
  }

  @Test func removeAllOnAnEmptyArraySendsNothing() {
    let holder = ArrayHolder<Int>()
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.removeAll()
    holder.append(1)
    holder.removeAll()
    holder.removeAll()
    #expect(holder.raw == [])
    #expect(received.history == [.inserted(at: 0, element: 1), .set([])])
    withExtendedLifetime(observer) {}
  }

  @Test func replaceSendsReplaced() {
    let holder = ArrayHolder([1, 2, 3])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.replace(20, at: 1)
    holder.replace(20, at: 1)  // sent even when equal
    #expect(holder.raw == [1, 20, 3])
    #expect(received.history == [.replaced(at: 1, element: 20), .replaced(at: 1, element: 20)])
    withExtendedLifetime(observer) {}
  }

  @Test func subscriptSetSendsReplaced() {
    let holder = ArrayHolder(["a", "b"])
    let received = Recorder<ArrayHolder<String>.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder[0] = "z"
    #expect(holder.raw == ["z", "b"])
    #expect(received.history == [.replaced(at: 0, element: "z")])
    withExtendedLifetime(observer) {}
  }

  @Test func moveSendsMovedWithTheMovedElement() {
    let holder = ArrayHolder([0, 1, 2, 3])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.move(at: 0, to: 3)
    #expect(holder.raw == [1, 2, 3, 0])
    holder.move(at: 2, to: 1)
    #expect(holder.raw == [1, 3, 2, 0])
    #expect(received.history == [.moved(at: 0, to: 3, element: 0), .moved(at: 2, to: 1, element: 3)])
    withExtendedLifetime(observer) {}
  }

  @Test func moveToTheSameIndexChangesNothingAndSendsNothing() {
    let holder = ArrayHolder([0, 1, 2])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.move(at: 1, to: 1)
    #expect(holder.raw == [0, 1, 2])
    #expect(received.history == [])
    withExtendedLifetime(observer) {}
  }

  @Test func everyChainReceivesEveryEventInWriteOrder() {
    let holder = ArrayHolder([1])
    let first = Recorder<IntEvent>()
    let second = Recorder<IntEvent>()
    let observers = [
      holder.chain().do { first.append($0) }.sync(),
      holder.chain().do { second.append($0) }.end(),
    ]
    holder.append(2)
    holder.move(at: 1, to: 0)
    holder.remove(at: 1)
    let expected: [IntEvent] = [
      .inserted(at: 1, element: 2), .moved(at: 1, to: 0, element: 2), .removed(at: 1, element: 1),
    ]
    #expect(first.history == [.fetched([1])] + expected)
    #expect(second.history == expected)
    #expect(replay(first.history) == [2])
    withExtendedLifetime(observers) {}
  }

  @Test func invalidatedObserverReceivesNothing() {
    let holder = ArrayHolder([1])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.sync()
    observer.invalidate()
    holder.append(2)
    holder.removeAll()
    #expect(received.history == [.fetched([1])])
  }

  // MARK: Events reproduce the array

  @Test(arguments: [1, 42, 2_024, 0xC0FF_EE, 987_654_321] as [UInt64])
  func eventsAppliedToTheSyncedCopyReproduceRawAfterEveryRandomWrite(seed: UInt64) {
    var random = SplitMix64(seed: seed)
    let holder = ArrayHolder(Array(0..<5))
    var model = Array(0..<5)
    let inbox = Inbox<IntEvent>()
    let lateInbox = Inbox<IntEvent>()
    var observers = [holder.chain().do { inbox.items.append($0) }.sync()]
    var copy = fetchedArray(inbox.take())
    var lateCopy: [Int]?
    var performed: Set<ArrayWrite> = []
    var pass = true

    for step in 0..<2_000 where pass {
      if step == 1_000 {
        // A chain synced in the middle starts from the array of that moment.
        observers.append(holder.chain().do { lateInbox.items.append($0) }.sync())
        lateCopy = fetchedArray(lateInbox.take())
        #expect(lateCopy == model)
      }
      let (write, expected) = performRandomWrite(on: holder, model: &model, using: &random)
      performed.insert(write)
      let events = inbox.take()
      pass = events == expected && holder.raw == model
      #expect(events == expected, "seed \(seed), step \(step): \(write)")
      #expect(holder.raw == model, "seed \(seed), step \(step): \(write)")
      #expect(holder.count == model.count)
      #expect(holder.first == model.first)
      #expect(holder.last == model.last)
      for event in events { copy = copy.flatMap { apply(event, to: $0) } }
      #expect(copy == holder.raw, "seed \(seed), step \(step): \(write)")
      if step >= 1_000 {
        for event in lateInbox.take() { lateCopy = lateCopy.flatMap { apply(event, to: $0) } }
        #expect(lateCopy == holder.raw, "seed \(seed), step \(step): \(write)")
        pass = pass && lateCopy == holder.raw
      }
      pass = pass && copy == holder.raw
    }
    #expect(pass)
    #expect(performed == Set(ArrayWrite.allCases))
    withExtendedLifetime(observers) {}
  }

  // MARK: Bad indices

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func removeAtAnIndexOutOfRangeStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([1, 2, 3])
      holder.remove(at: 5)
    }
    #expect(errorText(result).contains("ArrayHolder.remove(at:): index 5 is out of range for count 3"))
  }
  #endif

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func insertPastTheEndStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([1, 2, 3])
      holder.insert(9, at: 4)
    }
    #expect(errorText(result).contains("ArrayHolder.insert(_:at:): index 4 is out of range for count 3"))
  }
  #endif

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func insertAtANegativeIndexStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([1, 2, 3])
      holder.insert(9, at: -1)
    }
    #expect(errorText(result).contains("ArrayHolder.insert(_:at:): index -1 is out of range for count 3"))
  }
  #endif

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func replaceAtAnIndexOutOfRangeStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([1, 2, 3])
      holder.replace(0, at: 3)
    }
    #expect(errorText(result).contains("ArrayHolder.replace(_:at:): index 3 is out of range for count 3"))
  }
  #endif

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func subscriptGetOutOfRangeStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder<Int>()
      _ = holder[0]
    }
    #expect(errorText(result).contains("ArrayHolder.subscript: index 0 is out of range for count 0"))
  }
  #endif

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func subscriptSetOutOfRangeStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([1, 2, 3])
      holder[-1] = 0
    }
    #expect(errorText(result).contains("ArrayHolder.subscript: index -1 is out of range for count 3"))
  }
  #endif

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func elementAtAnIndexOutOfRangeStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([1, 2])
      _ = holder.element(at: 2)
    }
    #expect(errorText(result).contains("ArrayHolder.element(at:): index 2 is out of range for count 2"))
  }
  #endif

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func moveFromAnIndexOutOfRangeStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([1, 2, 3])
      holder.move(at: 7, to: 0)
    }
    #expect(errorText(result).contains("ArrayHolder.move(at:to:): index 7 is out of range for count 3"))
  }
  #endif

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func moveToAnIndexOutOfRangeStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([1, 2, 3])
      holder.move(at: 0, to: 3)
    }
    #expect(errorText(result).contains("ArrayHolder.move(at:to:): index 3 is out of range for count 3"))
  }
  #endif

  // MARK: Lifetime

  @Test func holderIsReleasedWhileItsObserverLives() {
    weak var weakHolder: ArrayHolder<Int>?
    let received = Recorder<IntEvent>()
    var observer: Observer?
    do {
      let holder = ArrayHolder([1])
      weakHolder = holder
      observer = holder.chain().do { received.append($0) }.sync()
      holder.append(2)
    }
    #expect(weakHolder == nil)
    #expect(received.history == [.fetched([1]), .inserted(at: 1, element: 2)])
    #expect(observer?.isInvalidated == false)
    observer?.invalidate()
    #expect(observer?.isInvalidated == true)
  }

  @Test func invalidatingReleasesWhatTheHandlersCapture() {
    let holder = ArrayHolder([1])
    weak var weakToken: Token?
    var observer: Observer?
    do {
      let token = Token()
      weakToken = token
      observer = holder.chain().do { _ in _ = token }.sync()
    }
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
    holder.append(2)  // nothing left to deliver to
    withExtendedLifetime(observer) {}
  }

  @Test func releasingTheObserverReleasesWhatTheHandlersCapture() {
    let holder = ArrayHolder([1])
    weak var weakToken: Token?
    do {
      let token = Token()
      weakToken = token
      let observer = holder.chain().map { _ in token }.do { _ in }.sync()
      #expect(weakToken != nil)
      withExtendedLifetime(observer) {}
    }
    #expect(weakToken == nil)
  }

  @Test func holdersBoundByAnObserverAreReleasedWhileItLives() {
    weak var weakSource: ArrayHolder<Int>?
    weak var weakMirror: ArrayHolder<Int>?
    var observer: Observer?
    do {
      let source = ArrayHolder([1, 2])
      let mirror = ArrayHolder<Int>()
      weakSource = source
      weakMirror = mirror
      observer = source.chain().map(\.action).sendTo(mirror).sync()
      source.append(3)
      #expect(mirror.raw == [1, 2, 3])
    }
    #expect(weakSource == nil)
    #expect(weakMirror == nil)
    #expect(observer?.isInvalidated == false)
    observer?.invalidate()
  }

  @Test func removedReplacedAndClearedElementsAreReleased() {
    let holder = ArrayHolder<Token>()
    let observer = holder.chain().map { _ in 0 }.do { _ in }.sync()
    weak var removed: Token?
    weak var replaced: Token?
    weak var cleared: Token?
    weak var overwritten: Token?
    do {
      let tokens = [Token(), Token(), Token()]
      removed = tokens[0]
      replaced = tokens[1]
      cleared = tokens[2]
      holder.append(contentsOf: tokens)
    }
    #expect(removed != nil)
    holder.remove(at: 0)
    #expect(removed == nil)
    holder.replace(Token(), at: 0)
    #expect(replaced == nil)
    holder.removeAll()
    #expect(cleared == nil)
    do {
      let token = Token()
      overwritten = token
      holder.append(token)
    }
    #expect(overwritten != nil)
    holder.set([])
    #expect(overwritten == nil)
    withExtendedLifetime(observer) {}
  }

  // MARK: Thread safety

  @Test func concurrentAppendsEachSendOneInsertedAndTheEventsReproduceRaw() {
    let threads = 4
    let perThread = 2_500
    let holder = ArrayHolder<Int>()
    let received = Recorder<IntEvent>()
    let mirror = ArrayHolder<Int>()
    let observers = [
      holder.chain().do { received.append($0) }.sync(),
      holder.chain().map(\.action).sendTo(mirror).sync(),
    ]

    race(threads: threads) { thread in
      for index in 0..<perThread {
        holder.append(thread * 100_000 + index)
      }
    }

    let history = received.history
    #expect(history.count == 1 + threads * perThread)
    #expect(history.first == .fetched([]))
    let raw = holder.raw
    #expect(raw.count == threads * perThread)
    #expect(holder.count == threads * perThread)
    // Each append reports the index it landed at: the events come in write order.
    let inserted = history.dropFirst().map { event -> Int? in
      guard case .inserted(let index, let element) = event else { return nil }
      return raw.indices.contains(index) && raw[index] == element ? index : nil
    }
    #expect(inserted == Array(0..<threads * perThread))
    #expect(replay(history) == raw)
    #expect(mirror.raw == raw)
    #expect(Set(raw).count == threads * perThread)
    for thread in 0..<threads {
      let fromThread = raw.filter { $0 / 100_000 == thread }
      #expect(fromThread == Array(thread * 100_000..<thread * 100_000 + perThread))
    }
    withExtendedLifetime(observers) {}
  }

  @Test func concurrentMixedWritesAndReadsKeepEveryChainInStep() {
    let rounds = 1_000
    let holder = ArrayHolder([-1, -2])
    let received = Recorder<IntEvent>()
    let mirror = ArrayHolder<Int>()
    let badReads = Recorder<String>()
    let observers = [
      holder.chain().do { received.append($0) }.sync(),
      holder.chain().map(\.action).sendTo(mirror).sync(),
    ]

    // No write shrinks the array below 2 elements, so every index used is valid.
    race(threads: 5) { thread in
      for round in 0..<rounds {
        switch thread {
        case 0:
          holder.append(1_000_000 + round)
        case 1:
          holder.insert(2_000_000 + round, at: 0)
        case 2:
          if round.isMultiple(of: 2) {
            holder.replace(3_000_000 + round, at: 1)
          } else {
            holder[0] = 3_000_000 + round
          }
        case 3:
          if round.isMultiple(of: 2) {
            holder.move(at: 0, to: 1)
          } else {
            holder.insert(4_000_000 + round, at: 1)
            holder.remove(at: 0)
          }
        default:
          let raw = holder.raw
          let count = holder.count
          if raw.count < 2 || count < 2 || holder.first == nil || holder.last == nil {
            badReads.append("round \(round): \(raw.count) \(count)")
          }
          _ = holder.element(at: 1)
          _ = holder[0]
        }
      }
    }

    #expect(badReads.history == [])
    let history = received.history
    var counts: [String: Int] = [:]
    for event in history.dropFirst() {
      switch event {
      case .fetched: counts["fetched", default: 0] += 1
      case .set: counts["set", default: 0] += 1
      case .inserted: counts["inserted", default: 0] += 1
      case .removed: counts["removed", default: 0] += 1
      case .replaced: counts["replaced", default: 0] += 1
      case .moved: counts["moved", default: 0] += 1
      }
    }
    #expect(history.first == .fetched([-1, -2]))
    #expect(counts == ["inserted": 2_500, "removed": 500, "replaced": 1_000, "moved": 500])
    #expect(holder.count == 2 + 2 * rounds)
    #expect(replay(history) == holder.raw)
    #expect(mirror.raw == holder.raw)
    withExtendedLifetime(observers) {}
  }

  @Test func concurrentAppendContentsOfRunsStayContiguous() {
    let batches = 500
    let holder = ArrayHolder<Int>()
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.sync()

    race(threads: 3) { thread in
      for batch in 0..<batches {
        if thread == 0 {
          holder.append(contentsOf: (0..<5).map { batch * 5 + $0 })
        } else {
          holder.append(-(thread * 100_000 + batch) - 1)
        }
      }
    }

    let elements = received.history.dropFirst().compactMap { event -> Int? in
      guard case .inserted(_, let element) = event else { return nil }
      return element
    }
    #expect(elements.count == 5 * batches + 2 * batches)
    var runs: [[Int]] = []
    for (offset, element) in elements.enumerated() where element >= 0 && element % 5 == 0 {
      runs.append(Array(elements[offset..<min(offset + 5, elements.count)]))
    }
    #expect(runs == (0..<batches).map { batch in (0..<5).map { batch * 5 + $0 } })
    #expect(replay(received.history) == holder.raw)
    withExtendedLifetime(observer) {}
  }

  @Test func syncWhileAnotherThreadIsDeliveringGivesACopyTheLaterEventsKeepExact() {
    let holder = ArrayHolder([0])
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let steady = Recorder<IntEvent>()
    let blocker = holder.chain().do { event in
      if event == .inserted(at: 1, element: 1) {
        entered.signal()
        release.wait()
      }
    }.end()
    let steadyObserver = holder.chain().do { steady.append($0) }.sync()

    // The writer's thread is delivering `1`, stuck in `blocker`.
    let writer = spawn { holder.append(1) }
    entered.wait()
    // This write is stored now and its event queued behind `1`.
    holder.append(2)
    #expect(holder.raw == [0, 1, 2])
    let late = Recorder<IntEvent>()
    let lateObserver = holder.chain().do { late.append($0) }.sync()
    release.signal()
    writer.wait()

    #expect(holder.raw == [0, 1, 2])
    #expect(replay(steady.history) == [0, 1, 2])
    // The late chain's copy must match too: its fetch already contains `2`,
    // so it must not also be sent `.inserted(at: 2, element: 2)`.
    #expect(replay(late.history) == [0, 1, 2], "late chain received \(late.history)")
    _ = (blocker, steadyObserver, lateObserver)
  }

  // MARK: Reentrancy

  @Test func writesFromAHandlerWaitUntilTheCurrentEventReachedEveryChain() {
    let holder = ArrayHolder([0])
    let mirror = ArrayHolder<Int>()
    let writer = Recorder<IntEvent>()
    let other = Recorder<IntEvent>()
    let seenInside = Recorder<[Int]>()
    let removed = Recorder<Int>()
    let observers = [
      holder.chain().do { event in
        writer.append(event)
        if event == .inserted(at: 1, element: 1) {
          holder.append(contentsOf: [2, 3])
          removed.append(holder.remove(at: 0))
          // The writes are stored at once; only their events wait.
          seenInside.append(holder.raw)
        }
      }.sync(),
      holder.chain().do { other.append($0) }.sync(),
      holder.chain().map(\.action).sendTo(mirror).sync(),
    ]

    holder.append(1)

    #expect(holder.raw == [1, 2, 3])
    #expect(removed.history == [0])
    #expect(seenInside.history == [[1, 2, 3]])
    // The writing chain does not receive its own writes.
    #expect(writer.history == [.fetched([0]), .inserted(at: 1, element: 1)])
    #expect(
      other.history == [
        .fetched([0]),
        .inserted(at: 1, element: 1),
        .inserted(at: 2, element: 2),
        .inserted(at: 3, element: 3),
        .removed(at: 0, element: 0),
      ]
    )
    #expect(replay(other.history) == holder.raw)
    #expect(mirror.raw == holder.raw)
    withExtendedLifetime(observers) {}
  }

  @Test func aWriteFromAMiddleChainReachesTheEarlierChainAfterTheLaterOne() {
    let holder = ArrayHolder([5])
    let order = Recorder<String>()
    func describe(_ event: IntEvent) -> String {
      switch event {
      case .inserted(let index, let element): "inserted \(element) at \(index)"
      case .replaced(let index, let element): "replaced \(element) at \(index)"
      default: "other"
      }
    }
    let observers = [
      holder.chain().do { order.append("A \(describe($0))") }.end(),
      holder.chain().do { event in
        order.append("B \(describe(event))")
        if event == .inserted(at: 1, element: 1) { holder.replace(10, at: 0) }
      }.end(),
      holder.chain().do { order.append("C \(describe($0))") }.end(),
    ]

    holder.append(1)

    #expect(
      order.history == [
        "A inserted 1 at 1", "B inserted 1 at 1", "C inserted 1 at 1",
        "A replaced 10 at 0", "C replaced 10 at 0",
      ]
    )
    #expect(holder.raw == [10, 1])
    withExtendedLifetime(observers) {}
  }

  @Test func handlerAppendingOnEveryInsertDoesNotLoopOnItsOwnWrites() {
    let holder = ArrayHolder<Int>()
    let own = Recorder<IntEvent>()
    let other = Recorder<IntEvent>()
    let observers = [
      holder.chain().do { event in
        own.append(event)
        if case .inserted(_, let element) = event { holder.append(element + 1) }
      }.sync(),
      holder.chain().do { other.append($0) }.sync(),
    ]

    holder.append(1)
    holder.append(50)

    #expect(holder.raw == [1, 2, 50, 51])
    #expect(own.history == [.fetched([]), .inserted(at: 0, element: 1), .inserted(at: 2, element: 50)])
    #expect(
      other.history == [
        .fetched([]),
        .inserted(at: 0, element: 1),
        .inserted(at: 1, element: 2),
        .inserted(at: 2, element: 50),
        .inserted(at: 3, element: 51),
      ]
    )
    withExtendedLifetime(observers) {}
  }

  @Test func aWriteDuringAppendContentsOfComesAfterTheWholeRun() {
    let holder = ArrayHolder<Int>()
    let other = Recorder<IntEvent>()
    let observers = [
      holder.chain().do { event in
        if event == .inserted(at: 0, element: 10) { holder.append(99) }
      }.end(),
      holder.chain().do { other.append($0) }.end(),
    ]

    holder.append(contentsOf: [10, 11, 12])

    #expect(holder.raw == [10, 11, 12, 99])
    #expect(
      other.history == [
        .inserted(at: 0, element: 10),
        .inserted(at: 1, element: 11),
        .inserted(at: 2, element: 12),
        .inserted(at: 3, element: 99),
      ]
    )
    withExtendedLifetime(observers) {}
  }

  @Test func chainSyncedInsideAHandlerAfterAQueuedWriteStaysExact() {
    let holder = ArrayHolder([0])
    let late = Recorder<IntEvent>()
    let lateObservers = Recorder<Observer>()
    let observer = holder.chain().do { event in
      if event == .inserted(at: 1, element: 1) {
        holder.append(2)  // queued behind `1`
        lateObservers.append(holder.chain().do { late.append($0) }.sync())
      }
    }.end()

    holder.append(1)

    #expect(holder.raw == [0, 1, 2])
    // The late chain fetched [0, 1, 2]; `.inserted(at: 2, element: 2)` on top
    // of that would duplicate the 2.
    #expect(replay(late.history) == [0, 1, 2], "late chain received \(late.history)")
    _ = (observer, lateObservers)
  }
}

// MARK: - Changing in place

/// An element with an id, as SwiftUI lists take them.
private struct Row: Identifiable, Equatable {
  let id: Int
  var title: String
}

/// A value that is not `Equatable`: `modify` sends the whole array.
private struct OpaqueNumber {
  let number: Int
}

@Suite struct ArrayHolderInPlaceTests {
  @Test func modifySendsTheDifferenceThatRebuildsTheArray() {
    let holder = ArrayHolder([1, 2, 3, 4, 5])
    let received = Inbox<IntEvent>()
    let observer = holder.chain().do { received.items.append($0) }.sync()
    let result = holder.modify { elements -> Int in
      elements.removeAll { $0.isMultiple(of: 2) }
      elements.insert(0, at: 0)
      elements.append(6)
      return elements.count
    }
    #expect(result == 5)
    #expect(holder.raw == [0, 1, 3, 5, 6])
    #expect(received.items.count == 5)  // the fetch, two removals, two insertions
    #expect(replay(received.items) == holder.raw)
    holder.modify { $0.sort() }  // already sorted: nothing sent
    #expect(received.items.count == 5)
    withExtendedLifetime(observer) {}
  }

  @Test func modifySendsMovesForElementsThatMoved() {
    let holder = ArrayHolder(["a", "b", "c", "d"])
    let received = Inbox<ArrayHolder<String>.Event>()
    let observer = holder.chain().do { received.items.append($0) }.end()
    holder.modify { $0.append($0.removeFirst()) }  // "a" to the end
    #expect(received.take() == [.moved(at: 0, to: 3, element: "a")])
    holder.modify { $0.swapAt(0, 2) }
    #expect(holder.raw == ["d", "c", "b", "a"])
    #expect(received.take() == [.moved(at: 1, to: 2, element: "c"), .moved(at: 0, to: 2, element: "b")])
    withExtendedLifetime(observer) {}
  }

  @Test func modifyWithMovesRemovalsAndInsertionsAlwaysReplaysToTheArray() {
    // Shuffles, drops and adds elements at random: every sequence of events
    // must apply, in order, to the old array and give the new one.
    var random = SplitMix64(seed: 11)
    let holder = ArrayHolder(Array(0..<30))
    let received = Inbox<IntEvent>()
    let observer = holder.chain().do { received.items.append($0) }.sync()
    var moves = 0
    var next = 100
    for _ in 0..<300 {
      holder.modify { elements in
        for _ in 0..<random.next(below: 4) where elements.count > 1 {
          let from = random.next(below: elements.count)
          elements.insert(elements.remove(at: from), at: random.next(below: elements.count))
        }
        if random.next(below: 3) == 0, !elements.isEmpty { elements.remove(at: random.next(below: elements.count)) }
        if random.next(below: 3) == 0 {
          next += 1
          elements.insert(next, at: random.next(below: elements.count + 1))
        }
      }
      moves += received.items.count { if case .moved = $0 { true } else { false } }
      #expect(replay(received.items) == holder.raw)
    }
    #expect(moves > 100)
    withExtendedLifetime(observer) {}
  }

  @Test func modifyTakesElementsWithUnchangedBitsAtTheEndsAsUnchanged() {
    // A NaN is not equal to itself: left alone at an end, its bits say it
    // did not change.
    let holder = ArrayHolder([Double.nan, 1, Double.nan])
    let received = Inbox<ArrayHolder<Double>.Event>()
    let observer = holder.chain().do { received.items.append($0) }.end()
    holder.modify { $0[1] = 2 }
    #expect(received.take().map { "\($0)" } == ["removed(at: 1, element: 1.0)", "inserted(at: 1, element: 2.0)"])
    withExtendedLifetime(observer) {}
  }

  @Test func modifyOfElementsThatAreNotEquatableSendsTheWholeArray() {
    let holder = ArrayHolder([OpaqueNumber(number: 1), OpaqueNumber(number: 2)])
    let received = Inbox<[Int]>()
    let observer = holder.chain().do { event in
      if case .set(let elements) = event { received.items.append(elements.map(\.number)) }
    }.end()
    holder.modify { $0.reverse() }
    #expect(received.items == [[2, 1]])
    withExtendedLifetime(observer) {}
  }

  @Test func removeAllWhereSendsOneRemovalEachAtItsPlaceThen() {
    let holder = ArrayHolder([1, 2, 3, 4, 6, 7])
    let received = Inbox<IntEvent>()
    let observer = holder.chain().do { received.items.append($0) }.sync()
    let removed = holder.removeAll { $0.isMultiple(of: 2) }
    #expect(removed == [2, 4, 6])
    #expect(holder.raw == [1, 3, 7])
    #expect(replay(received.items) == [1, 3, 7])
    #expect(holder.removeAll { $0 > 10 } == [])
    #expect(received.items.count == 4)
    withExtendedLifetime(observer) {}
  }

  @Test func elementsAreFoundRemovedAndUpdatedByID() {
    let holder = ArrayHolder([Row(id: 1, title: "milk"), Row(id: 2, title: "eggs"), Row(id: 3, title: "tea")])
    let events = Inbox<String>()
    let observer = holder.chain().do { event in
      switch event {
      case .removed(let index, let row): events.items.append("removed \(index) \(row.title)")
      case .replaced(let index, let row): events.items.append("replaced \(index) \(row.title)")
      default: events.items.append("other")
      }
    }.end()
    #expect(holder.index(id: 3) == 2)
    #expect(holder.index(id: 9) == nil)
    #expect(holder.remove(id: 1)?.title == "milk")
    #expect(holder.remove(id: 1) == nil)  // gone: nothing sent
    holder.update(id: 3) { $0.title = "green tea" }
    #expect(holder.raw == [Row(id: 2, title: "eggs"), Row(id: 3, title: "green tea")])
    #expect(events.items == ["removed 0 milk", "replaced 1 green tea"])
    withExtendedLifetime(observer) {}
  }

  @Test func removalsByIDFromFourThreadsRemoveExactlyThoseElements() {
    // The list screen: each thread removes its own ids, while the
    // others remove theirs; a search then a remove(at:) removed wrong items.
    let holder = ArrayHolder((0..<4000).map { Row(id: $0, title: "\($0)") })
    let events = Recorder<IntEvent>()
    let numbers = ArrayHolder((0..<4000).map { $0 })
    let observer = numbers.chain().do { events.append($0) }.sync()
    DispatchQueue.concurrentPerform(iterations: 4) { thread in
      for id in stride(from: thread, to: 4000, by: 4) where id.isMultiple(of: 2) {
        #expect(holder.remove(id: id)?.id == id)
        numbers.removeAll { $0 == id }
      }
    }
    #expect(holder.raw.map(\.id) == Array(stride(from: 1, to: 4000, by: 2)))
    #expect(numbers.raw == Array(stride(from: 1, to: 4000, by: 2)))
    observer.invalidate()
    #expect(replay(events.history) == numbers.raw)
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func updateOfAnAbsentIDStopsWithAMessageNamingIt() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([Row(id: 1, title: "milk")])
      holder.update(id: 7) { $0.title = "tea" }
    }
    #expect(errorText(result).contains("ArrayHolder.update(id:_:): no element has the id 7"))
  }

  @Test func aClosureThatReadsItsHolderStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([1, 2])
      holder.modify { _ in _ = holder.count }
    }
    #expect(errorText(result).contains("A closure passed to an array holder's modify(_:)"))
  }
  #endif
}

// MARK: - Helpers

private func errorText(_ result: ExitTest.Result?) -> String {
  String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
}

/// Collects values on one thread, for tests that never leave it.
private final class Inbox<Value> {
  var items: [Value] = []

  func take() -> [Value] {
    defer { items = [] }
    return items
  }
}

/// The elements of `events` when it is a single `.fetched` event, or `nil`.
private func fetchedArray(_ events: [IntEvent]) -> [Int]? {
  guard events.count == 1, case .fetched(let elements) = events[0] else { return nil }
  return elements
}

/// The kinds of write the random test makes.
private enum ArrayWrite: CaseIterable, Hashable {
  case set
  case append
  case appendContentsOf
  case insert
  case remove
  case removeAll
  case removeAllWhenEmpty
  case replace
  case subscriptSet
  case move
  case moveToSameIndex
}

/// Makes one random valid write to `holder`, applies it to `model` with
/// Swift's `Array`, and returns it with the events it must send.
private func performRandomWrite(
  on holder: ArrayHolder<Int>,
  model: inout [Int],
  using random: inout SplitMix64
) -> (ArrayWrite, [IntEvent]) {
  let value = Int.random(in: 0..<1_000, using: &random)
  var write = ArrayWrite.allCases.randomElement(using: &random)!
  if model.isEmpty, [.remove, .replace, .subscriptSet, .move, .moveToSameIndex].contains(write) {
    write = .insert
  }
  if write == .removeAll, model.isEmpty { write = .removeAllWhenEmpty }
  if write == .removeAllWhenEmpty, !model.isEmpty { write = .removeAll }
  if write == .removeAll || write == .set, model.count < 8, Bool.random(using: &random) {
    // Keep the array long enough for the index writes to matter.
    write = .appendContentsOf
  }
  switch write {
  case .set:
    let elements = (0..<Int.random(in: 0...8, using: &random)).map { _ in Int.random(in: 0..<1_000, using: &random) }
    holder.set(elements)
    model = elements
    return (write, [.set(elements)])
  case .append:
    holder.append(value)
    model.append(value)
    return (write, [.inserted(at: model.count - 1, element: value)])
  case .appendContentsOf:
    let elements = (0..<Int.random(in: 0...4, using: &random)).map { value + $0 }
    let start = model.count
    holder.append(contentsOf: elements)
    model.append(contentsOf: elements)
    return (write, elements.enumerated().map { .inserted(at: start + $0.offset, element: $0.element) })
  case .insert:
    let index = Int.random(in: 0...model.count, using: &random)
    holder.insert(value, at: index)
    model.insert(value, at: index)
    return (write, [.inserted(at: index, element: value)])
  case .remove:
    let index = Int.random(in: 0..<model.count, using: &random)
    let removed = holder.remove(at: index)
    let expected = model.remove(at: index)
    #expect(removed == expected)
    return (write, [.removed(at: index, element: expected)])
  case .removeAll, .removeAllWhenEmpty:
    let wasEmpty = model.isEmpty
    holder.removeAll()
    model.removeAll()
    return (write, wasEmpty ? [] : [.set([])])
  case .replace:
    let index = Int.random(in: 0..<model.count, using: &random)
    holder.replace(value, at: index)
    model[index] = value
    return (write, [.replaced(at: index, element: value)])
  case .subscriptSet:
    let index = Int.random(in: 0..<model.count, using: &random)
    holder[index] = value
    model[index] = value
    return (write, [.replaced(at: index, element: value)])
  case .move:
    let from = Int.random(in: 0..<model.count, using: &random)
    let to = Int.random(in: 0..<model.count, using: &random)
    holder.move(at: from, to: to)
    let element = model.remove(at: from)
    model.insert(element, at: to)
    return (write, from == to ? [] : [.moved(at: from, to: to, element: element)])
  case .moveToSameIndex:
    let index = Int.random(in: 0..<model.count, using: &random)
    holder.move(at: index, to: index)
    return (write, [])
  }
}
