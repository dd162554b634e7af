import Chaining
import ChainingTesting
import Testing

/// RxSwift's GitHub sign-up example, as a new user ports it (issue #39):
/// the username checked against an API as it is typed (`mapLatest`), a
/// sign-up button that takes the form's username (`withLatestFrom`) and
/// signs up once per double tap (`mapFirst`), all on a `TestClock`.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
private final class SignUpForm: Swift.Sendable {
  let username = ValueHolder("")
  let taps = Notifier<Void>()
  /// What the form shows, in order: availability answers and sign-ups.
  let shown = ValueHolder<[String]>([])
  private let pool = ObserverPool()

  init(api: GitHubAPI) {
    username.chain()
      .mapLatest { name in await api.isAvailable(name) }
      .do { [shown] available in shown.value.append(available ? "available" : "taken") }
      .end()
      .addTo(pool)
    taps.chain()
      .withLatestFrom(username)
      .mapFirst { _, name in try await api.signUp(name) }
      .do { [shown] result in shown.value.append((try? result.get()) ?? "failed") }
      .end()
      .addTo(pool)
  }

  func close() { pool.invalidate() }
}

/// The example's API: each call takes one second of `clock`, and counts
/// the calls that reached the server.
@available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
private final class GitHubAPI: Swift.Sendable {
  let clock: TestClock
  let signUps = ValueHolder<[String]>([])
  init(clock: TestClock) { self.clock = clock }

  func isAvailable(_ name: String) async -> Bool {
    try? await clock.sleep(for: .seconds(1))
    return name != "chaining"
  }

  func signUp(_ name: String) async throws -> String {
    try await clock.sleep(for: .seconds(1))
    signUps.value.append(name)
    return "signed up \(name)"
  }
}

@Suite struct SignUpExampleTests {
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func theSignUpExampleOnATestClock() async {
    let clock = TestClock()
    let api = GitHubAPI(clock: clock)
    weak var weakForm: SignUpForm?
    var form: SignUpForm? = SignUpForm(api: api)
    weakForm = form
    let shown = form!.shown
    let (changes, input) = AsyncStream.makeStream(of: [String].self)
    let watcher = shown.chain().do { input.yield($0) }.end()
    var delivered = changes.makeAsyncIterator()

    // Typing: only the latest name's answer is shown.
    form!.username.value = "chain"
    await clock.waitForPending(1)
    form!.username.value = "chaining"  // cancels the check of "chain"
    await clock.waitForPending(1)
    await clock.advance(by: .seconds(1))
    #expect(await delivered.next() == ["taken"])

    // A double tap: one sign-up, with the username at the tap.
    form!.username.value = "swift"
    await clock.waitForPending(1)
    form!.taps.notify(value: ())
    form!.taps.notify(value: ())
    await clock.waitForPending(2)  // the check of "swift", and one sign-up
    await clock.advance(by: .seconds(1))
    _ = await delivered.next()
    _ = await delivered.next()
    #expect(Set(shown.value) == ["taken", "available", "signed up swift"])
    #expect(api.signUps.value == ["swift"])

    // Closed mid-call: nothing more is shown, and the form is freed.
    form!.taps.notify(value: ())
    await clock.waitForPending(1)
    form!.close()
    #expect(clock.pendingCount == 0)  // the call was cancelled
    await clock.advance(by: .seconds(5))
    form = nil
    #expect(shown.value.count == 3)
    #expect(api.signUps.value == ["swift"])
    #expect(weakForm == nil)
    watcher.invalidate()
  }
}
