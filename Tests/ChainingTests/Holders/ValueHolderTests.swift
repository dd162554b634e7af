import Chaining
import Testing

@Suite struct ValueHolderTests {
  @Test func valueReadsWhatWasSet() {
    let holder = ValueHolder(1)
    #expect(holder.value == 1)
    holder.value = 5
    #expect(holder.value == 5)
    #expect(holder.fetchedValue() == 5)
  }

  @Test func settingBroadcastsTheNewValue() {
    let holder = ValueHolder("a")
    let received = Recorder<String>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.value = "b"
    holder.value = "c"
    #expect(received.history == ["b", "c"])
    withExtendedLifetime(observer) {}
  }

  @Test func settingAnEqualValueBroadcastsNothing() {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.value = 1
    holder.value = 2
    holder.value = 2
    #expect(received.history == [2])
    withExtendedLifetime(observer) {}
  }

  @Test func equalValuesAreDetectedInGenericCodeToo() {
    // Reached through an unconstrained generic, the holder still finds `==`.
    func makeHolder<T>(_ value: T) -> ValueHolder<T> { ValueHolder(value) }
    let holder = makeHolder("same")
    let received = Recorder<String>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.value = "same"
    holder.value = "new"
    #expect(received.history == ["new"])
    withExtendedLifetime(observer) {}
  }

  @Test func nonEquatableValuesBroadcastEverySet() {
    let holder = ValueHolder(Box(number: 1))
    let received = Recorder<Int>()
    let observer = holder.chain().map(\.number).do { received.append($0) }.end()
    holder.value = Box(number: 1)
    holder.value = Box(number: 1)
    #expect(received.history == [1, 1])
    withExtendedLifetime(observer) {}
  }

  @Test func syncDeliversTheCurrentValueFirst() {
    let holder = ValueHolder(3)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.sync()
    holder.value = 4
    #expect(received.history == [3, 4])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingSetsTheValue() {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: 9)
    #expect(holder.value == 9)
    #expect(received.history == [9])
    withExtendedLifetime(observer) {}
  }

  @Test func broadcastAndWritesFromTwoThreadsAreDeliveredOneAtATime() {
    // A holder claims its deliveries under its lock; a broadcast must take
    // the lock too, or it could deliver at the same time as a write.
    let holder = ValueHolder(-1)
    let received = Recorder<Int>()
    let inside = AtomicCounter()
    let overlaps = AtomicCounter()
    let observer = holder.chain().do { value in
      if inside.add(1) > 1 { overlaps.add(1) }
      received.append(value)
      inside.add(-1)
    }.end()
    let count = 100_000
    race(threads: 2) { index in
      for value in 1...count {
        if index == 0 { holder.value = value } else { holder.broadcast(value: -value) }
      }
    }
    #expect(overlaps.value == 0)
    let history = received.history
    #expect(history.count == 2 * count)
    #expect(history.filter { $0 > 0 } == Array(1...count))
    #expect(history.filter { $0 < 0 } == (1...count).map { -$0 })
    #expect(holder.value == count)
    withExtendedLifetime(observer) {}
  }
}

@Suite struct ValueHolderResendTests {
  @Test func resendSendsAnEqualValueAgain() {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.sync()
    holder.value = 1
    #expect(received.history == [1])
    holder.resend()
    #expect(received.history == [1, 1])
    withExtendedLifetime(observer) {}
  }

  @Test func resendRestoresAFieldTheUserEdited() {
    let age = ValueHolder(29)
    let field = ValueHolder(29)
    let pool = ObserverPool()
    age.chain().sendTo(field).sync().addTo(pool)
    field.value = 30
    age.value = 29
    #expect(field.value == 30)
    age.resend()
    #expect(field.value == 29)
  }

  @Test func resendIsInOrderWithTheWritesAroundIt() {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = holder.chain().do { value in
      received.append(value)
      if value == 1 {
        holder.resend()  // queued behind the write that is delivering
        holder.value = 2
      }
    }.end()
    let other = Recorder<Int>()
    let second = holder.chain().do { other.append($0) }.end()
    holder.value = 1
    // The first chain caused both and skips them; the second sees every one.
    #expect(received.history == [1])
    #expect(other.history == [1, 1, 2])
    withExtendedLifetime((observer, second)) {}
  }

  @Test func eventableAndRelayableHoldersResendCurrent() {
    let eventable = EventableValueHolder(5)
    let events = Recorder<EventableValueHolder<Int>.Event>()
    let first = eventable.chain().do { events.append($0) }.sync()
    eventable.resend()
    #expect(events.history == [.fetched(5), .current(5)])

    let element = ValueHolder(7)
    let relayable = RelayableValueHolder(element)
    let objects = Recorder<String>()
    let second = relayable.chain().do { event in
      switch event {
      case .fetched(let object): objects.append("fetched \(object === element)")
      case .current(let object): objects.append("current \(object === element)")
      case .relayed(let value): objects.append("relayed \(value)")
      }
    }.sync()
    relayable.resend()
    #expect(objects.history == ["fetched true", "current true"])
    withExtendedLifetime((first, second)) {}
  }
}

@Suite struct HolderEquatableTests {
  @Test func valueHoldersCompareTheirValues() {
    let a = ValueHolder(1)
    let b = ValueHolder(1)
    #expect(a == b)
    b.value = 2
    #expect(a != b)
    #expect(EventableValueHolder("x") == EventableValueHolder("x"))
    #expect(EventableValueHolder("x") != EventableValueHolder("y"))
  }

  @Test func relayableHoldersCompareTheirObjectsByEquality() {
    let first = RelayableValueHolder(ValueHolder(5))
    let second = RelayableValueHolder(ValueHolder(5))
    #expect(first == second)
    second.value = ValueHolder(6)
    #expect(first != second)
    typealias Event = RelayableValueHolder<ValueHolder<Int>>.Event
    #expect(Event.relayed(3) == Event.relayed(3))
    #expect(Event.current(ValueHolder(1)) == Event.current(ValueHolder(1)))
    #expect(Event.fetched(ValueHolder(1)) != Event.current(ValueHolder(1)))
  }

  @Test func relayableCollectionEventsAreEquatable() {
    typealias ArrayEvent = RelayableArrayHolder<ValueHolder<Int>>.Event
    #expect(ArrayEvent.inserted(at: 0, element: ValueHolder(1)) == .inserted(at: 0, element: ValueHolder(1)))
    #expect(ArrayEvent.relayed(2, at: 0, element: ValueHolder(1)) != .relayed(3, at: 0, element: ValueHolder(1)))
    typealias DictionaryEvent = RelayableDictionaryHolder<String, ValueHolder<Int>>.Event
    #expect(DictionaryEvent.removed(key: "a", value: ValueHolder(1)) == .removed(key: "a", value: ValueHolder(1)))
    #expect(DictionaryEvent.set([:]) != .fetched([:]))
  }
}
