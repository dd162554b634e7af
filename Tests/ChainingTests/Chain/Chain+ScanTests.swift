import Chaining
import Testing

@Suite struct ChainScanTests {
  // MARK: - Flow

  @Test func scanPassesEachRunningResult() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().scan(0, +).do { received.append($0) }.end()
    notifier.notify(value: 10)
    notifier.notify(value: 5)
    notifier.notify(value: -3)
    #expect(received.history == [10, 15, 12])
    withExtendedLifetime(observer) {}
  }

  @Test func scanCanAccumulateIntoAnotherType() {
    let notifier = Notifier<Int>()
    let received = Recorder<[Int]>()
    let observer = notifier.chain().scan([Int]()) { $0 + [$1] }.do { received.append($0) }.end()
    notifier.notify(value: 3)
    notifier.notify(value: 1)
    #expect(received.history == [[3], [3, 1]])
    withExtendedLifetime(observer) {}
  }

  @Test func scanCombinesTheResultSoFarWithEachValue() {
    let notifier = Notifier<String>()
    let calls = Recorder<String>()
    let observer = notifier.chain().scan("") { result, value in
      calls.append("\(result)+\(value)")
      return result + value
    }.end()
    notifier.notify(value: "a")
    notifier.notify(value: "b")
    #expect(calls.history == ["+a", "a+b"])
    withExtendedLifetime(observer) {}
  }

  // MARK: - sync and end

  @Test func syncedValueIsAccumulated() {
    let holder = ValueHolder(10)
    let received = Recorder<Int>()
    let observer = holder.chain().scan(1, +).do { received.append($0) }.sync()
    #expect(received.history == [11])
    holder.value = 5
    #expect(received.history == [11, 16])
    withExtendedLifetime(observer) {}
  }

  @Test func syncedValueOfAUserHolderIsAccumulated() {
    let holder = IntHolder(2)
    let received = Recorder<Int>()
    let observer = holder.chain().scan(100, *).do { received.append($0) }.sync()
    #expect(received.history == [200])
    holder.value = 3
    #expect(received.history == [200, 600])
    withExtendedLifetime(observer) {}
  }

  @Test func endStartsFromTheInitialResultWithoutTheCurrentValue() {
    let holder = ValueHolder(10)
    let received = Recorder<Int>()
    let observer = holder.chain().scan(0, +).do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    holder.value = 5
    #expect(received.history == [5])
    withExtendedLifetime(observer) {}
  }

  @Test func endOnANonFetchableSourceAccumulatesOnlyBroadcasts() {
    let notifier = IntNotifier()
    let received = Recorder<Int>()
    let observer = notifier.chain().scan(0, +).do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [1, 3])
    withExtendedLifetime(observer) {}
  }

  // MARK: - State per chain

  @Test func twoObserversOfTheSameChainShapeKeepSeparateTotals() {
    let notifier = Notifier<Int>()
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    func total(into recorder: Recorder<Int>) -> Observer {
      notifier.chain().scan(0, +).do { recorder.append($0) }.end()
    }
    let firstObserver = total(into: first)
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    let secondObserver = total(into: second)
    notifier.notify(value: 3)
    #expect(first.history == [1, 3, 6])
    #expect(second.history == [3])
    _ = (firstObserver, secondObserver)
  }

  @Test func eachSyncStartsItsOwnTotalFromTheInitialResult() {
    let holder = ValueHolder(4)
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    let firstObserver = holder.chain().scan(0, +).do { first.append($0) }.sync()
    holder.value = 6
    let secondObserver = holder.chain().scan(0, +).do { second.append($0) }.sync()
    #expect(first.history == [4, 10])
    #expect(second.history == [6])
    _ = (firstObserver, secondObserver)
  }

  // MARK: - Lifetime

  @Test func invalidatedScanIsNotCalledAndDeliversNothing() {
    let notifier = Notifier<Int>()
    let calls = Recorder<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().scan(0) { result, value in
      calls.append(value)
      return result + value
    }.do { received.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    observer.invalidate()
    notifier.notify(value: 3)
    #expect(calls.history == [1, 2])
    #expect(received.history == [1, 3])
  }

  @Test func scanStopsQuietlyWhenItsSourceIsReleased() {
    weak var weakSource: Notifier<Int>?
    weak var weakToken: Token?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let source = Notifier<Int>()
      let token = Token()
      weakSource = source
      weakToken = token
      observer = source.chain().scan(0) { result, value in
        withExtendedLifetime(token) {}
        return result + value
      }.do { received.append($0) }.end()
      source.notify(value: 1)
      source.notify(value: 2)
    }
    #expect(weakSource == nil)
    #expect(received.history == [1, 3])
    #expect(observer?.isInvalidated == false)
    // The observer still holds the accumulating closure, until it is invalidated.
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
  }

  @Test func sourceReleasedByAHandlerMidDeliveryStopsQuietly() {
    weak var weakSource: ValueHolder<Int>?
    let received = Recorder<Int>()
    var source: ValueHolder<Int>? = ValueHolder(1)
    weakSource = source
    let observer = source?.chain().scan(0, +).do { total in
      received.append(total)
      if total > 2 { source = nil }
    }.sync()
    source?.value = 2
    #expect(weakSource == nil)
    #expect(received.history == [1, 3])
    #expect(observer?.isInvalidated == false)
    withExtendedLifetime(observer) {}
  }

  @Test func accumulatedResultIsHeldUntilTheObserverIsInvalidated() {
    let notifier = Notifier<Int>()
    weak var weakResult: Token?
    var observer: Observer?
    do {
      let initial = Token()
      weakResult = initial
      observer = notifier.chain().scan(initial) { result, _ in result }.end()
    }
    notifier.notify(value: 1)
    #expect(weakResult != nil)
    observer?.invalidate()
    #expect(weakResult == nil)
    withExtendedLifetime(observer) {}
  }

  // MARK: - Reentrancy

  @Test func scanInAnotherChainAccumulatesAValueAHandlerWroteBack() {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observers = [
      holder.chain().do { if $0 == 1 { holder.value = 2 } }.end(),
      holder.chain().scan(0, +).do { received.append($0) }.end(),
    ]
    holder.value = 1
    #expect(received.history == [1, 3])
    withExtendedLifetime(observers) {}
  }

  @Test func scanHandlerWritingItsOwnHolderDoesNotAccumulateItsWrite() {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = holder.chain().scan(0, +).do { total in
      received.append(total)
      holder.value = 100
    }.end()
    holder.value = 1
    holder.value = 2
    #expect(received.history == [1, 3])
    #expect(holder.value == 100)
    withExtendedLifetime(observer) {}
  }

  // MARK: - Concurrency

  @Test func scanOverValuesFromManyThreadsEndsAtTheExactSum() {
    let threads = 4
    let perThread = 2_500
    let count = threads * perThread
    let notifier = Notifier<Int>()
    let first = Recorder<Int>()
    let second = Recorder<Int>()
    let observers = [
      notifier.chain().scan(0, +).do { first.append($0) }.end(),
      notifier.chain().scan(0, +).do { second.append($0) }.end(),
    ]
    race(threads: threads) { thread in
      for index in 1...perThread { notifier.notify(value: thread * perThread + index) }
    }
    // The values are 1...count, each broadcast once.
    let sum = count * (count + 1) / 2
    for recorder in [first, second] {
      let history = recorder.history
      #expect(history.count == count)
      #expect(history.last == sum)
      // Every value is positive, so every result is larger than the one before.
      #expect(zip(history, history.dropFirst()).allSatisfy { $0 < $1 })
    }
    withExtendedLifetime(observers) {}
  }
}
