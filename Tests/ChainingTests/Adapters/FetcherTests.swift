import Chaining
import Testing

/// A fetcher to share with `race(threads:)`.
///
/// @unchecked: `Fetcher` is not `Swift.Sendable` because its closures need
/// not be. The one here captures nothing mutable and the fetcher's only
/// other state is its core, which guards itself.
private final class SharedFetcher: @unchecked Swift.Sendable {
  let fetcher = Fetcher { 7 }
}

@Suite struct FetcherTests {
  @Test func syncSendsTheGettersValue() {
    let fetcher = Fetcher { "current" }
    let received = Recorder<String>()
    let observer = fetcher.chain().do { received.append($0) }.sync()
    #expect(received.history == ["current"])
    withExtendedLifetime(observer) {}
  }

  @Test func endSendsNothingUntilABroadcast() {
    let fetcher = Fetcher { 1 }
    let received = Recorder<Int>()
    let observer = fetcher.chain().do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    fetcher.broadcast()
    #expect(received.history == [1])
    withExtendedLifetime(observer) {}
  }

  @Test func broadcastSendsTheValueTheGetterReturnsNow() {
    var items = ["a"]
    let fetcher = Fetcher { items.count }
    let received = Recorder<Int>()
    let observer = fetcher.chain().do { received.append($0) }.sync()
    items.append("b")
    fetcher.broadcast()
    items.append("c")
    fetcher.broadcast()
    #expect(received.history == [1, 2, 3])
    withExtendedLifetime(observer) {}
  }

  @Test func fetchedValueCallsTheGetterEachTime() {
    var current = 4
    let fetcher = Fetcher { current }
    #expect(fetcher.fetchedValue() == 4)
    current = 5
    #expect(fetcher.fetchedValue() == 5)
  }

  @Test func receivingVoidThroughAChainSendsTheCurrentValue() {
    var current = 10
    let fetcher = Fetcher { current }
    let refresh = Notifier<Void>()
    let received = Recorder<Int>()
    let observers = [
      fetcher.chain().do { received.append($0) }.end(),
      refresh.chain().sendTo(fetcher).end(),
    ]
    refresh.notify()
    current = 11
    refresh.notify()
    #expect(received.history == [10, 11])
    withExtendedLifetime(observers) {}
  }

  @Test func receiveValueSendsTheCurrentValue() {
    let fetcher = Fetcher { "again" }
    let received = Recorder<String>()
    let observer = fetcher.chain().do { received.append($0) }.end()
    fetcher.receive(value: ())
    #expect(received.history == ["again"])
    withExtendedLifetime(observer) {}
  }

  @Test func canFetchFalseMakesSyncSendNothingWithoutCallingTheGetter() {
    let getterCalls = Recorder<Void>()
    let fetcher = Fetcher(
      {
        getterCalls.append(())
        return 1
      },
      canFetch: { false }
    )
    let received = Recorder<Int>()
    let observer = fetcher.chain().do { received.append($0) }.sync()
    #expect(received.history.isEmpty)
    #expect(getterCalls.count == 0)
    withExtendedLifetime(observer) {}
  }

  @Test func canFetchFalseMakesBroadcastAndReceiveSendNothingWithoutCallingTheGetter() {
    let getterCalls = Recorder<Void>()
    let fetcher = Fetcher(
      {
        getterCalls.append(())
        return 1
      },
      canFetch: { false }
    )
    let refresh = Notifier<Void>()
    let received = Recorder<Int>()
    let observers = [
      fetcher.chain().do { received.append($0) }.end(),
      refresh.chain().sendTo(fetcher).end(),
    ]
    fetcher.broadcast()
    fetcher.receive(value: ())
    refresh.notify()
    #expect(received.history.isEmpty)
    #expect(getterCalls.count == 0)
    #expect(!fetcher.canFetch())
    withExtendedLifetime(observers) {}
  }

  @Test func canFetchIsAskedEachTime() {
    var available = false
    let getterCalls = Recorder<Void>()
    let fetcher = Fetcher(
      {
        getterCalls.append(())
        return 3
      },
      canFetch: { available }
    )
    let received = Recorder<Int>()
    let observer = fetcher.chain().do { received.append($0) }.sync()
    fetcher.broadcast()
    available = true
    fetcher.broadcast()
    available = false
    fetcher.broadcast()
    #expect(received.history == [3])
    #expect(getterCalls.count == 1)
    withExtendedLifetime(observer) {}
  }

  @Test func canFetchDefaultsToTrue() {
    let fetcher = Fetcher { 1 }
    #expect(fetcher.canFetch())
    let received = Recorder<Int>()
    let observer = fetcher.chain().do { received.append($0) }.sync()
    #expect(received.history == [1])
    withExtendedLifetime(observer) {}
  }

  @Test func fetcherIsReleasedWhileItsObserverLives() {
    weak var weakFetcher: Fetcher<Int>?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let fetcher = Fetcher { 1 }
      weakFetcher = fetcher
      observer = fetcher.chain().do { received.append($0) }.sync()
    }
    #expect(weakFetcher == nil)
    #expect(received.history == [1])
    #expect(observer?.isInvalidated == false)
    observer?.invalidate()
    #expect(observer?.isInvalidated == true)
  }

  @Test func objectsTheClosuresCaptureAreReleasedWithTheFetcher() {
    weak var weakGetterToken: Token?
    weak var weakCanFetchToken: Token?
    var observer: Observer?
    do {
      let getterToken = Token()
      let canFetchToken = Token()
      weakGetterToken = getterToken
      weakCanFetchToken = canFetchToken
      let fetcher = Fetcher(
        {
          withExtendedLifetime(getterToken) {}
          return 1
        },
        canFetch: {
          withExtendedLifetime(canFetchToken) {}
          return true
        }
      )
      observer = fetcher.chain().do { _ in }.sync()
      #expect(weakGetterToken != nil)
      #expect(weakCanFetchToken != nil)
    }
    #expect(weakGetterToken == nil)
    #expect(weakCanFetchToken == nil)
    withExtendedLifetime(observer) {}
  }

  @Test func broadcastsFromManyThreadsEachReachTheObserverOnce() {
    let threads = 4
    let perThread = 2_500
    let shared = SharedFetcher()
    let received = Recorder<Int>()
    let observer = shared.fetcher.chain().do { received.append($0) }.end()
    race(threads: threads) { _ in
      for _ in 0..<perThread { shared.fetcher.broadcast() }
    }
    #expect(received.count == threads * perThread)
    #expect(received.history.allSatisfy { $0 == 7 })
    withExtendedLifetime(observer) {}
  }
}
