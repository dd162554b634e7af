// MARK: - Retainer

/// An object wrapped so that the ``Observer`` of a chain keeps it alive.
///
/// Get one from ``Chainable/retain()``. Start a chain from it with
/// ``chain()``, or pass it to ``Chain/sendTo(_:isolation:)-1s4fs``; the finished
/// observer then holds the object strongly until it is invalidated or
/// released.
///
/// ```swift
/// let log = Log()                                    // a Receivable
/// let observer = ValueHolder(1).retain().chain().sendTo(log.retain()).sync()
/// // Both the holder and `log` live as long as `observer`.
/// ```
public struct Retainer<Object: AnyObject> {
  /// The retained object.
  public let object: Object

  /// Wraps `object`. Prefer ``Chainable/retain()``.
  public init(_ object: Object) {
    self.object = object
  }
}

extension Retainer where Object: Chainable {
  /// Starts a chain whose ``Observer`` keeps the object alive.
  ///
  /// - Returns: The same chain as `object.chain()`, with the object retained
  ///   by the finished observer.
  public func chain() -> Chain<Object.ChainValue, Object> {
    Chain(source: object, retained: true)
  }
}

extension Retainer: Swift.Sendable where Object: Swift.Sendable {}
