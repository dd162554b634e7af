// The patterns of Documentation/Patterns.md, run: an event bus, a
// unidirectional store, a custom source and a view model that owns its
// observers. They compile in Swift 6 language mode with no warning.
import Chaining
import Dispatch
import Testing

// MARK: - A typed event bus

private struct LoggedIn: Swift.Sendable { let name: String }
private struct ItemAdded: Swift.Sendable { let title: String }

/// One notifier per event type: posting and observing are checked by the compiler.
private final class AppEvents: Swift.Sendable {
  let loggedIn = Notifier<LoggedIn>()
  let itemAdded = Notifier<ItemAdded>()
}

/// Counts added items for as long as it lives.
private final class Badge {
  private(set) var count = 0
  private let pool = ObserverPool()

  init(events: AppEvents) {
    events.itemAdded.chain().do { [weak self] _ in self?.count += 1 }.end().addTo(pool)
  }
}

/// Shows who logged in, on the main actor, whatever thread posted.
@MainActor
private final class Greeting {
  private(set) var text = ""
  private var observer: Observer?

  func bind(to events: AppEvents) {
    observer = events.loggedIn.chain().map { "Hi, \($0.name)" }.doOnMainActor { [weak self] in self?.text = $0 }.end()
  }
}

// MARK: - A unidirectional store

private enum CounterAction: Swift.Sendable {
  case increment
  case add(Int)
}

private struct CounterState: Equatable, Swift.Sendable {
  var count = 0
  var history: [Int] = []
}

/// Actions go in through a send-only view; state comes out through a read-only one.
private final class CounterStore {
  private let state = ValueHolder(CounterState())
  private let actions = Notifier<CounterAction>()
  private let pool = ObserverPool()

  /// Where views send actions; it cannot read or subscribe.
  var dispatch: AnyReceiver<CounterAction> { actions.sendOnly }
  /// What views read and bind to; it cannot write.
  var current: ReadOnlyValueHolder<CounterState> { state.readOnly }

  init() {
    actions.chain().do { [state] action in state.value = Self.reduce(state.value, action) }.end().addTo(pool)
  }

  static func reduce(_ state: CounterState, _ action: CounterAction) -> CounterState {
    var next = state
    switch action {
    case .increment: next.count += 1
    case .add(let amount): next.count += amount
    }
    next.history.append(next.count)
    return next
  }
}

/// A view of the store: it sends actions and shows state, and nothing else.
private final class CounterView {
  private(set) var label = ""
  private let pool = ObserverPool()
  private let dispatch: AnyReceiver<CounterAction>

  init(state: ReadOnlyValueHolder<CounterState>, dispatch: AnyReceiver<CounterAction>) {
    self.dispatch = dispatch
    state.chain().map { "Count: \($0.count)" }.do { [weak self] in self?.label = $0 }.sync().addTo(pool)
  }

  func tapPlus() { dispatch.receive(value: .increment) }
}

// MARK: - A custom source

/// A source of the user's own: a current reading, and a broadcast on each change.
private final class Thermometer: Syncable {
  typealias ChainValue = Double
  private var reading: Double

  init(_ reading: Double) { self.reading = reading }

  func update(_ celsius: Double) {
    reading = celsius
    broadcast(value: celsius)
  }

  func fetchedValue() -> Double { reading }
}

/// Takes any source of temperatures that has a current value.
private func display(_ temperature: some Fetchable<Double> & Sendable<Double>, on lines: ValueHolder<[String]>)
  -> Observer
{
  temperature.chain().map { "\($0) °C" }.do { lines.value.append($0) }.sync()
}

// MARK: - A view model that owns its observers

private final class ProfileViewModel {
  private(set) var title = ""
  private(set) var badge = ""
  private let pool = ObserverPool()

  init(name: ReadOnlyValueHolder<String>, unread: ReadOnlyValueHolder<Int>) {
    name.chain().map { "Hello, \($0)" }.do { [weak self] in self?.title = $0 }.sync().addTo(pool)
    unread.chain().map { $0 == 0 ? "" : "\($0)" }.do { [weak self] in self?.badge = $0 }.sync().addTo(pool)
  }
}

// MARK: - Naming sources by their value type

/// Takes a source with a current value that also pushes changes.
private func show(_ count: some Fetchable<Int> & Sendable<Int>, into lines: ValueHolder<[String]>) -> Observer {
  count.chain().map { "\($0) items" }.do { lines.value.append($0) }.sync()
}

@Suite struct ViewsPatternsTests {
  // `any Chainable<Int>`: a parameterized protocol type needs the runtime
  // of macOS 13.
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func sourcesAndReceiversNamedByValueType() {
    let lines = ValueHolder<[String]>([])
    let count = ValueHolder(3)
    let shown = show(count, into: lines)
    count.value = 4
    let sources: [any Chainable<Int>] = [count, Notifier<Int>()]
    let observers = sources.map { $0.chain().do { lines.value.append("any: \($0)") }.end() }
    let sinks: [any Receivable<Int>] = [count, Notifier<Int>()]
    for sink in sinks { sink.receive(value: 5) }
    #expect(lines.value == ["3 items", "4 items", "5 items", "any: 5"])
    shown.invalidate()
    for observer in observers { observer.invalidate() }
  }

