import Testing

@testable import Chaining

private typealias Item = ValueHolder<Int>
private typealias Holder = RelayableArrayHolder<Item>

/// Names objects by identity, so that events compare as text and fail readably.
private struct Names {
  private let pairs: KeyValuePairs<String, Item>

  init(_ pairs: KeyValuePairs<String, Item>) {
    self.pairs = pairs
  }

  func callAsFunction(_ object: Item) -> String {
    pairs.first { $0.value === object }?.key ?? "unknown"
  }

  func callAsFunction(_ objects: [Item]) -> String {
    "[" + objects.map { self($0) }.joined(separator: ", ") + "]"
  }

  func describe(_ event: Holder.Event) -> String {
    switch event {
    case .fetched(let all): "fetched \(self(all))"
    case .set(let all): "set \(self(all))"
    case .inserted(let index, let element): "inserted \(self(element)) at \(index)"
    case .removed(let index, let element): "removed \(self(element)) at \(index)"
    case .replaced(let index, let element): "replaced at \(index) by \(self(element))"
    case .moved(let from, let to, let element): "moved \(self(element)) from \(from) to \(to)"
    case .relayed(let value, let index, let element): "relayed \(value) from \(self(element)) at \(index)"
    }
  }

  /// Writes an `ArrayHolder` event in the same words as the relaying holder's.
  func describe(_ event: ArrayHolder<Item>.Event) -> String {
    switch event {
    case .fetched(let all): "fetched \(self(all))"
    case .set(let all): "set \(self(all))"
    case .inserted(let index, let element): "inserted \(self(element)) at \(index)"
    case .removed(let index, let element): "removed \(self(element)) at \(index)"
    case .replaced(let index, let element): "replaced at \(index) by \(self(element))"
    case .moved(let from, let to, let element): "moved \(self(element)) from \(from) to \(to)"
    }
  }
}

/// The writes both array holders share, so one script can drive either.
private protocol ArrayWrites<Element>: AnyObject {
  associatedtype Element
  subscript(index: Int) -> Element { get set }
  func set(_ elements: [Element])
  func append(_ element: Element)
  func append(contentsOf elements: some Sequence<Element>)
  func insert(_ element: Element, at index: Int)
  @discardableResult func remove(at index: Int) -> Element
  func removeAll()
  func replace(_ element: Element, at index: Int)
  func move(at from: Int, to: Int)
  func receive(value action: ArrayAction<Element>)
}

extension ArrayHolder: ArrayWrites {}
extension RelayableArrayHolder: ArrayWrites {}

/// Whether any chain is subscribed to `sender`: a holder's relay is one.
private func isObserved(_ sender: some Chaining.Sendable) -> Bool {
  sender._senderCore(creating: false)?.hasObservers ?? false
}

@Suite struct RelayableArrayHolderTests {
  // MARK: - The events of ArrayHolder

