import Chaining
import Testing

@Suite struct ChainCombineTests {
  // MARK: - Flow

  @Test func combineSendsNothingUntilBothSidesHaveSentAValue() {
    let name = Notifier<String>()
    let age = Notifier<Int>()
    let received = Recorder<(String, Int)>()
    let observer = name.chain().combine(age.chain()).do { received.append($0) }.end()
    name.notify(value: "Ann")
    name.notify(value: "Bob")
    #expect(received.count == 0)
    age.notify(value: 30)
    #expect(received.history.map(\.0) == ["Bob"])
    #expect(received.history.map(\.1) == [30])
    withExtendedLifetime(observer) {}
  }

  @Test func combineSendsThePairOfLatestValuesOnEveryChangeOfEitherSide() {
    let name = Notifier<String>()
    let age = Notifier<Int>()
    let received = Recorder<(String, Int)>()
    let observer = name.chain().combine(age.chain()).do { received.append($0) }.end()
    name.notify(value: "Ann")
    age.notify(value: 30)
    age.notify(value: 31)
    name.notify(value: "Bob")
    name.notify(value: "Bob")
    #expect(received.history.map(\.0) == ["Ann", "Ann", "Bob", "Bob"])
    #expect(received.history.map(\.1) == [30, 31, 31, 31])
    withExtendedLifetime(observer) {}
  }

  @Test func combineOfThreeChainsSendsFlatTriples() {
    let text = ValueHolder("a")
    let number = ValueHolder(1)
    let ratio = ValueHolder(0.5)
    let received = Recorder<(String, Int, Double)>()
    let observer = text.chain().combine(number.chain()).combine(ratio.chain()).do { received.append($0) }.sync()
    #expect(received.history.elementsEqual([("a", 1, 0.5)], by: ==))
    number.value = 2
    ratio.value = 1.5
    text.value = "b"
    let expected: [(String, Int, Double)] = [("a", 1, 0.5), ("a", 2, 0.5), ("a", 2, 1.5), ("b", 2, 1.5)]
    #expect(received.history.elementsEqual(expected, by: ==))
    withExtendedLifetime(observer) {}
  }

  @Test func combineOfFourChainsSendsFlatQuadruples() {
    let text = ValueHolder("a")
    let number = ValueHolder(1)
    let ratio = ValueHolder(0.5)
    let flag = ValueHolder(false)
    let received = Recorder<(String, Int, Double, Bool)>()
    let observer = text.chain().combine(number.chain()).combine(ratio.chain()).combine(flag.chain())
      .do { received.append($0) }.sync()
    #expect(received.history.elementsEqual([("a", 1, 0.5, false)], by: ==))
    flag.value = true
    text.value = "b"
    let expected: [(String, Int, Double, Bool)] = [("a", 1, 0.5, false), ("a", 1, 0.5, true), ("b", 1, 0.5, true)]
    #expect(received.history.elementsEqual(expected, by: ==))
    withExtendedLifetime(observer) {}
  }

  @Test func combineOfFiveChainsSendsFlatQuintuples() {
    let text = ValueHolder("a")
    let number = ValueHolder(1)
    let ratio = ValueHolder(0.5)
    let flag = ValueHolder(false)
    let letter = ValueHolder<Character>("x")
    let received = Recorder<(String, Int, Double, Bool, Character)>()
    let observer = text.chain().combine(number.chain()).combine(ratio.chain()).combine(flag.chain())
      .combine(letter.chain()).do { received.append($0) }.sync()
    #expect(received.history.elementsEqual([("a", 1, 0.5, false, "x")], by: ==))
    letter.value = "y"
    number.value = 2
    let expected: [(String, Int, Double, Bool, Character)] = [
      ("a", 1, 0.5, false, "x"), ("a", 1, 0.5, false, "y"), ("a", 2, 0.5, false, "y"),
    ]
    #expect(received.history.elementsEqual(expected, by: ==))
    withExtendedLifetime(observer) {}
  }

