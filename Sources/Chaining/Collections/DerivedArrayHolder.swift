import Observation

// MARK: - DerivedArrayHolder

/// A read-only view of an array holder's elements that pass a filter, or
/// sorted, or both: chainable like the holder, with the holder's events.
///
/// Made by ``ArrayHolder/filtered(_:)`` and ``ArrayHolder/sorted(by:)``,
/// and by the same methods on a view, which compose:
///
/// ```swift
/// struct Item: Identifiable, Equatable { let id: Int; var title: String }
/// let items = ArrayHolder([Item(id: 1, title: "milk"), Item(id: 2, title: "eggs")])
/// let search = ValueHolder("")
/// let rows = items
///   .filtered { search.value.isEmpty || $0.title.contains(search.value) }
///   .sorted { $0.title < $1.title }
/// let observer = rows.chain().do { print($0) }.sync()
/// // Prints "fetched([eggs, milk])" (the items, shortened here)
/// items.append(Item(id: 3, title: "bread"))
/// // Prints "inserted(at: 0, element: bread)"
/// search.value = "e"
/// // Prints "removed(at: 2, element: milk)"
/// ```
///
/// ### Events
/// Each event of the source becomes the view's own, at the view's
/// indices: an inserted element that passes is inserted where the view
/// puts it; a removed one is removed if it was there; a replaced one is
/// inserted, removed, replaced, or replaced and then moved (a sorted
/// view); a moved one is moved (a filtered view that does not sort). A
/// `set` of the source is a `set` of the view. ``Chain/sync()`` sends the
/// whole view as ``ArrayHolder/Event/fetched(_:)``. Applying the events in
/// order to the array `sync()` sent always gives ``raw``.
///
/// ### The filter
/// It runs on the thread that writes the source, under the view's lock,
/// once per element an event brings. What it reads besides the element
/// (a search text in a ``ValueHolder``, a `Computed`) is tracked as a
/// `Computed` tracks its reads: when one of them changes, the filter runs
/// again over every element at the end of that wave, and the view sends
/// the removals, highest index first, then the insertions, lowest first,
/// not a whole-array event. The reads are found by running the filter
/// over the source's elements when the view is made, when the source
/// stops being empty, and after each change of what it read (those runs
/// are outside the view's lock, on the thread whose wave changed the
/// read, like a `Computed`'s evaluation): read those holders before any
/// condition on the element, as above, so that every run reads them. The
/// filter must therefore be a pure function of the element and what it
/// reads.
///
/// ### The order
/// A sorted view orders by `areInIncreasingOrder`, which must be a strict
/// weak ordering, as for `Array.sorted(by:)`. Elements it finds equal
/// keep the order in which they entered the view: the source's order
/// when the view is made, and an element inserted later (or let in again
/// by the filter) goes after those equal to it. A replaced element keeps
/// its place among equals. Moving an element in the source does not move
/// it in a sorted view.
///
/// ### Cost
/// One event of the source costs the view O(log n) steps, one filter call
/// and O(log n) comparisons, whatever the size; ``subscript(_:)`` is
/// O(log n). ``raw`` makes the array in O(n) after a change, and returns
/// it in O(1) until the next. A change of what the filter reads costs
/// O(n) filter calls. See Performance.md.
///
/// ### Threads and waves
/// The view may be read from any thread. It takes each event of its
/// source in order, on the thread that delivers it, and its chains get the
/// view's events in that order, in the same wave: within a wave a chain
/// never sees the view half changed, and a `combine` of the view with its
/// source is sent once, with both changed.
///
/// ### Retention
/// The view holds its source strongly, and its filter and comparison;
/// the source does not hold the view. A chain on the view follows the
/// view's lifetime, as a chain on a holder follows the holder's: keep the
/// view.
public final class DerivedArrayHolder<Element>: Fetchable {
  /// The type of the events chains receive: the array holder's.
  public typealias ChainValue = ArrayHolder<Element>.Event

