import Chaining
import Testing

/// Checks the lifetime of a chain that joins two sources (merge, tuple, combine).
///
/// Builds `join` from a retained `ValueHolder(1)` chain and a retained
/// `Notifier<Int>` chain, each with a closure that captures a token, and
/// ends it with a `do` that captures a third token and records
/// `describe(value)`. Then checks that the observer keeps both sources and
/// all three closures alive, that `sync()` and `notify(value: 2)` produce
/// `expected`, and that invalidating releases every one of them.
func expectJoinedChainReleasesEverythingOnInvalidate<Joined>(
  join: (
    consuming Chain<Int, ValueHolder<Int>>,
    consuming Chain<Int, Notifier<Int>>
  ) -> Chain<Joined, ValueHolder<Int>>,
  describe: @escaping (Joined) -> String,
  expected: [String],
  sourceLocation: SourceLocation = #_sourceLocation
) {
  weak var weakFirst: ValueHolder<Int>?
  weak var weakSecond: Notifier<Int>?
  weak var weakFirstToken: Token?
  weak var weakSecondToken: Token?
  weak var weakAfterToken: Token?
  let received = Recorder<String>()
  var observer: Observer?
  do {
    let first = ValueHolder(1)
    let second = Notifier<Int>()
    let firstToken = Token()
    let secondToken = Token()
    let afterToken = Token()
    weakFirst = first
    weakSecond = second
    weakFirstToken = firstToken
    weakSecondToken = secondToken
    weakAfterToken = afterToken
    observer = join(
      first.retain().chain().do { _ in _ = firstToken },
      second.retain().chain().do { _ in _ = secondToken }
    )
    .do { value in
      withExtendedLifetime(afterToken) {}
      received.append(describe(value))
    }
    .sync()
  }
  #expect(weakFirst != nil, sourceLocation: sourceLocation)
  #expect(weakSecond != nil, sourceLocation: sourceLocation)
  #expect(weakFirstToken != nil, sourceLocation: sourceLocation)
  #expect(weakSecondToken != nil, sourceLocation: sourceLocation)
  #expect(weakAfterToken != nil, sourceLocation: sourceLocation)
  weakSecond?.notify(value: 2)
  #expect(received.history == expected, sourceLocation: sourceLocation)
  observer?.invalidate()
  #expect(weakFirst == nil, sourceLocation: sourceLocation)
  #expect(weakSecond == nil, sourceLocation: sourceLocation)
  #expect(weakFirstToken == nil, sourceLocation: sourceLocation)
  #expect(weakSecondToken == nil, sourceLocation: sourceLocation)
  #expect(weakAfterToken == nil, sourceLocation: sourceLocation)
}
