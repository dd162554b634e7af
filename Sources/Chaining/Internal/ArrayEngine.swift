import Observation

// MARK: - ArrayEngine

/// The storage and writes shared by the array holders.
///
/// `Entry` is what is stored (the element itself, or the element with its
/// relay); `Event` is the holder's event type, made from an `ArrayChange`.
/// Each write is checked, applied and turned into at most one event per
/// changed element under the store's lock, so applying the events in order
/// to a copy made at `sync()` always reproduces the array.
@usableFromInline
final class ArrayEngine<Entry, Event>: @unchecked Swift.Sendable {
  // @unchecked: all state is in `store`.

  @usableFromInline let store: HolderStore<[Entry], Event>
  private let name: String
  @usableFromInline let makeEvent: (ArrayChange<Entry>) -> Event

  @usableFromInline
  init(_ entries: [Entry], name: String, makeEvent: @escaping (ArrayChange<Entry>) -> Event) {
    store = HolderStore(entries)
    self.name = name
    self.makeEvent = makeEvent
  }

  var entries: [Entry] { store.read { $0 } }

  /// The number of entries the storage can hold without growing.
  var capacity: Int { store.read { $0.capacity } }

  /// Makes room for at least `minimumCapacity` entries; sends nothing.
  func reserveCapacity(_ minimumCapacity: Int) {
    store.withLock { entries, _ in entries.reserveCapacity(minimumCapacity) }
  }

  /// The entry at `index`, read under the lock as a registering read of
  /// `subject` (see `HolderStore.read(observedBy:_:)`).
  func entry(at index: Int, in method: String, observedBy subject: AnyObject) -> Entry {
    store.read(observedBy: subject) { entries in
      check(index, count: entries.count, method)
      return entries[index]
    }
  }

  // MARK: Writes

  /// Replaces every entry. Returns the old entries, released by the caller.
  @discardableResult
  func set(_ newEntries: [Entry]) -> [Entry] {
    store.writeEvents { entries in
      let old = entries
      entries = newEntries
      return ([makeEvent(.set(newEntries))], old, nil)
    }
  }

  /// Inserts one entry, at `index` or at the end when `nil`: the common case
  /// of `insert(_:at:in:)`, specialized in the caller and with no arrays to
  /// build.
  @inlinable
  func insert(_ entry: Entry, at index: Int?, in method: String) {
    insert(entry, at: index, in: method) { makeEvent(.inserted($0, entry)) }
  }

  /// Like `insert(_:at:in:)`, with the event made by `event` from the index
  /// the entry went to, under the lock: a holder whose `Event` is known at
  /// the call site makes it there, without a call through `makeEvent`.
  @inlinable @inline(__always)
  func insert(_ entry: Entry, at index: Int?, in method: String, event: (Int) -> Event) {
    store.writeEvent { entries in
      guard let index else {
        // `append`, not `insert(_:at:)` at the end, which goes through
        // `replaceSubrange` and a move of the elements after the index.
        entries.append(entry)
        return event(entries.count - 1)
      }
      check(index, count: entries.count, allowingEnd: true, method)
      entries.insert(entry, at: index)
      return event(index)
    }
  }

  /// Inserts `newEntries` at `index` (at the end when `nil`): one event each.
  func insert(_ newEntries: [Entry], at index: Int?, in method: String) {
    store.writeEvents { entries -> ([Event], Void, Any?) in
      let start = index ?? entries.count
      check(start, count: entries.count, allowingEnd: true, method)
      entries.insert(contentsOf: newEntries, at: start)
      let events = newEntries.enumerated().map { makeEvent(.inserted(start + $0.offset, $0.element)) }
      return (events, (), nil)
    }
  }

  /// Removes the entry at `index` and returns it.
  func remove(at index: Int, in method: String) -> Entry {
    store.writeEvents { entries in
      check(index, count: entries.count, method)
      let removed = entries.remove(at: index)
      return ([makeEvent(.removed(index, removed))], removed, nil)
    }
  }

  /// Empties the array with one `.set([])` event; does nothing when it is
  /// already empty. Returns the removed entries.
  func removeAll(keepingCapacity: Bool = false) -> [Entry] {
    store.writeEvents { entries in
      if entries.isEmpty { return ([], [], nil) }
      let old = entries
      entries.removeAll(keepingCapacity: keepingCapacity)
      return ([makeEvent(.set([]))], old, nil)
    }
  }

