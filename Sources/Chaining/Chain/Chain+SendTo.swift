// MARK: - sendTo

extension Chain {
  /// Hands each value to a receiver's ``Receivable/receive(value:)`` and passes it on.
  ///
  /// ```swift
  /// final class Label: Receivable {
  ///   var text = ""
  ///   func receive(value: String) { text = value }
  /// }
  /// let label = Label()
  /// let name = ValueHolder("Ann")
  /// let observer = name.chain().sendTo(label).sync()
  /// print(label.text)
  /// // Prints "Ann"
  /// ```
  ///
  /// The receiver's ``Receivable/ReceiveValue`` must be this chain's `Value`;
  /// anything else does not compile. Use ``map(_:)`` first to convert.
  ///
  /// - Parameter receiver: The object to send to. Held weakly: once it is
  ///   released, this step skips it and passes values on. Pass
  ///   `receiver.retain()` to have the observer keep it alive.
  /// - Returns: A chain with the same values.
  ///
  /// `receive(value:)` runs on the delivering thread, also for the value
  /// ``sync()`` sends.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(_ receiver: Receiver) -> Chain<Value, Source>
  where Receiver.ReceiveValue == Value {
    appendingLast { downstream in
      guard let downstream else {
        return { [weak receiver] value in receiver?.receive(value: value) }
      }
      return { [weak receiver] value in
        receiver?.receive(value: value)
        downstream(value)
      }
    }
  }

  /// Hands each value to a retained receiver and passes it on.
  ///
  /// Like ``sendTo(_:)-3eg54``, but the finished observer holds the receiver
  /// strongly until it is invalidated or released.
  ///
  /// ```swift
  /// let observer = holder.chain().sendTo(Label().retain()).sync()
  /// ```
  ///
  /// - Parameter retainer: The receiver, from ``Chainable/retain()`` or
  ///   ``Retainer/init(_:)``.
  /// - Returns: A chain with the same values.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(_ retainer: Retainer<Receiver>) -> Chain<Value, Source>
  where Receiver.ReceiveValue == Value {
    let receiver = retainer.object
    return appending { downstream in
      { value in
        receiver.receive(value: value)
        downstream(value)
      }
    }
  }
}

extension Receivable {
  /// Returns a wrapper that makes the finished ``Observer`` keep this receiver alive.
  ///
  /// Pass it to ``Chain/sendTo(_:)-40asi``.
  ///
  /// - Returns: A ``Retainer`` holding this object strongly.
  public func retain() -> Retainer<Self> {
    Retainer(self)
  }
}

extension Receivable where Self: Chainable {
  /// Returns a wrapper that makes the finished ``Observer`` keep this object alive.
  ///
  /// For an object that is both a source and a receiver; see
  /// ``Chainable/retain()``.
  ///
  /// - Returns: A ``Retainer`` holding this object strongly.
  public func retain() -> Retainer<Self> {
    Retainer(self)
  }
}
