import Testing

@testable import Chaining

/// The runtime's isolation check, looked up when first needed (issue #38):
/// found here, it answers both ways.
@Suite struct IsolationLookupTests {
  actor Counter {
    func isolatedHere() -> Bool { isCurrentlyIsolated(to: self, isMainActor: false) }
  }

  @Test func theCheckIsFoundAndTellsIsolatedFromNot() async {
    let counter = Counter()
    #expect(await counter.isolatedHere())
    #expect(!isCurrentlyIsolated(to: counter, isMainActor: false))
  }
}
