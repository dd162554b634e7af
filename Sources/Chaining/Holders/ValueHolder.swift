import Observation

// MARK: - ValueHolder

/// Holds a value and broadcasts it whenever it changes.
///
/// A `ValueHolder` is the everyday model property: read and write
/// ``value``, bind it with ``Chainable/chain()``, and start the binding with
/// the current value with ``Chain/sync()``. It is also a ``Receivable``, so
/// one holder can be bound to another.
///
/// ```swift
/// let name = ValueHolder("Ann")
/// let observer = name.chain().do { print("name:", $0) }.sync()
/// // Prints "name: Ann"
/// name.value = "Bob"
/// // Prints "name: Bob"
/// name.value = "Bob"
/// // Prints nothing: the value did not change.
/// ```
///
/// When `T` is `Equatable`, setting a value equal to the current one
/// broadcasts nothing. Otherwise every set broadcasts. `==` is called while
/// the holder is locked, so it must not touch the holder.
///
/// ### Thread safety
/// A holder may be read and written from any thread. Writes are serialized,
/// and their broadcasts reach every chain in the order of the writes, so a
/// bound receiver always ends on the holder's latest value. See
/// ``Sendable/broadcast(value:)`` for which thread runs the handlers.
public final class ValueHolder<T>: Syncable, Receivable {
  /// The type of the values chains receive.
  public typealias ChainValue = T
  /// The type of the values this holder accepts as a receiver.
  public typealias ReceiveValue = T

  @usableFromInline let store: HolderStore<T, T>

  /// Creates a holder with an initial value.
  ///
  /// When `T` is `Equatable` at run time, setting an equal value broadcasts
  /// nothing; otherwise every set broadcasts.
  ///
  /// - Parameter initial: The value the holder starts with.
  public init(_ initial: T) {
    store = HolderStore(initial, publishing: true)
  }

  /// Creates a holder of an `Equatable` value; setting an equal value broadcasts nothing.
  ///
  /// - Parameter initial: The value the holder starts with.
  public init(_ initial: T) where T: Equatable {
    store = HolderStore(initial, publishing: true)
  }

  /// The current value. Setting it broadcasts the new value to every chain.
  ///
  /// When `T` is `Equatable`, setting a value equal to the current one does
  /// nothing.
  @inlinable
  public var value: T {
    get { store.read(observedBy: self) { $0 } }
    set { store.replace(with: newValue) { $0 } }
  }

  /// Sends the current value again to every chain, changed or not.
  ///
  /// Setting ``value`` to an equal value of an `Equatable` type sends
  /// nothing. Call this when a receiver may no longer show the holder's
  /// value, for example a text field bound both ways that the user edited
  /// and now reverts:
  ///
  /// ```swift
  /// let age = ValueHolder(29)
  /// let field = ValueHolder(29)  // what a text field shows
  /// let pool = ObserverPool()
  /// age.chain().sendTo(field).sync().addTo(pool)
  /// field.value = 30  // the user types, without committing
  /// age.resend()  // "Revert": field.value == 29 again
  /// ```
  ///
  /// Delivered like a write: synchronously on the calling thread, unless
  /// the holder is delivering, and in order with the writes around it. A
  /// chain whose own delivery calls `resend()` skips it, as any echo.
  public func resend() {
    store.writeEvent(changes: false) { $0 }
  }

  /// Returns the current value; ``Chain/sync()`` sends it.
  public func fetchedValue() -> T {
    store.read { $0 }
  }

  /// Sets ``value`` to a value received through a chain.
  public func receive(value: T) {
    self.value = value
  }

  /// Subscribes a finished chain and takes the value ``Chain/sync()`` sends, in one step. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {
    store.attach(context, handler) { $0 }
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (T) -> Void) {}

  /// The stored core of this holder. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<T>? {
    store.core
  }
}

// @unchecked: the value and the observers are guarded by the store; a value
// crosses threads only when `T` is itself `Swift.Sendable`.
extension ValueHolder: @unchecked Swift.Sendable where T: Swift.Sendable {}

/// Two holders are equal when their values are, as in SwiftChaining.
///
/// Holders are reference types: `==` compares the values they hold now,
/// each read under its own lock, not their identity (use `===` for that).
/// Two holders equal now may differ after the next write.
extension ValueHolder: Equatable where T: Equatable {
  /// Whether the two holders' current values are equal.
  public static func == (lhs: ValueHolder, rhs: ValueHolder) -> Bool {
    lhs.value == rhs.value
  }
}

/// Reading ``value`` inside `withObservationTracking`, as a SwiftUI view's
/// `body` does, registers the read; the next write that changes the holder's
/// state calls the tracking's `onChange`, once, after the change is stored. See
/// <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ValueHolder: Observable {}
