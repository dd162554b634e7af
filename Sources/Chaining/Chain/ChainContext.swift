// MARK: - _ChainContext

/// What finishing a chain collects: subscriptions, fetches and retained objects. Not API.
///
/// Public only because the protocols' underscored requirements name it. A
/// context lives while ``Chain/end()`` or ``Chain/sync()`` runs. The
/// ``Observer`` exists from the start, so that what the build adds goes
/// straight to it, and steps such as ``Chain/prefix(_:)`` can end it.
public final class _ChainContext {
  /// The observer of the chain being finished.
  @usableFromInline let observer = Observer()
  /// What `sync()` runs, in source order.
  private var fetches: [() -> Void] = []

  @usableFromInline
  init() {}

  /// The gate every value entering the finished chain passes through.
  var gate: DeliveryGate { observer.gate }

  /// How many fetches the sources so far registered.
  var fetchCount: Int { fetches.count }

  func add(_ detachable: any Detachable) {
    observer.adopt(detachable)
  }

  /// Makes the observer close a hop's gate when it is invalidated.
  func addHopGate(_ gate: DeliveryGate) {
    observer.adoptHopGate(gate)
  }

  func addFetch(_ fetch: @escaping () -> Void) {
    fetches.append(fetch)
  }

  @usableFromInline
  func retain(_ object: AnyObject) {
    observer.retain(object)
  }

  /// Opens the chain's gate, first running every fetch, in source order,
  /// when `fetching` (for `sync()`), then what arrived meanwhile.
  @usableFromInline
  func start(fetching: Bool) {
    gate.start(with: fetching ? fetches : [])
  }
}

@available(*, unavailable)
extension _ChainContext: Swift.Sendable {}
