import Observation

// MARK: - RelayableDictionaryHolder

/// Holds a dictionary of objects that are themselves senders, and relays their broadcasts.
///
/// Like ``DictionaryHolder``, with one more event: when a value broadcasts,
/// the holder sends ``Event/relayed(_:key:value:)`` with the broadcast value
/// and the key it is stored under. Storing a value starts relaying it;
/// replacing or removing it stops.
///
/// ```swift
/// let players = RelayableDictionaryHolder(["ann": ValueHolder(0)])
/// let observer = players.chain().do { event in
///   if case .relayed(let score, let name, _) = event { print(name, "scored", score) }
/// }.end()
/// players["ann"]?.value = 3
/// // Prints "ann scored 3"
/// ```
///
/// The holder keeps its values alive; the values do not keep the holder
/// alive. Thread safety is that of ``DictionaryHolder``.
public final class RelayableDictionaryHolder<Key: Hashable, Value: Sendable>: Syncable, Receivable {
  /// A change to the dictionary or a broadcast of one of its values.
  public enum Event {
    /// The whole dictionary, sent by ``Chain/sync()``.
    case fetched([Key: Value])
    /// The whole dictionary was replaced, or emptied by ``RelayableDictionaryHolder/removeAll()``.
    case set([Key: Value])
    /// `value` was stored for `key`, which had no value.
    case inserted(key: Key, value: Value)
    /// The value for `key` was removed; `value` is the removed value.
    case removed(key: Key, value: Value)
    /// The value for `key` was replaced by `value`.
    case replaced(key: Key, value: Value)
    /// The value stored for `key` broadcast the first associated value.
    case relayed(Value.ChainValue, key: Key, value: Value)
  }

  /// The type of the values chains receive.
  public typealias ChainValue = Event
  /// The type of the values this holder accepts as a receiver.
  public typealias ReceiveValue = DictionaryAction<Key, Value>

  private typealias Entry = Relay<Value, Key>

  private let engine: DictionaryEngine<Key, Entry, Event>

  /// Creates a holder of `entries`, relaying the values' broadcasts.
  ///
  /// - Parameter entries: The initial entries. Defaults to none.
  public init(_ entries: [Key: Value] = [:]) {
    engine = DictionaryEngine([:]) { change in
      switch change {
      case .set(let entries): .set(entries.mapValues(\.element))
      case .inserted(let key, let entry): .inserted(key: key, value: entry.element)
      case .removed(let key, let entry): .removed(key: key, value: entry.element)
      case .replaced(let key, let entry): .replaced(key: key, value: entry.element)
      }
    }
    let relays = makeEntries(entries)
    engine.store.write { stored in
      stored = relays
      return (nil, nil)
    }
  }

  private func makeEntry(_ value: Value, forKey key: Key) -> Entry {
    Relay(value, key: key) { [weak self] broadcast, relay in
      self?.relay(broadcast, from: relay)
    }
  }

  private func makeEntries(_ entries: [Key: Value]) -> [Key: Entry] {
    Dictionary(uniqueKeysWithValues: entries.map { ($0.key, makeEntry($0.value, forKey: $0.key)) })
  }

  private func relay(_ broadcast: Value.ChainValue, from relay: Entry) {
    engine.store.write(changes: false) { entries in
      guard entries[relay.key] === relay else { return (nil, nil) }
      return (.relayed(broadcast, key: relay.key, value: relay.element), nil)
    }
  }

  // MARK: Reading

  /// The entries.
  public var raw: [Key: Value] { engine.store.read(observedBy: self) { $0.mapValues(\.element) } }

  /// The number of entries.
  public var count: Int { engine.store.read(observedBy: self) { $0.count } }

