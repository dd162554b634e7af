// MARK: - SwiftChaining's send0To ... send4To (deprecated)

// SwiftChaining 0.5.36 sent one element of a tuple to a receiver with
// `send0To` ... `send4To`, in three forms: the element's own type, an
// optional element into a receiver of the wrapped type (skipping `nil`),
// and an element into a receiver of optionals (wrapping). Each is kept
// here, deprecated, and forwards to `sendTo(_:from:)` with the element's
// key path, which does the same. Each form also takes a `retain()`ed
// receiver, as SwiftChaining's did. Generated for tuples of two to five
// elements; not in the guides (see Documentation/ComingFromSwiftChaining.md).
// Each takes the isolation of its caller, as `sendTo` does, and passes it on
// as the `#isolation` of the call it forwards to.

extension Chain {
  /// Sends the element at index 0 of each 2-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1), Receiver.ReceiveValue == T0 {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element at index 0 of each 2-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1), Receiver.ReceiveValue == T0 {
    sendingPart(to: retainer) { .some($0.0) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 0 of each 2-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T1>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (Receiver.ReceiveValue?, T1) {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 0 of each 2-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T1>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (Receiver.ReceiveValue?, T1) {
    sendingPart(to: retainer) { $0.0 }
  }

  /// Sends the element, wrapped, at index 0 of each 2-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1), Receiver.ReceiveValue == T0? {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element, wrapped, at index 0 of each 2-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1), Receiver.ReceiveValue == T0? {
    sendingPart(to: retainer) { .some($0.0) }
  }

  /// Sends the element at index 1 of each 2-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1), Receiver.ReceiveValue == T1 {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element at index 1 of each 2-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1), Receiver.ReceiveValue == T1 {
    sendingPart(to: retainer) { .some($0.1) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 1 of each 2-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, Receiver.ReceiveValue?) {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 1 of each 2-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, Receiver.ReceiveValue?) {
    sendingPart(to: retainer) { $0.1 }
  }

  /// Sends the element, wrapped, at index 1 of each 2-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1), Receiver.ReceiveValue == T1? {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element, wrapped, at index 1 of each 2-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1), Receiver.ReceiveValue == T1? {
    sendingPart(to: retainer) { .some($0.1) }
  }

}

extension Chain {
  /// Sends the element at index 0 of each 3-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T0 {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element at index 0 of each 3-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T0 {
    sendingPart(to: retainer) { .some($0.0) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 0 of each 3-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T1, T2>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (Receiver.ReceiveValue?, T1, T2) {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 0 of each 3-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T1, T2>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (Receiver.ReceiveValue?, T1, T2) {
    sendingPart(to: retainer) { $0.0 }
  }

  /// Sends the element, wrapped, at index 0 of each 3-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T0? {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element, wrapped, at index 0 of each 3-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T0? {
    sendingPart(to: retainer) { .some($0.0) }
  }

  /// Sends the element at index 1 of each 3-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T1 {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element at index 1 of each 3-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T1 {
    sendingPart(to: retainer) { .some($0.1) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 1 of each 3-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T2>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, Receiver.ReceiveValue?, T2) {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 1 of each 3-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T2>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, Receiver.ReceiveValue?, T2) {
    sendingPart(to: retainer) { $0.1 }
  }

  /// Sends the element, wrapped, at index 1 of each 3-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T1? {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element, wrapped, at index 1 of each 3-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T1? {
    sendingPart(to: retainer) { .some($0.1) }
  }

  /// Sends the element at index 2 of each 3-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2)")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T2 {
    sendTo(receiver, from: \.2)
  }

  /// Sends the element at index 2 of each 3-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2), holding the receiver yourself")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T2 {
    sendingPart(to: retainer) { .some($0.2) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 2 of each 3-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2)")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, Receiver.ReceiveValue?) {
    sendTo(receiver, from: \.2)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 2 of each 3-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2), holding the receiver yourself")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, Receiver.ReceiveValue?) {
    sendingPart(to: retainer) { $0.2 }
  }

  /// Sends the element, wrapped, at index 2 of each 3-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2)")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T2? {
    sendTo(receiver, from: \.2)
  }

  /// Sends the element, wrapped, at index 2 of each 3-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2), holding the receiver yourself")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2), Receiver.ReceiveValue == T2? {
    sendingPart(to: retainer) { .some($0.2) }
  }

}

