import Dispatch
import Testing

@testable import Chaining

@Suite(.serialized) struct ChainValuesTests {
  @Test func sequenceStartsWithTheCurrentValueOfAFetchableSource() async {
    let holder = ValueHolder(1)
    var received: [Int] = []
    for await value in holder.chain().values {
      received.append(value)
      if value == 1 { spawn { holder.value = 2 }.wait() }
      if value == 2 { break }
    }
    #expect(received == [1, 2])
  }

  @Test func sequenceOfAPushOnlySourceHasOnlyLaterValues() async {
    let notifier = Notifier<String>()
    var iterator = notifier.chain().map { $0.uppercased() }.values.makeAsyncIterator()
    notifier.notify(value: "a")
    notifier.notify(value: "b")
    let first = await iterator.next()
    let second = await iterator.next()
    #expect(first == "A")
    #expect(second == "B")
  }

  @Test func nothingIsSubscribedUntilIterationStarts() async {
    let notifier = Notifier<Int>()
    let values = notifier.chain().values
    #expect(notifier._senderCore(creating: false)?.hasObservers == false)
    var iterator = values.makeAsyncIterator()
    #expect(notifier._senderCore(creating: false)?.hasObservers == true)
    notifier.notify(value: 1)
    let value = await iterator.next()
    #expect(value == 1)
  }

  @Test func breakingOutOfTheLoopEndsTheObserver() async {
    let holder = ValueHolder(0)
    for await value in holder.chain().values where value == 0 {
      break
    }
    #expect(holder._senderCore(creating: false)?.hasObservers == false)
  }

