import Chaining
import Testing

@Suite struct SyncableTests {
  @Test func userHolderFromTheIssueSyncsThenFollowsChanges() {
    // The issue's lines, exactly as written.
    // swift-format-ignore: OneVariableDeclarationPerLine
    let sender = IntHolder(0), receiver = IntHolder(1)
    let observer = sender.chain().sendTo(receiver).sync()
    #expect(receiver.value == 0)
    sender.value = 2
    #expect(receiver.value == 2)
    withExtendedLifetime(observer) {}
  }

  @Test func userHolderBroadcastsOnlyChanges() {
    let holder = IntHolder(0)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.sync()
    holder.value = 0
    holder.value = 4
    holder.value = 4
    #expect(received.history == [0, 4])
    withExtendedLifetime(observer) {}
  }

  @Test func syncableIsFetchableAndSendable() {
    func check<S: Syncable>(_ source: S) -> S.ChainValue { source.fetchedValue() }
    #expect(check(IntHolder(9)) == 9)
    #expect(check(ValueHolder("x")) == "x")
  }

  /// A `Syncable` whose fetch, like a user's, is not tied to its
  /// broadcasts: while the chain fetches 6, another thread broadcasts 5.
  final class FetchRacedByAnOlderBroadcast: Syncable, @unchecked Swift.Sendable {
    // @unchecked: no state; broadcasting is thread-safe.
    typealias ChainValue = Int

    func fetchedValue() -> Int {
      let broadcast = spawn { self.broadcast(value: 5) }
      broadcast.wait()  // queued at the chain's gate, held by sync()
      return 6
    }
  }

  @Test func aUserSyncableCanDeliverAnOlderValueRightAfterTheFetchedOne() {
    // The weaker rule that Threading.md states for a class of yours: the
    // library's holders fetch under their lock and never do this.
    let source = FetchRacedByAnOlderBroadcast()
    let received = Recorder<Int>()
    let observer = source.chain().do { received.append($0) }.sync()
    #expect(received.history == [6, 5])
    withExtendedLifetime(observer) {}
  }
}
