import Observation

// MARK: - ArrayHolder

/// Holds an array and broadcasts each change to it as an event.
///
/// Bind lists and tables with an `ArrayHolder`: ``Chain/sync()`` sends the
/// whole array as ``Event/fetched(_:)``, then every write sends one event
/// saying exactly what changed, so a view can insert, remove or move rows
/// instead of reloading.
///
/// ```swift
/// let todos = ArrayHolder(["Buy milk"])
/// let observer = todos.chain().do { event in
///   switch event {
///   case .fetched(let all), .set(let all): print("reload", all)
///   case .inserted(let index, let todo): print("insert", todo, "at", index)
///   case .removed(let index, _): print("delete row", index)
///   case .replaced(let index, let todo): print("update row", index, "to", todo)
///   case .moved(let from, let to, _): print("move", from, "to", to)
///   }
/// }.sync()
/// // Prints "reload ["Buy milk"]"
/// todos.append("Call Ann")
/// // Prints "insert Call Ann at 1"
/// ```
///
/// Applying the events, in order, to a copy of the array made when the chain
/// synced always reproduces ``raw``.
///
/// ### Errors
/// An index out of range stops the program with a message naming the
/// method, the index and the count, like Swift's `Array`. Nothing is changed
/// and nothing is sent.
///
/// ### Thread safety
/// An array holder may be read and written from any thread. Writes are
/// serialized and their events reach every chain in the order of the writes.
/// Reading ``raw`` copies the array in O(1) (copy on write).
public final class ArrayHolder<Element>: Syncable, Receivable {
  /// A change to the array, as chains receive it.
  public enum Event {
    /// The whole array, sent by ``Chain/sync()``.
    case fetched([Element])
    /// The whole array was replaced (``ArrayHolder/set(_:)``, or emptied by
    /// ``ArrayHolder/removeAll()``).
    case set([Element])
    /// `element` was inserted at `index`. ``ArrayHolder/append(contentsOf:)``
    /// sends one such event per element, in order.
    case inserted(at: Int, element: Element)
    /// `element` was removed from `index`.
    case removed(at: Int, element: Element)
    /// The element at `index` was replaced by `element`.
    case replaced(at: Int, element: Element)
    /// `element` was moved from index `at` to index `to`.
    case moved(at: Int, to: Int, element: Element)
  }

  /// The type of the values chains receive.
  public typealias ChainValue = Event
  /// The type of the values this holder accepts as a receiver.
  public typealias ReceiveValue = ArrayAction<Element>

  @usableFromInline let engine: ArrayEngine<Element, Event>

  /// Creates a holder of `elements`.
  ///
  /// - Parameter elements: The initial elements. Defaults to none.
  @inlinable
  public init(_ elements: [Element] = []) {
    engine = ArrayEngine(elements, name: "ArrayHolder") { change in
      switch change {
      case .set(let elements): .set(elements)
      case .inserted(let index, let element): .inserted(at: index, element: element)
      case .removed(let index, let element): .removed(at: index, element: element)
      case .replaced(let index, let element): .replaced(at: index, element: element)
      case .moved(let from, let to, let element): .moved(at: from, to: to, element: element)
      }
    }
  }

  // MARK: Reading

  /// The elements.
  public var raw: [Element] { engine.store.read(observedBy: self) { $0 } }

  /// The number of elements.
  public var count: Int { engine.store.read(observedBy: self) { $0.count } }

  /// The first element, or `nil` when empty.
  public var first: Element? { engine.store.read(observedBy: self) { $0.first } }

  /// The last element, or `nil` when empty.
  public var last: Element? { engine.store.read(observedBy: self) { $0.last } }

  /// The element at `index`; setting it replaces the element (see ``replace(_:at:)``).
  ///
  /// - Parameter index: A valid index; an index out of range stops the program.
  public subscript(index: Int) -> Element {
    get { engine.entry(at: index, in: "subscript", observedBy: self) }
    set { _ = engine.replace(at: index, with: newValue, in: "subscript") }
  }