  @Test func combineFlattensWithoutATypeContext() {
    let text = ValueHolder("a")
    let number = ValueHolder(1)
    let ratio = ValueHolder(0.5)
    let flag = ValueHolder(true)
    let letter = ValueHolder<Character>("x")
    // Each step is typed by the compiler alone; the annotations check what it chose.
    let pair = text.chain().combine(number.chain())
    let typedPair: Chain<(String, Int), ValueHolder<String>> = pair
    let triple = typedPair.combine(ratio.chain())
    let typedTriple: Chain<(String, Int, Double), ValueHolder<String>> = triple
    let quadruple = typedTriple.combine(flag.chain())
    let typedQuadruple: Chain<(String, Int, Double, Bool), ValueHolder<String>> = quadruple
    let quintuple = typedQuadruple.combine(letter.chain())
    let typedQuintuple: Chain<(String, Int, Double, Bool, Character), ValueHolder<String>> = quintuple
    let received = Recorder<String>()
    let observer = typedQuintuple.map { "\($0) \($1) \($2) \($3) \($4)" }.do { received.append($0) }.sync()
    #expect(received.history == ["a 1 0.5 true x"])
    withExtendedLifetime(observer) {}
  }

  @Test func eachFinishedChainKeepsItsOwnLatestValues() {
    let left = Notifier<Int>()
    let right = Notifier<String>()
    let early = Recorder<(Int, String)>()
    let late = Recorder<(Int, String)>()
    let earlyObserver = left.chain().combine(right.chain()).do { early.append($0) }.end()
    left.notify(value: 1)
    let lateObserver = left.chain().combine(right.chain()).do { late.append($0) }.end()
    right.notify(value: "a")
    #expect(early.history.map(\.0) == [1])
    #expect(early.history.map(\.1) == ["a"])
    #expect(late.count == 0)
    left.notify(value: 2)
    #expect(early.history.map(\.0) == [1, 2])
    #expect(late.history.map(\.0) == [2])
    #expect(late.history.map(\.1) == ["a"])
    _ = (earlyObserver, lateObserver)
  }

  // MARK: - sync and end

  @Test func syncOfTwoHoldersSendsExactlyOnePair() {
    let name = ValueHolder("Ann")
    let age = ValueHolder(30)
    let received = Recorder<(String, Int)>()
    let observer = name.chain().combine(age.chain()).do { received.append($0) }.sync()
    #expect(received.history.map(\.0) == ["Ann"])
    #expect(received.history.map(\.1) == [30])
    age.value = 31
    #expect(received.history.map(\.0) == ["Ann", "Ann"])
    #expect(received.history.map(\.1) == [30, 31])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOfAHolderCombinedWithANotifierSendsNothingUntilTheNotifierSends() {
    let name = ValueHolder("Ann")
    let age = Notifier<Int>()
    let received = Recorder<(String, Int)>()
    let observer = name.chain().combine(age.chain()).do { received.append($0) }.sync()
    #expect(received.count == 0)
    age.notify(value: 30)
    #expect(received.history.map(\.0) == ["Ann"])
    #expect(received.history.map(\.1) == [30])
    withExtendedLifetime(observer) {}
  }

  @Test func endSendsNothingUntilBothSourcesHaveBroadcast() {
    let name = ValueHolder("Ann")
    let age = ValueHolder(30)
    let received = Recorder<(String, Int)>()
    let observer = name.chain().combine(age.chain()).do { received.append($0) }.end()
    name.value = "Bob"
    #expect(received.count == 0)
    age.value = 31
    #expect(received.history.map(\.0) == ["Bob"])
    #expect(received.history.map(\.1) == [31])
    withExtendedLifetime(observer) {}
  }

  // MARK: - Lifetime

  @Test func invalidatedObserverReceivesNothingFromEitherSide() {
    let name = ValueHolder("Ann")
    let age = ValueHolder(30)
    let received = Recorder<(String, Int)>()
    let observer = name.chain().combine(age.chain()).do { received.append($0) }.sync()
    observer.invalidate()
    name.value = "Bob"
    age.value = 31
    #expect(received.history.map(\.0) == ["Ann"])
    #expect(received.history.map(\.1) == [30])
    #expect(observer.isInvalidated)
  }