  let store: HolderStore<ArrayDerivation<Element>, ChainValue>
  /// The source, kept alive.
  private let source: AnyObject
  /// The chains that feed the view: the source's events, and the changes
  /// of what the filter reads. Set once, in `init`.
  private var feeds: [Observer] = []
  /// Bumped when the source stops being empty, so that the filter's
  /// reads are found again (see `watchFilter`).
  private let rescan = ValueHolder(0)
  /// Whether the view filters.
  private let filters: Bool
  /// The filter, when the view filters and does not sort: `sorted(by:)`
  /// then makes one view that does both, from this view's source.
  private let filterOnly: (@Sendable (Element) -> Bool)?
  /// Makes a view of this view's source.
  private let sibling:
    (
      _ isIncluded: (@Sendable (Element) -> Bool)?,
      _ areInIncreasingOrder: (@Sendable (Element, Element) -> Bool)?
    ) -> DerivedArrayHolder<Element>

  init(
    _ source: some ArrayEventSource<Element>,
    isIncluded: (@Sendable (Element) -> Bool)?,
    areInIncreasingOrder: (@Sendable (Element, Element) -> Bool)?
  ) {
    store = HolderStore(ArrayDerivation(isIncluded: isIncluded, areInIncreasingOrder: areInIncreasingOrder))
    self.source = source
    filters = isIncluded != nil
    filterOnly = areInIncreasingOrder == nil ? isIncluded : nil
    sibling = { DerivedArrayHolder(source, isIncluded: $0, areInIncreasingOrder: $1) }
    // The view's writes come from its source's deliveries: its events are
    // sent, in a wave, after what the source's writes reach first.
    RankGraph.link(source.rankNode, to: store.core)
    // Not a chain: a chain skips a write its own delivery caused (a
    // handler on the view that writes the source), and the view must
    // take every change of its source, or its indices go wrong.
    let feed = Observer()
    source.feed(feed) { [weak self] event in self?.take(event) }
    feed.start(fetching: true)
    feeds.append(feed)
    if let isIncluded { watchFilter(isIncluded) }
  }

  /// Follows what `isIncluded` reads, with a computed value that runs it
  /// over the source's elements: each of its evaluations, at the end of a
  /// wave that changed one of those reads, runs the filter again. Its
  /// changes are never skipped as echoes either.
  private func watchFilter(_ isIncluded: @escaping @Sendable (Element) -> Bool) {
    let rescan = rescan
    let probe = Computed(name: "DerivedArrayHolder.filtered") { [weak self] in
      _ = rescan.value
      guard let self else { return }
      for element in store.read({ $0.sourceElements() }) { _ = isIncluded(element) }
    }
    RankGraph.link(probe.box.core, to: store.core)
    let watch = Observer()
    // The watch keeps the computed value, as a chain on it would.
    watch.retain(probe)
    probe.box.subscribe(watch, dropsEchoes: false, fetches: false) { [weak self] _ in self?.refilter() }
    watch.start(fetching: false)
    feeds.append(watch)
  }

  // MARK: Reading

  /// The elements of the view, in its order.
  public var raw: [Element] { store.readUpdating(observedBy: self) { $0.view() } }

  /// The number of elements in the view.
  public var count: Int { store.read(observedBy: self) { $0.count } }

  /// The first element of the view, or `nil` when it is empty.
  public var first: Element? {
    store.read(observedBy: self) { $0.count == 0 ? nil : $0.element(atView: 0) }
  }

  /// The last element of the view, or `nil` when it is empty.
  public var last: Element? {
    store.read(observedBy: self) { $0.count == 0 ? nil : $0.element(atView: $0.count - 1) }
  }

  /// The element at `index` of the view. O(log n).
  ///
  /// - Parameter index: A valid index; an index out of range stops the
  ///   program with a message naming it and the count.
  public subscript(index: Int) -> Element {
    element(at: index)
  }

