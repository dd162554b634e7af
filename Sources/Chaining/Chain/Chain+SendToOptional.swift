// MARK: - sendTo across optionals

// The `sendTo` forms that bridge an optional and a non-optional value, as
// SwiftChaining's did: a chain of `T?` into a receiver of `T` skips `nil`,
// and a chain of `T` into a receiver of `T?` wraps. Each passes every value
// on unchanged, and holds its receiver as the exact-type form does. Swift
// picks them only when the exact-type form does not apply.

extension Chain {
  /// Sends each value that is not `nil`, unwrapped, to a receiver of the
  /// wrapped type, and passes every value on.
  ///
  /// ```swift
  /// let selection = ValueHolder<String?>(nil)
  /// let title = ValueHolder("")
  /// let pool = ObserverPool()
  /// selection.chain().sendTo(title).sync().addTo(pool)
  /// selection.value = "Inbox"   // title.value == "Inbox"
  /// selection.value = nil       // title.value is still "Inbox"
  /// ```
  ///
  /// - Parameters:
  ///   - receiver: The receiver, held weakly (pass
  ///     `receiver.retain()` to keep it alive).
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: The chain, passing on every value, `nil` included.
  @inlinable
  public consuming func sendTo<Receiver: Receivable, Wrapped>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == Wrapped?, Receiver.ReceiveValue == Wrapped {
    isolated(to: isolation).linked(to: receiver).appending { downstream in
      { [weak receiver] value in
        if let value { receiver?.receive(value: value) }
        downstream(value)
      }
    }
  }

  /// Sends each value that is not `nil`, unwrapped, to a retained receiver
  /// of the wrapped type, and passes every value on.
  ///
  /// - Parameters:
  ///   - retainer: The receiver, kept alive by the observer.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: The chain, passing on every value, `nil` included.
  @inlinable
  public consuming func sendTo<Receiver: Receivable, Wrapped>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == Wrapped?, Receiver.ReceiveValue == Wrapped {
    let receiver = retainer.object
    return isolated(to: isolation).linked(to: receiver).appending { downstream in
      { value in
        if let value { receiver.receive(value: value) }
        downstream(value)
      }
    }
  }

  /// Sends each value, wrapped in an optional, to a receiver of optionals,
  /// and passes it on.
  ///
  /// - Parameters:
  ///   - receiver: The receiver, held weakly (pass
  ///     `receiver.retain()` to keep it alive).
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: The chain, unchanged.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Receiver.ReceiveValue == Value? {
    isolated(to: isolation).linked(to: receiver).appending { downstream in
      { [weak receiver] value in
        receiver?.receive(value: value)
        downstream(value)
      }
    }
  }

  /// Sends each value, wrapped in an optional, to a retained receiver of
  /// optionals, and passes it on.
  ///
  /// - Parameters:
  ///   - retainer: The receiver, kept alive by the observer.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: The chain, unchanged.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Receiver.ReceiveValue == Value? {
    let receiver = retainer.object
    return isolated(to: isolation).linked(to: receiver).appending { downstream in
      { value in
        receiver.receive(value: value)
        downstream(value)
      }
    }
  }

  /// Writes each value that is not `nil`, unwrapped, into a non-optional
  /// property of `object`, and passes every value on.
  ///
  /// - Parameters:
  ///   - object: The object, held weakly.
  ///   - keyPath: The property to write.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: The chain, passing on every value, `nil` included.
  @inlinable
  public consuming func sendTo<Root: AnyObject, Wrapped>(
    _ object: Root,
    _ keyPath: ReferenceWritableKeyPath<Root, Wrapped>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Value == Wrapped? {
    isolated(to: isolation).appending { downstream in
      { [weak object] value in
        if let value { object?[keyPath: keyPath] = value }
        downstream(value)
      }
    }
  }

  /// Writes each value, wrapped, into an optional property of `object`, and
  /// passes it on.
  ///
  /// - Parameters:
  ///   - object: The object, held weakly.
  ///   - keyPath: The property to write.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: The chain, unchanged.
  @inlinable
  public consuming func sendTo<Root: AnyObject>(
    _ object: Root,
    _ keyPath: ReferenceWritableKeyPath<Root, Value?>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    isolated(to: isolation).appending { downstream in
      { [weak object] value in
        object?[keyPath: keyPath] = value
        downstream(value)
      }
    }
  }

  /// Sends one optional part of each value, when it is not `nil`, to a
  /// receiver of the wrapped type, and passes the whole value on.
  ///
  /// - Parameters:
  ///   - receiver: The receiver, held weakly.
  ///   - part: The part to send, such as `\.0` for a tuple's first element.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: The chain, unchanged.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(
    _ receiver: Receiver,
    from part: KeyPath<Value, Receiver.ReceiveValue?>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    isolated(to: isolation).linked(to: receiver).appending { downstream in
      { [weak receiver] value in
        if let element = value[keyPath: part] { receiver?.receive(value: element) }
        downstream(value)
      }
    }
  }

  /// Sends one part of each value, wrapped, to a receiver of optionals, and
  /// passes the whole value on.
  ///
  /// - Parameters:
  ///   - receiver: The receiver, held weakly.
  ///   - part: The part to send, such as `\.0` for a tuple's first element.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: The chain, unchanged.
  @inlinable
  public consuming func sendTo<Receiver: Receivable, Part>(
    _ receiver: Receiver,
    from part: KeyPath<Value, Part>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Receiver.ReceiveValue == Part? {
    isolated(to: isolation).linked(to: receiver).appending { downstream in
      { [weak receiver] value in
        receiver?.receive(value: value[keyPath: part])
        downstream(value)
      }
    }
  }
}
