import Chaining
import Testing

@Suite struct ChainTupleTests {
  // MARK: - Flow

  @Test func tupleSendsEachValueOnItsOwnSideWithTheOtherSideNil() {
    let name = Notifier<String>()
    let age = Notifier<Int>()
    let received = Recorder<(String?, Int?)>()
    let observer = name.chain().tuple(age.chain()).do { received.append($0) }.end()
    name.notify(value: "Ann")
    age.notify(value: 30)
    age.notify(value: 31)
    name.notify(value: "Bob")
    #expect(received.history.map(\.0) == ["Ann", nil, nil, "Bob"])
    #expect(received.history.map(\.1) == [nil, 30, 31, nil])
    withExtendedLifetime(observer) {}
  }

  @Test func tupleOfATupleNestsThePairOnTheFirstSide() {
    let first = Notifier<Int>()
    let second = Notifier<String>()
    let third = Notifier<Bool>()
    let received = Recorder<String>()
    let chain = first.chain().tuple(second.chain()).tuple(third.chain())
    let typed: Chain<((Int?, String?)?, Bool?), Notifier<Int>> = chain
    let observer = typed.map { value in
      let flag = value.1.map { "\($0)" } ?? "-"
      return "\(value.0?.0 ?? -1) \(value.0?.1 ?? "-") \(flag)"
    }.do { received.append($0) }.end()
    third.notify(value: true)
    second.notify(value: "b")
    first.notify(value: 1)
    #expect(received.history == ["-1 - true", "-1 b -", "1 - -"])
    withExtendedLifetime(observer) {}
  }

  @Test func tupleCarriesOptionalValuesAsNestedOptionals() {
    let maybe = Notifier<Int?>()
    let other = Notifier<String>()
    let received = Recorder<(Int??, String?)>()
    let observer = maybe.chain().tuple(other.chain()).do { received.append($0) }.end()
    maybe.notify(value: nil)
    other.notify(value: "x")
    // A nil value is sent as `.some(nil)`: the side is set, its value is nil.
    #expect(received.history.map { $0.0 == .some(nil) } == [true, false])
    #expect(received.history.map { $0.0 == nil } == [false, true])
    #expect(received.history.map(\.1) == [nil, "x"])
    withExtendedLifetime(observer) {}
  }

  // MARK: - sync and end

  @Test func syncOfTwoHoldersSendsOnePairPerHolderInSourceOrder() {
    let name = ValueHolder("Ann")
    let age = ValueHolder(30)
    let received = Recorder<(String?, Int?)>()
    let observer = name.chain().tuple(age.chain()).do { received.append($0) }.sync()
    #expect(received.history.map(\.0) == ["Ann", nil])
    #expect(received.history.map(\.1) == [nil, 30])
    age.value = 31
    #expect(received.history.map(\.0) == ["Ann", nil, nil])
    #expect(received.history.map(\.1) == [nil, 30, 31])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOfAHolderTupledWithANotifierSendsOnlyTheHoldersSide() {
    let name = ValueHolder("Ann")
    let age = Notifier<Int>()
    let received = Recorder<(String?, Int?)>()
    let observer = name.chain().tuple(age.chain()).do { received.append($0) }.sync()
    #expect(received.history.map(\.0) == ["Ann"])
    #expect(received.history.map(\.1) == [nil])
    age.notify(value: 30)
    #expect(received.history.map(\.0) == ["Ann", nil])
    #expect(received.history.map(\.1) == [nil, 30])
    withExtendedLifetime(observer) {}
  }

  @Test func endSendsNothingUntilASourceBroadcasts() {
    let name = ValueHolder("Ann")
    let age = ValueHolder(30)
    let received = Recorder<(String?, Int?)>()
    let observer = name.chain().tuple(age.chain()).do { received.append($0) }.end()
    #expect(received.count == 0)
    age.value = 31
    #expect(received.history.map(\.0) == [nil])
    #expect(received.history.map(\.1) == [31])
    withExtendedLifetime(observer) {}
  }

  // MARK: - Lifetime

