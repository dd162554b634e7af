import Chaining
import Testing

@Suite struct ChainEndTests {
  @Test func endSendsNothingUntilTheSourceBroadcasts() {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.end()
    #expect(received.history.isEmpty)
    holder.value = 2
    #expect(received.history == [2])
    _ = observer
  }

  @Test func syncSendsTheCurrentValueFirstThenChanges() {
    let holder = ValueHolder(1)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.sync()
    #expect(received.history == [1])
    holder.value = 2
    #expect(received.history == [1, 2])
    _ = observer
  }

  @Test func syncOnAFetchOnlyUserTypeSendsOnceAndThenNothing() {
    final class Fixed: Fetchable {
      typealias ChainValue = Int
      func fetchedValue() -> Int { 5 }
    }
    let received = Recorder<Int>()
    let observer = Fixed().chain().do { received.append($0) }.sync()
    #expect(received.history == [5])
    _ = observer
  }

  @Test func syncFromARetainedSourceFetchesFromIt() {
    let received = Recorder<Int>()
    let observer = ValueHolder(8).retain().chain().do { received.append($0) }.sync()
    #expect(received.history == [8])
    _ = observer
  }
}