  @Test func cancellingTheTaskEndsTheObserver() async {
    let notifier = Notifier<Int>()
    let started = DispatchSemaphore(value: 0)
    let task = Task {
      var count = 0
      let values = notifier.chain().do { _ in }.values
      var iterator = values.makeAsyncIterator()
      started.signal()
      while await iterator.next() != nil { count += 1 }
      return count
    }
    await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        started.wait()
        continuation.resume()
      }
    }
    notifier.notify(value: 1)
    task.cancel()
    let count = await task.value
    #expect(count <= 1)
    #expect(notifier._senderCore(creating: false)?.hasObservers == false)
  }

  @Test func iteratorReleasesTheChainsClosuresWhenDropped() async {
    let notifier = Notifier<Int>()
    weak var weakToken: Token?
    do {
      let token = Token()
      weakToken = token
      var iterator = notifier.chain().do { _ in _ = token }.values.makeAsyncIterator()
      notifier.notify(value: 1)
      _ = await iterator.next()
      #expect(weakToken != nil)
    }
    #expect(weakToken == nil)
    #expect(notifier._senderCore(creating: false)?.hasObservers == false)
  }

  @Test func newestBufferingKeepsOnlyTheLatestValues() async {
    let notifier = Notifier<Int>()
    var iterator = notifier.chain().values(bufferingPolicy: .bufferingNewest(2)).makeAsyncIterator()
    for value in 1...10 { notifier.notify(value: value) }
    let first = await iterator.next()
    let second = await iterator.next()
    #expect([first, second] == [9, 10])
  }

  @Test func unboundedBufferingKeepsEveryValueFromManyThreads() async {
    let notifier = Notifier<Int>()
    var iterator = notifier.chain().values.makeAsyncIterator()
    race(threads: 4) { thread in
      for index in 0..<1_000 { notifier.notify(value: thread * 1_000 + index) }
    }
    var received: [Int] = []
    for _ in 0..<4_000 {
      if let value = await iterator.next() { received.append(value) }
    }
    #expect(received.count == 4_000)
    #expect(Set(received) == Set(0..<4_000))
  }

  @Test func eachIteratorIsAnIndependentSubscription() async {
    let holder = ValueHolder(5)
    let values = holder.chain().map { $0 * 2 }.values
    var first = values.makeAsyncIterator()
    var second = values.makeAsyncIterator()
    let a = await first.next()
    let b = await second.next()
    #expect(a == 10)
    #expect(b == 10)
  }

  // MARK: - The sequence finishes when the binding ends

  /// Every value the iterator yields until it finishes.
  private func drain<Element>(_ iterator: inout ChainValues<Element>.Iterator) async -> [Element] {
    var all: [Element] = []
    while let value = await iterator.next() { all.append(value) }
    return all
  }

  @Test func prefixFinishesTheSequenceAfterItsValues() async {
    let holder = ValueHolder(0)
    var iterator = holder.chain().prefix(3).values.makeAsyncIterator()
    for value in 1...5 { holder.value = value }
    let all = await drain(&iterator)
    #expect(all == [0, 1, 2])
  }

  @Test func firstFinishesTheSequence() async {
    let notifier = Notifier<String>()
    var iterator = notifier.chain().first().values.makeAsyncIterator()
    notifier.notify(value: "a")
    notifier.notify(value: "b")
    let all = await drain(&iterator)
    #expect(all == ["a"])
  }

  @Test func aForAwaitLoopOverPrefixEnds() async {
    // The loop: it used to receive 0, 1, 2 and hang.
    let holder = ValueHolder(0)
    let loop = Task {
      var seen: [Int] = []
      for await value in holder.chain().prefix(3).values { seen.append(value) }
      return seen
    }
    await holder.waitForObservers()
    for value in 1...5 { holder.value = value }
    let seen = await loop.value
    // Subscribed and fetched in one step before `waitForObservers` returned.
    #expect(seen == [0, 1, 2])
  }

  @Test func freeingTheSenderFinishesTheSequenceAfterItsValues() async {
    var notifier: Notifier<Int>? = Notifier()
    var iterator = notifier!.chain().map { $0 * 10 }.values.makeAsyncIterator()
    notifier!.notify(value: 1)
    notifier!.notify(value: 2)
    notifier = nil
    let all = await drain(&iterator)
    #expect(all == [10, 20])
  }

  @Test func freeingAHolderFinishesTheSequence() async {
    var holder: ValueHolder<Int>? = ValueHolder(7)
    var iterator = holder!.chain().values.makeAsyncIterator()
    holder!.value = 8
    holder = nil
    let all = await drain(&iterator)
    #expect(all == [7, 8])
  }

  @Test func aMergedSequenceFinishesWhenEverySenderIsFreed() async {
    var left: Notifier<Int>? = Notifier()
    let right = Notifier<Int>()
    var iterator = left!.chain().merge(right.chain()).values.makeAsyncIterator()
    left!.notify(value: 1)
    left = nil
    right.notify(value: 2)
    #expect(await iterator.next() == 1)
    #expect(await iterator.next() == 2)
    // `right` is still alive: the sequence goes on.
    right.notify(value: 3)
    #expect(await iterator.next() == 3)
    withExtendedLifetime(right) {}
  }

  @Test func aMergedSequenceFinishesOnceBothSendersAreFreed() async {
    var left: Notifier<Int>? = Notifier()
    var right: Notifier<Int>? = Notifier()
    var iterator = left!.chain().merge(right!.chain()).values.makeAsyncIterator()
    right!.notify(value: 2)
    left = nil
    right = nil
    let all = await drain(&iterator)
    #expect(all == [2])
  }

  @Test func theSequenceHoldsItsSourceUntilReleasedAndItsIteratorDoesNot() async {
    weak var weakHolder: ValueHolder<Int>?
    var values: ChainValues<Int>?
    do {
      let holder = ValueHolder(1)
      weakHolder = holder
      values = holder.chain().values
    }
    // Not iterated yet: the sequence holds the chain, source included.
    #expect(weakHolder != nil)
    var iterator = values!.makeAsyncIterator()
    values = nil
    // The iteration's observer does not hold the source, as `end()`'s does not.
    let freed = weakHolder == nil
    #expect(freed)
    // Freeing the holder finishes the sequence; if it were kept, it would not.
    if freed { #expect(await drain(&iterator) == [1]) }
  }

  @Test func aForAwaitLoopDoesNotKeepItsSourceAlive() async {
    var holder: ValueHolder<Int>? = ValueHolder(1)
    weak var weakHolder: ValueHolder<Int>?
    weakHolder = holder
    let received = Delivered<Int>()
    let loop = Task { [weak holder] in
      var seen: [Int] = []
      for await value in holder!.chain().values {
        seen.append(value)
        received.send(value)
      }
      return seen
    }
    // The loop body runs once the iterator is made: the loop then holds
    // no temporary reference to the holder any more.
    #expect(await received.next() == 1)
    holder = nil
    let freed = weakHolder == nil
    #expect(freed)
    // Freeing the holder ends the loop; if the loop kept it, end it here.
    if !freed { loop.cancel() }
    #expect(await loop.value == [1])
  }

  @Test func freeingAFetcherOrAnAdapterFinishesTheSequence() async {
    var fetcher: Fetcher<Int>? = Fetcher { 4 }
    var iterator = fetcher!.chain().values.makeAsyncIterator()
    fetcher = nil
    let all = await drain(&iterator)
    #expect(all == [4])
  }

  @Test func aSequenceThatFinishedReleasesItsChain() async {
    weak var weakToken: Token?
    let notifier = Notifier<Int>()
    var iterator: ChainValues<Int>.Iterator
    do {
      let token = Token()
      weakToken = token
      iterator = notifier.chain().first().do { _ in withExtendedLifetime(token) {} }.values.makeAsyncIterator()
    }
    notifier.notify(value: 1)
    let all = await drain(&iterator)
    #expect(all == [1])
    #expect(weakToken == nil)
  }
}
