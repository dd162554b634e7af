import Chaining
import Dispatch
import Testing

private typealias StringEvent = DictionaryHolder<String, Int>.Event
private typealias IntEvent = DictionaryHolder<Int, Int>.Event

@Suite struct DictionaryHolderTests {
  // MARK: Reading

  @Test func readingReturnsTheHeldEntries() {
    let holder = DictionaryHolder(["a": 1, "b": 2])
    #expect(holder.raw == ["a": 1, "b": 2])
    #expect(holder.count == 2)
    #expect(holder["a"] == 1)
    #expect(holder["b"] == 2)
    #expect(holder["c"] == nil)
    #expect(holder.fetchedValue() == .fetched(["a": 1, "b": 2]))
  }

  @Test func emptyHolderHasNoEntries() {
    let holder = DictionaryHolder<String, Int>()
    #expect(holder.raw == [:])
    #expect(holder.count == 0)
    #expect(holder["a"] == nil)
    #expect(holder.fetchedValue() == .fetched([:]))
  }

  @Test func readingFollowsWrites() {
    let holder = DictionaryHolder(["a": 1])
    holder["b"] = 2
    holder["a"] = 3
    #expect(holder.raw == ["a": 3, "b": 2])
    #expect(holder.count == 2)
    #expect(holder["a"] == 3)
    holder["a"] = nil
    #expect(holder.raw == ["b": 2])
    #expect(holder.count == 1)
    #expect(holder["a"] == nil)
  }

  // MARK: Events of each write

  @Test func syncSendsTheWholeDictionaryAsFetched() {
    let holder = DictionaryHolder(["a": 1, "b": 2])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.sync()
    #expect(received.history == [.fetched(["a": 1, "b": 2])])
    holder["c"] = 3
    #expect(received.history == [.fetched(["a": 1, "b": 2]), .inserted(key: "c", value: 3)])
    withExtendedLifetime(observer) {}
  }

