// MARK: - What the generated send0To ... send4To call

extension Chain {
  /// The retained forms of `send0To` ... `send4To` (SendNTo.swift): sends
  /// `part(value)`, when it is not `nil`, to the retained receiver, and
  /// passes the value on.
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