  /// Returns the element at `index` of the view. O(log n).
  ///
  /// - Parameter index: A valid index; an index out of range stops the
  ///   program with a message naming it and the count.
  public func element(at index: Int) -> Element {
    let found = store.read(observedBy: self) { state -> Element? in
      guard index >= 0, index < state.count else { return nil }
      return state.element(atView: index)
    }
    guard let found else {
      fatalError("DerivedArrayHolder.element(at:): index \(index) is out of range for count \(count)")
    }
    return found
  }

  // MARK: Composing

  /// A view of this view's elements that pass `isIncluded`, in its order.
  /// See ``ArrayHolder/filtered(_:)``.
  ///
  /// - Parameter isIncluded: Whether an element is in the new view.
  /// - Returns: A view that holds this one.
  public func filtered(_ isIncluded: @escaping @Sendable (Element) -> Bool) -> DerivedArrayHolder<Element> {
    DerivedArrayHolder(self, isIncluded: isIncluded, areInIncreasingOrder: nil)
  }

  /// A view of this view's elements sorted by `areInIncreasingOrder`. See
  /// ``ArrayHolder/sorted(by:)``.
  ///
  /// Sorting a view that only filters makes one view that filters and
  /// sorts, from the same source, rather than a view of this one: the
  /// same elements, in the same order, at the cost of one view. A change
  /// of what the filter reads then sends its removals and insertions at
  /// the sorted view's indices, highest removal first.
  ///
  /// - Parameter areInIncreasingOrder: A strict weak ordering.
  /// - Returns: A view that holds this one, or this one's source.
  public func sorted(
    by areInIncreasingOrder: @escaping @Sendable (Element, Element) -> Bool
  ) -> DerivedArrayHolder<Element> {
    if let filterOnly { return sibling(filterOnly, areInIncreasingOrder) }
    return DerivedArrayHolder(self, isIncluded: nil, areInIncreasingOrder: areInIncreasingOrder)
  }

  // MARK: Protocols

  /// Returns ``ArrayHolder/Event/fetched(_:)`` with the view's elements;
  /// ``Chain/sync()`` sends it.
  public func fetchedValue() -> ChainValue {
    .fetched(store.withLock { state, _ in state.view() })
  }

  /// Subscribes a finished chain and takes the value ``Chain/sync()``
  /// sends, in one step. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (ChainValue) -> Void) {
    store.attach(context, handler) { .fetched($0.view()) }
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (ChainValue) -> Void) {}

  // MARK: Changes

  /// Takes one event of the source, under the lock, and sends the view's.
  private func take(_ event: ChainValue) {
    var becameNonEmpty = false
    store.writeEvents { state -> (events: [ChainValue], result: Void, garbage: Any?) in
      let wasEmpty = state.sourceCount == 0
      let events = store.callingOut(.viewClosure) { state.apply(event) }
      becameNonEmpty = wasEmpty && state.sourceCount != 0
      // The source's first value, from `sync()` in `init`: nobody has
      // seen the view yet.
      if case .fetched = event { return ([], (), nil) }
      return (events, (), nil)
    }
    if becameNonEmpty && filters { rescan.value &+= 1 }
  }

  /// Runs the filter again over every element and sends what changed.
  private func refilter() {
    store.writeEvents { state -> (events: [ChainValue], result: Void, garbage: Any?) in
      (store.callingOut(.viewClosure) { state.refilter() }, (), nil)
    }
  }
}

// @unchecked: the state is guarded by the store's lock, `feeds` is set
// only in `init`, and the closures are `@Sendable`.
extension DerivedArrayHolder: @unchecked Swift.Sendable where Element: Swift.Sendable {}

/// Reading ``raw``, ``count``, ``first``, ``last`` and ``subscript(_:)``
/// inside `withObservationTracking`, as a SwiftUI view's `body` does,
/// registers the read; the next change of the view calls `onChange`. See
/// <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension DerivedArrayHolder: Observable {}

// MARK: - Sources of views