extension Chain {
  /// Sends the element at index 0 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T0 {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element at index 0 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T0 {
    sendingPart(to: retainer) { .some($0.0) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 0 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T1, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (Receiver.ReceiveValue?, T1, T2, T3) {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 0 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T1, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (Receiver.ReceiveValue?, T1, T2, T3) {
    sendingPart(to: retainer) { $0.0 }
  }

  /// Sends the element, wrapped, at index 0 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T0? {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element, wrapped, at index 0 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T0? {
    sendingPart(to: retainer) { .some($0.0) }
  }

  /// Sends the element at index 1 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T1 {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element at index 1 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T1 {
    sendingPart(to: retainer) { .some($0.1) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 1 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, Receiver.ReceiveValue?, T2, T3) {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 1 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, Receiver.ReceiveValue?, T2, T3) {
    sendingPart(to: retainer) { $0.1 }
  }

  /// Sends the element, wrapped, at index 1 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T1? {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element, wrapped, at index 1 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T1? {
    sendingPart(to: retainer) { .some($0.1) }
  }

  /// Sends the element at index 2 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2)")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T2 {
    sendTo(receiver, from: \.2)
  }

  /// Sends the element at index 2 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2), holding the receiver yourself")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T2 {
    sendingPart(to: retainer) { .some($0.2) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 2 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2)")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, Receiver.ReceiveValue?, T3) {
    sendTo(receiver, from: \.2)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 2 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2), holding the receiver yourself")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, Receiver.ReceiveValue?, T3) {
    sendingPart(to: retainer) { $0.2 }
  }

  /// Sends the element, wrapped, at index 2 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2)")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T2? {
    sendTo(receiver, from: \.2)
  }

  /// Sends the element, wrapped, at index 2 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2), holding the receiver yourself")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T2? {
    sendingPart(to: retainer) { .some($0.2) }
  }

  /// Sends the element at index 3 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3)")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T3 {
    sendTo(receiver, from: \.3)
  }

  /// Sends the element at index 3 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3), holding the receiver yourself")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T3 {
    sendingPart(to: retainer) { .some($0.3) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 3 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3)")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, Receiver.ReceiveValue?) {
    sendTo(receiver, from: \.3)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 3 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3), holding the receiver yourself")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, Receiver.ReceiveValue?) {
    sendingPart(to: retainer) { $0.3 }
  }

  /// Sends the element, wrapped, at index 3 of each 4-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3)")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T3? {
    sendTo(receiver, from: \.3)
  }

  /// Sends the element, wrapped, at index 3 of each 4-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3), holding the receiver yourself")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3), Receiver.ReceiveValue == T3? {
    sendingPart(to: retainer) { .some($0.3) }
  }

}

extension Chain {
  /// Sends the element at index 0 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T0 {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element at index 0 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T0 {
    sendingPart(to: retainer) { .some($0.0) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 0 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (Receiver.ReceiveValue?, T1, T2, T3, T4) {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 0 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (Receiver.ReceiveValue?, T1, T2, T3, T4) {
    sendingPart(to: retainer) { $0.0 }
  }

  /// Sends the element, wrapped, at index 0 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0)")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T0? {
    sendTo(receiver, from: \.0)
  }

  /// Sends the element, wrapped, at index 0 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.0), holding the receiver yourself")
  @inlinable
  public consuming func send0To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T0? {
    sendingPart(to: retainer) { .some($0.0) }
  }

  /// Sends the element at index 1 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T1 {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element at index 1 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T1 {
    sendingPart(to: retainer) { .some($0.1) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 1 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, Receiver.ReceiveValue?, T2, T3, T4) {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 1 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, Receiver.ReceiveValue?, T2, T3, T4) {
    sendingPart(to: retainer) { $0.1 }
  }

  /// Sends the element, wrapped, at index 1 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1)")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T1? {
    sendTo(receiver, from: \.1)
  }

