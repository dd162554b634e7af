// MARK: - sendTo a key path, sendTo from an element

extension Chain {
  /// Writes each value into a property of an object and passes it on.
  ///
  /// Binds any class's writable property, without adopting a protocol,
  /// like Combine's `assign(to:on:)`:
  ///
  /// ```swift
  /// final class Label { var text = "" }
  /// let label = Label()
  /// let title = ValueHolder("Inbox")
  /// let observer = title.chain().sendTo(label, \.text).sync()
  /// print(label.text)
  /// // Prints "Inbox"
  /// ```
  ///
  /// - Parameters:
  ///   - object: The object to write to. Held weakly: once it is released,
  ///     this step skips it and passes values on.
  ///   - keyPath: The property to write.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain with the same values.
  ///
  /// The write happens where `isolation` says, also for the value
  /// ``sync()`` sends.
  @inlinable
  public consuming func sendTo<Root: AnyObject>(
    _ object: Root,
    _ keyPath: ReferenceWritableKeyPath<Root, Value>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    isolated(to: isolation).appending { downstream in
      { [weak object] value in
        object?[keyPath: keyPath] = value
        downstream(value)
      }
    }
  }

  /// Hands one part of each value, such as one element of a tuple, to a
  /// receiver, and passes the whole value on.
  ///
  /// Route the elements of a ``combine(_:)-6p7cs``
  /// or ``tuple(_:)-5b6zn`` to different receivers:
  ///
  /// ```swift
  /// final class Label: Receivable {
  ///   var text = ""
  ///   func receive(value: String) { text = value }
  /// }
  /// let nameLabel = Label(), cityLabel = Label()
  /// let name = ValueHolder("Ann"), city = ValueHolder("Oslo")
  /// let observer = name.chain().combine(city.chain())
  ///   .sendTo(nameLabel, from: \.0)
  ///   .sendTo(cityLabel, from: \.1)
  ///   .sync()
  /// print(nameLabel.text, cityLabel.text)
  /// // Prints "Ann Oslo"
  /// ```
  ///
  /// - Parameters:
  ///   - receiver: The object to send to, held weakly.
  ///   - part: The key path of the part to send: `\.0`, `\.1` … for a tuple,
  ///     any property for another type.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain with the same values.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(
    _ receiver: Receiver,
    from part: KeyPath<Value, Receiver.ReceiveValue>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source> {
    isolated(to: isolation).appending { downstream in
      { [weak receiver] value in
        receiver?.receive(value: value[keyPath: part])
        downstream(value)
      }
    }
  }
}
