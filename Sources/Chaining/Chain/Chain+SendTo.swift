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
  /// anything else does not compile. Use ``map(_:isolation:)`` first to convert.
  ///
  /// - Parameters:
  ///   - receiver: The object to send to. Held weakly: once it is
  ///     released, this step skips it and passes values on. Pass
  ///     `receiver.retain()` to have the observer keep it alive.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain with the same values.
  ///
  /// `receive(value:)` runs where `isolation` says, also for the value
  /// ``sync()`` sends.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Receiver.ReceiveValue == Value {
    isolated(to: isolation).linked(to: receiver).appendingLast { downstream in
      // A value holder: its store, held weakly, which only the holder
      // keeps (and frees with it). A weak reference moves the object it
      // names to slower reference counting; the holder is retained and
      // released on every write and read, the store almost never. About
      // a tenth of kairo's diamond and deep (Performance.md).
      if let holder = receiver as? ValueHolder<Value> {
        let store = holder.store
        guard let downstream else {
          return { [weak store] value in store?.replace(with: value) { $0 } }
        }
        return { [weak store] value in
          store?.replace(with: value) { $0 }
          downstream(value)
        }
      }
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
  /// Like ``sendTo(_:isolation:)-1b7uw``, but the finished observer holds the receiver
  /// strongly until it is invalidated or released.
  ///
  /// ```swift
  /// let observer = holder.chain().sendTo(Label().retain()).sync()
  /// ```
  ///
  /// - Parameters:
  ///   - retainer: The receiver, from ``Chainable/retain()`` or
  ///     ``Retainer/init(_:)``.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain with the same values.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Receiver.ReceiveValue == Value {
    let receiver = retainer.object
    return isolated(to: isolation).linked(to: receiver).appending { downstream in
      { value in
        receiver.receive(value: value)
        downstream(value)
      }
    }
  }
}

extension Chain {
  /// The chain, its build so far linked to `receiver`'s sender core in
  /// the graph of ranks, when it has one (a holder, see `RankGraph`): a
  /// `sendTo` step's writes then rank the joins that read `receiver`
  /// above the joins before the step. Changes the build only, not the
  /// closures a value runs through.
  @inlinable
  consuming func linked(to receiver: AnyObject) -> Chain {
    let build = self.build
    // A value holder's core is found without a cast to a protocol.
    let holder = receiver as? ValueHolder<Value>
    return Chain(isolation: isolation) { downstream, context in
      if let holder {
        RankGraph.building(intoCore: holder.store.core, in: context) { build(downstream, context) }
      } else {
        RankGraph.building(into: receiver, in: context) { build(downstream, context) }
      }
    }
  }
}

extension Receivable {
  /// Returns a wrapper that makes the finished ``Observer`` keep this receiver alive.
  ///
  /// Pass it to ``Chain/sendTo(_:isolation:)-1s4fs``.
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
