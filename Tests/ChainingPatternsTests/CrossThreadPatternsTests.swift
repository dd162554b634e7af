// The patterns for values that cross threads: `Swift.Sendable` values, and
// `@MainActor` or `@Sendable` code where a hop happens. They compile in Swift 6
// language mode with no warning.
import Chaining
import Dispatch
import Testing

/// A main-actor view model, bound with `doOnMainActor`.
@MainActor
private final class StatusViewModel {
  private(set) var status = ""
  private var observer: Observer?

  func bind(to progress: ValueHolder<Int>) {
    observer = progress.chain().map { "\($0)%" }.doOnMainActor { [weak self] in self?.status = $0 }.sync()
  }
}

/// A main-actor view model, bound with plain steps: written on the main
/// actor, they run there, so their closures may touch its state.
@MainActor
private final class CartViewModel {
  private(set) var summary = ""
  private(set) var updates = 0
  private var observer: Observer?

  func bind(to count: ValueHolder<Int>) {
    observer = count.chain()
      .filter { $0 >= 0 }
      .map { "\($0) items" }
      .do { [weak self] text in
        self?.updates += 1
        self?.summary = text
      }
      .sync()
  }
}

/// An actor that binds a holder to its own state with a plain closure.
private actor Tally {
  private(set) var total = 0
  private var observer: Observer?
  private var waiter: (total: Int, continuation: CheckedContinuation<Void, Never>)?

  func track(_ amounts: ValueHolder<Int>) {
    // The closure holds the actor, and the actor the observer: `stop()`
    // ends the binding, and so the cycle.
    observer = amounts.chain().do { amount in self.add(amount) }.sync()
  }

  func stop() {
    observer?.invalidate()
    observer = nil
  }

  private func add(_ amount: Int) {
    total += amount
    if let waiter, total >= waiter.total {
      self.waiter = nil
      waiter.continuation.resume()
    }
  }

  func waitForTotal(_ total: Int) async {
    if self.total >= total { return }
    await withCheckedContinuation { waiter = (total, $0) }
  }
}

/// A main-actor view, bound with `sendTo`.
@MainActor
private final class StatusLabel: MainActorReceivable {
  private(set) var text = ""
  func receive(value: String) { text = value }
}

/// An actor that owns bindings: observers and holders are `Swift.Sendable`.
private actor Downloads {
  let progress = ValueHolder(0)
  private let pool = ObserverPool()

  func watch(_ onChange: @escaping @Sendable (Int) -> Void) {
    progress.chain().do(onChange).sync().addTo(pool)
  }

  func finish() {
    progress.value = 100
  }
}

@Suite struct CrossThreadPatternsTests {
  @Test @MainActor func mainActorViewModelFollowsAModelWrittenOnAnotherThread() async {
    let progress = ValueHolder(0)
    let viewModel = StatusViewModel()
    viewModel.bind(to: progress)
    #expect(viewModel.status == "0%")
    await Task.detached { progress.value = 50 }.value
    // The update was queued on the main queue; this runs after it.
    await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
    #expect(viewModel.status == "50%")
  }

  @Test @MainActor func plainStepsInAMainActorViewModelRunOnTheMainActor() async {
    let count = ValueHolder(1)
    let viewModel = CartViewModel()
    viewModel.bind(to: count)
    #expect(viewModel.summary == "1 items")
    await Task.detached {
      for value in 2...4 { count.value = value }
    }.value
    // The updates were queued on the main queue; this runs after them.
    await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
    #expect(viewModel.summary == "4 items")
    #expect(viewModel.updates == 4)
  }

  @Test func anActorBindsItsOwnState() async {
    let amounts = ValueHolder(5)
    let tally = Tally()
    await tally.track(amounts)
    #expect(await tally.total == 5)
    await Task.detached {
      for amount in [10, 20] { amounts.value = amount }
    }.value
    await tally.waitForTotal(35)
    #expect(await tally.total == 35)
    await tally.stop()
  }

  @Test @MainActor func mainActorLabelIsASendToTarget() {
    let title = ValueHolder("Inbox")
    let label = StatusLabel()
    let observer = title.chain().sendTo(label).sync()
    #expect(label.text == "Inbox")
    withExtendedLifetime(observer) {}
  }

  @Test func forAwaitOverAHolder() async {
    let progress = ValueHolder(0)
    let writer = Task.detached {
      for value in 1...3 { progress.value = value }
    }
    var seen: [Int] = []
    for await value in progress.chain().values {
      seen.append(value)
      if value == 3 { break }
    }
    await writer.value
    #expect(seen.last == 3)
    #expect(seen == seen.sorted())
  }

  @Test func holdersAreSetFromTasks() async {
    let total = ValueHolder(0)
    let observed = ValueHolder(0)
    let observer = total.chain().sendTo(observed).sync()
    await withTaskGroup(of: Void.self) { group in
      for value in 1...10 {
        group.addTask { total.value = value }
      }
    }
    #expect(observed.value == total.value)
    withExtendedLifetime(observer) {}
  }

  @Test func anActorOwnsItsBindings() async {
    let downloads = Downloads()
    let last = ValueHolder(-1)
    await downloads.watch { last.value = $0 }
    await downloads.finish()
    #expect(last.value == 100)
  }

  @Test func workMovesToAQueue() {
    let queue = DispatchQueue(label: "patterns")
    let query = ValueHolder("")
    let results = ValueHolder<[String]>([])
    let observer = searchResults(of: query, into: results, on: queue)
    query.value = "a"
    queue.sync {}
    #expect(results.value == ["a1", "a2"])
    withExtendedLifetime(observer) {}
  }
}

/// Moves the work of a chain to `queue`. Nonisolated: steps written on an
/// actor run on that actor, after `receive(on:)` too, and in an app target
/// with Xcode 26's settings all code is on the main actor unless it says
/// otherwise (ChainingAppTemplateTests builds this file so).
private nonisolated func searchResults(
  of query: ValueHolder<String>,
  into results: ValueHolder<[String]>,
  on queue: DispatchQueue
) -> Observer {
  query.chain()
    .receive(on: queue)
    .map { text in ["\(text)1", "\(text)2"] }
    .sendTo(results)
    .end()
}
