import Chaining
import Testing

/// A source that can only be fetched, and may be unable to.
private final class Counter: Fetchable {
  typealias ChainValue = Int
  var count = 0
  var available = true
  var fetches = 0
  func fetchedValue() -> Int {
    fetches += 1
    return count
  }
  func canFetch() -> Bool { available }
}

/// A fetchable source that relies on the default `canFetch()`.
private final class Constant: Fetchable {
  typealias ChainValue = String
  func fetchedValue() -> String { "constant" }
}

@Suite struct FetchableTests {
  @Test func syncSendsTheFetchedValueOnce() {
    let counter = Counter()
    counter.count = 3
    let received = Recorder<Int>()
    let observer = counter.chain().do { received.append($0) }.sync()
    #expect(received.history == [3])
    #expect(counter.fetches == 1)
    withExtendedLifetime(observer) {}
  }

  @Test func canFetchDefaultsToTrue() {
    let constant = Constant()
    #expect(constant.canFetch())
    let received = Recorder<String>()
    let observer = constant.chain().do { received.append($0) }.sync()
    #expect(received.history == ["constant"])
    withExtendedLifetime(observer) {}
  }

  @Test func whenCanFetchIsFalseFetchedValueIsNotCalledAndNothingIsSent() {
    let counter = Counter()
    counter.available = false
    let received = Recorder<Int>()
    let observer = counter.chain().do { received.append($0) }.sync()
    #expect(received.history.isEmpty)
    #expect(counter.fetches == 0)
    withExtendedLifetime(observer) {}
  }

  @Test func endOnAFetchableSourceSendsNothing() {
    let counter = Counter()
    let received = Recorder<Int>()
    let observer = counter.chain().do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    #expect(counter.fetches == 0)
    withExtendedLifetime(observer) {}
  }
}
