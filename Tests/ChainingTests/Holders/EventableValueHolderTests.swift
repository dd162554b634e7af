import Chaining
import Testing

@Suite struct EventableValueHolderTests {
  // MARK: - Fetched and current

  @Test func syncSendsTheCurrentValueAsFetched() {
    let holder = EventableValueHolder(3)
    let received = Recorder<EventableValueHolder<Int>.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()
    #expect(received.history == [.fetched(3)])
    withExtendedLifetime(observer) {}
  }

  @Test func settingSendsTheNewValueAsCurrent() {
    let holder = EventableValueHolder("a")
    let received = Recorder<EventableValueHolder<String>.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()
    holder.value = "b"
    holder.value = "c"
    #expect(received.history == [.fetched("a"), .current("b"), .current("c")])
    #expect(holder.value == "c")
    withExtendedLifetime(observer) {}
  }

  @Test func endSendsNothingUntilTheValueIsSet() {
    let holder = EventableValueHolder(1)
    let received = Recorder<EventableValueHolder<Int>.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    #expect(received.history == [])
    holder.value = 2
    #expect(received.history == [.current(2)])
    withExtendedLifetime(observer) {}
  }

  @Test func fetchedValueIsFetchedWithTheLatestValue() {
    let holder = EventableValueHolder(1)
    holder.value = 7
    #expect(holder.fetchedValue() == .fetched(7))
  }

  @Test func eventValueIsTheValueWhicheverWayItCame() {
    #expect(EventableValueHolder<Int>.Event.fetched(4).value == 4)
    #expect(EventableValueHolder<Int>.Event.current(5).value == 5)
    // Also for values that are not `Equatable`, where the events cannot be compared.
    #expect(EventableValueHolder<Box>.Event.fetched(Box(number: 6)).value.number == 6)
    #expect(EventableValueHolder<Box>.Event.current(Box(number: 7)).value.number == 7)
  }

  // MARK: - Equality

  @Test func settingAnEqualValueSendsNothing() {
    let holder = EventableValueHolder(1)
    let received = Recorder<EventableValueHolder<Int>.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.value = 1
    holder.value = 2
    holder.value = 2
    #expect(received.history == [.current(2)])
    withExtendedLifetime(observer) {}
  }

  @Test func equalValuesAreDetectedInGenericCodeToo() {
    // Made through an unconstrained generic, the holder still finds `==` at run time.
    func makeHolder<T>(_ value: T) -> EventableValueHolder<T> { EventableValueHolder(value) }
    let holder = makeHolder("same")
    let received = Recorder<EventableValueHolder<String>.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.value = "same"
    holder.value = "new"
    holder.value = "new"
    #expect(received.history == [.current("new")])
    withExtendedLifetime(observer) {}
  }

  @Test func nonEquatableValuesSendEverySet() {
    let holder = EventableValueHolder(Box(number: 1))
    let received = Recorder<String>()
    let observer = holder.chain().do { event in
      switch event {
      case .fetched(let box): received.append("fetched \(box.number)")
      case .current(let box): received.append("current \(box.number)")
      }
    }.sync()
    holder.value = Box(number: 1)
    holder.value = Box(number: 1)
    #expect(received.history == ["fetched 1", "current 1", "current 1"])
    withExtendedLifetime(observer) {}
  }

  // MARK: - Receiving

  @Test func receivingSetsTheValueAndSendsCurrent() {
    let holder = EventableValueHolder(0)
    let received = Recorder<EventableValueHolder<Int>.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: 9)
    holder.receive(value: 9)
    #expect(holder.value == 9)
    #expect(received.history == [.current(9)])
    withExtendedLifetime(observer) {}
  }

  @Test func chainSentToTheHolderSetsItsValue() {
    let source = ValueHolder(4)
    let holder = EventableValueHolder(0)
    let received = Recorder<EventableValueHolder<Int>.Event>()
    let observer = holder.chain().do { received.append($0) }.end()
    let binding = source.chain().sendTo(holder).sync()
    source.value = 5
    #expect(holder.value == 5)
    #expect(received.history == [.current(4), .current(5)])
    _ = (observer, binding)
  }

  // MARK: - Lifetime

  @Test func holderIsReleasedWhileItsObserverLives() {
    weak var weakHolder: EventableValueHolder<Int>?
    let received = Recorder<EventableValueHolder<Int>.Event>()
    var observer: Observer?
    do {
      let holder = EventableValueHolder(1)
      weakHolder = holder
      observer = holder.chain().do { received.append($0) }.sync()
      holder.value = 2
    }
    #expect(weakHolder == nil)
    #expect(received.history == [.fetched(1), .current(2)])
    #expect(observer?.isInvalidated == false)
    observer?.invalidate()
    #expect(observer?.isInvalidated == true)
  }

  @Test func replacedValueIsReleased() {
    weak var weakToken: Token?
    let holder: EventableValueHolder<Token>
    do {
      let token = Token()
      weakToken = token
      holder = EventableValueHolder(token)
    }
    #expect(weakToken != nil)
    holder.value = Token()
    #expect(weakToken == nil)
  }

  // MARK: - Reentrancy

  @Test func settingTheHolderFromItsOwnHandlerIsSentAfterTheCurrentEvent() {
    let holder = EventableValueHolder(0)
    let first = Recorder<EventableValueHolder<Int>.Event>()
    let second = Recorder<EventableValueHolder<Int>.Event>()
    let observers = [
      holder.chain().do { event in
        first.append(event)
        if event == .current(1) { holder.value = 2 }
      }.end(),
      holder.chain().do { second.append($0) }.end(),
    ]
    holder.value = 1
    // The writing chain does not receive its own write; the other sees both, in order.
    #expect(first.history == [.current(1)])
    #expect(second.history == [.current(1), .current(2)])
    #expect(holder.value == 2)
    withExtendedLifetime(observers) {}
  }

  // MARK: - Concurrency

  @Test func concurrentSetsEachSendOneCurrentEventAndTheLastIsTheHoldersValue() {
    let threads = 4
    let perThread = 2_500
    let holder = EventableValueHolder(-1)
    let received = Recorder<EventableValueHolder<Int>.Event>()
    let observer = holder.chain().do { received.append($0) }.sync()
    race(threads: threads) { thread in
      for index in 0..<perThread {
        holder.value = thread * 10_000 + index
      }
    }
    let history = received.history
    // Every write differs from the value before it, so each sends exactly one event.
    #expect(history.count == 1 + threads * perThread)
    #expect(history.first == .fetched(-1))
    var currents: [Int] = []
    for case .current(let value) in history.dropFirst() { currents.append(value) }
    #expect(currents.count == threads * perThread)
    #expect(history.last?.value == holder.value)
    for thread in 0..<threads {
      let fromThread = currents.filter { $0 / 10_000 == thread }
      #expect(fromThread == Array(thread * 10_000..<thread * 10_000 + perThread))
    }
    withExtendedLifetime(observer) {}
  }
}