  @Test func endSendsNothingUntilAWrite() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    #expect(received.history == [])
    holder["a"] = 2
    #expect(received.history == [.replaced(key: "a", value: 2)])
    withExtendedLifetime(observer) {}
  }

  @Test func subscriptSetOfANewKeySendsInserted() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder["b"] = 2
    #expect(holder.raw == ["a": 1, "b": 2])
    #expect(received.history == [.inserted(key: "b", value: 2)])
    withExtendedLifetime(observer) {}
  }

  @Test func subscriptSetOfAnExistingKeySendsReplaced() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder["a"] = 5
    holder["a"] = 5  // sent even when equal
    #expect(holder.raw == ["a": 5])
    #expect(received.history == [.replaced(key: "a", value: 5), .replaced(key: "a", value: 5)])
    withExtendedLifetime(observer) {}
  }

  @Test func subscriptSetToNilSendsRemovedWithTheOldValue() {
    let holder = DictionaryHolder(["a": 1, "b": 2])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder["a"] = nil
    #expect(holder.raw == ["b": 2])
    #expect(received.history == [.removed(key: "a", value: 1)])
    withExtendedLifetime(observer) {}
  }

  @Test func subscriptSetToNilOfAnAbsentKeySendsNothing() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder["z"] = nil
    #expect(holder.raw == ["a": 1])
    #expect(received.history == [])
    withExtendedLifetime(observer) {}
  }

  @Test func removeValueReturnsTheValueAndSendsRemoved() {
    let holder = DictionaryHolder(["a": 1, "b": 2])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    let removed = holder.removeValue(forKey: "b")
    #expect(removed == 2)
    #expect(holder.raw == ["a": 1])
    #expect(received.history == [.removed(key: "b", value: 2)])
    withExtendedLifetime(observer) {}
  }

  @Test func removeValueOfAnAbsentKeyReturnsNilAndSendsNothing() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    let removed = holder.removeValue(forKey: "z")
    #expect(removed == nil)
    #expect(holder.raw == ["a": 1])
    #expect(received.history == [])
    withExtendedLifetime(observer) {}
  }

  @Test func removeAllSendsOneEmptySet() {
    let holder = DictionaryHolder(["a": 1, "b": 2])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.removeAll()
    #expect(holder.raw == [:])
    #expect(received.history == [.set([:])])
    withExtendedLifetime(observer) {}
  }

  @Test func removeAllOnAnEmptyDictionarySendsNothing() {
    let holder = DictionaryHolder<String, Int>()
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.removeAll()
    holder["a"] = 1
    holder.removeAll()
    holder.removeAll()
    #expect(holder.raw == [:])
    #expect(received.history == [.inserted(key: "a", value: 1), .set([:])])
    withExtendedLifetime(observer) {}
  }

  @Test func setReplacesEverythingAndSendsSet() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.set(["x": 7, "y": 8])
    #expect(holder.raw == ["x": 7, "y": 8])
    holder.set(["x": 7, "y": 8])
    holder.set([:])
    #expect(holder.raw == [:])
    // `set` sends even when nothing changes.
    #expect(received.history == [.set(["x": 7, "y": 8]), .set(["x": 7, "y": 8]), .set([:])])
    withExtendedLifetime(observer) {}
  }

  @Test func everyChainReceivesEveryEventInWriteOrder() {
    let holder = DictionaryHolder(["a": 1])
    let first = Recorder<StringEvent>()
    let second = Recorder<StringEvent>()
    let observers = [
      holder.chain().do { first.append($0) }.sync(),
      holder.chain().do { second.append($0) }.end(),
    ]
    holder["b"] = 2
    holder["a"] = 3
    holder.removeValue(forKey: "b")
    let expected: [StringEvent] = [
      .inserted(key: "b", value: 2), .replaced(key: "a", value: 3), .removed(key: "b", value: 2),
    ]
    #expect(first.history == [.fetched(["a": 1])] + expected)
    #expect(second.history == expected)
    #expect(replay(first.history) == ["a": 3])
    withExtendedLifetime(observers) {}
  }

  @Test func invalidatedObserverReceivesNothing() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.sync()
    observer.invalidate()
    holder["b"] = 2
    holder.removeAll()
    #expect(received.history == [.fetched(["a": 1])])
  }

  // MARK: Events reproduce the dictionary

  @Test(arguments: [1, 42, 2_024, 0xC0_FFEE, 987_654_321] as [UInt64])
  func eventsAppliedToTheSyncedCopyReproduceRawAfterEveryRandomWrite(seed: UInt64) {
    var random = SplitMix64(seed: seed)
    let initial = Dictionary(uniqueKeysWithValues: (0..<5).map { ($0, $0 * 10) })
    let holder = DictionaryHolder(initial)
    var model = initial
    let inbox = Inbox<IntEvent>()
    let lateInbox = Inbox<IntEvent>()
    var observers = [holder.chain().do { inbox.items.append($0) }.sync()]
    var copy = fetchedEntries(inbox.take())
    var lateCopy: [Int: Int]?
    var performed: Set<DictionaryWrite> = []
    var pass = true

    for step in 0..<2_000 where pass {
      if step == 1_000 {
        // A chain synced in the middle starts from the dictionary of that moment.
        observers.append(holder.chain().do { lateInbox.items.append($0) }.sync())
        lateCopy = fetchedEntries(lateInbox.take())
        #expect(lateCopy == model)
      }
      let (write, expected) = performRandomWrite(on: holder, model: &model, using: &random)
      performed.insert(write)
      let events = inbox.take()
      pass = events == expected && holder.raw == model
      #expect(events == expected, "seed \(seed), step \(step): \(write)")
      #expect(holder.raw == model, "seed \(seed), step \(step): \(write)")
      #expect(holder.count == model.count)
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
    #expect(performed == Set(DictionaryWrite.allCases))
    withExtendedLifetime(observers) {}
  }

  // MARK: Lifetime

  @Test func holderIsReleasedWhileItsObserverLives() {
    weak var weakHolder: DictionaryHolder<String, Int>?
    let received = Recorder<StringEvent>()
    var observer: Observer?
    do {
      let holder = DictionaryHolder(["a": 1])
      weakHolder = holder
      observer = holder.chain().do { received.append($0) }.sync()
      holder["b"] = 2
    }
    #expect(weakHolder == nil)
    #expect(received.history == [.fetched(["a": 1]), .inserted(key: "b", value: 2)])
    #expect(observer?.isInvalidated == false)
    observer?.invalidate()
    #expect(observer?.isInvalidated == true)
  }

  @Test func invalidatingReleasesWhatTheHandlersCapture() {
    let holder = DictionaryHolder(["a": 1])
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
    holder["b"] = 2  // nothing left to deliver to
    withExtendedLifetime(observer) {}
  }

  @Test func holdersBoundByAnObserverAreReleasedWhileItLives() {
    weak var weakSource: DictionaryHolder<String, Int>?
    weak var weakMirror: DictionaryHolder<String, Int>?
    var observer: Observer?
    do {
      let source = DictionaryHolder(["a": 1])
      let mirror = DictionaryHolder<String, Int>()
      weakSource = source
      weakMirror = mirror
      observer = source.chain().map(\.action).sendTo(mirror).sync()
      source["b"] = 2
      #expect(mirror.raw == ["a": 1, "b": 2])
    }
    #expect(weakSource == nil)
    #expect(weakMirror == nil)
    #expect(observer?.isInvalidated == false)
    observer?.invalidate()
  }

  @Test func removedReplacedAndClearedValuesAreReleased() {
    let holder = DictionaryHolder<String, Token>()
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
      holder["removed"] = tokens[0]
      holder["replaced"] = tokens[1]
      holder["cleared"] = tokens[2]
    }
    #expect(removed != nil)
    holder.removeValue(forKey: "removed")
    #expect(removed == nil)
    holder["replaced"] = Token()
    #expect(replaced == nil)
    holder.removeAll()
    #expect(cleared == nil)
    do {
      let token = Token()
      overwritten = token
      holder["overwritten"] = token
    }
    #expect(overwritten != nil)
    holder.set([:])
    #expect(overwritten == nil)
    withExtendedLifetime(observer) {}
  }

  // MARK: Thread safety

  @Test func concurrentWritesOfDistinctKeysSendEveryEventAndTheEventsReproduceRaw() {
    let threads = 4
    let perThread = 2_500
    let holder = DictionaryHolder<Int, Int>()
    let received = Recorder<IntEvent>()
    let mirror = DictionaryHolder<Int, Int>()
    let observers = [
      holder.chain().do { received.append($0) }.sync(),
      holder.chain().map(\.action).sendTo(mirror).sync(),
    ]

    race(threads: threads) { thread in
      for index in 0..<perThread {
        let key = thread * 100_000 + index
        holder[key] = 1
        holder[key] = 2
        if index.isMultiple(of: 2) { holder[key] = nil }
      }
    }

    let history = received.history
    #expect(history.first == .fetched([:]))
    var perKey: [Int: [IntEvent]] = [:]
    for event in history.dropFirst() {
      switch event {
      case .inserted(let key, _), .replaced(let key, _), .removed(let key, _): perKey[key, default: []].append(event)
      case .fetched, .set: perKey[-1, default: []].append(event)
      }
    }
    #expect(history.count == 1 + threads * perThread * 2 + threads * perThread / 2)
    #expect(perKey.count == threads * perThread)
    // Each key's events come in the order of its writes.
    var wrongKeys: [Int] = []
    for thread in 0..<threads {
      for index in 0..<perThread {
        let key = thread * 100_000 + index
        var expected: [IntEvent] = [.inserted(key: key, value: 1), .replaced(key: key, value: 2)]
        if index.isMultiple(of: 2) { expected.append(.removed(key: key, value: 2)) }
        if perKey[key] != expected { wrongKeys.append(key) }
      }
    }
    #expect(wrongKeys == [])
    let raw = holder.raw
    #expect(raw.count == threads * perThread / 2)
    #expect(holder.count == threads * perThread / 2)
    #expect(raw.values.allSatisfy { $0 == 2 })
    #expect(replay(history) == raw)
    #expect(mirror.raw == raw)
    withExtendedLifetime(observers) {}
  }

  @Test func concurrentWritesOfSharedKeysKeepEveryChainInStep() {
    let holder = DictionaryHolder<Int, Int>()
    let received = Recorder<IntEvent>()
    let mirror = DictionaryHolder<Int, Int>()
    let observers = [
      holder.chain().do { received.append($0) }.sync(),
      holder.chain().map(\.action).sendTo(mirror).sync(),
    ]

    race(threads: 4) { thread in
      for round in 0..<2_000 {
        let key = round % 16
        switch thread {
        case 0: holder[key] = round
        case 1: holder.removeValue(forKey: key)
        case 2: if round % 250 == 0 { holder.removeAll() } else { holder[key] = -round }
        default: _ = (holder[key], holder.count, holder.raw)
        }
      }
    }

    #expect(replay(received.history) == holder.raw)
    #expect(mirror.raw == holder.raw)
    withExtendedLifetime(observers) {}
  }

  @Test func syncWhileAnotherThreadIsDeliveringGivesACopyTheLaterEventsKeepExact() {
    let holder = DictionaryHolder(["a": 0])
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let blocker = holder.chain().do { event in
      if event == .inserted(key: "b", value: 1) {
        entered.signal()
        release.wait()
      }
    }.end()

    // The writer's thread is delivering "b", stuck in `blocker`.
    let writer = spawn { holder["b"] = 1 }
    entered.wait()
    // This write is stored now and its event queued behind "b".
    holder["c"] = 2
    let late = Recorder<StringEvent>()
    let lateObserver = holder.chain().do { late.append($0) }.sync()
    release.signal()
    writer.wait()

    #expect(holder.raw == ["a": 0, "b": 1, "c": 2])
    // The late chain fetched "c" already: `.inserted(key: "c", value: 2)`
    // would insert a key its copy already holds.
    #expect(replay(late.history) == ["a": 0, "b": 1, "c": 2], "late chain received \(late.history)")
    _ = (blocker, lateObserver)
  }

  // MARK: Reentrancy

  @Test func writesFromAHandlerWaitUntilTheCurrentEventReachedEveryChain() {
    let holder = DictionaryHolder(["x": 0])
    let mirror = DictionaryHolder<String, Int>()
    let writer = Recorder<StringEvent>()
    let other = Recorder<StringEvent>()
    let seenInside = Recorder<[String: Int]>()
    let removed = Recorder<Int?>()
    let observers = [
      holder.chain().do { event in
        writer.append(event)
        if event == .inserted(key: "a", value: 1) {
          holder["b"] = 2
          holder["a"] = 3
          removed.append(holder.removeValue(forKey: "x"))
          holder["absent"] = nil
          // The writes are stored at once; only their events wait.
          seenInside.append(holder.raw)
        }
      }.sync(),
      holder.chain().do { other.append($0) }.sync(),
      holder.chain().map(\.action).sendTo(mirror).sync(),
    ]

    holder["a"] = 1

    #expect(holder.raw == ["a": 3, "b": 2])
    #expect(removed.history == [0])
    #expect(seenInside.history == [["a": 3, "b": 2]])
    // The writing chain does not receive its own writes.
    #expect(writer.history == [.fetched(["x": 0]), .inserted(key: "a", value: 1)])
    #expect(
      other.history == [
        .fetched(["x": 0]),
        .inserted(key: "a", value: 1),
        .inserted(key: "b", value: 2),
        .replaced(key: "a", value: 3),
        .removed(key: "x", value: 0),
      ]
    )
    #expect(replay(other.history) == holder.raw)
    #expect(mirror.raw == holder.raw)
    withExtendedLifetime(observers) {}
  }

  @Test func aWriteFromAMiddleChainReachesTheEarlierChainAfterTheLaterOne() {
    let holder = DictionaryHolder<String, Int>()
    let order = Recorder<String>()
    func describe(_ event: StringEvent) -> String {
      switch event {
      case .inserted(let key, let value): "inserted \(key) \(value)"
      case .removed(let key, let value): "removed \(key) \(value)"
      default: "other"
      }
    }
    let observers = [
      holder.chain().do { order.append("A \(describe($0))") }.end(),
      holder.chain().do { event in
        order.append("B \(describe(event))")
        if event == .inserted(key: "a", value: 1) { holder["a"] = nil }
      }.end(),
      holder.chain().do { order.append("C \(describe($0))") }.end(),
    ]

    holder["a"] = 1

    #expect(
      order.history == [
        "A inserted a 1", "B inserted a 1", "C inserted a 1",
        "A removed a 1", "C removed a 1",
      ]
    )
    #expect(holder.raw == [:])
    withExtendedLifetime(observers) {}
  }

  @Test func handlerWritingOnEveryInsertDoesNotLoopOnItsOwnWrites() {
    let holder = DictionaryHolder<String, Int>()
    let own = Recorder<StringEvent>()
    let other = Recorder<StringEvent>()
    let observers = [
      holder.chain().do { event in
        own.append(event)
        if case .inserted(let key, let value) = event { holder[key + "+"] = value + 1 }
      }.sync(),
      holder.chain().do { other.append($0) }.sync(),
    ]

    holder["a"] = 1
    holder["b"] = 5

    #expect(holder.raw == ["a": 1, "a+": 2, "b": 5, "b+": 6])
    #expect(own.history == [.fetched([:]), .inserted(key: "a", value: 1), .inserted(key: "b", value: 5)])
    #expect(
      other.history == [
        .fetched([:]),
        .inserted(key: "a", value: 1),
        .inserted(key: "a+", value: 2),
        .inserted(key: "b", value: 5),
        .inserted(key: "b+", value: 6),
      ]
    )
    withExtendedLifetime(observers) {}
  }

  @Test func chainSyncedInsideAHandlerAfterAQueuedWriteStaysExact() {
    let holder = DictionaryHolder(["x": 0])
    let late = Recorder<StringEvent>()
    let lateObservers = Recorder<Observer>()
    let observer = holder.chain().do { event in
      if event == .inserted(key: "a", value: 1) {
        holder["b"] = 2  // queued behind "a"
        lateObservers.append(holder.chain().do { late.append($0) }.sync())
      }
    }.end()

    holder["a"] = 1

    #expect(holder.raw == ["x": 0, "a": 1, "b": 2])
    // The late chain fetched "b" already: `.inserted(key: "b", value: 2)`
    // would insert a key its copy already holds.
    #expect(replay(late.history) == ["x": 0, "a": 1, "b": 2], "late chain received \(late.history)")
    _ = (observer, lateObservers)
  }
}

