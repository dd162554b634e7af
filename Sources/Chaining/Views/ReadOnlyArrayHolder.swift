// MARK: - ReadOnlyArrayHolder

/// A read-only view of an ``ArrayHolder``: it reads, chains and syncs, but
/// cannot change the elements.
///
/// The view reads the holder each time; it keeps no copy of the elements. It
/// is a ``Fetchable`` but not a ``Sendable`` or a ``Receivable``, so it offers
/// no mutating method, no ``Receivable/receive(value:)`` and no
/// ``Sendable/broadcast(value:)``.
///
/// ```swift
/// let todos = ArrayHolder(["milk"])
/// let view = todos.readOnly
/// let observer = view.chain().do { print("event:", $0.action) }.sync()
/// // Prints "event: fetched(["milk"])"
/// todos.append("eggs")
/// // Prints "event: inserted(at: 1, element: "eggs")"
/// print(view.count)
/// // Prints "2"
/// ```
///
/// ### Retention
/// The view holds its holder strongly; the holder does not hold the view. A
/// chain started from the view subscribes to the holder itself, so its
/// ``Observer`` follows the holder's lifetime, not the view's.
///
/// ### Thread safety
/// The view has no state of its own. It may be used from any thread, as the
/// holder may; it is `Swift.Sendable` when `Element` is.
public final class ReadOnlyArrayHolder<Element>: Fetchable {
  /// The type of the events chains receive: the holder's events.
  public typealias ChainValue = ArrayHolder<Element>.Event

  @usableFromInline let holder: ArrayHolder<Element>

  /// Creates a read-only view of an array holder.
  ///
  /// - Parameter holder: The holder to read. It is held strongly.
  public init(_ holder: ArrayHolder<Element>) {
    self.holder = holder
  }

  /// A copy of the holder's current elements.
  public var raw: [Element] { holder.raw }

  /// The number of elements.
  public var count: Int { holder.count }

  /// The first element, or `nil` when the holder is empty.
  public var first: Element? { holder.first }

  /// The last element, or `nil` when the holder is empty.
  public var last: Element? { holder.last }

  /// The element at an index; traps when the index is out of range.
  ///
  /// - Parameter index: A valid index of the holder's elements.
  public subscript(index: Int) -> Element {
    holder[index]
  }

  /// Returns the element at an index; traps when the index is out of range.
  ///
  /// - Parameter index: A valid index of the holder's elements.
  /// - Returns: The element at `index`.
  public func element(at index: Int) -> Element {
    holder.element(at: index)
  }

  /// Returns all the elements as a `.fetched` event; ``Chain/sync()`` sends it first.
  ///
  /// - Returns: The holder's ``ArrayHolder/fetchedValue()``.
  public func fetchedValue() -> ArrayHolder<Element>.Event {
    holder.fetchedValue()
  }

  /// Subscribes a finished chain to the holder. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (ArrayHolder<Element>.Event) -> Void) {
    holder._subscribe(context, handler)
  }

  /// Registers what `sync()` fetches from the holder. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (ArrayHolder<Element>.Event) -> Void) {
    holder._addFetch(context, handler)
  }
}

// @unchecked: the only stored property is a `let` of a holder that is itself
// `Swift.Sendable` when `Element` is.
extension ReadOnlyArrayHolder: @unchecked Swift.Sendable where Element: Swift.Sendable {}

extension ArrayHolder {
  /// A read-only view of this holder.
  ///
  /// Each access returns a new ``ReadOnlyArrayHolder``, which holds this
  /// holder strongly and follows it; no element is copied.
  public var readOnly: ReadOnlyArrayHolder<Element> {
    ReadOnlyArrayHolder(self)
  }
}
