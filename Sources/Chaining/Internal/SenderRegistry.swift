// MARK: - SenderRegistry

/// The observer lists of user classes that adopt ``Sendable`` without storage.
///
/// A class that adopts ``Sendable`` writes no stored property for the library,
/// so its core lives here, keyed by the object's identity. Each entry also
/// holds a weak reference to its object: an entry whose object has died never
/// matches, so a new object allocated at the same address gets a new core
/// rather than the dead object's observers. Dead entries are swept when the
/// table has doubled since the last sweep, which keeps inserts O(1) amortized.
///
/// The library's own senders never come here; they store their core.
enum SenderRegistry {
  private struct Entry {
    weak var object: AnyObject?
    let core: AnyObject
  }

  /// Guards the table. Never held while user code runs: cores are created
  /// and looked up here, broadcasts happen after unlocking.
  private static let table = Protected(SweptTable<ObjectIdentifier, Entry>())

  /// Returns the core of `object`, creating it when `creating` is true.
  static func core<Object: AnyObject, Value>(
    for object: Object,
    of _: Value.Type,
    creating: Bool
  ) -> _SenderCore<Value>? {
    let id = ObjectIdentifier(object)
    // Dead cores are released after unlocking: releasing one may run user
    // code (the deinit of something a handler captured).
    var garbage: [AnyObject] = []
    let core = table.withLock { table -> _SenderCore<Value>? in
      if let entry = table.entries[id] {
        if entry.object === object {
          // The same live object always asks with the same `Value` type.
          return unsafeDowncast(entry.core, to: _SenderCore<Value>.self)
        }
        guard creating else { return nil }
        garbage.append(entry.core)  // a dead object's core at a reused address
      }
      guard creating else { return nil }
      garbage += table.sweepIfGrown { $0.object == nil }.map(\.core)
      let core = _SenderCore<Value>()
      table.entries[id] = Entry(object: object, core: core)
      return core
    }
    garbage.removeAll()
    return core
  }

  /// The number of entries, dead ones included (for tests).
  static var count: Int { table.withLock { $0.entries.count } }
}
