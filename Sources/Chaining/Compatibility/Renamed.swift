// MARK: - SwiftChaining's renamed names (deprecated)

// SwiftChaining 0.5.36's public names that Chaining renamed, kept as
// deprecated forwarding declarations so that code written against it
// compiles, with a fix-it where the compiler can offer one. They are not
// in the guides; Documentation/ComingFromSwiftChaining.md lists them.
// The renamed initializer of `NotificationAdapter`, which takes
// Foundation's types, is in RenamedNotificationAdapter.swift.

extension Suspender {
  /// Whether the suspender holds values back. SwiftChaining's name for
  /// ``isSuspended``.
  @available(*, deprecated, renamed: "isSuspended")
  public var isSuspend: Bool {
    get { isSuspended }
    set { isSuspended = newValue }
  }

  /// Creates a suspender. SwiftChaining's initializer, with an unlabelled
  /// argument; `Suspender()` is ``init(isSuspended:)``.
  ///
  /// - Parameter isSuspend: Whether it starts suspended.
  @available(*, deprecated, renamed: "init(isSuspended:)")
  public convenience init(_ isSuspend: Bool) {
    self.init(isSuspended: isSuspend)
  }
}

extension ValueHolder {
  /// The current value. SwiftChaining's read-only name for ``value``.
  @available(*, deprecated, renamed: "value")
  public var raw: T { value }
}

extension EventableValueHolder {
  /// The current value. SwiftChaining's read-only name for ``value``.
  @available(*, deprecated, renamed: "value")
  public var rawValue: T { value }
}

extension RelayableValueHolder {
  /// The held object. SwiftChaining's read-only name for ``value``.
  @available(*, deprecated, renamed: "value")
  public var rawValue: T { value }
}

extension Chainable {
  /// The type of a chain started from this object. SwiftChaining's name.
  @available(*, deprecated, message: "write Chain<ChainValue, Self>")
  public typealias FirstChain = Chain<ChainValue, Self>
}

extension Chain {
  /// The chain after a `do` step. SwiftChaining's name.
  @available(*, deprecated, message: "write Chain<Value, Source>")
  public typealias DoChain = Chain<Value, Source>
  /// The chain after a `map` step. SwiftChaining's name.
  @available(*, deprecated, message: "write Chain<Next, Source>")
  public typealias MapChain<Next> = Chain<Next, Source>
  /// The chain after a `guard` step. SwiftChaining's name.
  @available(*, deprecated, message: "write Chain<Value, Source>")
  public typealias GuardChain = Chain<Value, Source>
  /// The chain after a `filter` step. SwiftChaining's name.
  @available(*, deprecated, message: "write Chain<Value, Source>")
  public typealias FilterChain = Chain<Value, Source>
  /// The chain after a `sendTo` step. SwiftChaining's name.
  @available(*, deprecated, message: "write Chain<Value, Source>")
  public typealias SendToChain = Chain<Value, Source>
}

extension Chain where Value: Sequence {
  /// The values after an `each` step. SwiftChaining's name.
  @available(*, deprecated, message: "write Value.Element")
  public typealias EachOut = Value.Element
  /// The chain after an `each` step. SwiftChaining's name.
  @available(*, deprecated, message: "write Chain<Value.Element, Source>")
  public typealias EachChain = Chain<Value.Element, Source>
}
