// MARK: - Applying actions

/// An array holder that applies an ``ArrayAction`` by calling its own writes.
///
/// Shared by ``ArrayHolder`` and ``RelayableArrayHolder``, so that both read
/// an action the same way.
protocol ArrayActionApplying: AnyObject {
  associatedtype Element
  func set(_ elements: [Element])
  func append(_ element: Element)
  func append(contentsOf elements: some Sequence<Element>)
  func insert(_ element: Element, at index: Int)
  @discardableResult func remove(at index: Int) -> Element
  func removeAll()
  func replace(_ element: Element, at index: Int)
  func move(at from: Int, to: Int)
}

extension ArrayActionApplying {
  /// Calls the write that `action` stands for.
  func apply(_ action: ArrayAction<Element>) {
    switch action {
    case .set(let elements): set(elements)
    case .append(let element): append(element)
    case .appendContentsOf(let elements): append(contentsOf: elements)
    case .insert(let element, let index): insert(element, at: index)
    case .remove(let index): remove(at: index)
    case .removeAll: removeAll()
    case .replace(let element, let index): replace(element, at: index)
    case .move(let from, let to): move(at: from, to: to)
    }
  }
}

/// A dictionary holder that applies a ``DictionaryAction`` by calling its own writes.
///
/// Shared by ``DictionaryHolder`` and ``RelayableDictionaryHolder``.
protocol DictionaryActionApplying: AnyObject {
  associatedtype Key: Hashable
  associatedtype Value
  subscript(key: Key) -> Value? { get set }
  func set(_ entries: [Key: Value])
  @discardableResult func removeValue(forKey key: Key) -> Value?
  func removeAll()
}

extension DictionaryActionApplying {
  /// Calls the write that `action` stands for.
  func apply(_ action: DictionaryAction<Key, Value>) {
    switch action {
    case .set(let entries): set(entries)
    case .update(let key, let value): self[key] = value
    case .remove(let key): removeValue(forKey: key)
    case .removeAll: removeAll()
    }
  }
}
