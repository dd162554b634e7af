// MARK: - Subscription

extension _SenderCore {
  /// An entry for `handler`, not yet in the list: hand it to
  /// `insert(_:in:)`.
  func makeSubscription(
    gate: DeliveryGate,
    dropsEchoes: Bool = true,
    handler: consuming @escaping (Value) -> Void
  ) -> SubscriptionBase {
    // `self` becomes the existential owner here, where its metadata is at
    // hand: the initializer would have to look it up (some 350
    // instructions per subscription) when it is not inlined.
    subscriptionClass.init(owner: self, gate: gate, dropsEchoes: dropsEchoes, handler: handler)
  }

  /// One observer's entry in a core: the handler, on top of what the list
  /// needs.
  @usableFromInline
  final class Subscription: SubscriptionBase, @unchecked Swift.Sendable {
    @usableFromInline nonisolated(unsafe) let handler: (Value) -> Void

    init(
      owner: any SubscriptionOwner,
      gate: DeliveryGate,
      dropsEchoes: Bool,
      handler: consuming @escaping (Value) -> Void
    ) {
      self.handler = handler
      super.init(owner: owner, gate: gate, dropsEchoes: dropsEchoes)
    }
  }
}

// MARK: - SubscriptionBase

/// What a sender core's list and removal need of an observer's entry.
///
/// Not generic, so that the list and removal need no generic metadata; the
/// core's `Subscription` adds the typed handler.
@usableFromInline
class SubscriptionBase: @unchecked Swift.Sendable {
  // @unchecked: `index` is guarded by the owner's lock; `serial` is set
  // under it before the entry is visible, then constant; the rest are
  // constants.

  @usableFromInline let gate: DeliveryGate
  /// The order of subscription; set under the core's lock before the
  /// subscription is visible, then constant.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var serial: UInt64 = 0
  /// The slot in the current list, or -1 once removed. Guarded by the core's lock.
  @exclusivity(unchecked) nonisolated(unsafe) var index: Int32 = -1
  /// Whether the chain skips values it caused (see `DeliveryGate.deliver`).
  @usableFromInline let dropsEchoes: Bool
  /// Strong, though the owner's list holds this entry too: the cycle ends
  /// when the entry is removed, which its observer always does, at the
  /// latest when it is released. A weak reference would cost an atomic
  /// operation on the owner's side table to make, load and destroy.
  let owner: any SubscriptionOwner

  init(owner: any SubscriptionOwner, gate: DeliveryGate, dropsEchoes: Bool) {
    self.owner = owner
    self.gate = gate
    self.dropsEchoes = dropsEchoes
  }

  /// Removes this entry from its owner's list; called by the observer
  /// when it is invalidated. Removing twice does nothing.
  ///
  /// With `awaitingAlone` (the observer's gate is `alone`), first waits for
  /// a run of the chain that the owner made without claiming the gate, and
  /// returns whether no such run is in progress any more (see
  /// `_SenderCore.unsubscribe(_:awaitingAlone:)`).
  @discardableResult
  func detach(awaitingAlone: Bool = false) -> Bool {
    owner.unsubscribe(self, awaitingAlone: awaitingAlone)
  }
}

/// A sender core, as its subscriptions see it.
protocol SubscriptionOwner: Ranked, Swift.Sendable {
  /// Removes `subscription`; first, when `awaitingAlone`, waits for a run
  /// of its chain made without claiming its gate, if one is in progress on
  /// another thread; returns whether no such run is in progress any more.
  @discardableResult
  func unsubscribe(_ subscription: SubscriptionBase, awaitingAlone: Bool) -> Bool

  /// Waits for a run of the chain with `gate` made without claiming the
  /// gate, if one is in progress on another thread. The gate must be
  /// closed.
  func awaitRunAlone(of gate: DeliveryGate)

  /// Runs `onEnd` once the sender has ended, unless `subscription` is
  /// removed first.
  func watchEnd(of subscription: SubscriptionBase, _ onEnd: @escaping @Sendable () -> Void)
}
