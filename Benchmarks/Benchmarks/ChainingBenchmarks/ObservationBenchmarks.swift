import Benchmark
import Chaining
import Dispatch
import Observation

/// What Observation support costs: a holder's write once its registrar is
/// live, and once a tracking is armed before each write; then the delivery
/// of an `@Observable` model's changes through `ObservedValue`, beside the
/// same loop written by hand with `withObservationTracking`.
func observationBenchmarks() {
  let sends = Suite.sends
  // A change of an `@Observable` model is read again on a queue: every
  // write below waits for the previous one's read, a thread hop, so these
  // rows do a tenth of the sends to keep as many iterations.
  let writes = Suite.size(1_000, smoke: 100)

  // MARK: Holder writes

  // The chain of "holder set: chaining" (`holderSetChain`), so that the
  // rows differ only in Observation's part.
  Benchmark("holder set (observed, untracked): chaining") { benchmark in
    let holder = ValueHolder(-1)
    let counter = Counter()
    let observer = holderSetChain(holder, counter: counter)
    // One read through `value` makes the holder's registrar; nobody tracks
    // it, and no registering read comes again, so the first changing write
    // tells the registrar and the others only check that none came.
    blackHole(holder.value)
    benchmark.measure(operations: sends) {
      for value in 0..<sends { holder.value = value }
    }
    benchmark.expectDelivery(counter)
    observer.invalidate()
  }

  Benchmark("holder set (tracked): chaining") { benchmark in
    let holder = ValueHolder(-1)
    let counter = Counter()
    let observer = holderSetChain(holder, counter: counter)
    // Measures a write plus re-arming: a tracking calls `onChange` once, so
    // a tracking is armed before every write, as a SwiftUI view re-reads
    // its model after each change. Every write then calls an `onChange`.
    benchmark.measure(operations: sends) {
      for value in 0..<sends {
        withObservationTracking({ _ = holder.value }, onChange: {})
        holder.value = value
      }
    }
    benchmark.expectDelivery(counter)
    observer.invalidate()
  }

  // MARK: ObservedValue delivery

  // One op is a write on `queue` and its delivery. Each write is made in
  // its own `queue.sync`, which the serial queue runs after the read that
  // the previous write queued there: every write is read and delivered
  // before the next one, so none is coalesced, and the last one's delivery
  // is awaited by a final `queue.sync {}`. Writing them all in one block
  // would measure one delivery for many writes: a tracking fires once, and
  // the writes after the first find nobody tracking until the read.
  Benchmark("ObservedValue delivery: chaining") { benchmark in
    let model = CountModel()
    let queue = DispatchQueue(label: "ObservedValue delivery")
    let counter = Counter()
    let source = ObservedValue(of: model, on: queue) { $0.count }
    let observer = source.chain().do { counter.total &+= $0 }.end()
    benchmark.measure(operations: writes) {
      for value in 0..<writes { queue.sync { model.count = value } }
      queue.sync {}
    }
    benchmark.expectDelivery(counter, everyValueBelow: writes)
    observer.invalidate()
    withExtendedLifetime(source) {}
  }

  Benchmark("ObservedValue delivery: floor") { benchmark in
    let model = CountModel()
    let queue = DispatchQueue(label: "ObservedValue delivery floor")
    let counter = Counter()
    let loop = TrackingLoop(queue: queue, read: { model.count }, handler: { counter.total &+= $0 })
    loop.start()
    benchmark.measure(operations: writes) {
      for value in 0..<writes { queue.sync { model.count = value } }
      queue.sync {}
    }
    benchmark.expectDelivery(counter, everyValueBelow: writes)
    withExtendedLifetime(loop) {}
  }
}

/// An `@Observable` model with one `Int`, written and read on one queue.
@Observable private final class CountModel: @unchecked Swift.Sendable {
  // @unchecked: `count` is not guarded; each benchmark writes and reads it
  // on its queue only.
  var count = -1
}

/// The floor of `ObservedValue`: what a hand-written delivery does. It
/// reads under `withObservationTracking`, and each `onChange` queues a read
/// that re-arms the tracking and calls the handler. One read per change,
/// where `ObservedValue` reads twice and keeps a chain's guarantees.
private final class TrackingLoop: @unchecked Swift.Sendable {
  // @unchecked: `read` and `handler` run on `queue` only, after `start`.

  private let queue: DispatchQueue
  private let read: () -> Int
  private let handler: (Int) -> Void

  init(queue: DispatchQueue, read: @escaping () -> Int, handler: @escaping (Int) -> Void) {
    self.queue = queue
    self.read = read
    self.handler = handler
  }

  /// Arms the first tracking; its value is not delivered, as `end()` does.
  func start() {
    blackHole(trackedRead())
  }

  private func trackedRead() -> Int {
    withObservationTracking(read) { [weak self] in
      guard let self else { return }
      queue.async { self.handler(self.trackedRead()) }
    }
  }
}
