import Testing

@testable import Chaining

private typealias Holder = RelayableValueHolder<ValueHolder<Int>>

/// Writes `event` as text, naming the object it carries by identity.
private func describe(_ event: Holder.Event, _ names: KeyValuePairs<String, ValueHolder<Int>>) -> String {
  func name(_ object: ValueHolder<Int>) -> String {
    names.first { $0.value === object }?.key ?? "unknown"
  }
  switch event {
  case .fetched(let object): return "fetched \(name(object))"
  case .current(let object): return "current \(name(object))"
  case .relayed(let value): return "relayed \(value)"
  }
}

/// Whether any chain is subscribed to `sender`: the holder's relay is one.
private func isObserved(_ sender: some Chaining.Sendable) -> Bool {
  sender._senderCore(creating: false)?.hasObservers ?? false
}

@Suite struct RelayableValueHolderTests {
  // MARK: - Fetched and current

  @Test func valueReadsTheHeldObject() {
    let first = ValueHolder(1)
    let second = ValueHolder(2)
    let holder = Holder(first)
    #expect(holder.value === first)
    holder.value = second
    #expect(holder.value === second)
  }

  @Test func syncSendsTheHeldObjectAsFetched() {
    let object = ValueHolder(1)
    let holder = Holder(object)
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()
    // Only the object: the object's own current value is not relayed.
    #expect(received.history.map { describe($0, ["object": object]) } == ["fetched object"])
    withExtendedLifetime(observer) {}
  }

  @Test func endSendsNothingUntilSomethingHappens() {
    let object = ValueHolder(1)
    let holder = Holder(object)
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    #expect(received.count == 0)
    object.value = 2
    #expect(received.history.map { describe($0, ["object": object]) } == ["relayed 2"])
    withExtendedLifetime(observer) {}
  }

  // MARK: - Relaying

  @Test func theHeldObjectsBroadcastsArriveAsRelayed() {
    let object = ValueHolder(1)
    let holder = Holder(object)
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()
    object.value = 2
    object.value = 3
    #expect(
      received.history.map { describe($0, ["object": object]) } == ["fetched object", "relayed 2", "relayed 3"]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func replacingTheObjectSendsCurrentAndRelaysOnlyTheNewObject() {
    let first = ValueHolder(1)
    let second = ValueHolder(10)
    let holder = Holder(first)
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()
    holder.value = second
    first.value = 2  // no longer held
    second.value = 11
    #expect(
      received.history.map { describe($0, ["first": first, "second": second]) } == [
        "fetched first", "current second", "relayed 11",
      ]
    )
    // The relay on the old object is gone, not just ignored.
    #expect(!isObserved(first))
    #expect(isObserved(second))
    withExtendedLifetime(observer) {}
  }

