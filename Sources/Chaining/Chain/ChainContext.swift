// MARK: - _ChainContext

/// What finishing a chain collects: subscriptions, fetches and retained objects. Not API.
///
/// Public only because the protocols' underscored requirements name it. A
/// context lives while ``Chain/end()`` or ``Chain/sync()`` runs; the
/// ``Observer`` takes over its gate, subscriptions and retained objects.
public final class _ChainContext {
  /// The gate every value entering the finished chain passes through.
  let gate = DeliveryGate()
  /// What the observer undoes on invalidation, in subscription order.
  private(set) var detachables: [any Detachable] = []
  /// What `sync()` runs, in source order.
  private(set) var fetches: [() -> Void] = []
  /// What the observer keeps alive.
  private(set) var retained: [AnyObject] = []

  init() {}

  func add(_ detachable: any Detachable) {
    detachables.append(detachable)
  }

  func addFetch(_ fetch: @escaping () -> Void) {
    fetches.append(fetch)
  }

  func retain(_ object: AnyObject) {
    retained.append(object)
  }

  /// Runs every fetch through the gate, in source order.
  func runFetches() {
    for fetch in fetches {
      gate.deliver((), to: fetch)
    }
  }
}

@available(*, unavailable)
extension _ChainContext: Swift.Sendable {}
