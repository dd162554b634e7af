import Observation

// MARK: - DictionaryHolder

/// Holds a dictionary and broadcasts each change to it as an event.
///
/// ``Chain/sync()`` sends the whole dictionary as ``Event/fetched(_:)``;
/// every write then sends one event per changed key.
///
/// ```swift
/// let scores = DictionaryHolder(["Ann": 1])
/// let observer = scores.chain().do { event in
///   switch event {
///   case .fetched(let all), .set(let all): print("all", all)
///   case .inserted(let name, let score): print("new", name, score)
///   case .replaced(let name, let score): print("update", name, score)
///   case .removed(let name, _): print("gone", name)
///   }
/// }.sync()
/// // Prints "all ["Ann": 1]"
/// scores["Ann"] = 2
/// // Prints "update Ann 2"
/// scores["Bob"] = 1
/// // Prints "new Bob 1"
/// ```
///
/// ### Thread safety
/// A dictionary holder may be read and written from any thread. Writes are
/// serialized and their events reach every chain in the order of the writes.
public final class DictionaryHolder<Key: Hashable, Value>: Syncable, Receivable {
  /// A change to the dictionary, as chains receive it.
  public enum Event {
    /// The whole dictionary, sent by ``Chain/sync()``.
    case fetched([Key: Value])
    /// The whole dictionary was replaced (``DictionaryHolder/set(_:)``, or
    /// emptied by ``DictionaryHolder/removeAll()``).
    case set([Key: Value])
    /// `value` was stored for `key`, which had no value.
    case inserted(key: Key, value: Value)
    /// The value for `key` was removed; `value` is the removed value.
    case removed(key: Key, value: Value)
    /// The value for `key` was replaced by `value`.
    case replaced(key: Key, value: Value)
  }

  /// The type of the values chains receive.
  public typealias ChainValue = Event
  /// The type of the values this holder accepts as a receiver.
  public typealias ReceiveValue = DictionaryAction<Key, Value>

  private let engine: DictionaryEngine<Key, Value, Event>

  /// Creates a holder of `entries`.
  ///
  /// - Parameter entries: The initial entries. Defaults to none.
  public init(_ entries: [Key: Value] = [:]) {
    engine = DictionaryEngine(entries) { change in
      switch change {
      case .set(let entries): .set(entries)
      case .inserted(let key, let value): .inserted(key: key, value: value)
      case .removed(let key, let value): .removed(key: key, value: value)
      case .replaced(let key, let value): .replaced(key: key, value: value)
      }
    }
  }

  // MARK: Reading

  /// The entries.
  public var raw: [Key: Value] { engine.store.read(observedBy: self) { $0 } }

  /// The number of entries.
  public var count: Int { engine.store.read(observedBy: self) { $0.count } }

  /// The value for `key`, or `nil`. Setting a value inserts or replaces it;
  /// setting `nil` removes it (see ``removeValue(forKey:)``).
  public subscript(key: Key) -> Value? {
    get { engine.store.read(observedBy: self) { $0[key] } }
    set {
      if let newValue {
        _ = engine.update(newValue, forKey: key)
      } else {
        _ = engine.removeValue(forKey: key)
      }
    }
  }

  /// The number of entries the holder can store without allocating more,
  /// as `Dictionary.capacity`.
  public var capacity: Int { engine.capacity }

  /// Makes room for at least `minimumCapacity` entries, as
  /// `Dictionary.reserveCapacity(_:)`, before many writes; sends nothing.
  ///
  /// - Parameter minimumCapacity: How many entries to make room for.
  public func reserveCapacity(_ minimumCapacity: Int) {
    engine.reserveCapacity(minimumCapacity)
  }

  // MARK: Writing

  /// Inserts `value` for a `key` that has no value yet, and sends
  /// ``Event/inserted(key:value:)``.
  ///
  /// Use it where a key already present would be a mistake; the subscript
  /// inserts or replaces without asking.
  ///
  /// - Parameters:
  ///   - key: A key with no value; a key that has one stops the program with
  ///     a message naming the key.
  ///   - value: The value to insert.
  public func insert(key: Key, value: Value) {
    engine.insert(value, forKey: key, in: "DictionaryHolder.insert(key:value:)")
  }

