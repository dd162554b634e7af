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

/// The contract of `_subscribe` and `_addFetch`: one fetch per source per
/// chain (issue #41). A source that takes its fetch in `_subscribe` and
/// adds another in `_addFetch` would make `sync()` deliver twice.
@Suite struct OneFetchPerSourceTests {
  @Test func syncSendsOneValueFromEveryFetchableOfTheLibrary() {
    let holder = ArrayHolder([1, 2])
    let counts = Recorder<String>()
    func count<Source: Fetchable>(_ name: String, _ source: Source) -> Observer {
      source.chain().do { _ in counts.append(name) }.sync()
    }
    let observers = [
      count("ValueHolder", ValueHolder(1)),
      count("EventableValueHolder", EventableValueHolder(1)),
      count("RelayableValueHolder", RelayableValueHolder(ValueHolder(1))),
      count("ArrayHolder", holder),
      count("RelayableArrayHolder", RelayableArrayHolder([ValueHolder(1)])),
      count("DictionaryHolder", DictionaryHolder(["a": 1])),
      count("RelayableDictionaryHolder", RelayableDictionaryHolder(["a": ValueHolder(1)])),
      count("ReadOnlyValueHolder", ValueHolder(1).readOnly),
      count("ReadOnlyArrayHolder", holder.readOnly),
      count("ReadOnlyDictionaryHolder", DictionaryHolder(["a": 1]).readOnly),
      count("DerivedArrayHolder", holder.filtered { $0 > 1 }),
      count("Computed", Computed { 1 }),
      count("Suspender", Suspender()),
      count("Fetcher", Fetcher { 1 }),
      count("AnyFetchable", AnyFetchable(ValueHolder(1))),
    ]
    let names = [
      "ValueHolder", "EventableValueHolder", "RelayableValueHolder", "ArrayHolder", "RelayableArrayHolder",
      "DictionaryHolder", "RelayableDictionaryHolder", "ReadOnlyValueHolder", "ReadOnlyArrayHolder",
      "ReadOnlyDictionaryHolder", "DerivedArrayHolder", "Computed", "Suspender", "Fetcher", "AnyFetchable",
    ]
    #expect(counts.history == names)
    withExtendedLifetime(observers) {}
  }

  // The check is made in debug builds (the library's code that makes it is
  // inlined here, so this file's build decides).
  #if DEBUG && !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func aSourceThatRegistersTwoFetchesStopsWithAMessageNamingIt() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      _ = TwoFetches().chain().do { _ in }.sync()
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("TwoFetches registered 2 fetches for one chain"), "\(message)")
  }
  #endif
}

/// Breaks the contract: its `_subscribe` is a holder's, which takes the
/// value to fetch, and its `_addFetch` is `Fetchable`'s, which adds another.
private final class TwoFetches: Fetchable {
  typealias ChainValue = Int
  let holder = ValueHolder(1)
  func fetchedValue() -> Int { holder.fetchedValue() }
  func _subscribe(_ context: _ChainContext, _ handler: @escaping (Int) -> Void) {
    holder._subscribe(context, handler)
  }
}
