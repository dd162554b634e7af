import Observation

// MARK: - PropertyAdapter

/// Binds a writable property of any class: reads and writes go through to the
/// object and writes are broadcast.
///
/// Use it for objects you cannot change, such as a settings object or a
/// class from another module:
///
/// ```swift
/// final class Settings { var fontSize = 12 }
/// let settings = Settings()
/// let fontSize = PropertyAdapter(settings, keyPath: \.fontSize)
/// let observer = fontSize.chain().do { print("font size", $0) }.sync()
/// // Prints "font size 12"
/// fontSize.value = 14
/// // Prints "font size 14"
/// print(settings.fontSize)
/// // Prints "14"
/// ```
///
/// The adapter holds the object weakly. Once the object is gone,
/// ``canFetch()`` returns `false` (so ``Chain/sync()`` sends nothing),
/// ``value`` returns the last value seen, and writes do nothing.
///
/// Only writes through the adapter are seen: a change made to the object
/// directly is broadcast only when you call ``broadcast()``. Two parts of an
/// app that adapt the same property should share one adapter, from
/// ``common(_:keyPath:)``, so that each sees the other's writes.
///
/// ### Thread safety
/// Reads and writes are serialized by the adapter, which reads and writes
/// the property while locked: the property's accessors must not use the
/// adapter. When `T` is `Equatable`, writing the value the property already
/// has sends nothing.
public final class PropertyAdapter<Root: AnyObject, T>: Syncable, Receivable {
  /// The type of the values chains receive.
  public typealias ChainValue = T
  /// The type of the values this adapter accepts as a receiver.
  public typealias ReceiveValue = T

  /// The adapted object. Set once, by the initializer (a `weak var`
  /// rather than a `weak let`, which Swift 6.2 does not accept).
  public private(set) weak var object: Root?
  /// The adapted property.
  public let keyPath: ReferenceWritableKeyPath<Root, T>

  /// The last value read or written, for when the object is gone.
  let store: HolderStore<T, T>

  /// Creates an adapter of `object`'s property at `keyPath`.
  ///
  /// Prefer ``common(_:keyPath:)`` when several parts of an app adapt the
  /// same property.
  ///
  /// - Parameters:
  ///   - object: The object, held weakly.
  ///   - keyPath: The property to adapt.
  public init(_ object: Root, keyPath: ReferenceWritableKeyPath<Root, T>) {
    self.object = object
    self.keyPath = keyPath
    store = HolderStore(object[keyPath: keyPath])
  }

  /// The property's value. Setting it writes the property and broadcasts
  /// the new value; nothing happens once the object is gone.
  public var value: T {
    get {
      store.access(observedBy: self)
      return readValue()
    }
    set {
      store.write { cached in
        guard let object else { return (nil, nil) }
        let old = store.callingOut(.propertyAccess) { object[keyPath: keyPath] }
        if store.callingOut(.propertyEquality, { areEqual(old, newValue) }) { return (nil, nil) }
        store.callingOut(.propertyAccess) { object[keyPath: keyPath] = newValue }
        cached = newValue
        return (newValue, old)
      }
    }
  }

  /// The property's value, or `nil` once the object is gone.
  ///
  /// Where ``value`` then returns the last value read or written, this
  /// tells the two cases apart. Read under the adapter's lock, with the
  /// object, so the answer is one of the two, never a value read from a
  /// dying object.
  public var safeValue: T? {
    store.access(observedBy: self)
    return store.writeEvents { cached -> ([T], T?, Any?) in
      guard let object else { return ([], nil, nil) }
      cached = store.callingOut(.propertyAccess) { object[keyPath: keyPath] }
      return ([], cached, nil)
    }
  }

  /// Reads the property and broadcasts it, for a change made to the object directly.
  ///
  /// Does nothing once the object is gone.
  public func broadcast() {
    store.write { cached in
      guard let object else { return (nil, nil) }
      cached = store.callingOut(.propertyAccess) { object[keyPath: keyPath] }
      return (cached, nil)
    }
  }

  /// Returns the property's value; ``Chain/sync()`` sends it.
  public func fetchedValue() -> T {
    readValue()
  }

