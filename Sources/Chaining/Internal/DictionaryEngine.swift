// MARK: - DictionaryEngine

/// The storage and writes shared by the dictionary holders.
///
/// Like `ArrayEngine`: each write is applied and turned into at most one
/// event per changed key under the store's lock, so applying the events in
/// order to a copy made at `sync()` reproduces the dictionary.
final class DictionaryEngine<Key: Hashable, Entry, Event>: @unchecked Swift.Sendable {
  // @unchecked: all state is in `store`.

  let store: HolderStore<[Key: Entry], Event>
  private let makeEvent: (DictionaryChange<Key, Entry>) -> Event

  init(_ entries: [Key: Entry], makeEvent: @escaping (DictionaryChange<Key, Entry>) -> Event) {
    store = HolderStore(entries)
    self.makeEvent = makeEvent
  }

  var entries: [Key: Entry] { store.read { $0 } }

  /// Replaces every entry. Returns the old entries, released by the caller.
  @discardableResult
  func set(_ newEntries: [Key: Entry]) -> [Key: Entry] {
    store.writeEvents { entries in
      let old = entries
      entries = newEntries
      return ([makeEvent(.set(newEntries))], old, nil)
    }
  }

  /// Inserts or replaces the entry for `key`; returns the replaced entry.
  func update(_ entry: Entry, forKey key: Key) -> Entry? {
    store.writeEvents { entries in
      let old = entries.updateValue(entry, forKey: key)
      let change: DictionaryChange<Key, Entry> = old == nil ? .inserted(key, entry) : .replaced(key, entry)
      return ([makeEvent(change)], old, nil)
    }
  }

  /// Inserts `entry` for `key`, which must have none: otherwise stops the
  /// program, naming `method` and the key (described after unlocking: a
  /// `description` may use the holder).
  func insert(_ entry: Entry, forKey key: Key, in method: String) {
    let inserted = store.writeEvents { entries -> (events: [Event], result: Bool, garbage: Any?) in
      if entries[key] != nil { return ([], false, nil) }
      entries[key] = entry
      return ([makeEvent(.inserted(key, entry))], true, nil)
    }
    if !inserted { fatalError("\(method): key \(String(describing: key)) is already present; use replace(key:value:)") }
  }

  /// Replaces the entry for `key`, which must have one (otherwise stops the
  /// program, naming `method` and the key), and returns the old entry.
  func replace(_ entry: Entry, forKey key: Key, in method: String) -> Entry {
    let old = store.writeEvents { entries -> (events: [Event], result: Entry?, garbage: Any?) in
      guard entries[key] != nil else { return ([], nil, nil) }
      let old = entries.updateValue(entry, forKey: key)
      return ([makeEvent(.replaced(key, entry))], old, nil)
    }
    guard let old else { fatalError("\(method): no value for key \(String(describing: key)); use insert(key:value:)") }
    return old
  }

  /// The number of entries the storage can hold without growing.
  var capacity: Int { store.read { $0.capacity } }

  /// Makes room for at least `minimumCapacity` entries; sends nothing.
  func reserveCapacity(_ minimumCapacity: Int) {
    store.withLock { entries, _ in entries.reserveCapacity(minimumCapacity) }
  }

  /// Removes the entry for `key` and returns it; sends nothing when there is none.
  func removeValue(forKey key: Key) -> Entry? {
    store.writeEvents { entries in
      guard let old = entries.removeValue(forKey: key) else { return ([], nil, nil) }
      return ([makeEvent(.removed(key, old))], old, nil)
    }
  }

  /// Empties the dictionary with one `.set([:])` event; nothing when already empty.
  func removeAll(keepingCapacity: Bool = false) -> [Key: Entry] {
    store.writeEvents { entries in
      if entries.isEmpty { return ([], [:], nil) }
      let old = entries
      entries.removeAll(keepingCapacity: keepingCapacity)
      return ([makeEvent(.set([:]))], old, nil)
    }
  }

  /// Changes the entries in place with `body`, under the lock, and sends
  /// the change: the removed keys, then the new keys and, for `Equatable`
  /// entries, the changed ones; for other entries, one `.set` of the
  /// whole dictionary. Nothing when nothing changed. `body`, and the
  /// entries' `==`, run marked as code of the user's.
  func modify<Result>(_ body: (inout [Key: Entry]) -> Result) -> Result {
    let lock = store.core.state
    return store.writeEvents { entries in
      let old = entries
      let (result, changes) = lock.callingOut(.dictionaryClosure) {
        (body(&entries), Self.changes(from: old, to: entries))
      }
      return (changes.map(makeEvent), result, old)
    }
  }

  /// The changes that turn `old` into `new`: removals, then insertions
  /// and replacements. Replacements are told by `==` where `Entry` is
  /// `Equatable` at run time; otherwise, unless both are empty, one `.set`.
  static func changes(from old: [Key: Entry], to new: [Key: Entry]) -> [DictionaryChange<Key, Entry>] {
    guard let equatable = Entry.self as? any Equatable.Type else {
      return old.isEmpty && new.isEmpty ? [] : [.set(new)]
    }
    // `E` is `Entry` itself, opened from its metatype: no cast is needed.
    func areEqual<E: Equatable>(_: E.Type) -> (Entry, Entry) -> Bool {
      { unsafeBitCast($0, to: E.self) == unsafeBitCast($1, to: E.self) }
    }
    let equal = areEqual(equatable)
    var changes: [DictionaryChange<Key, Entry>] = []
    for (key, entry) in old where new[key] == nil { changes.append(.removed(key, entry)) }
    for (key, entry) in new {
      if let before = old[key] {
        if !equal(before, entry) { changes.append(.replaced(key, entry)) }
      } else {
        changes.append(.inserted(key, entry))
      }
    }
    return changes
  }
}

/// One change to a dictionary, before it becomes a holder's event.
enum DictionaryChange<Key: Hashable, Entry> {
  case set([Key: Entry])
  case inserted(Key, Entry)
  case removed(Key, Entry)
  case replaced(Key, Entry)
}