  @Test func syncSendsEveryElementAsFetched() {
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder([a, b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()
    // Only the array: the elements' own current values are not relayed.
    #expect(received.history.map(names.describe) == ["fetched [a, b]"])
    #expect(names(holder.raw) == "[a, b]")
    withExtendedLifetime(observer) {}
  }

  @Test func everyWriteSendsTheSameEventsAsArrayHolder() {
    let (a, b, c, d, e, f, g, h) = (Item(1), Item(2), Item(3), Item(4), Item(5), Item(6), Item(7), Item(8))
    let names = Names(["a": a, "b": b, "c": c, "d": d, "e": e, "f": f, "g": g, "h": h])

    func runScript(on holder: some ArrayWrites<Item>) {
      holder.append(c)  // [a, b, c]
      holder.append(contentsOf: [d, e])  // [a, b, c, d, e]
      holder.insert(f, at: 1)  // [a, f, b, c, d, e]
      holder.remove(at: 2)  // [a, f, c, d, e]
      holder.replace(g, at: 0)  // [g, f, c, d, e]
      holder[1] = h  // [g, h, c, d, e]
      holder.move(at: 0, to: 3)  // [h, c, d, g, e]
      holder.move(at: 2, to: 2)  // nothing
      holder.receive(value: .remove(at: 0))  // [c, d, g, e]
      holder.receive(value: .insert(a, at: 4))  // [c, d, g, e, a]
      holder.receive(value: .replace(b, at: 0))  // [b, d, g, e, a]
      holder.receive(value: .move(at: 4, to: 0))  // [a, b, d, g, e]
      holder.set([e, f])
      holder.removeAll()
      holder.removeAll()  // already empty: nothing
      holder.receive(value: .appendContentsOf([c, d]))
      holder.receive(value: .append(e))
      holder.receive(value: .set([f]))
      holder.receive(value: .removeAll)
      holder.receive(value: .append(g))
    }
    let expected = [
      "fetched [a, b]",
      "inserted c at 2",
      "inserted d at 3", "inserted e at 4",
      "inserted f at 1",
      "removed b at 2",
      "replaced at 0 by g",
      "replaced at 1 by h",
      "moved g from 0 to 3",
      "removed h at 0",
      "inserted a at 4",
      "replaced at 0 by b",
      "moved a from 4 to 0",
      "set [e, f]",
      "set []",
      "inserted c at 0", "inserted d at 1",
      "inserted e at 2",
      "set [f]",
      "set []",
      "inserted g at 0",
    ]

    let plain = ArrayHolder([a, b])
    let plainEvents = Recorder<ArrayHolder<Item>.Event>()
    let plainObserver = plain.chain().do { plainEvents.append($0) }.sync()
    runScript(on: plain)

    let relaying = Holder([a, b])
    let relayingEvents = Recorder<Holder.Event>()
    let relayingObserver = relaying.chain().do { relayingEvents.append($0) }.sync()
    runScript(on: relaying)

    #expect(plainEvents.history.map(names.describe) == expected)
    #expect(relayingEvents.history.map(names.describe) == expected)
    #expect(names(relaying.raw) == "[g]")
    #expect(names(plain.raw) == "[g]")
    _ = (plainObserver, relayingObserver)
  }

  @Test func readingReturnsTheElements() {
    let (a, b, c) = (Item(1), Item(2), Item(3))
    let holder = Holder([a, b, c])
    #expect(holder.count == 3)
    #expect(holder.first === a)
    #expect(holder.last === c)
    #expect(holder[1] === b)
    #expect(holder.element(at: 2) === c)
    holder.removeAll()
    #expect(holder.count == 0)
    #expect(holder.first == nil)
    #expect(holder.last == nil)
  }

  // MARK: - Relaying

  @Test func anElementsBroadcastArrivesAsRelayedWithItsIndex() {
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder([a, b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    b.value = 20
    a.value = 10
    b.value = 21
    #expect(
      received.history.map(names.describe) == [
        "relayed 20 from b at 1", "relayed 10 from a at 0", "relayed 21 from b at 1",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func relayedIndexFollowsInsertsBeforeTheElement() {
    let (a, b, c) = (Item(1), Item(2), Item(3))
    let names = Names(["a": a, "b": b, "c": c])
    let holder = Holder([a])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.insert(b, at: 0)
    a.value = 10
    holder.insert(c, at: 0)
    a.value = 11
    b.value = 20
    c.value = 30
    #expect(
      received.history.map(names.describe) == [
        "inserted b at 0", "relayed 10 from a at 1",
        "inserted c at 0", "relayed 11 from a at 2", "relayed 20 from b at 1", "relayed 30 from c at 0",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func relayedIndexFollowsRemovalsBeforeTheElement() {
    let (a, b, c) = (Item(1), Item(2), Item(3))
    let names = Names(["a": a, "b": b, "c": c])
    let holder = Holder([a, b, c])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.remove(at: 0)
    c.value = 30
    holder.remove(at: 0)
    c.value = 31
    #expect(
      received.history.map(names.describe) == [
        "removed a at 0", "relayed 30 from c at 1", "removed b at 0", "relayed 31 from c at 0",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func relayedIndexFollowsMoves() {
    let (a, b, c) = (Item(1), Item(2), Item(3))
    let names = Names(["a": a, "b": b, "c": c])
    let holder = Holder([a, b, c])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.move(at: 0, to: 2)  // [b, c, a]
    a.value = 10
    b.value = 20
    c.value = 30
    #expect(
      received.history.map(names.describe) == [
        "moved a from 0 to 2", "relayed 10 from a at 2", "relayed 20 from b at 0", "relayed 30 from c at 1",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func insertedAndAppendedElementsRelay() {
    let (a, b, c, d) = (Item(1), Item(2), Item(3), Item(4))
    let names = Names(["a": a, "b": b, "c": c, "d": d])
    let holder = Holder()
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.append(a)
    holder.append(contentsOf: [b, c])
    holder.receive(value: .insert(d, at: 1))  // [a, d, b, c]
    c.value = 30
    d.value = 40
    #expect(
      received.history.map(names.describe) == [
        "inserted a at 0", "inserted b at 1", "inserted c at 2", "inserted d at 1",
        "relayed 30 from c at 3", "relayed 40 from d at 1",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func removedElementStopsRelaying() {
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder([a, b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    #expect(holder.remove(at: 0) === a)
    a.value = 10
    b.value = 20
    #expect(received.history.map(names.describe) == ["removed a at 0", "relayed 20 from b at 0"])
    #expect(!isObserved(a))
    withExtendedLifetime(observer) {}
  }

  @Test func replacedElementStopsRelayingAndItsReplacementRelays() {
    let (a, b, c, d) = (Item(1), Item(2), Item(3), Item(4))
    let names = Names(["a": a, "b": b, "c": c, "d": d])
    let holder = Holder([a, b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.replace(c, at: 0)
    holder[1] = d
    a.value = 10
    b.value = 20
    c.value = 30
    d.value = 40
    #expect(
      received.history.map(names.describe) == [
        "replaced at 0 by c", "replaced at 1 by d", "relayed 30 from c at 0", "relayed 40 from d at 1",
      ]
    )
    #expect(!isObserved(a))
    #expect(!isObserved(b))
    withExtendedLifetime(observer) {}
  }

  @Test func replacingAnElementWithItselfKeepsRelayingItOnce() {
    let a = Item(1)
    let names = Names(["a": a])
    let holder = Holder([a])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.replace(a, at: 0)
    a.value = 10
    #expect(received.history.map(names.describe) == ["replaced at 0 by a", "relayed 10 from a at 0"])
    withExtendedLifetime(observer) {}
  }

  @Test func setStopsRelayingEveryOldElementAndRelaysTheNewOnes() {
    let (a, b, c) = (Item(1), Item(2), Item(3))
    let names = Names(["a": a, "b": b, "c": c])
    let holder = Holder([a, b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    // `b` is in both arrays: it goes on relaying, once, at its new index.
    holder.set([c, b])
    a.value = 10
    b.value = 20
    c.value = 30
    #expect(
      received.history.map(names.describe) == [
        "set [c, b]", "relayed 20 from b at 1", "relayed 30 from c at 0",
      ]
    )
    #expect(!isObserved(a))
    withExtendedLifetime(observer) {}
  }

  @Test func removeAllStopsRelayingEveryElement() {
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder([a, b])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.removeAll()
    a.value = 10
    b.value = 20
    #expect(received.history.map(names.describe) == ["set []"])
    #expect(!isObserved(a))
    #expect(!isObserved(b))
    withExtendedLifetime(observer) {}
  }

  @Test func sameObjectStoredTwiceRelaysAtBothIndicesInTheOrderItsPositionsWereStored() {
    // Each position has its own relay, a chain on the element. The element
    // delivers to its chains in the order they were made, so one broadcast
    // is relayed once per position, in the order the positions were stored,
    // which is not necessarily index order.
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder([a, b, a])  // relays made for indices 0, 1, 2 in turn
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    a.value = 10
    holder.insert(a, at: 0)  // [a, a, b, a]: the newest relay is at index 0
    a.value = 11
    #expect(
      received.history.map(names.describe) == [
        "relayed 10 from a at 0", "relayed 10 from a at 2",
        "inserted a at 0",
        "relayed 11 from a at 1", "relayed 11 from a at 3", "relayed 11 from a at 0",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func removingOneOfTwoPositionsOfAnObjectKeepsRelayingTheOther() {
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder([a, b, a])
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.remove(at: 0)  // [b, a]
    a.value = 10
    #expect(received.history.map(names.describe) == ["removed a at 0", "relayed 10 from a at 1"])
    #expect(isObserved(a))
    withExtendedLifetime(observer) {}
  }

  // MARK: - Lifetime

  @Test func holderIsReleasedWhileItsElementsLiveOn() {
    let (a, b) = (Item(1), Item(2))
    let received = Recorder<Int>()
    weak var weakHolder: Holder?
    var observer: Observer?
    do {
      let holder = Holder([a, b])
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

  @Test func elementsAreReleasedWithTheHolder() {
    weak var weakA: Item?
    weak var weakB: Item?
    weak var weakHolder: Holder?
    do {
      let (a, b) = (Item(1), Item(2))
      weakA = a
      weakB = b
      let holder = Holder([a, b, a])
      weakHolder = holder
      let observer = holder.chain().do { _ in }.sync()
      a.value = 10
      withExtendedLifetime(observer) {}
    }
    #expect(weakHolder == nil)
    #expect(weakA == nil)
    #expect(weakB == nil)
  }

  @Test func removedAndReplacedElementsAreReleased() {
    weak var weakA: Item?
    weak var weakB: Item?
    weak var weakC: Item?
    let holder = Holder()
    do {
      let (a, b, c) = (Item(1), Item(2), Item(3))
      weakA = a
      weakB = b
      weakC = c
      holder.append(contentsOf: [a, b, c])
    }
    #expect(weakA != nil)
    holder.remove(at: 0)
    #expect(weakA == nil)
    holder.replace(Item(4), at: 0)
    #expect(weakB == nil)
    holder.set([])
    #expect(weakC == nil)
  }

  // MARK: - Reentrancy

  @Test func removingAnElementFromTheHandlerOfItsRelayedEventUsesTheCurrentIndexForTheNextPosition() {
    // `a` is at 0 and 2. Its broadcast reaches the relay of index 0 first;
    // the handler removes index 0, so the relay of the other position, which
    // runs next, finds `a` at index 1. The removal is sent after the relayed
    // event has reached every chain, and not to the chain that made it.
    let (a, b) = (Item(1), Item(2))
    let names = Names(["a": a, "b": b])
    let holder = Holder([a, b, a])
    let acting = Recorder<Holder.Event>()
    let watching = Recorder<Holder.Event>()
    let observers = [
      holder.chain().do { event in
        acting.append(event)
        if case .relayed(10, 0, _) = event { holder.remove(at: 0) }
      }.end(),
      holder.chain().do { watching.append($0) }.end(),
    ]
    a.value = 10
    a.value = 11
    #expect(
      watching.history.map(names.describe) == [
        "relayed 10 from a at 0", "removed a at 0", "relayed 10 from a at 1", "relayed 11 from a at 1",
      ]
    )
    #expect(
      acting.history.map(names.describe) == [
        "relayed 10 from a at 0", "relayed 10 from a at 1", "relayed 11 from a at 1",
      ]
    )
    #expect(names(holder.raw) == "[b, a]")
    for observer in observers { observer.invalidate() }
  }

  // MARK: - Concurrency

  @Test func relayedIndicesStayCurrentWhileOtherThreadsInsertAndRemove() {
    let broadcasters = 2
    let perBroadcaster = 3_000
    let mutators = 2
    let perMutator = 1_000
    let steady = (0..<4).map { _ in Notifier<Int>() }
    let holder = RelayableArrayHolder(steady)
    let received = Recorder<RelayableArrayHolder<Notifier<Int>>.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()

    race(threads: broadcasters + mutators) { thread in
      if thread < broadcasters {
        for index in 0..<perBroadcaster {
          steady[index % steady.count].notify(value: thread * perBroadcaster + index)
        }
      } else {
        // Each thread removes at 0 only after its own insert at 0, so the
        // array is never empty there; the steady elements shift back and forth.
        for _ in 0..<perMutator {
          holder.insert(Notifier<Int>(), at: 0)
          holder.remove(at: 0)
        }
      }
    }

    // Apply the events in order to the synced copy: every removed and every
    // relayed element must be the one at that index in the copy.
    var copy: [Notifier<Int>] = []
    var fetched = 0
    var inserted = 0
    var removed = 0
    var mismatches: [String] = []
    var relayedBySteady = Array(repeating: [Int](), count: steady.count)
    for (position, event) in received.history.enumerated() {
      switch event {
      case .fetched(let all):
        copy = all
        fetched += 1
      case .inserted(let index, let element):
        guard index >= 0, index <= copy.count else {
          mismatches.append("event \(position): insert at \(index) of \(copy.count)")
          continue
        }
        copy.insert(element, at: index)
        inserted += 1
      case .removed(let index, let element):
        guard copy.indices.contains(index), copy[index] === element else {
          mismatches.append("event \(position): removed element is not at \(index)")
          continue
        }
        copy.remove(at: index)
        removed += 1
      case .relayed(let value, let index, let element):
        guard copy.indices.contains(index), copy[index] === element else {
          mismatches.append("event \(position): relayed element is not at \(index)")
          continue
        }
        if let which = steady.firstIndex(where: { $0 === element }) {
          relayedBySteady[which].append(value)
        } else {
          mismatches.append("event \(position): relayed by an element that never broadcast")
        }
      case .set, .replaced, .moved:
        mismatches.append("event \(position): unexpected \(event)")
      }
    }

    #expect(mismatches == [])
    #expect(fetched == 1)
    #expect(inserted == mutators * perMutator)
    #expect(removed == mutators * perMutator)
    #expect(copy.count == steady.count)
    #expect(zip(copy, steady).allSatisfy { $0 === $1 })
    #expect(zip(holder.raw, steady).allSatisfy { $0 === $1 })
    // Every broadcast is relayed exactly once, and each element's values
    // from each thread arrive in the order that thread sent them.
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