/// What a ``DerivedArrayHolder`` is made from: an array holder or another
/// view, which feeds it every event, with its elements first.
protocol ArrayEventSource<Element>: AnyObject {
  associatedtype Element
  /// What the source's writes raise in a wave's order (see `RankGraph`).
  var rankNode: any Ranked { get }
  /// Subscribes `handler` in `context`, with the source's elements as
  /// its fetch, never skipping a write as an echo.
  func feed(_ context: Observer, _ handler: @escaping (ArrayHolder<Element>.Event) -> Void)
}

extension ArrayHolder: ArrayEventSource {
  var rankNode: any Ranked { engine.store.core }

  func feed(_ context: Observer, _ handler: @escaping (Event) -> Void) {
    engine.store.attach(context, handler, dropsEchoes: false) { .fetched($0) }
  }
}

extension DerivedArrayHolder: ArrayEventSource {
  var rankNode: any Ranked { store.core }

  func feed(_ context: Observer, _ handler: @escaping (ChainValue) -> Void) {
    store.attach(context, handler, dropsEchoes: false) { .fetched($0.view()) }
  }
}

// MARK: - Making views

extension ArrayHolder {
  /// A read-only view of the elements that pass `isIncluded`, in the
  /// holder's order, with the holder's events at the view's indices.
  ///
  /// ```swift
  /// let numbers = ArrayHolder([1, 2, 3, 4])
  /// let even = numbers.filtered { $0.isMultiple(of: 2) }
  /// numbers.append(6)
  /// // even.raw == [2, 4, 6]; its chains got inserted(at: 2, element: 6)
  /// ```
  ///
  /// `isIncluded` runs on the thread that writes the holder, under the
  /// view's lock; what it reads besides the element (a search text) is
  /// tracked, and a change of it filters again. See ``DerivedArrayHolder``.
  ///
  /// - Parameter isIncluded: Whether an element is in the view. It must
  ///   not read the view.
  /// - Returns: A view that holds this holder; keep it.
  public func filtered(_ isIncluded: @escaping @Sendable (Element) -> Bool) -> DerivedArrayHolder<Element> {
    DerivedArrayHolder(self, isIncluded: isIncluded, areInIncreasingOrder: nil)
  }

  /// A read-only view of the elements sorted by `areInIncreasingOrder`,
  /// kept sorted as the holder changes, with the holder's events at the
  /// view's indices.
  ///
  /// ```swift
  /// let names = ArrayHolder(["b", "c"])
  /// let sorted = names.sorted(by: <)
  /// names.append("a")
  /// // sorted.raw == ["a", "b", "c"]; its chains got inserted(at: 0, element: "a")
  /// ```
  ///
  /// See ``DerivedArrayHolder`` for the order of equal elements.
  ///
  /// - Parameter areInIncreasingOrder: A strict weak ordering. It runs on
  ///   the thread that writes the holder, under the view's lock, and must
  ///   not read the view.
  /// - Returns: A view that holds this holder; keep it.
  public func sorted(
    by areInIncreasingOrder: @escaping @Sendable (Element, Element) -> Bool
  ) -> DerivedArrayHolder<Element> {
    DerivedArrayHolder(self, isIncluded: nil, areInIncreasingOrder: areInIncreasingOrder)
  }
}

extension ReadOnlyArrayHolder {
  /// A view of the holder's elements that pass `isIncluded`: see
  /// ``ArrayHolder/filtered(_:)``.
  ///
  /// - Parameter isIncluded: Whether an element is in the view.
  /// - Returns: A view that holds the holder.
  public func filtered(_ isIncluded: @escaping @Sendable (Element) -> Bool) -> DerivedArrayHolder<Element> {
    holder.filtered(isIncluded)
  }

  /// A view of the holder's elements, sorted: see ``ArrayHolder/sorted(by:)``.
  ///
  /// - Parameter areInIncreasingOrder: A strict weak ordering.
  /// - Returns: A view that holds the holder.
  public func sorted(
    by areInIncreasingOrder: @escaping @Sendable (Element, Element) -> Bool
  ) -> DerivedArrayHolder<Element> {
    holder.sorted(by: areInIncreasingOrder)
  }
}