// MARK: - Helpers

/// The dictionary a chain's user rebuilds from `events`: a copy made from
/// the leading `.fetched`, then every later event applied in order. `nil`
/// when the events do not start with `.fetched` or one of them does not fit.
private func replay<Key: Hashable>(_ events: [DictionaryHolder<Key, Int>.Event]) -> [Key: Int]? {
  guard case .fetched(let initial)? = events.first else { return nil }
  var copy: [Key: Int]? = initial
  for event in events.dropFirst() { copy = copy.flatMap { apply(event, to: $0) } }
  return copy
}

/// `copy` with `event` applied, or `nil` when the event does not fit it: an
/// inserted key that is already there, a replaced key that is not, or a
/// removed value that is not the one held.
private func apply<Key: Hashable>(_ event: DictionaryHolder<Key, Int>.Event, to copy: [Key: Int]) -> [Key: Int]? {
  var copy = copy
  switch event {
  case .fetched(let entries), .set(let entries):
    copy = entries
  case .inserted(let key, let value):
    guard copy[key] == nil else { return nil }
    copy[key] = value
  case .replaced(let key, let value):
    guard copy[key] != nil else { return nil }
    copy[key] = value
  case .removed(let key, let value):
    guard copy[key] == value else { return nil }
    copy[key] = nil
  }
  return copy
}

