import Observation

// MARK: - RelayableArrayHolder

/// Holds an array of objects that are themselves senders, and relays their broadcasts.
///
/// Like ``ArrayHolder``, with one more event: when an element broadcasts,
/// the holder sends ``Event/relayed(_:at:element:)`` with the value and the
/// element's current index. Inserting an element starts relaying it;
/// replacing or removing it stops.
///
/// ```swift
/// let rows = RelayableArrayHolder([ValueHolder("Buy milk"), ValueHolder("Call Ann")])
/// let observer = rows.chain().do { event in
///   if case .relayed(let title, let index, _) = event { print("row", index, "is now", title) }
/// }.end()
/// rows[1].value = "Call Bob"
/// // Prints "row 1 is now Call Bob"
/// ```
///
/// The holder keeps its elements alive; the elements do not keep the holder
/// alive. Errors and thread safety are those of ``ArrayHolder``.
public final class RelayableArrayHolder<Element: Sendable>: Syncable, Receivable {
  /// A change to the array or a broadcast of one of its elements.
  public enum Event {
    /// The whole array, sent by ``Chain/sync()``.
    case fetched([Element])
    /// The whole array was replaced, or emptied by ``RelayableArrayHolder/removeAll()``.
    case set([Element])
    /// `element` was inserted at `index` (one event per element for a batch).
    case inserted(at: Int, element: Element)
    /// `element` was removed from `index`.
    case removed(at: Int, element: Element)
    /// The element at `index` was replaced by `element`.
    case replaced(at: Int, element: Element)
    /// `element` was moved from index `at` to index `to`.
    case moved(at: Int, to: Int, element: Element)
    /// `element`, now at `index`, broadcast `value`.
    case relayed(Element.ChainValue, at: Int, element: Element)
  }

  /// The type of the values chains receive.
  public typealias ChainValue = Event
  /// The type of the values this holder accepts as a receiver.
  public typealias ReceiveValue = ArrayAction<Element>

  private typealias Entry = Relay<Element, Void>

  private let engine: ArrayEngine<Entry, Event>

  /// Creates a holder of `elements`, relaying their broadcasts.
  ///
  /// - Parameter elements: The initial elements. Defaults to none.
  public init(_ elements: [Element] = []) {
    engine = ArrayEngine([], name: "RelayableArrayHolder") { change in
      switch change {
      case .set(let entries): .set(entries.map(\.element))
      case .inserted(let index, let entry): .inserted(at: index, element: entry.element)
      case .removed(let index, let entry): .removed(at: index, element: entry.element)
      case .replaced(let index, let entry): .replaced(at: index, element: entry.element)
      case .moved(let from, let to, let entry): .moved(at: from, to: to, element: entry.element)
      }
    }
    let relays = elements.map(makeEntry)
    engine.store.write { entries in
      entries = relays
      return (nil, nil)
    }
  }

  private func makeEntry(_ element: Element) -> Entry {
    Relay(element, key: ()) { [weak self] value, relay in
      self?.relay(value, from: relay)
    }
  }

  private func relay(_ value: Element.ChainValue, from relay: Entry) {
    engine.store.write(changes: false) { entries in
      guard let index = entries.firstIndex(where: { $0 === relay }) else { return (nil, nil) }
      return (.relayed(value, at: index, element: relay.element), nil)
    }
  }

  // MARK: Reading

  /// The elements.
  public var raw: [Element] { engine.store.read(observedBy: self) { $0.map(\.element) } }

  /// The number of elements.
  public var count: Int { engine.store.read(observedBy: self) { $0.count } }

  /// The first element, or `nil` when empty.
  public var first: Element? { engine.store.read(observedBy: self) { $0.first?.element } }

  /// The last element, or `nil` when empty.
  public var last: Element? { engine.store.read(observedBy: self) { $0.last?.element } }

  /// The element at `index`; setting it replaces the element (see ``replace(_:at:)``).
  ///
  /// - Parameter index: A valid index; an index out of range stops the program.
  public subscript(index: Int) -> Element {
    get { engine.entry(at: index, in: "subscript", observedBy: self).element }
    set { engine.replace(at: index, with: makeEntry(newValue), in: "subscript").stop() }
  }

  /// Returns the element at `index`.
  ///
  /// - Parameter index: A valid index; an index out of range stops the program.
  public func element(at index: Int) -> Element {
    engine.entry(at: index, in: "element(at:)", observedBy: self).element
  }