  /// The value for `key`, or `nil`. Setting a value stores it and relays it
  /// (instead of the value it replaces); setting `nil` removes it.
  public subscript(key: Key) -> Value? {
    get { engine.store.read(observedBy: self) { $0[key]?.element } }
    set {
      if let newValue {
        engine.update(makeEntry(newValue, forKey: key), forKey: key)?.stop()
      } else {
        engine.removeValue(forKey: key)?.stop()
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

  /// Inserts `value` for a `key` that has no value yet, sends
  /// ``Event/inserted(key:value:)``, and relays it.
  ///
  /// - Parameters:
  ///   - key: A key with no value; a key that has one stops the program with
  ///     a message naming the key.
  ///   - value: The value to insert.
  public func insert(key: Key, value: Value) {
    engine.insert(makeEntry(value, forKey: key), forKey: key, in: "RelayableDictionaryHolder.insert(key:value:)")
  }

  /// Replaces the value of a `key` that has one, sends
  /// ``Event/replaced(key:value:)``, and relays the new value instead of
  /// the old one.
  ///
  /// - Parameters:
  ///   - key: A key with a value; a key that has none stops the program with
  ///     a message naming the key.
  ///   - value: The new value.
  public func replace(key: Key, value: Value) {
    engine.replace(makeEntry(value, forKey: key), forKey: key, in: "RelayableDictionaryHolder.replace(key:value:)")
      .stop()
  }

  /// Replaces all entries, sends ``Event/set(_:)``, and relays the new values only.
  public func set(_ entries: [Key: Value]) {
    engine.set(makeEntries(entries)).values.stopRelays()
  }

  /// Removes and returns the value for `key`, sends
  /// ``Event/removed(key:value:)``, and stops relaying it. Sends nothing
  /// when there is no value for `key`.
  ///
  /// - Returns: The removed value, or `nil`.
  @discardableResult
  public func removeValue(forKey key: Key) -> Value? {
    let entry = engine.removeValue(forKey: key)
    entry?.stop()
    return entry?.element
  }

  /// Removes every entry, sends ``Event/set(_:)`` with an empty dictionary
  /// (nothing when already empty), and stops relaying them.
  public func removeAll() {
    engine.removeAll().values.stopRelays()
  }
  /// Removes every entries as ``removeAll()`` does, keeping the storage's
  /// capacity when `keepCapacity` is true, for a holder about to be
  /// refilled.
  ///
  /// - Parameter keepCapacity: Whether to keep the capacity.
  public func removeAll(keepingCapacity keepCapacity: Bool) {
    engine.removeAll(keepingCapacity: keepCapacity).values.stopRelays()
  }

  // MARK: Protocols

  /// Returns ``Event/fetched(_:)`` with the current entries; ``Chain/sync()`` sends it.
  public func fetchedValue() -> Event {
    .fetched(engine.store.read { $0.mapValues(\.element) })
  }

  /// Applies a ``DictionaryAction`` received through a chain.
  public func receive(value action: DictionaryAction<Key, Value>) {
    apply(action)
  }

  /// Subscribes a finished chain and takes the value ``Chain/sync()`` sends, in one step. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Event) -> Void) {
    engine.store.attach(context, handler) { .fetched($0.mapValues(\.element)) }
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (Event) -> Void) {}

  /// The stored core of this holder. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Event>? {
    engine.store.core
  }
}

// @unchecked: the entries and the observers are guarded by the engine's store.
extension RelayableDictionaryHolder: @unchecked Swift.Sendable
where Key: Swift.Sendable, Value: Swift.Sendable, Value.ChainValue: Swift.Sendable {}

extension RelayableDictionaryHolder.Event: Swift.Sendable
where Key: Swift.Sendable, Value: Swift.Sendable, Value.ChainValue: Swift.Sendable {}

extension RelayableDictionaryHolder: DictionaryActionApplying {}

extension RelayableDictionaryHolder.Event: Equatable where Value: Equatable, Value.ChainValue: Equatable {}

/// Reading ``raw``, ``count`` and ``subscript(_:)`` (the values; their own
/// changes are theirs to report) inside `withObservationTracking`, as a SwiftUI
/// view's `body` does, registers the read; the next write that changes the
/// holder's state calls the tracking's `onChange`, once, after the change is
/// stored. See <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension RelayableDictionaryHolder: Observable {}