/// Collects values on one thread, for tests that never leave it.
private final class Inbox<Value> {
  var items: [Value] = []

  func take() -> [Value] {
    defer { items = [] }
    return items
  }
}

/// The entries of `events` when it is a single `.fetched` event, or `nil`.
private func fetchedEntries(_ events: [IntEvent]) -> [Int: Int]? {
  guard events.count == 1, case .fetched(let entries) = events[0] else { return nil }
  return entries
}

/// The kinds of write the random test makes.
private enum DictionaryWrite: CaseIterable, Hashable {
  case set
  case insertBySubscript
  case replaceBySubscript
  case removeBySubscript
  case removeAbsentBySubscript
  case removeValue
  case removeAbsentValue
  case removeAll
  case removeAllWhenEmpty
}

/// Makes one random write to `holder`, applies it to `model` with Swift's
/// `Dictionary`, and returns it with the events it must send.
private func performRandomWrite(
  on holder: DictionaryHolder<Int, Int>,
  model: inout [Int: Int],
  using random: inout SplitMix64
) -> (DictionaryWrite, [IntEvent]) {
  let key = Int.random(in: 0..<24, using: &random)
  let value = Int.random(in: 0..<1_000, using: &random)
  switch Int.random(in: 0..<20, using: &random) {
  case 0:
    let entries = Dictionary(
      (0..<Int.random(in: 0...10, using: &random)).map { _ in
        (Int.random(in: 0..<24, using: &random), Int.random(in: 0..<1_000, using: &random))
      },
      uniquingKeysWith: { _, last in last }
    )
    holder.set(entries)
    model = entries
    return (.set, [.set(entries)])
  case 1:
    let wasEmpty = model.isEmpty
    holder.removeAll()
    model.removeAll()
    return wasEmpty ? (.removeAllWhenEmpty, []) : (.removeAll, [.set([:])])
  case 2..<11:
    holder[key] = value
    let old = model.updateValue(value, forKey: key)
    return old == nil
      ? (.insertBySubscript, [.inserted(key: key, value: value)])
      : (.replaceBySubscript, [.replaced(key: key, value: value)])
  case 11..<15:
    holder[key] = nil
    guard let old = model.removeValue(forKey: key) else { return (.removeAbsentBySubscript, []) }
    return (.removeBySubscript, [.removed(key: key, value: old)])
  default:
    let removed = holder.removeValue(forKey: key)
    let old = model.removeValue(forKey: key)
    #expect(removed == old)
    guard let old else { return (.removeAbsentValue, []) }
    return (.removeValue, [.removed(key: key, value: old)])
  }
}

