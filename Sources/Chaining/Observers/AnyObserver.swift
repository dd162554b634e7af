// MARK: - AnyObserver

/// Something that keeps bindings alive until it is invalidated: an
/// ``Observer`` or an ``ObserverPool``.
///
/// Use `any AnyObserver` to store observers of any kind together.
public protocol AnyObserver: AnyObject, Swift.Sendable {
  /// Ends the bindings: nothing is delivered through them after this returns.
  ///
  /// Safe to call more than once, from any thread, and from inside a handler.
  func invalidate()
}

extension AnyObserver {
  /// Hands this observer to `pool`, which keeps it until the pool is invalidated or released.
  ///
  /// ```swift
  /// let pool = ObserverPool()
  /// holder.chain().do { print($0) }.end().addTo(pool)
  /// ```
  ///
  /// - Parameter pool: The pool that takes over this observer.
  public func addTo(_ pool: ObserverPool) {
    pool.add(self)
  }
}
