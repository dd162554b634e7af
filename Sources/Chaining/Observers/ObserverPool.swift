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
  private struct State {
    /// The observers, keyed by identity.
    var observers: [ObjectIdentifier: any AnyObserver] = [:]
    /// The observers taken by `invalidate()` calls that are in progress,
    /// or that were made inside a delivery and so did not wait, by call.
    /// Every later call invalidates them too, so that it also returns only
    /// once they no longer run; a call that waited drops the ones it saw.
    var invalidating: [Int: [any AnyObserver]] = [:]
    /// The key of the next `invalidate()` call.
    var nextCall = 0
  }

  private let state = Protected(State())

  /// Creates an empty pool.
  public init() {}

  deinit {
    invalidate()
  }

  /// The number of observers the pool holds.
  public var count: Int { state.withLock { $0.observers.count } }

  /// Keeps `observer` until the pool is invalidated or released.
  ///
  /// Adding an observer that is already in the pool does nothing.
  ///
  /// - Parameter observer: The observer to keep.
  public func add(_ observer: any AnyObserver) {
    state.withLock { $0.observers[ObjectIdentifier(observer)] = observer }
  }

  /// Lets go of `observer` without invalidating it.
  ///
  /// If the pool held the only reference, releasing it invalidates it.
  ///
  /// - Parameter observer: The observer to remove. Removing one the pool
  ///   does not hold does nothing.
  public func remove(_ observer: any AnyObserver) {
    let removed = state.withLock { $0.observers.removeValue(forKey: ObjectIdentifier(observer)) }
    _ = removed  // released outside the lock
  }

  /// Invalidates every observer in the pool and empties it.
  ///
  /// After it returns, no handler of an observer that was in the pool runs
  /// or starts, even while another thread is still invalidating the same
  /// pool, or when an earlier call came from inside a handler: this call
  /// invalidates those observers too, and waits as
  /// ``Observer/invalidate()`` does. Called from inside a handler, it
  /// waits for no delivery on another thread, and the pool keeps the
  /// observers it ended until a call that waits, or until it is released.
  ///
  /// The pool stays usable: observers added afterwards are kept as usual.
  public func invalidate() {
    let waits = DeliveryContext.current.depth == 0
    let (calls, all) = state.withLock { state -> ([Int], [any AnyObserver]) in
      let call = state.nextCall
      state.nextCall += 1
      state.invalidating[call] = Array(state.observers.values)
      state.observers = [:]
      return (Array(state.invalidating.keys), state.invalidating.values.flatMap { $0 })
    }
    for observer in all {
      observer.invalidate()
    }
    // From outside a delivery, each of those calls waited: none of them
    // runs any more, whichever call took it.
    guard waits else { return }
    let done = state.withLock { state in calls.compactMap { state.invalidating.removeValue(forKey: $0) } }
    _ = done  // released outside the lock
  }
}