@Suite struct DictionaryHolderInsertReplaceTests {
  @Test func insertAndReplaceSendTheirEvents() {
    let holder = DictionaryHolder<String, Int>()
    let events = Recorder<DictionaryHolder<String, Int>.Event>()
    let observer = holder.chain().do { events.append($0) }.end()
    holder.insert(key: "a", value: 1)
    holder.replace(key: "a", value: 2)
    #expect(events.history == [.inserted(key: "a", value: 1), .replaced(key: "a", value: 2)])
    #expect(holder.raw == ["a": 2])
    withExtendedLifetime(observer) {}
  }

  @Test func relayableInsertAndReplaceRelayTheNewValueOnly() {
    let holder = RelayableDictionaryHolder<String, ValueHolder<Int>>()
    let events = Recorder<String>()
    let observer = holder.chain().do { event in
      if case .relayed(let value, let key, _) = event { events.append("\(key) \(value)") }
    }.end()
    let old = ValueHolder(1)
    let new = ValueHolder(2)
    holder.insert(key: "a", value: old)
    holder.replace(key: "a", value: new)
    old.value = 10
    new.value = 20
    #expect(events.history == ["a 20"])
    withExtendedLifetime(observer) {}
  }

  @Test func capacityIsReserved() {
    let array = ArrayHolder<Int>()
    array.reserveCapacity(100)
    #expect(array.capacity >= 100)
    let relayableArray = RelayableArrayHolder<Notifier<Int>>()
    relayableArray.reserveCapacity(50)
    #expect(relayableArray.capacity >= 50)
    let dictionary = DictionaryHolder<Int, Int>()
    dictionary.reserveCapacity(64)
    #expect(dictionary.capacity >= 64)
    let relayableDictionary = RelayableDictionaryHolder<Int, Notifier<Int>>()
    relayableDictionary.reserveCapacity(32)
    #expect(relayableDictionary.capacity >= 32)
    #expect(array.count == 0 && dictionary.count == 0)
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func insertingAPresentKeyStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = DictionaryHolder(["a": 1])
      holder.insert(key: "a", value: 2)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("DictionaryHolder.insert(key:value:): key a is already present"), "\(message)")
  }
  #endif

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func replacingAMissingKeyStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = RelayableDictionaryHolder<String, Notifier<Int>>()
      holder.replace(key: "b", value: Notifier())
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("RelayableDictionaryHolder.replace(key:value:): no value for key b"), "\(message)")
  }
  #endif
}

