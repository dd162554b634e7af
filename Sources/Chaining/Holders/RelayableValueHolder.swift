import Observation

// MARK: - RelayableValueHolder

/// Holds an object that is itself a sender, and relays that object's broadcasts.
///
/// Use it for a nested model: the holder sends ``Event/current(_:)`` when
/// the object is replaced, and ``Event/relayed(_:)`` whenever the object
/// currently held broadcasts, so one chain sees both without wiring the
/// inner object by hand.
///
/// ```swift
/// final class Profile {
///   let name: ValueHolder<String>
///   init(_ name: String) { self.name = ValueHolder(name) }
/// }
/// let first = ValueHolder("Ann")
/// let selected = RelayableValueHolder(first)
/// let observer = selected.chain().do { event in
///   switch event {
///   case .fetched(let holder), .current(let holder): print("selected", holder.value)
///   case .relayed(let name): print("renamed", name)
///   }
/// }.sync()
/// // Prints "selected Ann"
/// first.value = "Anna"
/// // Prints "renamed Anna"
/// selected.value = ValueHolder("Bob")
/// // Prints "selected Bob"
/// first.value = "Annie"  // no longer held: nothing is relayed
/// ```
///
/// Setting the object that is already held (the same instance) sends
/// nothing. The holder keeps the held object alive; the object does not
/// keep the holder alive. Thread safety is that of ``ValueHolder``.
public final class RelayableValueHolder<T: Sendable>: Syncable, Receivable {
  /// The held object, or one of its broadcasts.
  public enum Event {
    /// The held object, sent by ``Chain/sync()``.
    case fetched(T)
    /// The object now held, after it was replaced.
    case current(T)
    /// A value the held object broadcast.
    case relayed(T.ChainValue)
  }

  /// The type of the values chains receive.
  public typealias ChainValue = Event
  /// The type of the values this holder accepts as a receiver.
  public typealias ReceiveValue = T

  private typealias Entry = Relay<T, Void>

  private let store: HolderStore<Entry?, Event>

  /// Creates a holder of `object`, relaying its broadcasts.
  ///
  /// - Parameter object: The object to hold.
  public init(_ object: T) {
    store = HolderStore(nil)
    let entry = makeEntry(object)
    store.write { stored in
      stored = entry
      return (nil, nil)
    }
  }

  /// The held object. Setting another object sends ``Event/current(_:)`` and
  /// moves relaying to it.
  public var value: T {
    get { store.read(observedBy: self) { $0!.element } }
    set {
      // The new relay is made before locking; the one that is not kept
      // stops after unlocking, since stopping may wait for a relay in flight.
      let entry = makeEntry(newValue)
      var unused: Entry? = entry
      store.write { stored in
        if stored?.element === newValue { return (nil, nil) }
        unused = stored
        stored = entry
        return (.current(newValue), nil)
      }
      unused?.stop()
    }
  }

  private func makeEntry(_ object: T) -> Entry {
    Relay(object, key: ()) { [weak self] value, relay in
      self?.relay(value, from: relay)
    }
  }

  private func relay(_ value: T.ChainValue, from relay: Entry) {
    store.write(changes: false) { stored in
      guard stored === relay else { return (nil, nil) }
      return (.relayed(value), nil)
    }
  }

  /// Sends ``Event/current(_:)`` with the held object again to every chain.
  ///
  /// Delivered like a write, as ``ValueHolder/resend()`` is; use it to
  /// restore a receiver that no longer shows the holder's object.
  public func resend() {
    store.writeEvent(changes: false) { .current($0!.element) }
  }

  /// Returns ``Event/fetched(_:)`` with the held object; ``Chain/sync()`` sends it.
  public func fetchedValue() -> Event {
    .fetched(store.read { $0!.element })
  }

  /// Holds an object received through a chain (see ``value``).
  public func receive(value: T) {
    self.value = value
  }

  /// Subscribes a finished chain and takes the value ``Chain/sync()`` sends, in one step. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Event) -> Void) {
    store.attach(context, handler) { $0.map { .fetched($0.element) } }
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (Event) -> Void) {}

  /// The stored core of this holder. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Event>? {
    store.core
  }
}

// @unchecked: the held object and the observers are guarded by the store.
extension RelayableValueHolder: @unchecked Swift.Sendable where T: Swift.Sendable, T.ChainValue: Swift.Sendable {}

extension RelayableValueHolder.Event: Swift.Sendable where T: Swift.Sendable, T.ChainValue: Swift.Sendable {}

/// Two holders are equal when their held objects are, by the objects' own
/// `==` (see ``ValueHolder``'s `Equatable` conformance for what that means
/// for reference types).
extension RelayableValueHolder: Equatable where T: Equatable {
  /// Whether the two holders' current objects are equal.
  public static func == (lhs: RelayableValueHolder, rhs: RelayableValueHolder) -> Bool {
    lhs.value == rhs.value
  }
}

extension RelayableValueHolder.Event: Equatable where T: Equatable, T.ChainValue: Equatable {}

/// Reading ``value`` (the held object; its own changes are the object's to
/// report) inside `withObservationTracking`, as a SwiftUI view's `body` does,
/// registers the read; the next write that changes the holder's state calls the
/// tracking's `onChange`, once, after the change is stored. See
/// <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension RelayableValueHolder: Observable {}