  @Test func secondSourceDyingKeepsItsLatestValueInLaterPairs() {
    let name = ValueHolder("Ann")
    weak var weakAge: Notifier<Int>?
    var age: Notifier<Int>? = Notifier<Int>()
    weakAge = age
    let received = Recorder<(String, Int)>()
    let observer = name.chain().combine(age!.chain()).do { received.append($0) }.sync()
    age?.notify(value: 30)
    age = nil
    #expect(weakAge == nil)
    name.value = "Bob"
    #expect(received.history.map(\.0) == ["Ann", "Bob"])
    #expect(received.history.map(\.1) == [30, 30])
    #expect(!observer.isInvalidated)
    withExtendedLifetime(observer) {}
  }

  @Test func combineDoesNotRetainItsSources() {
    weak var weakName: ValueHolder<String>?
    weak var weakAge: ValueHolder<Int>?
    var observer: Observer?
    do {
      let name = ValueHolder("Ann")
      let age = ValueHolder(30)
      weakName = name
      weakAge = age
      observer = name.chain().combine(age.chain()).sync()
    }
    #expect(weakName == nil)
    #expect(weakAge == nil)
    #expect(observer?.isInvalidated == false)
  }

  @Test func invalidatingReleasesEveryClosureAndEveryRetainedSource() {
    expectJoinedChainReleasesEverythingOnInvalidate(
      join: { $0.combine($1) },
      describe: { "\($0.0) \($0.1)" },
      expected: ["1 2"]
    )
  }

  // MARK: - Reentrancy

  @Test func handlerWritingBothSourcesDoesNotSeeItsOwnWrites() {
    let number = ValueHolder(1)
    let word = ValueHolder("a")
    let log = Recorder<String>()
    let observers = [
      number.chain().combine(word.chain()).do { pair in
        log.append("pair \(pair.0) \(pair.1)")
        if pair == (2, "a") {
          word.value = "b"
          number.value = 3
        }
      }.sync(),
      number.chain().do { log.append("number \($0)") }.end(),
      word.chain().do { log.append("word \($0)") }.end(),
    ]
    number.value = 2
    #expect(number.value == 3)
    #expect(word.value == "b")
    // Changed by glitch-free propagation (#24): the pair is sent at the end
    // of the wave, after `number`'s other chain saw 2. Then `word` is idle,
    // so "b" is delivered at once; 3 was queued behind the wave's delivery
    // of 2. The combined chain caused both writes and skips them.
    #expect(log.history == ["pair 1 a", "number 2", "pair 2 a", "word b", "number 3"])
    word.value = "c"
    // The skipped 3 never became the combined chain's latest number; the
    // pair comes after the wave's other delivery (#24).
    #expect(log.history == ["pair 1 a", "number 2", "pair 2 a", "word b", "number 3", "word c", "pair 2 c"])
    withExtendedLifetime(observers) {}
  }

  @Test func anotherChainWritingTheSecondSourceDuringADeliveryUpdatesThePair() {
    let number = ValueHolder(1)
    let word = ValueHolder("a")
    let received = Recorder<(Int, String)>()
    let observers = [
      number.chain().combine(word.chain()).do { received.append($0) }.sync(),
      number.chain().do { word.value = "n\($0)" }.end(),
    ]
    number.value = 2
    // Changed by glitch-free propagation (#24): the write of `word` is part
    // of the wave of `number`, so the combine sends once, with both new
    // values; `(2, "a")` was half of that change and is no longer sent.
    #expect(received.history.map(\.0) == [1, 2])
    #expect(received.history.map(\.1) == ["a", "n2"])
    withExtendedLifetime(observers) {}
  }

  // MARK: - Concurrency