@Suite struct DictionaryHolderModifyTests {
  @Test func modifySendsTheRemovedThenTheNewAndChangedKeys() {
    let holder = DictionaryHolder(["milk": 2, "eggs": 6, "tea": 1])
    let events = Recorder<StringEvent>()
    let observer = holder.chain().do { events.append($0) }.sync()
    let count = holder.modify { entries -> Int in
      entries["milk", default: 0] += 1
      entries["eggs"] = nil
      entries["bread"] = 1
      entries["tea"] = 1  // unchanged: no event
      return entries.count
    }
    #expect(count == 3)
    #expect(holder.raw == ["milk": 3, "tea": 1, "bread": 1])
    let changes = events.history.dropFirst()
    #expect(changes.first == .removed(key: "eggs", value: 6))
    #expect(
      Set(changes.dropFirst().map { "\($0)" }) == [
        "inserted(key: \"bread\", value: 1)", "replaced(key: \"milk\", value: 3)",
      ]
    )
    #expect(changes.count == 3)
    holder.modify { $0["tea"] = 1 }  // nothing changed: nothing sent
    #expect(events.count == 4)
    #expect(replay(events.history) == holder.raw)
    withExtendedLifetime(observer) {}
  }

  @Test func modifyOfValuesThatAreNotEquatableSendsTheWholeDictionary() {
    let holder = DictionaryHolder(["a": OpaqueCount(number: 1)])
    let sets = Recorder<[String: Int]>()
    let observer = holder.chain().do { event in
      if case .set(let entries) = event { sets.append(entries.mapValues(\.number)) }
    }.end()
    holder.modify { $0["b"] = OpaqueCount(number: 2) }
    #expect(sets.history == [["a": 1, "b": 2]])
    let empty = DictionaryHolder<String, OpaqueCount>()
    let none = empty.chain().do { _ in sets.append([:]) }.end()
    empty.modify { _ in }  // empty before and after: nothing
    #expect(sets.count == 1)
    withExtendedLifetime((observer, none)) {}
  }

  @Test func modifyFromFourThreadsLosesNoIncrement() {
    let holder = DictionaryHolder<Int, Int>()
    let events = Recorder<IntEvent>()
    let observer = holder.chain().do { events.append($0) }.sync()
    race(threads: 4) { _ in
      for key in 0..<200 { holder.modify { $0[key % 10, default: 0] += 1 } }
    }
    #expect(holder.raw == Dictionary(uniqueKeysWithValues: (0..<10).map { ($0, 80) }))
    #expect(replay(events.history) == holder.raw)
    withExtendedLifetime(observer) {}
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func aClosureThatReadsItsHolderStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = DictionaryHolder(["a": 1])
      holder.modify { _ in _ = holder.count }
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("A closure passed to a dictionary holder's modify(_:)"), "\(message)")
  }
  #endif
}

/// A value that is not `Equatable`: `modify` sends the whole dictionary.
private struct OpaqueCount {
  let number: Int
}