  /// Returns the element at `index`.
  ///
  /// - Parameter index: A valid index; an index out of range stops the program.
  public func element(at index: Int) -> Element {
    engine.entry(at: index, in: "element(at:)", observedBy: self)
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

  /// Replaces all elements and sends ``Event/set(_:)``.
  ///
  /// - Parameter elements: The new elements.
  public func set(_ elements: [Element]) {
    engine.set(elements)
  }

  /// Appends `element` and sends ``Event/inserted(at:element:)``.
  @inlinable
  public func append(_ element: Element) {
    engine.insert(element, at: nil, in: "append(_:)") { .inserted(at: $0, element: element) }
  }

  /// Appends `elements`, sending one ``Event/inserted(at:element:)`` per
  /// element, in order, with no other event in between.
  public func append(contentsOf elements: some Sequence<Element>) {
    engine.insert(Array(elements), at: nil, in: "append(contentsOf:)")
  }

  /// Inserts `element` at `index` and sends ``Event/inserted(at:element:)``.
  ///
  /// - Parameters:
  ///   - element: The element to insert.
  ///   - index: From 0 to ``count``; anything else stops the program.
  @inlinable
  public func insert(_ element: Element, at index: Int) {
    engine.insert(element, at: index, in: "insert(_:at:)") { .inserted(at: $0, element: element) }
  }

  /// Removes and returns the element at `index`, and sends ``Event/removed(at:element:)``.
  ///
  /// - Parameter index: A valid index; an index out of range stops the program.
  /// - Returns: The removed element.
  @discardableResult
  public func remove(at index: Int) -> Element {
    engine.remove(at: index, in: "remove(at:)")
  }

  /// Removes every element and sends ``Event/set(_:)`` with an empty array.
  ///
  /// Sends nothing when the array is already empty.
  public func removeAll() {
    _ = engine.removeAll()
  }
  /// Removes every elements as ``removeAll()`` does, keeping the storage's
  /// capacity when `keepCapacity` is true, for a holder about to be
  /// refilled.
  ///
  /// - Parameter keepCapacity: Whether to keep the capacity.
  public func removeAll(keepingCapacity keepCapacity: Bool) {
    _ = engine.removeAll(keepingCapacity: keepCapacity)
  }

  /// Replaces the element at `index` and sends ``Event/replaced(at:element:)``.
  ///
  /// - Parameters:
  ///   - element: The new element.
  ///   - index: A valid index; an index out of range stops the program.
  public func replace(_ element: Element, at index: Int) {
    _ = engine.replace(at: index, with: element, in: "replace(_:at:)")
  }

  /// Moves the element at `from` so that it ends at index `to`, and sends
  /// ``Event/moved(at:to:element:)``.
  ///
  /// Moving to the same index changes nothing and sends nothing.
  ///
  /// - Parameters:
  ///   - from: A valid index of the element to move.
  ///   - to: A valid index, where the element ends up.
  public func move(at from: Int, to: Int) {
    engine.move(at: from, to: to, in: "move(at:to:)")
  }

  // MARK: Changing in place

  /// Changes the elements in place, in one step under the holder's lock,
  /// and sends what changed; returns what `body` returns.
  ///
  /// ```swift
  /// let tags = ArrayHolder(["a", "b", "c"])
  /// let observer = tags.chain().do { print($0) }.end()
  /// tags.modify { elements in
  ///   elements.removeAll { $0 == "b" }
  ///   elements.append("d")
  /// }
  /// // Prints "removed(at: 1, element: "b")", then "inserted(at: 2, element: "d")"
  /// ```
  ///
  /// For `Equatable` elements, the events come from the difference between
  /// the old and the new elements (`CollectionDifference`'s, with its
  /// moves inferred): first the removals, highest index first; then, from
  /// the first index of the new array to the last, the insertions, and
  /// each element that moved as ``Event/moved(at:to:element:)``, lowest
  /// index first. Applied in order to the old array, they give the new
  /// one. A change of an element is its removal and an insertion. The
  /// elements before the first change and after the last whose bits are
  /// unchanged are unchanged, without a call to `==` (a `Double.nan` left
  /// alone there is not sent); between the changes, `==` decides. For
  /// other elements, one ``Event/set(_:)`` of the whole array. Nothing is
  /// sent when the elements are equal to the old ones. No other write
  /// comes between the read and the change, and the events are sent in one
  /// wave.
  ///
  /// ```swift
  /// let names = ArrayHolder(["a", "b", "c"])
  /// names.modify { $0.append($0.removeFirst()) }
  /// // Sent: moved(at: 0, to: 2, element: "a")
  /// ```
  ///
  /// Costs `body`, plus, for `Equatable` elements, the difference: O(n + d²)
  /// for `d` changes, O(n) when few elements changed, and O(n) more per
  /// move.
  ///
  /// - Parameter body: Changes the elements. It runs on the calling thread
  ///   under the holder's lock: it must not read or write this holder (a
  ///   precondition stops it), nor wait for another thread that does.
  /// - Returns: What `body` returns.
  @discardableResult
  public func modify<Result>(_ body: (inout [Element]) -> Result) -> Result {
    engine.modify(body)
  }

  /// Removes the elements `shouldBeRemoved` accepts, in one step under the
  /// holder's lock, and returns them; sends ``Event/removed(at:element:)``
  /// for each, lowest index first (each index is the element's place once
  /// the earlier ones are gone).
  ///
  /// ```swift
  /// let numbers = ArrayHolder([1, 2, 3, 4])
  /// numbers.removeAll { $0.isMultiple(of: 2) }
  /// // numbers.raw == [1, 3]; sent: removed(at: 1, 2), removed(at: 2, 4)
  /// ```
  ///
  /// O(n). Where a search and a `remove(at:)` made one after the other can
  /// remove the wrong element (another thread's write comes between
  /// them), this cannot.
  ///
  /// - Parameter shouldBeRemoved: Called once per element, in order, under
  ///   the holder's lock: it must not read or write this holder.
  /// - Returns: The removed elements, in their order.
  @discardableResult
  public func removeAll(where shouldBeRemoved: (Element) -> Bool) -> [Element] {
    engine.removeAll(where: shouldBeRemoved)
  }

  // MARK: Protocols

  /// Returns ``Event/fetched(_:)`` with the current elements; ``Chain/sync()`` sends it.
  public func fetchedValue() -> Event {
    .fetched(engine.entries)
  }

  /// Applies an ``ArrayAction`` received through a chain.
  public func receive(value action: ArrayAction<Element>) {
    apply(action)
  }

  /// Subscribes a finished chain and takes the value ``Chain/sync()`` sends, in one step. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Event) -> Void) {
    engine.store.attach(context, handler) { .fetched($0) }
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (Event) -> Void) {}