  @Test func puttingBackAnEarlierObjectRelaysItAgainOnce() {
    let first = ValueHolder(1)
    let second = ValueHolder(10)
    let holder = Holder(first)
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.value = second
    holder.value = first
    first.value = 2
    second.value = 11
    #expect(
      received.history.map { describe($0, ["first": first, "second": second]) } == [
        "current second", "current first", "relayed 2",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func settingTheSameInstanceSendsNothingAndKeepsRelayingOnce() {
    let object = ValueHolder(1)
    let holder = Holder(object)
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.value = object
    object.value = 2
    #expect(received.history.map { describe($0, ["object": object]) } == ["relayed 2"])
    withExtendedLifetime(observer) {}
  }

  @Test func anEqualButDistinctObjectIsAReplacement() {
    // Objects are compared by identity, not by their values.
    let first = ValueHolder(1)
    let twin = ValueHolder(1)
    let holder = Holder(first)
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.value = twin
    #expect(received.history.map { describe($0, ["first": first, "twin": twin]) } == ["current twin"])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingHoldsTheObjectAndSendsCurrent() {
    let first = ValueHolder(1)
    let second = ValueHolder(10)
    let holder = Holder(first)
    let received = Recorder<Holder.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: second)
    holder.receive(value: second)
    first.value = 2
    second.value = 11
    #expect(holder.value === second)
    #expect(
      received.history.map { describe($0, ["first": first, "second": second]) } == [
        "current second", "relayed 11",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func fetchedValueIsFetchedWithTheHeldObject() {
    let first = ValueHolder(1)
    let second = ValueHolder(2)
    let holder = Holder(first)
    holder.value = second
    #expect(describe(holder.fetchedValue(), ["first": first, "second": second]) == "fetched second")
  }

  // MARK: - Lifetime

  @Test func holderIsReleasedWhileItsObjectLivesOn() {
    let object = ValueHolder(1)
    let received = Recorder<Int>()
    weak var weakHolder: Holder?
    var observer: Observer?
    do {
      let holder = Holder(object)
      weakHolder = holder
      observer = holder.chain().do { event in
        if case .relayed(let value) = event { received.append(value) }
      }.end()
      object.value = 2
    }
    #expect(weakHolder == nil)
    #expect(!isObserved(object))
    object.value = 3  // the holder is gone: no crash, nothing relayed
    #expect(received.history == [2])
    #expect(observer?.isInvalidated == false)
  }

  @Test func heldObjectIsReleasedWithTheHolder() {
    weak var weakObject: ValueHolder<Int>?
    weak var weakHolder: Holder?
    do {
      let object = ValueHolder(1)
      weakObject = object
      let holder = Holder(object)
      weakHolder = holder
      let observer = holder.chain().do { _ in }.sync()
      object.value = 2
      withExtendedLifetime(observer) {}
    }
    #expect(weakHolder == nil)
    #expect(weakObject == nil)
  }

  @Test func replacedObjectIsReleased() {
    weak var weakFirst: ValueHolder<Int>?
    let holder: Holder
    do {
      let first = ValueHolder(1)
      weakFirst = first
      holder = Holder(first)
    }
    #expect(weakFirst != nil)
    holder.value = ValueHolder(2)
    #expect(weakFirst == nil)
  }

  // MARK: - Reentrancy

  @Test func replacingTheObjectFromTheHandlerOfItsRelayedEventStopsRelayingIt() {
    // The replacement is sent after the relayed event has reached every
    // chain, and not to the chain that made it.
    let first = ValueHolder(1)
    let second = ValueHolder(10)
    let names: KeyValuePairs = ["first": first, "second": second]
    let holder = Holder(first)
    let acting = Recorder<Holder.Event>()
    let watching = Recorder<Holder.Event>()
    let observers = [
      holder.chain().do { event in
        acting.append(event)
        if case .relayed(2) = event { holder.value = second }
      }.end(),
      holder.chain().do { watching.append($0) }.end(),
    ]
    first.value = 2
    first.value = 3
    second.value = 11
    #expect(watching.history.map { describe($0, names) } == ["relayed 2", "current second", "relayed 11"])
    #expect(acting.history.map { describe($0, names) } == ["relayed 2", "relayed 11"])
    #expect(!isObserved(first))
    for observer in observers { observer.invalidate() }
  }

  // MARK: - Concurrency

  @Test func relayedValuesAlwaysComeFromTheObjectHeldAtThatPointWhileAnotherThreadReplacesIt() {
    let objects = (0..<200).map { _ in Notifier<Int>() }
    let holder = RelayableValueHolder(objects[0])
    let received = Recorder<RelayableValueHolder<Notifier<Int>>.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()
    let broadcasts = 20_000
    race(threads: 3) { thread in
      if thread == 0 {
        for object in objects.dropFirst() { holder.value = object }
      } else {
        // Value `v` is broadcast by `objects[v % objects.count]`.
        for value in stride(from: thread - 1, to: broadcasts, by: 2) {
          objects[value % objects.count].notify(value: value)
        }
      }
    }
    // Replay the events: each relayed value must come from the object last
    // fetched or made current before it.
    var held: Notifier<Int>?
    var currents = 0
    var relayed = 0
    var strays: [Int] = []
    for event in received.history {
      switch event {
      case .fetched(let object):
        held = object
      case .current(let object):
        held = object
        currents += 1
      case .relayed(let value):
        relayed += 1
        if objects[value % objects.count] !== held { strays.append(value) }
      }
    }
    #expect(strays == [])
    #expect(currents == objects.count - 1)
    #expect(relayed <= broadcasts)
    #expect(held === objects.last)
    #expect(holder.value === objects.last)
    // Once the threads are done, the last object relays and the others do not.
    let before = received.count
    objects[0].notify(value: -1)
    objects.last?.notify(value: -2)
    #expect(received.count == before + 1)
    if case .relayed(let value) = received.history.last {
      #expect(value == -2)
    } else {
      Issue.record("expected the last event to be relayed -2")
    }
    withExtendedLifetime(observer) {}
  }
}