  @Test func concurrentWritesToBothSidesEndOnThePairOfLatestValues() {
    let perThread = 2_500
    let left = ValueHolder(-1)
    let right = ValueHolder(-2)
    let received = Recorder<(Int, Int)>()
    let observer = left.chain().combine(right.chain()).do { received.append($0) }.sync()

    race(threads: 4) { thread in
      let holder = thread < 2 ? left : right
      for index in 0..<perThread {
        holder.value = thread * perThread + index
      }
    }

    let history = received.history
    // Changed by glitch-free propagation (#24): one pair for the sync, then
    // at most one for each of the 4 × perThread writes. A write that reaches
    // the chain while another thread runs it is run by that thread, inside
    // that thread's wave, so the two writes may send one pair between them.
    #expect(history.count <= 1 + 4 * perThread)
    #expect(history.count >= 2)
    #expect(history.last.map { [$0.0, $0.1] } == [left.value, right.value])
    // Each side's own values appear at most once each, in each thread's order.
    let lefts = removingRepeats(history.map(\.0))
    let rights = removingRepeats(history.map(\.1))
    for thread in 0..<4 {
      let side = thread < 2 ? lefts : rights
      let fromThread = side.filter { $0 >= 0 && $0 / perThread == thread }
      #expect(fromThread == fromThread.sorted())
      #expect(Set(fromThread).count == fromThread.count)
    }
    withExtendedLifetime(observer) {}
  }
}

/// `values` without the elements equal to the one before them.
private func removingRepeats(_ values: [Int]) -> [Int] {
  var result: [Int] = []
  for value in values where value != result.last {
    result.append(value)
  }
  return result
}

extension ChainCombineTests {
  @Test func syncOnACombineStartingFromANotifierWaitsForItsFirstValue() {
    let taps = Notifier<Int>()
    let name = ValueHolder("Ann")
    let received = Recorder<String>()
    let observer = taps.chain().combine(name.chain()).do { received.append("\($0) \($1)") }.sync()
    #expect(received.history.isEmpty)
    taps.notify(value: 1)
    name.value = "Bob"
    #expect(received.history == ["1 Ann", "1 Bob"])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOnAFiveWayCombineWhoseOnlyFetchableSourceIsInTheMiddle() {
    let a = Notifier<Int>()
    let b = Notifier<Int>()
    let c = ValueHolder(3)
    let d = Notifier<Int>()
    let e = Notifier<Int>()
    let received = Recorder<[Int]>()
    let observer = a.chain().combine(b.chain()).combine(c.chain()).combine(d.chain()).combine(e.chain())
      .do { received.append([$0, $1, $2, $3, $4]) }.sync()
    for (notifier, value) in [(a, 1), (b, 2), (d, 4), (e, 5)] { notifier.notify(value: value) }
    #expect(received.history == [[1, 2, 3, 4, 5]])
    withExtendedLifetime(observer) {}
  }

  @Test func theJoinedChainTakesTheFirstFetchableSourceType() {
    let taps = Notifier<Int>()
    let name = ValueHolder("Ann")
    let age = ValueHolder(29)
    // Only the second is fetchable: the result takes its type.
    let fromNotifier: Chain<(Int, String), ValueHolder<String>> = taps.chain().combine(name.chain())
    // Both fetchable: the first keeps its type, as before.
    let fromHolder: Chain<(String, Int), ValueHolder<String>> = name.chain().combine(age.chain())
    let merged: Chain<Int, ValueHolder<Int>> = taps.chain().merge(age.chain())
    let tupled: Chain<(String?, Int?), ValueHolder<String>> = name.chain().tuple(age.chain())
    let observers = [fromNotifier.end(), fromHolder.end(), merged.end(), tupled.end()]
    #expect(observers.count == 4)
  }

  @Test func syncOnATupleStartingFromANotifierSendsTheFetchedSide() {
    let taps = Notifier<Int>()
    let name = ValueHolder("Ann")
    let received = Recorder<String>()
    let observer = taps.chain().tuple(name.chain()).do { received.append("\($0 as Any) \($1 as Any)") }.sync()
    #expect(received.history == ["nil Optional(\"Ann\")"])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOnJoinsWithNoFetchableSourceDoesNotCompile() throws {
    for join in ["combine", "tuple"] {
      let result = try CompileCheck.typecheck(
        """
        let observer = Notifier<Int>().chain().\(join)(Notifier<String>().chain()).sync()
        """
      )
      #expect(!result.succeeded, "\(join)")
      #expect(result.diagnostics.contains("Fetchable"), "\(result.diagnostics)")
    }
  }
}