  /// Sends the element, wrapped, at index 1 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.1), holding the receiver yourself")
  @inlinable
  public consuming func send1To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T1? {
    sendingPart(to: retainer) { .some($0.1) }
  }

  /// Sends the element at index 2 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2)")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T2 {
    sendTo(receiver, from: \.2)
  }

  /// Sends the element at index 2 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2), holding the receiver yourself")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T2 {
    sendingPart(to: retainer) { .some($0.2) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 2 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2)")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, Receiver.ReceiveValue?, T3, T4) {
    sendTo(receiver, from: \.2)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 2 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2), holding the receiver yourself")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, Receiver.ReceiveValue?, T3, T4) {
    sendingPart(to: retainer) { $0.2 }
  }

  /// Sends the element, wrapped, at index 2 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2)")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T2? {
    sendTo(receiver, from: \.2)
  }

  /// Sends the element, wrapped, at index 2 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.2), holding the receiver yourself")
  @inlinable
  public consuming func send2To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T2? {
    sendingPart(to: retainer) { .some($0.2) }
  }

  /// Sends the element at index 3 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3)")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T3 {
    sendTo(receiver, from: \.3)
  }

  /// Sends the element at index 3 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3), holding the receiver yourself")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T3 {
    sendingPart(to: retainer) { .some($0.3) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 3 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3)")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, Receiver.ReceiveValue?, T4) {
    sendTo(receiver, from: \.3)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 3 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3), holding the receiver yourself")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, Receiver.ReceiveValue?, T4) {
    sendingPart(to: retainer) { $0.3 }
  }

  /// Sends the element, wrapped, at index 3 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3)")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T3? {
    sendTo(receiver, from: \.3)
  }

  /// Sends the element, wrapped, at index 3 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.3), holding the receiver yourself")
  @inlinable
  public consuming func send3To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T3? {
    sendingPart(to: retainer) { .some($0.3) }
  }

  /// Sends the element at index 4 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.4)")
  @inlinable
  public consuming func send4To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T4 {
    sendTo(receiver, from: \.4)
  }

  /// Sends the element at index 4 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.4), holding the receiver yourself")
  @inlinable
  public consuming func send4To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T4 {
    sendingPart(to: retainer) { .some($0.4) }
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 4 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.4)")
  @inlinable
  public consuming func send4To<Receiver: Receivable, T0, T1, T2, T3>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, Receiver.ReceiveValue?) {
    sendTo(receiver, from: \.4)
  }

  /// Sends the element when it is not `nil`, unwrapped, at index 4 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.4), holding the receiver yourself")
  @inlinable
  public consuming func send4To<Receiver: Receivable, T0, T1, T2, T3>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, Receiver.ReceiveValue?) {
    sendingPart(to: retainer) { $0.4 }
  }

  /// Sends the element, wrapped, at index 4 of each 5-tuple to `receiver` (held
  /// weakly), and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.4)")
  @inlinable
  public consuming func send4To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T4? {
    sendTo(receiver, from: \.4)
  }

  /// Sends the element, wrapped, at index 4 of each 5-tuple to a retained receiver,
  /// and passes the tuple on. SwiftChaining's name.
  @available(*, deprecated, message: "use sendTo(_:from: \\.4), holding the receiver yourself")
  @inlinable
  public consuming func send4To<Receiver: Receivable, T0, T1, T2, T3, T4>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<
    Value, Source
  >
  where Value == (T0, T1, T2, T3, T4), Receiver.ReceiveValue == T4? {
    sendingPart(to: retainer) { .some($0.4) }
  }

}

extension Chain {
  /// The retained forms of `send0To` ... `send4To`: sends `part(value)`,
  /// when it is not `nil`, to the retained receiver, and passes the value on.
  @inlinable
  consuming func sendingPart<Receiver: Receivable>(
    to retainer: Retainer<Receiver>,
    _ part: @escaping (Value) -> Receiver.ReceiveValue?,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    let receiver = retainer.object
    return isolated(to: isolation).appending { downstream in
      { value in
        if let element = part(value) { receiver.receive(value: element) }
        downstream(value)
      }
    }
  }
}