  /// Reads the property into the cache, or the cache once the object is
  /// gone, without registering the read with Observation.
  private func readValue() -> T {
    store.writeEvents { cached -> ([T], T, Any?) in
      if let object { cached = store.callingOut(.propertyAccess) { object[keyPath: keyPath] } }
      return ([], cached, nil)
    }
  }

  /// Returns whether the object is still alive.
  public func canFetch() -> Bool {
    object != nil
  }

  /// Writes a value received through a chain (see ``value``).
  public func receive(value: T) {
    self.value = value
  }

  /// Subscribes a finished chain and takes the value ``Chain/sync()`` sends, in one step. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {
    store.attach(context, handler) { cached in
      guard let object else { return nil }
      cached = store.callingOut(.propertyAccess) { object[keyPath: keyPath] }
      return cached
    }
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {}

  /// The stored core of this adapter. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<T>? {
    store.core
  }
}

// MARK: - Shared adapters

extension PropertyAdapter {
  /// Returns the adapter of `object`'s property at `keyPath` that every
  /// caller shares, creating it on first use.
  ///
  /// ```swift
  /// final class Settings { var volume = 5 }
  /// let settings = Settings()
  /// let slider = PropertyAdapter.common(settings, keyPath: \.volume)
  /// let label = PropertyAdapter.common(settings, keyPath: \.volume)
  /// let observer = label.chain().do { print("volume", $0) }.end()
  /// slider.value = 7
  /// // Prints "volume 7"
  /// ```
  ///
  /// The shared adapter lives as long as someone holds it; the next call
  /// after that creates a new one. A new object at a released object's
  /// address never gets the released object's adapter.
  ///
  /// - Parameters:
  ///   - object: The object, held weakly.
  ///   - keyPath: The property to adapt.
  /// - Returns: The shared adapter.
  public static func common(
    _ object: Root,
    keyPath: ReferenceWritableKeyPath<Root, T>
  ) -> PropertyAdapter<Root, T> {
    let key = SharedAdapterKey(object: ObjectIdentifier(object), keyPath: keyPath)
    if let shared = lookUpShared(key, object) { return shared }
    // Made outside the table's lock: creating an adapter reads the property,
    // which may run user code.
    let made = PropertyAdapter(object, keyPath: keyPath)
    let adapter = sharedAdapters.withLock { table -> AnyObject in
      if let entry = table.entries[key], entry.object === object, let adapter = entry.adapter {
        return adapter  // another thread shared one first
      }
      // The entries hold nothing strongly: dropping them here runs no deinit.
      _ = table.sweepIfGrown { $0.object == nil || $0.adapter == nil }
      table.entries[key] = SharedAdapterEntry(object: object, adapter: made)
      return made
    }
    // The same object and key path always come with the same Root and T.
    return unsafeDowncast(adapter, to: PropertyAdapter<Root, T>.self)
  }

  private static func lookUpShared(_ key: SharedAdapterKey, _ object: Root) -> PropertyAdapter? {
    let adapter = sharedAdapters.withLock { table -> AnyObject? in
      guard let entry = table.entries[key], entry.object === object else { return nil }
      return entry.adapter
    }
    return adapter.map { unsafeDowncast($0, to: PropertyAdapter<Root, T>.self) }
  }
}

private struct SharedAdapterKey: Hashable {
  let object: ObjectIdentifier
  let keyPath: AnyKeyPath
}

private struct SharedAdapterEntry {
  weak var object: AnyObject?
  weak var adapter: AnyObject?
}

/// The shared adapters, held weakly; swept when the table doubles.
private let sharedAdapters = Protected(SweptTable<SharedAdapterKey, SharedAdapterEntry>())

// @unchecked: the adapter reads and writes the object's property only under
// its store's lock; it is safe to share when the object and the values are.
extension PropertyAdapter: @unchecked Swift.Sendable where Root: Swift.Sendable, T: Swift.Sendable {}

/// Reading ``value`` and ``safeValue`` inside `withObservationTracking`, as a
/// SwiftUI view's `body` does, registers the read; the next write that changes
/// the holder's state calls the tracking's `onChange`, once, after the change
/// is stored. See <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension PropertyAdapter: Observable {}
