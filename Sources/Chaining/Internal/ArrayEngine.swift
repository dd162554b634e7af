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

  /// The removals, moves and insertions that turn `old` into `new`, when
  /// `Entry` is `Equatable` at run time; `nil` otherwise.
  ///
  /// From `CollectionDifference`, with an element removed in one place
  /// and inserted, equal, in another taken as moved: first the other
  /// removals, highest offset first; then one move per moved element, in
  /// the order of `new`, each right after the element before it there;
  /// then the insertions, lowest offset first. Applied in order to `old`,
  /// they give `new`. O(d² + d·n) for `d` changes, on top of the
  /// difference's own cost.
  static func difference(from old: [Entry], to new: [Entry]) -> [ArrayChange<Entry>]? {
    guard let equatable = Entry.self as? any Equatable.Type else { return nil }
    func changes<E: Equatable>(_: E.Type) -> [ArrayChange<Entry>] {
      // Only the part between the ends left as they were is compared
      // with `==`: the standard library's unspecialized difference costs
      // about 8 ns per element, a comparison of bits a fraction of one.
      let (prefix, suffix) = identicalEnds(old, new)
      let removedRange = prefix..<(old.count - suffix)
      let insertedRange = prefix..<(new.count - suffix)
      // `E` is `Entry` itself, opened from its metatype: the arrays are
      // the same type, and need no cast (`as!` checks each element, and
      // cost two thirds of a one-element `modify` of 10,000).
      let oldElements = unsafeBitCast(old, to: [E].self)
      let newElements = unsafeBitCast(new, to: [E].self)
      if removedRange.isEmpty || insertedRange.isEmpty || (removedRange.count == 1 && insertedRange.count == 1) {
        // Elements only added, only removed, or one changed (the
        // common cases, and nothing can have moved): no difference to
        // search, whose setup costs more than the rest of the write.
        if removedRange.count == 1, insertedRange.count == 1, oldElements[prefix] == newElements[prefix] { return [] }
        return removedRange.reversed().map { .removed($0, old[$0]) } + insertedRange.map { .inserted($0, new[$0]) }
      }
      // The difference of the middle: its offsets are the arrays' own
      // less `prefix`, which each use below adds back.
      let difference = newElements[insertedRange].difference(from: oldElements[removedRange])
      var events: [ArrayChange<Entry>] = []
      // A removed element equal to an inserted one moved: paired in
      // order, in O(d²) comparisons (`inferringMoves()` would need
      // `Hashable`).
      var pairs: [Int: Int] = [:]  // inserted offset: removed offset
      var paired = Set<Int>()
      for case .insert(let offset, let element, _) in difference.insertions {
        let match = difference.removals.lazy.reversed().first { change in
          guard case .remove(let from, let removed, _) = change else { return false }
          return !paired.contains(prefix + from) && removed == element
        }
        if case .remove(let from, _, _)? = match {
          pairs[prefix + offset] = prefix + from
          paired.insert(prefix + from)
        }
      }
      // What stands at each offset of `new`: an old offset (kept or
      // moved), or nil for an insertion.
      var source = [Int?](repeating: nil, count: new.count)
      var removed = Set<Int>()
      var inserted = Set<Int>()
      // A difference lists its removals highest offset first, then its
      // insertions lowest first.
      for change in difference {
        switch change {
        case .remove(let middleOffset, let element, _):
          let offset = prefix + middleOffset
          removed.insert(offset)
          if !paired.contains(offset) { events.append(.removed(offset, unsafeBitCast(element, to: Entry.self))) }
        case .insert(let middleOffset, let element, _):
          let offset = prefix + middleOffset
          inserted.insert(offset)
          source[offset] = pairs[offset]
          if pairs.isEmpty { events.append(.inserted(offset, unsafeBitCast(element, to: Entry.self))) }
        }
      }
      if paired.isEmpty { return events }
      // The kept elements, in order, fill the offsets nothing was inserted at.
      var kept = (0..<old.count).lazy.filter { !removed.contains($0) }.makeIterator()
      for offset in new.indices where !inserted.contains(offset) { source[offset] = kept.next() }
      // The elements after the removals, as old offsets, in their order;
      // then each moved element, in the order of `new`, goes right after
      // the element that comes before it in `new` (not counting the
      // insertions), which is in its place already. No element comes
      // between two placed this way, so the array ends as `new` without
      // its insertions.
      var working = (0..<old.count).filter { !removed.contains($0) || paired.contains($0) }
      var previous: Int?
      for offset in new.indices {
        guard let from = source[offset] else { continue }
        defer { previous = from }
        guard paired.contains(from) else { continue }
        let at = working.firstIndex(of: from)!
        let after = previous.map { working.firstIndex(of: $0)! } ?? -1
        let to = at > after ? after + 1 : after
        if to == at { continue }
        working.remove(at: at)
        working.insert(from, at: to)
        events.append(.moved(at, to, new[offset]))
      }
      // Then the insertions, lowest first.
      for offset in new.indices where source[offset] == nil { events.append(.inserted(offset, new[offset])) }
      return events
    }
    return changes(equatable)
  }

  /// How many elements at the start, and then at the end, of `old` and
  /// `new` have the same bits: those `modify` takes as unchanged without
  /// calling `==`. Same bits are the same value, whatever `==` says (a
  /// `Double.nan` left alone is not sent as changed); bits that differ
  /// (in padding, say) are left to `==`.
  static func identicalEnds(_ old: [Entry], _ new: [Entry]) -> (prefix: Int, suffix: Int) {
    let stride = MemoryLayout<Entry>.stride
    let limit = Swift.min(old.count, new.count)
    if stride == 0 { return (limit, 0) }
    let (oldCount, newCount) = (old.count, new.count)
    return old.withUnsafeBytes { oldBytes in
      new.withUnsafeBytes { newBytes in
        func same(_ first: Int, _ second: Int) -> Bool {
          let a = oldBytes.baseAddress.unsafelyUnwrapped + first * stride
          let b = newBytes.baseAddress.unsafelyUnwrapped + second * stride
          var byte = 0
          while byte + 8 <= stride {
            if a.loadUnaligned(fromByteOffset: byte, as: UInt64.self)
              != b.loadUnaligned(fromByteOffset: byte, as: UInt64.self)
            {
              return false
            }
            byte += 8
          }
          while byte < stride {
            if a.load(fromByteOffset: byte, as: UInt8.self) != b.load(fromByteOffset: byte, as: UInt8.self) {
              return false
            }
            byte += 1
          }
          return true
        }
        var prefix = 0
        while prefix < limit && same(prefix, prefix) { prefix += 1 }
        var suffix = 0
        while suffix < limit - prefix && same(oldCount - 1 - suffix, newCount - 1 - suffix) {
          suffix += 1
        }
        return (prefix, suffix)
      }
    }
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
