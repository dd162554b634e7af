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
  /// - Returns: A chain with the same values.
  ///
  /// The write happens on the delivering thread, also for the value
  /// ``sync()`` sends.
  @inlinable
  public consuming func sendTo<Root: AnyObject>(
    _ object: Root,
    _ keyPath: ReferenceWritableKeyPath<Root, Value>
  ) -> Chain<Value, Source> {
    appending { downstream in
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
  /// - Returns: A chain with the same values.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(
    _ receiver: Receiver,
    from part: KeyPath<Value, Receiver.ReceiveValue>
  ) -> Chain<Value, Source> {
    appending { downstream in
      { [weak receiver] value in
        receiver?.receive(value: value[keyPath: part])
        downstream(value)
      }
    }
  }
}
