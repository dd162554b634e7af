// MARK: - _ChainContext

/// What finishing a chain collects: subscriptions, fetches and retained
/// objects. Not API.
///
/// Public only because the protocols' underscored requirements name it. It
/// is the chain's ``Observer`` itself, so that finishing a chain allocates
/// no context of its own: what the build adds goes straight to the
/// observer, and steps such as ``Chain/prefix(_:)`` can end it. Only the
/// thread finishing the chain uses it as a context, while ``Chain/end()`` or
/// ``Chain/sync()`` runs.
public typealias _ChainContext = Observer

extension Observer {
  /// The observer of the chain being finished: this one.
  @usableFromInline var observer: Observer { self }

  /// How many fetches the sources so far registered.
  @usableFromInline var fetchCount: Int { fetches.count }

  /// Stops the program: `source` registered `count` fetches for one
  /// chain, which breaks the contract of `Chainable._subscribe` and
  /// `_addFetch` (a source that takes its fetch in `_subscribe` and adds
  /// another in `_addFetch`: `sync()` would deliver twice). The chain
  /// compares the counts inline, one subtraction per source.
  @usableFromInline @inline(never)
  func stopForFetches(of source: Any.Type, count: Int) -> Never {
    fatalError(
      "\(source) registered \(count) fetches for one chain: a source whose _subscribe takes the value sync() "
        + "sends must do nothing in _addFetch (see Chainable._subscribe)"
    )
  }

  func addFetch(_ fetch: @escaping () -> Void) {
    #if CHAINING_INTERNAL_CHECKS
    // `fetches` is the finishing thread's alone: it holds the gate.
    gate._checkRunner("a fetch added")
    #endif
    fetches.append(fetch)
  }

  /// Opens the chain's gate, first running every fetch, in source order,
  /// when `fetching` (for `sync()`), then what arrived meanwhile.
  @usableFromInline
  func start(fetching: Bool) {
    let first = fetching ? fetches : []
    fetches = []
    // The alone path, part 1 of 4 (Internals.md, "The alone path"):
    // 1. `Observer.start(fetching:)` marks the gate `alone`;
    // 2. `_SenderCore.deliver(_:to:in:)` runs a list of one;
    // 3. `DeliveryGate.deliverAlone` runs the chain unclaimed;
    // 4. `Observer.invalidate()` waits for such a run
    //    (`_SenderCore.awaitRunAlone(of:)`).
    // The one sender of a chain with one source may run it without
    // claiming its gate (see `DeliveryGate.deliverAlone`). Set before the
    // gate opens: the thread that hands the observer on publishes it.
    let alone = subscriptionCount == 1
    if alone { aloneSource = firstSubscriptionOwner }
    gate.start(with: first, alone: alone)
  }
}