  /// The stored core of this holder. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Event>? {
    engine.store.core
  }
}

extension ArrayHolder.Event {
  /// The action that makes another array holder follow this change.
  ///
  /// ``ArrayHolder/Event/fetched(_:)`` and ``ArrayHolder/Event/set(_:)``
  /// become ``ArrayAction/set(_:)``, the others their matching action.
  public var action: ArrayAction<Element> {
    switch self {
    case .fetched(let elements), .set(let elements): .set(elements)
    case .inserted(let index, let element): .insert(element, at: index)
    case .removed(let index, _): .remove(at: index)
    case .replaced(let index, let element): .replace(element, at: index)
    case .moved(let from, let to, _): .move(at: from, to: to)
    }
  }
}

extension ArrayHolder.Event: Swift.Sendable where Element: Swift.Sendable {}
extension ArrayHolder.Event: Equatable where Element: Equatable {}

// @unchecked: the elements and the observers are guarded by the engine's store.
extension ArrayHolder: @unchecked Swift.Sendable where Element: Swift.Sendable {}

extension ArrayHolder: ArrayActionApplying {}

/// Reading ``raw``, ``count``, ``first``, ``last``, ``subscript(_:)`` and
/// ``element(at:)`` inside `withObservationTracking`, as a SwiftUI view's
/// `body` does, registers the read; the next write that changes the holder's
/// state calls the tracking's `onChange`, once, after the change is stored. See
/// <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ArrayHolder: Observable {}

// MARK: - Identifiable elements

extension ArrayHolder where Element: Identifiable {
  /// The index of the element whose `id` is `id`, or `nil` when there is
  /// none. O(n): a search under the holder's lock.
  ///
  /// An index read here may be stale by the time it is used, if another
  /// thread writes the holder: to change the element, use
  /// ``update(id:_:)`` or ``remove(id:)``, which search and change in one
  /// step.
  ///
  /// - Parameter id: The id to look for.
  /// - Returns: The index of the first element with that id, or `nil`.
  public func index(id: Element.ID) -> Int? {
    engine.store.read { elements in engine.store.callingOut(.arrayClosure) { elements.firstIndex { $0.id == id } } }
  }

  /// Removes the element whose `id` is `id`, in one step under the
  /// holder's lock, and returns it; sends ``Event/removed(at:element:)``.
  /// Returns `nil`, and sends nothing, when there is none. O(n).
  ///
  /// ```swift
  /// struct Item: Identifiable { let id: Int; var title: String }
  /// let items = ArrayHolder([Item(id: 1, title: "milk"), Item(id: 2, title: "eggs")])
  /// let removed = items.remove(id: 1)
  /// // removed?.title == "milk"; items.count == 1
  /// ```
  ///
  /// - Parameter id: The id of the element to remove.
  /// - Returns: The removed element, or `nil`.
  @discardableResult
  public func remove(id: Element.ID) -> Element? {
    engine.change(
      firstWhere: { $0.id == id },
      { index, elements in
        guard let index else { return (nil, nil) }
        let removed = elements.remove(at: index)
        return (.removed(index, removed), removed)
      }
    )
  }

  /// Changes the element whose `id` is `id` in place, in one step under
  /// the holder's lock, and sends ``Event/replaced(at:element:)``. O(n).
  ///
  /// ```swift
  /// struct Item: Identifiable { let id: Int; var done = false }
  /// let items = ArrayHolder([Item(id: 1), Item(id: 2)])
  /// items.update(id: 2) { $0.done = true }
  /// ```
  ///
  /// - Parameters:
  ///   - id: The id of the element to change. An id that no element has
  ///     stops the program with a message naming it, as an index out of
  ///     range does for ``replace(_:at:)``.
  ///   - body: Changes the element. It runs under the holder's lock: it
  ///     must not read or write this holder.
  public func update(id: Element.ID, _ body: (inout Element) -> Void) {
    engine.change(
      firstWhere: { $0.id == id },
      { index, elements in
        guard let index else {
          fatalError("ArrayHolder.update(id:_:): no element has the id \(id)")
        }
        body(&elements[index])
        return (.replaced(index, elements[index]), ())
      }
    )
  }
}
