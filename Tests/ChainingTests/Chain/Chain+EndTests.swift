import Testing

@testable import Chaining

@Suite struct ChainEndTests {
  @Test func endSendsNothingUntilTheSourceBroadcasts() {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    holder.value = 2
    #expect(received.history == [2])
    withExtendedLifetime(observer) {}
  }

  @Test func syncSendsTheCurrentValueFirstThenChanges() {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.sync()
    #expect(received.history == [1])
    holder.value = 2
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func syncOnAFetchOnlyUserTypeSendsOnceAndThenNothing() {
    final class Fixed: Fetchable {
      typealias ChainValue = Int
      func fetchedValue() -> Int { 5 }
    }
    let received = Recorder<Int>()
    let observer = Fixed().chain().do { received.append($0) }.sync()
    #expect(received.history == [5])
    withExtendedLifetime(observer) {}
  }

  @Test func syncFromARetainedSourceFetchesFromIt() {
    let received = Recorder<Int>()
    let observer = ValueHolder(8).retain().chain().do { received.append($0) }.sync()
    #expect(received.history == [8])
    withExtendedLifetime(observer) {}
  }

  @Test func aChainWithNoStepsStillSubscribesAndFetches() {
    final class Counting: Syncable {
      typealias ChainValue = Int
      let fetches = Recorder<Int>()
      func fetchedValue() -> Int {
        fetches.append(1)
        return 1
      }
    }
    let source = Counting()
    let observer = source.chain().sync()
    #expect(source.fetches.count == 1)
    #expect(source._senderCore(creating: false)?.hasObservers == true)
    observer.invalidate()
    #expect(source._senderCore(creating: false)?.hasObservers == false)
  }

  @Test func aLastDoAndADoFollowedByMoreStepsBothSeeEveryValue() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    let last = notifier.chain().do { received.append("last \($0)") }.end()
    let middle = notifier.chain()
      .do { received.append("middle \($0)") }
      .map { $0 * 10 }
      .do { received.append("after \($0)") }
      .end()
    notifier.notify(value: 1)
    #expect(received.history == ["last 1", "middle 1", "after 10"])
    withExtendedLifetime((last, middle)) {}
  }
}
