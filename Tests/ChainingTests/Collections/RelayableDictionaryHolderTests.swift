import Testing

@testable import Chaining

private typealias Item = ValueHolder<Int>
private typealias Holder = RelayableDictionaryHolder<String, Item>

/// Names objects by identity, so that events compare as text and fail readably.
private struct Names {
  private let pairs: KeyValuePairs<String, Item>

  init(_ pairs: KeyValuePairs<String, Item>) {
    self.pairs = pairs
  }

  func callAsFunction(_ object: Item) -> String {
    pairs.first { $0.value === object }?.key ?? "unknown"
  }

  /// The entries sorted by key, as `[key: name, …]`.
  func callAsFunction(_ entries: [String: Item]) -> String {
    if entries.isEmpty { return "[:]" }
    return "[" + entries.sorted { $0.key < $1.key }.map { "\($0.key): \(self($0.value))" }.joined(separator: ", ") + "]"
  }

  func describe(_ event: Holder.Event) -> String {
    switch event {
    case .fetched(let all): "fetched \(self(all))"
    case .set(let all): "set \(self(all))"
    case .inserted(let key, let value): "inserted \(key): \(self(value))"
    case .removed(let key, let value): "removed \(key): \(self(value))"
    case .replaced(let key, let value): "replaced \(key) by \(self(value))"
    case .relayed(let broadcast, let key, let value): "relayed \(broadcast) from \(key): \(self(value))"
    }
  }

  /// Writes a `DictionaryHolder` event in the same words as the relaying holder's.
  func describe(_ event: DictionaryHolder<String, Item>.Event) -> String {
    switch event {
    case .fetched(let all): "fetched \(self(all))"
    case .set(let all): "set \(self(all))"
    case .inserted(let key, let value): "inserted \(key): \(self(value))"
    case .removed(let key, let value): "removed \(key): \(self(value))"
    case .replaced(let key, let value): "replaced \(key) by \(self(value))"
    }
  }
}

/// The writes both dictionary holders share, so one script can drive either.
private protocol DictionaryWrites<Key, Value>: AnyObject {
  associatedtype Key: Hashable
  associatedtype Value
  subscript(key: Key) -> Value? { get set }
  func set(_ entries: [Key: Value])
  @discardableResult func removeValue(forKey key: Key) -> Value?
  func removeAll()
  func receive(value action: DictionaryAction<Key, Value>)
}

extension DictionaryHolder: DictionaryWrites {}
extension RelayableDictionaryHolder: DictionaryWrites {}

/// Whether any chain is subscribed to `sender`: a holder's relay is one.
private func isObserved(_ sender: some Chaining.Sendable) -> Bool {
  sender._senderCore(creating: false)?.hasObservers ?? false
}

@Suite struct RelayableDictionaryHolderTests {
  // MARK: - The events of DictionaryHolder

