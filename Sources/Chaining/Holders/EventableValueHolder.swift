import Observation

// MARK: - EventableValueHolder

/// Holds a value like ``ValueHolder``, but tells the value ``Chain/sync()``
/// sends apart from later changes.
///
/// ```swift
/// let volume = EventableValueHolder(3)
/// let observer = volume.chain().do { event in
///   switch event {
///   case .fetched(let level): print("show", level)            // no animation
///   case .current(let level): print("animate to", level)
///   }
/// }.sync()
/// // Prints "show 3"
/// volume.value = 5
/// // Prints "animate to 5"
/// ```
///
/// When `T` is `Equatable`, setting an equal value sends nothing. Thread
/// safety is that of ``ValueHolder``.
public final class EventableValueHolder<T>: Syncable, Receivable {
  /// A value, and whether it was fetched or set.
  public enum Event {
    /// The value ``Chain/sync()`` sent.
    case fetched(T)
    /// A value that was set.
    case current(T)

    /// The value, whichever way it came.
    public var value: T {
      switch self {
      case .fetched(let value), .current(let value): value
      }
    }
  }

  /// The type of the values chains receive.
  public typealias ChainValue = Event
  /// The type of the values this holder accepts as a receiver.
  public typealias ReceiveValue = T

  @usableFromInline let store: HolderStore<T, Event>

  /// Creates a holder with an initial value.
  ///
  /// - Parameter initial: The value the holder starts with.
  public init(_ initial: T) {
    store = HolderStore(initial, publishing: true)
  }

  /// Creates a holder of an `Equatable` value; setting an equal value sends nothing.
  ///
  /// - Parameter initial: The value the holder starts with.
  public init(_ initial: T) where T: Equatable {
    store = HolderStore(initial, publishing: true)
  }

  /// The current value. Setting it sends ``Event/current(_:)``.
  @inlinable
  public var value: T {
    get { store.read(observedBy: self) { $0 } }
    set { store.replace(with: newValue) { .current($0) } }
  }

  /// Sends ``Event/current(_:)`` with the current value again to every
  /// chain, changed or not.
  ///
  /// Delivered like a write, as ``ValueHolder/resend()`` is; use it to
  /// restore a receiver that no longer shows the holder's value.
  public func resend() {
    store.writeEvent(changes: false) { .current($0) }
  }

  /// Returns ``Event/fetched(_:)`` with the current value; ``Chain/sync()`` sends it.
  public func fetchedValue() -> Event {
    .fetched(store.read { $0 })
  }

  /// Sets ``value`` to a value received through a chain.
  public func receive(value: T) {
    self.value = value
  }

  /// Subscribes a finished chain and takes the value ``Chain/sync()`` sends, in one step. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Event) -> Void) {
    store.attach(context, handler) { .fetched($0) }
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (Event) -> Void) {}

  /// The stored core of this holder. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Event>? {
    store.core
  }
}

extension EventableValueHolder.Event: Swift.Sendable where T: Swift.Sendable {}
extension EventableValueHolder.Event: Equatable where T: Equatable {}

// @unchecked: the value and the observers are guarded by the store.
extension EventableValueHolder: @unchecked Swift.Sendable where T: Swift.Sendable {}

/// Two holders are equal when their values are (see ``ValueHolder``'s
/// `Equatable` conformance for what that means for reference types).
extension EventableValueHolder: Equatable where T: Equatable {
  /// Whether the two holders' current values are equal.
  public static func == (lhs: EventableValueHolder, rhs: EventableValueHolder) -> Bool {
    lhs.value == rhs.value
  }
}

/// Reading ``value`` inside `withObservationTracking`, as a SwiftUI view's
/// `body` does, registers the read; the next write that changes the holder's
/// state calls the tracking's `onChange`, once, after the change is stored. See
/// <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension EventableValueHolder: Observable {}
