// MARK: - ObserverPool

/// Holds many observers and invalidates them together.
///
/// Use a pool where you would use Combine's `Set<AnyCancellable>` or
/// RxSwift's `DisposeBag`: add every observer of a screen or model to one
/// pool, and release or invalidate the pool to end them all.
///
/// ```swift
/// let pool = ObserverPool()
/// name.chain().sendTo(nameLabel).sync().addTo(pool)
/// age.chain().map { "\($0)" }.sendTo(ageLabel).sync().addTo(pool)
/// pool.invalidate()  // both bindings end
/// ```
///
/// A pool is itself an ``AnyObserver``, so pools can be nested. All methods
/// are thread-safe.
public final class ObserverPool: AnyObserver {
  /// The observers, keyed by identity.
  private let observers = Protected<[ObjectIdentifier: any AnyObserver]>([:])

  /// Creates an empty pool.
  public init() {}

  deinit {
    invalidate()
  }

  /// The number of observers the pool holds.
  public var count: Int { observers.withLock { $0.count } }

  /// Keeps `observer` until the pool is invalidated or released.
  ///
  /// Adding an observer that is already in the pool does nothing.
  ///
  /// - Parameter observer: The observer to keep.
  public func add(_ observer: any AnyObserver) {
    observers.withLock { $0[ObjectIdentifier(observer)] = observer }
  }

  /// Lets go of `observer` without invalidating it.
  ///
  /// If the pool held the only reference, releasing it invalidates it.
  ///
  /// - Parameter observer: The observer to remove. Removing one the pool
  ///   does not hold does nothing.
  public func remove(_ observer: any AnyObserver) {
    let removed = observers.withLock { $0.removeValue(forKey: ObjectIdentifier(observer)) }
    _ = removed  // released outside the lock
  }

  /// Invalidates every observer in the pool and empties it.
  ///
  /// The pool stays usable: observers added afterwards are kept as usual.
  public func invalidate() {
    let all = observers.withLock { observers in
      let all = observers
      observers = [:]
      return all
    }
    for observer in all.values {
      observer.invalidate()
    }
  }
}