  /// The number of elements the holder can store without allocating more,
  /// as `Array.capacity`.
  public var capacity: Int { engine.capacity }

  /// Makes room for at least `minimumCapacity` elements, as
  /// `Array.reserveCapacity(_:)`, before many writes; sends nothing.
  ///
  /// - Parameter minimumCapacity: How many elements to make room for.
  public func reserveCapacity(_ minimumCapacity: Int) {
    engine.reserveCapacity(minimumCapacity)
  }

  // MARK: Writing

  /// Replaces all elements, sends ``Event/set(_:)``, and relays the new elements only.
  public func set(_ elements: [Element]) {
    engine.set(elements.map(makeEntry)).stopRelays()
  }

  /// Appends `element`, sends ``Event/inserted(at:element:)``, and relays it.
  public func append(_ element: Element) {
    engine.insert(makeEntry(element), at: nil, in: "append(_:)")
  }

  /// Appends `elements`, sending one ``Event/inserted(at:element:)`` per element.
  public func append(contentsOf elements: some Sequence<Element>) {
    engine.insert(elements.map(makeEntry), at: nil, in: "append(contentsOf:)")
  }

  /// Inserts `element` at `index` (0 to ``count``) and sends ``Event/inserted(at:element:)``.
  public func insert(_ element: Element, at index: Int) {
    engine.insert(makeEntry(element), at: index, in: "insert(_:at:)")
  }

  /// Removes and returns the element at `index`, sends
  /// ``Event/removed(at:element:)``, and stops relaying it.
  ///
  /// - Returns: The removed element.
  @discardableResult
  public func remove(at index: Int) -> Element {
    let entry = engine.remove(at: index, in: "remove(at:)")
    entry.stop()
    return entry.element
  }

  /// Removes every element, sends ``Event/set(_:)`` with an empty array
  /// (nothing when already empty), and stops relaying them.
  public func removeAll() {
    engine.removeAll().stopRelays()
  }
  /// Removes every elements as ``removeAll()`` does, keeping the storage's
  /// capacity when `keepCapacity` is true, for a holder about to be
  /// refilled.
  ///
  /// - Parameter keepCapacity: Whether to keep the capacity.
  public func removeAll(keepingCapacity keepCapacity: Bool) {
    engine.removeAll(keepingCapacity: keepCapacity).stopRelays()
  }

  /// Replaces the element at `index`, sends ``Event/replaced(at:element:)``,
  /// and moves relaying from the old element to the new one.
  public func replace(_ element: Element, at index: Int) {
    engine.replace(at: index, with: makeEntry(element), in: "replace(_:at:)").stop()
  }

  /// Moves the element at `from` to index `to` and sends
  /// ``Event/moved(at:to:element:)``; nothing when they are equal.
  public func move(at from: Int, to: Int) {
    engine.move(at: from, to: to, in: "move(at:to:)")
  }

  // MARK: Protocols

  /// Returns ``Event/fetched(_:)`` with the current elements; ``Chain/sync()`` sends it.
  public func fetchedValue() -> Event {
    .fetched(engine.store.read { $0.map(\.element) })
  }

  /// Applies an ``ArrayAction`` received through a chain.
  public func receive(value action: ArrayAction<Element>) {
    apply(action)
  }

  /// Subscribes a finished chain and takes the value ``Chain/sync()`` sends, in one step. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Event) -> Void) {
    engine.store.attach(context, handler) { .fetched($0.map(\.element)) }
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (Event) -> Void) {}

  /// The stored core of this holder. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Event>? {
    engine.store.core
  }
}

// @unchecked: the elements and the observers are guarded by the engine's store.
extension RelayableArrayHolder: @unchecked Swift.Sendable
where Element: Swift.Sendable, Element.ChainValue: Swift.Sendable {}

extension RelayableArrayHolder.Event: Swift.Sendable where Element: Swift.Sendable, Element.ChainValue: Swift.Sendable {
}

extension RelayableArrayHolder: ArrayActionApplying {}

extension RelayableArrayHolder.Event: Equatable where Element: Equatable, Element.ChainValue: Equatable {}

/// Reading ``raw``, ``count``, ``first``, ``last``, ``subscript(_:)`` and
/// ``element(at:)`` (the elements; their own changes are theirs to report)
/// inside `withObservationTracking`, as a SwiftUI view's `body` does, registers
/// the read; the next write that changes the holder's state calls the
/// tracking's `onChange`, once, after the change is stored. See
/// <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension RelayableArrayHolder: Observable {}