  /// Replaces the entry at `index` and returns the old one.
  func replace(at index: Int, with entry: Entry, in method: String) -> Entry {
    store.writeEvents { entries in
      check(index, count: entries.count, method)
      let old = entries[index]
      entries[index] = entry
      return ([makeEvent(.replaced(index, entry))], old, nil)
    }
  }

  /// Moves the entry at `from` so that it ends at `to`; nothing when equal.
  func move(at from: Int, to: Int, in method: String) {
    store.writeEvents { entries -> ([Event], Void, Any?) in
      check(from, count: entries.count, method)
      check(to, count: entries.count, method)
      if from == to { return ([], (), nil) }
      let entry = entries.remove(at: from)
      entries.insert(entry, at: to)
      return ([makeEvent(.moved(from, to, entry))], (), nil)
    }
  }

  /// Changes the entries in place with `body`, under the lock, and sends
  /// the change: for `Equatable` entries, the removals (highest index
  /// first) then the insertions (lowest first) of the entries' difference,
  /// as `CollectionDifference` gives it; otherwise one `.set` of the whole
  /// array. Nothing when the entries are equal to the old ones. `body`,
  /// and the entries' `==`, run marked as code of the user's.
  func modify<Result>(_ body: (inout [Entry]) -> Result) -> Result {
    let lock = store.core.state
    return store.writeEvents { entries in
      let old = entries
      let (result, difference) = lock.callingOut(.arrayClosure) {
        (body(&entries), Self.difference(from: old, to: entries))
      }
      return ((difference ?? [.set(entries)]).map(makeEvent), result, old)
    }
  }

  /// Removes the entries `isRemoved` accepts, under the lock, one
  /// `.removed` event each, lowest index first (each index is the entry's
  /// place once the earlier ones are gone). Returns the removed entries.
  func removeAll(where isRemoved: (Entry) -> Bool) -> [Entry] {
    let lock = store.core.state
    return store.writeEvents { entries in
      var removed: [Entry] = []
      var events: [Event] = []
      var kept: [Entry] = []
      kept.reserveCapacity(entries.count)
      lock.callingOut(.arrayClosure) {
        for entry in entries {
          if isRemoved(entry) {
            events.append(makeEvent(.removed(kept.count, entry)))
            removed.append(entry)
          } else {
            kept.append(entry)
          }
        }
      }
      if !removed.isEmpty { entries = kept }
      return (events, removed, nil)
    }
  }

  /// Finds the first entry `matches` accepts, under the lock, and lets
  /// `body` change the entries at that index (`nil` when there is none):
  /// it returns the change it made, to send, and a result.
  func change<Result>(
    firstWhere matches: (Entry) -> Bool,
    _ body: (_ index: Int?, _ entries: inout [Entry]) -> (ArrayChange<Entry>?, Result)
  ) -> Result {
    let lock = store.core.state
    return store.writeEvents { entries in
      let (change, result) = lock.callingOut(.arrayClosure) {
        body(entries.firstIndex(where: matches), &entries)
      }
      return (change.map { [makeEvent($0)] } ?? [], result, nil)
    }
  }

  /// The removals and insertions that turn `old` into `new`, when `Entry`
  /// is `Equatable` at run time; `nil` otherwise.
  static func difference(from old: [Entry], to new: [Entry]) -> [ArrayChange<Entry>]? {
    guard let equatable = Entry.self as? any Equatable.Type else { return nil }
    func changes<E: Equatable>(_: E.Type) -> [ArrayChange<Entry>] {
      let difference = (new as! [E]).difference(from: old as! [E])
      // A difference lists its removals highest offset first, then its
      // insertions lowest first: the order in which applying them one by
      // one, as the events are, gives `new`.
      return difference.map { change in
        switch change {
        case .remove(let offset, let element, _): .removed(offset, element as! Entry)
        case .insert(let offset, let element, _): .inserted(offset, element as! Entry)
        }
      }
    }
    return changes(equatable)
  }

  /// Stops the program, with a message like Swift's own `Array`, when
  /// `index` is not an index of an array of `count` elements (or its end,
  /// where inserting is allowed).
  @usableFromInline
  func check(_ index: Int, count: Int, allowingEnd: Bool = false, _ method: String) {
    let upper = allowingEnd ? count : count - 1
    if index < 0 || index > upper {
      fatalError("\(name).\(method): index \(index) is out of range for count \(count)")
    }
  }
}

/// One change to an array, before it becomes a holder's event.
@usableFromInline
enum ArrayChange<Entry> {
  case set([Entry])
  case inserted(Int, Entry)
  case removed(Int, Entry)
  case replaced(Int, Entry)
  case moved(Int, Int, Entry)
}
