// MARK: - Observer

/// Keeps one finished chain alive until it is invalidated or released.
///
/// ``Chain/end()`` and ``Chain/sync()`` return an observer. Keep it for as
/// long as the binding should last:
///
/// ```swift
/// final class ViewModel {
///   let name = ValueHolder("")
///   private var observer: Observer?
///   init(label: Label) {
///     observer = name.chain().sendTo(label).sync()
///   }
/// }
/// ```
///
/// ### Lifetime
/// - Releasing the last reference invalidates the observer.
/// - The observer holds the chain's closures, the receivers passed as
///   `retain()`, and the source when the chain started from `retain()`;
///   invalidating it releases all of them. It holds nothing else: a source or
///   receiver released elsewhere just stops the binding, without a crash or
///   a leak.
///
/// ### Thread safety
/// An observer may be invalidated and released on any thread. After
/// ``invalidate()`` returns, no value is delivered through the chain any more,
/// including one that another thread was about to deliver: a delivery in
/// progress on another thread is waited for. The one exception avoids a
/// deadlock: called from inside a handler, `invalidate()` stops every later
/// delivery but does not wait for one already running on another thread.
/// Called from inside this observer's own chain, it lets the value being
/// delivered finish the chain's remaining steps.
///
/// To wait, `invalidate()` blocks until the other thread's handler returns;
/// do not call it while holding a lock that a handler of this chain takes.
public final class Observer: AnyObserver {
  /// The gate values enter the chain through.
  let gate = DeliveryGate(held: true)
  /// What the observer holds, under one lock.
  private let resources = Protected(Resources())

  private struct Resources {
    /// Subscriptions to undo; emptied by the first `invalidate()`.
    var detachables: [any Detachable] = []
    /// Objects kept alive; emptied by the first `invalidate()`.
    var retained: [AnyObject] = []
    /// The gates of steps that hop to another thread. Kept after
    /// invalidation: every `invalidate()` call closes them all, so that a
    /// second caller also returns only once no hop delivers any more.
    var hopGates: [DeliveryGate] = []
    var isInvalidated = false
  }

  init() {}

  /// Adds the gate of a hop; closes it at once if already invalidated.
  func adoptHopGate(_ hopGate: DeliveryGate) {
    resources.withLock { $0.hopGates.append(hopGate) }
    if gate.isClosed { hopGate.close() }
  }

  /// Takes over a subscription; undoes it at once if already invalidated.
  func adopt(_ detachable: any Detachable) {
    let accepted = resources.withLock { resources -> Bool in
      guard !resources.isInvalidated else { return false }
      resources.detachables.append(detachable)
      return true
    }
    if !accepted { detachable.detach() }
  }

  /// Keeps `object` alive until invalidated; drops it at once if already invalidated.
  func retain(_ object: AnyObject) {
    let accepted = resources.withLock { resources -> Bool in
      guard !resources.isInvalidated else { return false }
      resources.retained.append(object)
      return true
    }
    _ = accepted  // when refused, `object` is released here, outside the lock
  }

  deinit {
    invalidate()
  }

  /// Whether ``invalidate()`` has been called (or the observer released).
  public var isInvalidated: Bool { gate.isClosed }

  /// Ends the binding and releases what the observer holds.
  ///
  /// After this returns, nothing more is delivered through the chain (see
  /// the type's discussion of threads). Calling it again does nothing.
  public func invalidate() {
    gate.close()
    let (hopGates, detachables, retained) = resources.withLock { resources in
      resources.isInvalidated = true
      defer {
        resources.detachables = []
        resources.retained = []
      }
      return (resources.hopGates, resources.detachables, resources.retained)
    }
    for hopGate in hopGates {
      hopGate.close()
    }
    for detachable in detachables {
      detachable.detach()
    }
    _ = consume retained  // released here, outside every lock
  }
}
