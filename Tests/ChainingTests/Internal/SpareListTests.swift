import Foundation
import Testing

@testable import Chaining

/// Issue #20: the leak of a spare list that Verification/SenderCore.pml
/// found. A list that lost its last observer overwrote the spare one kept
/// already, when a subscription made during a delivery from no list had
/// copied a list from nothing instead of taking the spare.
///
/// The steps of spin's trail, raced on two threads for a fixed number of
/// rounds: one thread's handler leaves the list empty and queues a
/// broadcast, so that the delivering thread then runs a batch from no list,
/// while the other thread subscribes and unsubscribes. A lost list is not
/// visible from here: the address sanitizer's leak check, which CI runs on
/// the whole suite, reports it. What this test checks itself is that every
/// value reaches the chains meant to get it.
@Suite struct SpareListTests {
  @Test func listsLeftEmptyDuringADeliveryAreNotLost() {
    let rounds = 2_000
    let notifier = Notifier<Int>()
    let handled = AtomicCounter()
    let churned = AtomicCounter()
    race(threads: 2) { index in
      if index == 0 {
        for _ in 0..<rounds {
          let first = ObserverBox()
          first.observer = notifier.chain().do { value in
            guard value == 1, let observer = first.take() else { return }
            handled.add(1)
            // Invalidated from its own handler: a copy of the list, with no
            // observer of this thread's left in it.
            observer.invalidate()
            // Subscribed and unsubscribed again during the delivery, with a
            // broadcast queued between: the delivering thread then runs
            // that batch from no list, if the other thread has none in.
            let second = notifier.chain().end()
            notifier.notify(value: 2)
            second.invalidate()
          }.end()
          notifier.notify(value: 1)
        }
      } else {
        for _ in 0..<rounds * 4 {
          notifier.chain().end().invalidate()
          churned.add(1)
        }
      }
    }
    #expect(handled.value == rounds)
    #expect(churned.value == rounds * 4)
    #expect(notifier.observerCount == 0)
  }
}

/// An observer its own handler takes, once.
private final class ObserverBox: @unchecked Swift.Sendable {
  // @unchecked: set before the first broadcast, then taken under the
  // lock. NSLock rather than Mutex, which the thread sanitizer does not
  // understand.
  private let lock = NSLock()
  private var stored: Observer?

  var observer: Observer? {
    get { lock.withLock { stored } }
    set { lock.withLock { stored = newValue } }
  }

  func take() -> Observer? {
    lock.withLock { stored.take() }
  }
}
