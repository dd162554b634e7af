import Benchmark
import Chaining
import Dispatch
import Foundation

/// What a chain written on the main actor costs when its values are sent on
/// the main actor: the chain of "holder set" (`holderSetChain`), built on
/// the main actor, so that its steps run there. Each value takes the hop's
/// one check and runs at once; the row differs from "holder set: chaining"
/// only in that. The benchmark tool runs on another thread than the main
/// one, and Linux's `async` main drains the main queue off the main thread,
/// so this row measures the check for a block of the main queue, the
/// slower of its two answers (on the main thread itself it is one C call).
func isolationBenchmarks() {
  let sends = Suite.sends

  Benchmark("holder set (main actor): chaining") { benchmark in
    // Used only inside `onMainActor`, which runs before it returns.
    nonisolated(unsafe) let benchmark = benchmark
    onMainActor {
      let holder = ValueHolder(-1)
      let counter = Counter()
      // On the main actor, `#isolation` is the main actor.
      let observer = holderSetChain(holder, counter: counter)
      benchmark.measure(operations: sends) {
        for value in 0..<sends { holder.value = value }
      }
      benchmark.expectDelivery(counter)
      observer.invalidate()
    }
  }
}

/// Runs `body` on the main actor, synchronously: at once on the main thread,
/// else in a block of the main queue.
private func onMainActor(_ body: @MainActor () -> Void) {
  if Thread.isMainThread {
    MainActor.assumeIsolated(body)
  } else {
    DispatchQueue.main.sync { MainActor.assumeIsolated(body) }
  }
}