  @Test func inboxPublishesReadOnlyState() {
    final class Inbox {
      private let unreadHolder = ValueHolder(0)
      private let messagesHolder = ArrayHolder<String>()
      var unread: ReadOnlyValueHolder<Int> { unreadHolder.readOnly }
      var messages: ReadOnlyArrayHolder<String> { messagesHolder.readOnly }
      func deliver(_ message: String) {
        messagesHolder.append(message)
        unreadHolder.value += 1
      }
    }
    let inbox = Inbox()
    let seen = ValueHolder<[Int]>([])
    let badge = inbox.unread.chain().do { seen.value.append($0) }.sync()
    inbox.deliver("Hi")
    #expect(seen.value == [0, 1])
    #expect(inbox.messages.raw == ["Hi"])
    #expect(inbox.unread.value == 1)
    badge.invalidate()
  }

  @Test func busDeliversEachEventTypeToItsObservers() {
    let events = AppEvents()
    let badge = Badge(events: events)
    events.itemAdded.notify(value: ItemAdded(title: "milk"))
    events.loggedIn.notify(value: LoggedIn(name: "Ann"))
    events.itemAdded.notify(value: ItemAdded(title: "eggs"))
    #expect(badge.count == 2)
  }

  @Test func busObserversEndWhenTheirOwnerIsFreed() {
    let events = AppEvents()
    weak var weakBadge: Badge?
    do {
      let badge = Badge(events: events)
      weakBadge = badge
      events.itemAdded.notify(value: ItemAdded(title: "milk"))
      #expect(badge.count == 1)
      #expect(events.itemAdded.observerCount == 1)
    }
    #expect(weakBadge == nil)
    #expect(events.itemAdded.observerCount == 0)
  }

  @Test @MainActor func busDeliversOnTheMainActorWhateverThreadPosts() async {
    let events = AppEvents()
    let greeting = Greeting()
    greeting.bind(to: events)
    await Task.detached { events.loggedIn.notify(value: LoggedIn(name: "Bob")) }.value
    // The delivery was queued on the main queue; this runs after it.
    await withCheckedContinuation { continuation in DispatchQueue.main.async { continuation.resume() } }
    #expect(greeting.text == "Hi, Bob")
  }

  @Test func busDeliversOnAQueue() {
    let events = AppEvents()
    let queue = DispatchQueue(label: "bus")
    let seen = ValueHolder<[String]>([])
    let observer = titles(of: events, into: seen, on: queue)
    events.itemAdded.notify(value: ItemAdded(title: "milk"))
    events.itemAdded.notify(value: ItemAdded(title: "eggs"))
    queue.sync {}
    #expect(seen.value == ["milk", "eggs"])
    observer.invalidate()
  }

  @Test func storeTakesActionsInAndSendsStateOut() {
    let store = CounterStore()
    let view = CounterView(state: store.current, dispatch: store.dispatch)
    #expect(view.label == "Count: 0")
    view.tapPlus()
    store.dispatch.receive(value: .add(5))
    #expect(view.label == "Count: 6")
    #expect(store.current.value == CounterState(count: 6, history: [1, 6]))
  }

  @Test func customSourceSyncsThroughAGenericFunction() {
    let thermometer = Thermometer(20)
    let lines = ValueHolder<[String]>([])
    let observer = display(thermometer, on: lines)
    thermometer.update(21.5)
    #expect(lines.value == ["20.0 °C", "21.5 °C"])
    observer.invalidate()
  }

  @Test func viewModelOwnsItsObservers() {
    let name = ValueHolder("Ann")
    let unread = ValueHolder(0)
    var viewModel: ProfileViewModel? = ProfileViewModel(name: name.readOnly, unread: unread.readOnly)
    #expect(viewModel?.title == "Hello, Ann")
    #expect(viewModel?.badge == "")
    unread.value = 3
    #expect(viewModel?.badge == "3")
    #expect(name.observerCount == 1)
    viewModel = nil
    #expect(name.observerCount == 0)
    #expect(unread.observerCount == 0)
  }
}

/// The titles of the items added, appended on `queue`. Nonisolated, so that
/// the steps run on the queue in an app target too, where code is on the
/// main actor unless it says otherwise (see `searchResults` in
/// CrossThreadPatternsTests.swift).
private nonisolated func titles(of events: AppEvents, into seen: ValueHolder<[String]>, on queue: DispatchQueue)
  -> Observer
{
  events.itemAdded.chain().receive(on: queue).map(\.title).do { seen.value.append($0) }.end()
}
