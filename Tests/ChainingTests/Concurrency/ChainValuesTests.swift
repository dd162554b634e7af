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
}