  @Test func invalidatedObserverReceivesNothingFromEitherSide() {
    let name = Notifier<String>()
    let age = Notifier<Int>()
    let received = Recorder<(String?, Int?)>()
    let observer = name.chain().tuple(age.chain()).do { received.append($0) }.end()
    name.notify(value: "Ann")
    observer.invalidate()
    name.notify(value: "Bob")
    age.notify(value: 30)
    #expect(received.history.map(\.0) == ["Ann"])
    #expect(received.history.map(\.1) == [nil])
    #expect(observer.isInvalidated)
  }

  @Test func secondSourceDyingDoesNotBreakTheFirst() {
    let name = ValueHolder("Ann")
    weak var weakAge: Notifier<Int>?
    var age: Notifier<Int>? = Notifier<Int>()
    weakAge = age
    let received = Recorder<(String?, Int?)>()
    let observer = name.chain().tuple(age!.chain()).do { received.append($0) }.sync()
    age?.notify(value: 30)
    age = nil
    #expect(weakAge == nil)
    name.value = "Bob"
    #expect(received.history.map(\.0) == ["Ann", nil, "Bob"])
    #expect(received.history.map(\.1) == [nil, 30, nil])
    #expect(!observer.isInvalidated)
    withExtendedLifetime(observer) {}
  }

  @Test func tupleDoesNotRetainItsSources() {
    weak var weakName: ValueHolder<String>?
    weak var weakAge: Notifier<Int>?
    var observer: Observer?
    do {
      let name = ValueHolder("Ann")
      let age = Notifier<Int>()
      weakName = name
      weakAge = age
      observer = name.chain().tuple(age.chain()).sync()
    }
    #expect(weakName == nil)
    #expect(weakAge == nil)
    #expect(observer?.isInvalidated == false)
  }

  @Test func invalidatingReleasesEveryClosureAndEveryRetainedSource() {
    expectJoinedChainReleasesEverythingOnInvalidate(
      join: { $0.tuple($1) },
      describe: { "\($0.0.map(String.init) ?? "-") \($0.1.map(String.init) ?? "-")" },
      expected: ["1 -", "- 2"]
    )
  }

  // MARK: - Reentrancy

  @Test func handlerSendingIntoBothSourcesReachesOnlyTheOtherChains() {
    let number = Notifier<Int>()
    let word = Notifier<String>()
    let log = Recorder<String>()
    let observers = [
      number.chain().tuple(word.chain()).do { pair in
        log.append("tuple \(pair.0 ?? -1) \(pair.1 ?? "-")")
        if pair.0 == 1 {
          number.notify(value: 2)
          word.notify(value: "b")
        }
      }.end(),
      number.chain().do { log.append("number \($0)") }.end(),
      word.chain().do { log.append("word \($0)") }.end(),
    ]
    number.notify(value: 1)
    #expect(log.history == ["tuple 1 -", "word b", "number 1", "number 2"])
    word.notify(value: "c")
    #expect(log.history == ["tuple 1 -", "word b", "number 1", "number 2", "tuple -1 c", "word c"])
    withExtendedLifetime(observers) {}
  }

  // MARK: - Concurrency

  @Test func concurrentBroadcastsToBothSourcesAllArriveOnTheirSideInPerThreadOrder() {
    let perThread = 5_000
    let numbers = Notifier<Int>()
    let words = Notifier<String>()
    let received = Recorder<(Int?, String?)>()
    let observer = numbers.chain().tuple(words.chain()).do { received.append($0) }.end()

    race(threads: 4) { thread in
      for index in 0..<perThread {
        if thread < 2 {
          numbers.notify(value: thread * perThread + index)
        } else {
          words.notify(value: "\(thread * perThread + index)")
        }
      }
    }

    let history = received.history
    #expect(history.count == 4 * perThread)
    #expect(history.allSatisfy { ($0.0 == nil) != ($0.1 == nil) })
    let values = history.map { $0.0 ?? Int($0.1!)! }
    for thread in 0..<4 {
      let fromThread = values.filter { $0 / perThread == thread }
      #expect(fromThread == Array(thread * perThread..<(thread + 1) * perThread))
    }
    withExtendedLifetime(observer) {}
  }
}