  @Test func syncSendsEveryEntryAsFetched() {
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder(["x": a, "y": b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()
    // Only the entries: the values' own current values are not relayed.
    #expect(received.history.map(names.describe) == ["fetched [x: a, y: b]"])
    #expect(names(holder.raw) == "[x: a, y: b]")
    withExtendedLifetime(observer) {}
  }

  @Test func everyWriteSendsTheSameEventsAsDictionaryHolder() {
    let (a, b, c, d, e) = (Item(1), Item(2), Item(3), Item(4), Item(5))
    let names = Names(["a": a, "b": b, "c": c, "d": d, "e": e])

    func runScript(on holder: some DictionaryWrites<String, Item>) {
      holder["z"] = c  // inserted
      holder["x"] = d  // replaced
      holder["y"] = nil  // removed
      holder["y"] = nil  // nothing to remove: nothing
      holder.removeValue(forKey: "z")
      holder.removeValue(forKey: "missing")  // nothing
      holder.receive(value: .update(key: "w", value: e))
      holder.receive(value: .update(key: "w", value: a))
      holder.receive(value: .remove(key: "x"))
      holder.set(["p": b, "q": c])
      holder.removeAll()
      holder.removeAll()  // already empty: nothing
      holder.receive(value: .set(["r": d]))
      holder.receive(value: .removeAll)
      holder.receive(value: .update(key: "s", value: e))
    }
    let expected = [
      "fetched [x: a, y: b]",
      "inserted z: c",
      "replaced x by d",
      "removed y: b",
      "removed z: c",
      "inserted w: e",
      "replaced w by a",
      "removed x: d",
      "set [p: b, q: c]",
      "set [:]",
      "set [r: d]",
      "set [:]",
      "inserted s: e",
    ]

    let plain = DictionaryHolder(["x": a, "y": b])
    let plainEvents = Recorder<DictionaryHolder<String, Item>.Event>()
    let plainObserver = plain.chain().do { plainEvents.append($0) }.sync()
    runScript(on: plain)

    let relaying = Holder(["x": a, "y": b])
    let relayingEvents = Recorder<Holder.Event>()
    let relayingObserver = relaying.chain().do { relayingEvents.append($0) }.sync()
    runScript(on: relaying)

    #expect(plainEvents.history.map(names.describe) == expected)
    #expect(relayingEvents.history.map(names.describe) == expected)
    #expect(names(plain.raw) == "[s: e]")
    #expect(names(relaying.raw) == "[s: e]")
    _ = (plainObserver, relayingObserver)
  }

  @Test func readingReturnsTheValues() {
    let (a, b) = (Item(1), Item(2))
    let holder = Holder(["x": a, "y": b])
    #expect(holder.count == 2)
    #expect(holder["x"] === a)
    #expect(holder["y"] === b)
    #expect(holder["z"] == nil)
    #expect(holder.removeValue(forKey: "x") === a)
    #expect(holder.removeValue(forKey: "x") == nil)
    #expect(holder.count == 1)
  }

  // MARK: - Relaying

  @Test func aValuesBroadcastArrivesAsRelayedWithItsKey() {
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder(["x": a, "y": b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    b.value = 20
    a.value = 10
    b.value = 21
    #expect(
      received.history.map(names.describe) == [
        "relayed 20 from y: b", "relayed 10 from x: a", "relayed 21 from y: b",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func insertedValuesRelay() {
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder()
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder["x"] = a
    holder.receive(value: .update(key: "y", value: b))
    a.value = 10
    b.value = 20
    #expect(
      received.history.map(names.describe) == [
        "inserted x: a", "inserted y: b", "relayed 10 from x: a", "relayed 20 from y: b",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func removedValueStopsRelaying() {
    let (a, b, c) = (Item(1), Item(2), Item(3))
    let names = Names(["a": a, "b": b, "c": c])
    let holder = Holder(["x": a, "y": b, "z": c])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.removeValue(forKey: "x")
    holder["y"] = nil
    a.value = 10
    b.value = 20
    c.value = 30
    #expect(
      received.history.map(names.describe) == [
        "removed x: a", "removed y: b", "relayed 30 from z: c",
      ]
    )
    #expect(!isObserved(a))
    #expect(!isObserved(b))
    withExtendedLifetime(observer) {}
  }

  @Test func replacedValueStopsRelayingAndItsReplacementRelays() {
    let (a, b, c, d) = (Item(1), Item(2), Item(3), Item(4))
    let names = Names(["a": a, "b": b, "c": c, "d": d])
    let holder = Holder(["x": a, "y": b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder["x"] = c
    holder.receive(value: .update(key: "y", value: d))
    a.value = 10
    b.value = 20
    c.value = 30
    d.value = 40
    #expect(
      received.history.map(names.describe) == [
        "replaced x by c", "replaced y by d", "relayed 30 from x: c", "relayed 40 from y: d",
      ]
    )
    #expect(!isObserved(a))
    #expect(!isObserved(b))
    withExtendedLifetime(observer) {}
  }

  @Test func storingTheSameInstanceAgainSendsReplacedAndKeepsRelayingItOnce() {
    let a = Item(1)
    let names = Names(["a": a])
    let holder = Holder(["x": a])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder["x"] = a
    a.value = 10
    #expect(received.history.map(names.describe) == ["replaced x by a", "relayed 10 from x: a"])
    withExtendedLifetime(observer) {}
  }

  @Test func setStopsRelayingEveryOldValueAndRelaysTheNewOnes() {
    let (a, b, c) = (Item(1), Item(2), Item(3))
    let names = Names(["a": a, "b": b, "c": c])
    let holder = Holder(["x": a, "y": b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    // `b` is in both dictionaries: it goes on relaying, once, under its new key.
    holder.set(["z": b, "w": c])
    a.value = 10
    b.value = 20
    c.value = 30
    #expect(
      received.history.map(names.describe) == [
        "set [w: c, z: b]", "relayed 20 from z: b", "relayed 30 from w: c",
      ]
    )
    #expect(!isObserved(a))
    withExtendedLifetime(observer) {}
  }

  @Test func removeAllStopsRelayingEveryValue() {
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder(["x": a, "y": b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.removeAll()
    a.value = 10
    b.value = 20
    #expect(received.history.map(names.describe) == ["set [:]"])
    #expect(!isObserved(a))
    #expect(!isObserved(b))
    withExtendedLifetime(observer) {}
  }

  @Test func sameObjectStoredUnderTwoKeysRelaysUnderBothInTheOrderTheyWereStored() {
    // Each key has its own relay, a chain on the value. The value delivers
    // to its chains in the order they were made, so one broadcast is
    // relayed once per key, in the order the keys were stored.
    let a = Item(1)
    let names = Names(["a": a])
    let holder = Holder()
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder["x"] = a
    holder["y"] = a
    a.value = 10
    holder["x"] = a  // a new relay for "x", made after the one for "y"
    a.value = 11
    holder["y"] = nil
    a.value = 12
    #expect(
      received.history.map(names.describe) == [
        "inserted x: a", "inserted y: a",
        "relayed 10 from x: a", "relayed 10 from y: a",
        "replaced x by a",
        "relayed 11 from y: a", "relayed 11 from x: a",
        "removed y: a",
        "relayed 12 from x: a",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  // MARK: - Lifetime

  @Test func holderIsReleasedWhileItsValuesLiveOn() {
    let (a, b) = (Item(1), Item(2))
    let received = Recorder<Int>()
    weak var weakHolder: Holder?
    var observer: Observer?
    do {
      let holder = Holder(["x": a, "y": b])
      weakHolder = holder
      observer = holder.chain().do { event in
        if case .relayed(let value, _, _) = event { received.append(value) }
      }.end()
      a.value = 10
    }
    #expect(weakHolder == nil)
    #expect(!isObserved(a))
    #expect(!isObserved(b))
    a.value = 11  // the holder is gone: no crash, nothing relayed
    b.value = 21
    #expect(received.history == [10])
    #expect(observer?.isInvalidated == false)
  }

  @Test func valuesAreReleasedWithTheHolder() {
    weak var weakA: Item?
    weak var weakB: Item?
    weak var weakHolder: Holder?
    do {
      let (a, b) = (Item(1), Item(2))
      weakA = a
      weakB = b
      let holder = Holder(["x": a, "y": b, "z": a])
      weakHolder = holder
      let observer = holder.chain().do { _ in }.sync()
      a.value = 10
      withExtendedLifetime(observer) {}
    }
    #expect(weakHolder == nil)
    #expect(weakA == nil)
    #expect(weakB == nil)
  }

  @Test func removedAndReplacedValuesAreReleased() {
    weak var weakA: Item?
    weak var weakB: Item?
    weak var weakC: Item?
    let holder = Holder()
    do {
      let (a, b, c) = (Item(1), Item(2), Item(3))
      weakA = a
      weakB = b
      weakC = c
      holder.set(["x": a, "y": b, "z": c])
    }
    #expect(weakA != nil)
    holder.removeValue(forKey: "x")
    #expect(weakA == nil)
    holder["y"] = Item(4)
    #expect(weakB == nil)
    holder.removeAll()
    #expect(weakC == nil)
  }

  // MARK: - Reentrancy

  @Test func removingAValueFromTheHandlerOfItsRelayedEventStopsRelayingIt() {
    // The removal is sent after the relayed event has reached every chain,
    // and not to the chain that made it.
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder(["x": a, "y": b])
    let acting = Recorder<Holder.Event>()
    let watching = Recorder<Holder.Event>()
    let observers = [
      holder.chain().do { event in
        acting.append(event)
        if case .relayed(10, "x", _) = event { holder.removeValue(forKey: "x") }
      }.end(),
      holder.chain().do { watching.append($0) }.end(),
    ]
    a.value = 10
    a.value = 11
    b.value = 20
    #expect(
      watching.history.map(names.describe) == [
        "relayed 10 from x: a", "removed x: a", "relayed 20 from y: b",
      ]
    )
    #expect(acting.history.map(names.describe) == ["relayed 10 from x: a", "relayed 20 from y: b"])
    #expect(!isObserved(a))
    for observer in observers { observer.invalidate() }
  }

  // MARK: - Concurrency

  @Test func relayedKeysStayCurrentWhileOtherThreadsStoreReplaceAndRemove() {
    let broadcasters = 2
    let perBroadcaster = 3_000
    let mutators = 2
    let perMutator = 1_000
    let steadyKeys = ["s0", "s1", "s2", "s3"]
    let steady = steadyKeys.map { _ in Notifier<Int>() }
    let holder = RelayableDictionaryHolder(Dictionary(uniqueKeysWithValues: zip(steadyKeys, steady)))
    let received = Recorder<RelayableDictionaryHolder<String, Notifier<Int>>.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()

    race(threads: broadcasters + mutators) { thread in
      if thread < broadcasters {
        for index in 0..<perBroadcaster {
          steady[index % steady.count].notify(value: thread * perBroadcaster + index)
        }
      } else {
        // Only this thread writes its key, so each of its broadcasts is
        // relayed exactly when its notifier is the one stored.
        let key = "m\(thread)"
        for _ in 0..<perMutator {
          let first = Notifier<Int>()
          holder[key] = first
          first.notify(value: -1)  // stored: relayed
          let second = Notifier<Int>()
          holder[key] = second
          first.notify(value: -2)  // replaced: not relayed
          second.notify(value: -3)  // stored: relayed
          holder.removeValue(forKey: key)
          second.notify(value: -4)  // removed: not relayed
        }
      }
    }

    // Apply the events in order to the synced copy: every replaced, removed
    // and relayed entry must match the copy at that point.
    var copy: [String: Notifier<Int>] = [:]
    var counts: [String: Int] = [:]
    var mismatches: [String] = []
    var relayedBySteady = Array(repeating: [Int](), count: steady.count)
    var relayedByMutators: [Int: Int] = [:]
    for (position, event) in received.history.enumerated() {
      switch event {
      case .fetched(let all):
        copy = all
        counts["fetched", default: 0] += 1
      case .inserted(let key, let value):
        if copy[key] != nil { mismatches.append("event \(position): inserted over \(key)") }
        copy[key] = value
        counts["inserted", default: 0] += 1
      case .replaced(let key, let value):
        if copy[key] == nil { mismatches.append("event \(position): replaced missing \(key)") }
        copy[key] = value
        counts["replaced", default: 0] += 1
      case .removed(let key, let value):
        if copy[key] !== value { mismatches.append("event \(position): removed \(key) is not the one stored") }
        copy[key] = nil
        counts["removed", default: 0] += 1
      case .relayed(let broadcast, let key, let value):
        if copy[key] !== value { mismatches.append("event \(position): relayed \(key) is not the one stored") }
        if let which = steady.firstIndex(where: { $0 === value }) {
          if steadyKeys[which] != key { mismatches.append("event \(position): \(key) relayed a steady value") }
          relayedBySteady[which].append(broadcast)
        } else {
          relayedByMutators[broadcast, default: 0] += 1
        }
      case .set:
        mismatches.append("event \(position): unexpected set")
      }
    }

    #expect(mismatches == [])
    #expect(
      counts == [
        "fetched": 1, "inserted": mutators * perMutator, "replaced": mutators * perMutator,
        "removed": mutators * perMutator,
      ]
    )
    #expect(relayedByMutators == [-1: mutators * perMutator, -3: mutators * perMutator])
    #expect(copy.keys.sorted() == steadyKeys)
    #expect(steadyKeys.indices.allSatisfy { copy[steadyKeys[$0]] === steady[$0] })
    #expect(steadyKeys.indices.allSatisfy { holder[steadyKeys[$0]] === steady[$0] })
    #expect(holder.count == steadyKeys.count)
    // Every broadcast of the steady values is relayed exactly once, and each
    // value's broadcasts from each thread arrive in the order that thread sent them.
    let all = relayedBySteady.flatMap { $0 }
    #expect(all.count == broadcasters * perBroadcaster)
    #expect(Set(all) == Set(0..<broadcasters * perBroadcaster))
    for (which, values) in relayedBySteady.enumerated() {
      #expect(values.allSatisfy { $0 % perBroadcaster % steady.count == which })
      for thread in 0..<broadcasters {
        let fromThread = values.filter { $0 / perBroadcaster == thread }
        #expect(fromThread == fromThread.sorted())
      }
    }
    withExtendedLifetime(observer) {}
  }
}
