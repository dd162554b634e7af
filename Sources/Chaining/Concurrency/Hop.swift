import Dispatch

// MARK: - QueueHop

/// Moves the rest of a chain onto a dispatch queue: what ``Chain/receive(on:)`` builds.
///
/// Values go through a private serial queue that targets the given queue,
/// so they run in the order they were sent, even on a concurrent queue. They
/// then enter a gate of their own, which the observer closes on
/// invalidation: a block still in the queue then delivers nothing, and
/// `invalidate()` waits for one already running. The value's causes travel
/// with it, so a binding loop that crosses the queue still settles.
final class QueueHop<Value: Swift.Sendable>: @unchecked Swift.Sendable {
  // @unchecked: all stored properties are constants; `downstream` runs only
  // inside `gate`, one value at a time.
  let gate = DeliveryGate(held: false)
  private let queue: DispatchQueue
  private let downstream: (Value) -> Void

  init(target: DispatchQueue, downstream: @escaping (Value) -> Void) {
    queue = DispatchQueue(label: "Chaining.receive(on:)", target: target)
    self.downstream = downstream
  }

  func send(_ value: Value) {
    let causes = DeliveryContext.current.capture()
    queue.async { [self] in
      let context = DeliveryContext.current
      context.run(with: causes) { gate.deliver(value, to: downstream, in: context) }
    }
  }
}

// MARK: - MainActorHop

/// Moves the rest of a chain onto the main actor: what
/// ``Chain/doOnMainActor(_:)`` and ``Chain/sendTo(_:)-lxwb`` build.
///
/// A value sent on the main thread, when no earlier value is still waiting,
/// runs at once, synchronously; any other value is queued on the main queue,
/// in order. Invalidation and causes work as for ``QueueHop``.
final class MainActorHop<Value: Swift.Sendable>: @unchecked Swift.Sendable {
  // @unchecked: `waiting` is guarded by its lock; the rest are constants.
  // `body` and `downstream` run only inside `gate`, on the main thread.
  let gate = DeliveryGate(held: false)
  private let body: @MainActor @Sendable (Value) -> Void
  private let downstream: (Value) -> Void
  /// Values queued on the main queue and not yet run.
  private let waiting = Protected(0)

  init(body: @escaping @MainActor @Sendable (Value) -> Void, downstream: @escaping (Value) -> Void) {
    self.body = body
    self.downstream = downstream
  }

  func send(_ value: Value) {
    let runsNow = waiting.withLock { waiting -> Bool in
      if waiting == 0, isOnMainActor { return true }
      waiting += 1
      return false
    }
    if runsNow {
      run(value)
      return
    }
    let causes = DeliveryContext.current.capture()
    DispatchQueue.main.async { [self] in
      DeliveryContext.current.run(with: causes) { run(value) }
      waiting.withLock { $0 -= 1 }
    }
  }

  /// Runs on the main thread: `body` on the main actor, then the rest of the chain.
  private func run(_ value: Value) {
    let body = self.body
    let downstream = self.downstream
    let run = { (value: Value) in
      MainActor.assumeIsolated { body(value) }
      downstream(value)
    }
    gate.deliver(value, to: run, in: DeliveryContext.current)
  }
}
