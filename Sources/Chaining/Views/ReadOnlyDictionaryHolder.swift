// MARK: - ReadOnlyDictionaryHolder

/// A read-only view of a ``DictionaryHolder``: it reads, chains and syncs,
/// but cannot change the entries.
///
/// The view reads the holder each time; it keeps no copy of the entries. It
/// is a ``Fetchable`` but not a ``Sendable`` or a ``Receivable``, so it offers
/// no mutating method, no ``Receivable/receive(value:)`` and no
/// ``Sendable/broadcast(value:)``.
///
/// ```swift
/// let scores = DictionaryHolder(["ann": 1])
/// let view = scores.readOnly
/// scores.insert(key: "bob", value: 2)
/// print(view["bob"] ?? 0, view.count)
/// // Prints "2 2"
/// ```
///
/// ### Retention
/// The view holds its holder strongly; the holder does not hold the view. A
/// chain started from the view subscribes to the holder itself, so its
/// ``Observer`` follows the holder's lifetime, not the view's.
///
/// ### Thread safety
/// The view has no state of its own. It may be used from any thread, as the
/// holder may; it is `Swift.Sendable` when `Key` and `Value` are.
public final class ReadOnlyDictionaryHolder<Key: Hashable, Value>: Fetchable {
  /// The type of the events chains receive: the holder's events.
  public typealias ChainValue = DictionaryHolder<Key, Value>.Event

  @usableFromInline let holder: DictionaryHolder<Key, Value>

  /// Creates a read-only view of a dictionary holder.
  ///
  /// - Parameter holder: The holder to read. It is held strongly.
  public init(_ holder: DictionaryHolder<Key, Value>) {
    self.holder = holder
  }

  /// A copy of the holder's current entries.
  public var raw: [Key: Value] { holder.raw }

  /// The number of entries.
  public var count: Int { holder.count }

  /// The value for a key, or `nil` when the holder has none.
  ///
  /// - Parameter key: The key to look up.
  public subscript(key: Key) -> Value? {
    holder[key]
  }

  /// Returns all the entries as a `.fetched` event; ``Chain/sync()`` sends it first.
  ///
  /// - Returns: The holder's ``DictionaryHolder/fetchedValue()``.
  public func fetchedValue() -> DictionaryHolder<Key, Value>.Event {
    holder.fetchedValue()
  }

  /// Subscribes a finished chain to the holder. Not API.
  public func _subscribe(
    _ context: _ChainContext,
    _ handler: @escaping (DictionaryHolder<Key, Value>.Event) -> Void
  ) {
    holder._subscribe(context, handler)
  }

  /// Registers what `sync()` fetches from the holder. Not API.
  public func _addFetch(
    _ context: _ChainContext,
    _ handler: @escaping (DictionaryHolder<Key, Value>.Event) -> Void
  ) {
    holder._addFetch(context, handler)
  }
}

// @unchecked: the only stored property is a `let` of a holder that is itself
// `Swift.Sendable` when `Key` and `Value` are.
extension ReadOnlyDictionaryHolder: @unchecked Swift.Sendable where Key: Swift.Sendable, Value: Swift.Sendable {}

extension DictionaryHolder {
  /// A read-only view of this holder.
  ///
  /// Each access returns a new ``ReadOnlyDictionaryHolder``, which holds this
  /// holder strongly and follows it; no entry is copied.
  public var readOnly: ReadOnlyDictionaryHolder<Key, Value> {
    ReadOnlyDictionaryHolder(self)
  }
}
