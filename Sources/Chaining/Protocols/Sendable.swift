// MARK: - Sendable

/// An object that pushes values to the chains started from it.
///
/// A class adopts `Sendable` with nothing but the type of its values, and
/// calls ``broadcast(value:)`` whenever it has one to send:
///
/// ```swift
/// final class IntNotifier: Sendable {
///   typealias ChainValue = Int
///   func notify(value: Int) { self.broadcast(value: value) }
/// }
///
/// let notifier = IntNotifier()
/// let observer = notifier.chain().do { print($0) }.end()
/// notifier.notify(value: 1)
/// // Prints "1"
/// ```
///
/// This protocol shares its name with Swift's `Sendable` marker protocol. In
/// a file that imports `Chaining`, plain `Sendable` means this protocol; write
/// `Swift.Sendable` for the concurrency marker, and `Chaining.Sendable` when
/// you want to be explicit.
///
/// ### Where the observers are kept
/// The library's own senders (``ValueHolder``, ``Notifier``) keep their
/// observer list inside the object. A class of yours that adopts `Sendable`
/// has no such storage, so its list is kept in a lock-protected registry keyed
/// by the object's identity and checked against a weak reference, so a new
/// object at a dead object's address never inherits its observers. The entry
/// is created by the first chain you finish on the object. After the object
/// is released its entry is inert, and it is removed by the next sweep, which
/// runs when the registry has doubled in size since the last one.
public protocol Sendable<ChainValue>: Chainable {
  /// The core that holds this object's observers. Not API.
  ///
  /// The default looks the core up in the library's registry (and creates it
  /// there when `creating` is true). The library's own senders return a core
  /// they store.
  func _senderCore(creating: Bool) -> _SenderCore<ChainValue>?
}

extension Sendable {
  /// Sends `value` to every live chain started from this object.
  ///
  /// Handlers run on the calling thread, synchronously, in the order their
  /// chains were finished, before `broadcast(value:)` returns, except when
  /// this object is already delivering a value:
  /// - If another thread is delivering for this object, `value` is queued and
  ///   that thread delivers it right after; `broadcast(value:)` returns at
  ///   once, unless that thread has already delivered 64 values of other
  ///   threads in a row: it then waits for its turn to deliver, 1 ms at
  ///   most (see Threading.md, "No thread is held by another thread's
  ///   writes").
  /// - If a handler on this thread broadcasts on the object that is
  ///   delivering to it, `value` is queued the same way and delivered as soon
  ///   as the current value has reached every chain.
  ///
  /// Either way every chain sees this object's values in the order they were
  /// broadcast, none is dropped, and the last value each chain sees is the
  /// last one broadcast. The one exception is an echo: a chain skips a value
  /// that its own delivery caused (the value came back to it through a
  /// binding loop, on any thread). That is what lets two-way bindings settle.
  ///
  /// - Parameter value: The value to send.
  ///
  /// Calling this with no chain attached costs one atomic load (one
  /// registry lookup for a class that keeps no core of its own) and does
  /// nothing else.
  @inlinable
  public func broadcast(value: ChainValue) {
    _senderCore(creating: false)?.broadcast(value)
  }

  /// The number of chains subscribed to this object now.
  ///
  /// Chains are subscribed when they are finished (``Chain/end()``,
  /// ``Chain/sync()``, or the start of a `for await` loop over
  /// ``Chain/values``) and unsubscribed when their observer is invalidated.
  public var observerCount: Int {
    _senderCore(creating: false)?.observerCount ?? 0
  }

  /// Suspends until at least `count` chains are subscribed to this object,
  /// or the task is cancelled.
  ///
  /// For tests of code that consumes values asynchronously: a `for await`
  /// loop over ``Chain/values`` in another task subscribes when it starts,
  /// and a value sent before that is not seen. Wait for it, then send,
  /// with no sleeping:
  ///
  /// ```swift
  /// let notifier = Notifier<Int>()
  /// let consumer = Task {
  ///   for await value in notifier.chain().values { return value }
  ///   return -1
  /// }
  /// await notifier.waitForObservers()
  /// notifier.notify(value: 7)
  /// print(await consumer.value)
  /// // Prints "7"
  /// ```
  ///
  /// - Parameter count: How many chains to wait for; at least one.
  public func waitForObservers(_ count: Int = 1) async {
    if count < 1 { fatalError("Sendable.waitForObservers(_:): count must be at least 1, got \(count)") }
    guard let core = _senderCore(creating: true) else { return }
    await core.waitForObservers(count)
  }

  /// Looks up this object's core in the registry. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<ChainValue>? {
    SenderRegistry.core(for: self, of: ChainValue.self, creating: creating)
  }

  /// Subscribes a finished chain to this object's broadcasts. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (ChainValue) -> Void) {
    guard let core = _senderCore(creating: true) else { return }
    context.add(core.subscribe(gate: context.gate, handler: handler))
  }
}