  /// Replaces the value of a `key` that has one, and sends
  /// ``Event/replaced(key:value:)``.
  ///
  /// - Parameters:
  ///   - key: A key with a value; a key that has none stops the program with
  ///     a message naming the key.
  ///   - value: The new value.
  public func replace(key: Key, value: Value) {
    _ = engine.replace(value, forKey: key, in: "DictionaryHolder.replace(key:value:)")
  }

  /// Replaces all entries and sends ``Event/set(_:)``.
  public func set(_ entries: [Key: Value]) {
    engine.set(entries)
  }

  /// Removes and returns the value for `key`, sending ``Event/removed(key:value:)``.
  ///
  /// Sends nothing when there is no value for `key`.
  ///
  /// - Returns: The removed value, or `nil`.
  @discardableResult
  public func removeValue(forKey key: Key) -> Value? {
    engine.removeValue(forKey: key)
  }

  /// Removes every entry and sends ``Event/set(_:)`` with an empty dictionary.
  ///
  /// Sends nothing when the dictionary is already empty.
  public func removeAll() {
    _ = engine.removeAll()
  }
  /// Removes every entries as ``removeAll()`` does, keeping the storage's
  /// capacity when `keepCapacity` is true, for a holder about to be
  /// refilled.
  ///
  /// - Parameter keepCapacity: Whether to keep the capacity.
  public func removeAll(keepingCapacity keepCapacity: Bool) {
    _ = engine.removeAll(keepingCapacity: keepCapacity)
  }

  // MARK: Changing in place

  /// Changes the entries in place, in one step under the holder's lock,
  /// and sends what changed; returns what `body` returns.
  ///
  /// ```swift
  /// let stock = DictionaryHolder(["milk": 2, "eggs": 6])
  /// let observer = stock.chain().do { print($0) }.end()
  /// stock.modify { entries in
  ///   entries["milk", default: 0] += 1
  ///   entries["eggs"] = nil
  /// }
  /// // Prints "removed(key: "eggs", value: 6)", then "replaced(key: "milk", value: 3)"
  /// ```
  ///
  /// The events are one ``Event/removed(key:value:)`` per key that is
  /// gone, then one ``Event/inserted(key:value:)`` or
  /// ``Event/replaced(key:value:)`` per key that is new or, for an
  /// `Equatable` value, whose value changed: applied in order to the old
  /// dictionary, they give the new one; nothing is sent when nothing
  /// changed. A value that is not `Equatable` cannot be told unchanged:
  /// the whole dictionary is sent as one ``Event/set(_:)``, unless it was
  /// and stays empty. No other write comes between the read and the
  /// change, and the events are sent in one wave.
  ///
  /// Costs `body`, plus O(n) to find what changed.
  ///
  /// - Parameter body: Changes the entries. It runs on the calling thread
  ///   under the holder's lock: it must not read or write this holder (a
  ///   precondition stops it), nor wait for another thread that does.
  /// - Returns: What `body` returns.
  @discardableResult
  public func modify<Result>(_ body: (inout [Key: Value]) -> Result) -> Result {
    engine.modify(body)
  }

  // MARK: Protocols

  /// Returns ``Event/fetched(_:)`` with the current entries; ``Chain/sync()`` sends it.
  public func fetchedValue() -> Event {
    .fetched(engine.entries)
  }

  /// Applies a ``DictionaryAction`` received through a chain.
  public func receive(value action: DictionaryAction<Key, Value>) {
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

extension DictionaryHolder.Event {
  /// The action that makes another dictionary holder follow this change.
  public var action: DictionaryAction<Key, Value> {
    switch self {
    case .fetched(let entries), .set(let entries): .set(entries)
    case .inserted(let key, let value), .replaced(let key, let value): .update(key: key, value: value)
    case .removed(let key, _): .remove(key: key)
    }
  }
}

extension DictionaryHolder.Event: Swift.Sendable where Key: Swift.Sendable, Value: Swift.Sendable {}
extension DictionaryHolder.Event: Equatable where Value: Equatable {}

// @unchecked: the entries and the observers are guarded by the engine's store.
extension DictionaryHolder: @unchecked Swift.Sendable where Key: Swift.Sendable, Value: Swift.Sendable {}

extension DictionaryHolder: DictionaryActionApplying {}

/// Reading ``raw``, ``count`` and ``subscript(_:)`` inside
/// `withObservationTracking`, as a SwiftUI view's `body` does, registers the
/// read; the next write that changes the holder's state calls the tracking's
/// `onChange`, once, after the change is stored. See
/// <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension DictionaryHolder: Observable {}
