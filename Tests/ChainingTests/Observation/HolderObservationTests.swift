import Chaining
import Foundation
import Observation
import Testing

/// Counts the `onChange` calls of the trackings it starts, and keeps what
/// each `onChange` read.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class Tracker: @unchecked Swift.Sendable {
  // @unchecked: `state` is only touched under `lock`. NSLock rather than
  // Mutex: the thread sanitizer understands its pthread mutex, not
  // Mutex's futex, and reported the two `onChange` calls Observation may
  // make at once (two writers at the same moment) as a race.
  private let lock = NSLock()
  private var state: (count: Int, seen: [String]) = (0, [])

  var count: Int { lock.withLock { state.count } }
  var seen: [String] { lock.withLock { state.seen } }

  /// Runs `read` inside `withObservationTracking`, as a SwiftUI `body`
  /// does; `onChange` counts, then records what `reread` returns then.
  @discardableResult
  func track<T>(_ read: () -> T, reread: @escaping @Sendable () -> String = { "" }) -> T {
    withObservationTracking(read) {
      let text = reread()
      self.lock.withLock {
        self.state.count += 1
        self.state.seen.append(text)
      }
    }
  }
}

@Suite struct HolderObservationTests {
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aValueHolderReadInTrackingFiresOnceOnAChange() {
    let holder = ValueHolder(1)
    let tracker = Tracker()
    #expect(tracker.track { holder.value } == 1)
    holder.value = 2
    holder.value = 3
    // One-shot, as Observation's tracking is.
    #expect(tracker.count == 1)
    tracker.track { holder.value }
    holder.value = 4
    #expect(tracker.count == 2)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func anEqualWriteOrAResendFiresNothing() {
    let holder = ValueHolder("a")
    let tracker = Tracker()
    tracker.track { holder.value }
    holder.value = "a"
    holder.resend()
    #expect(tracker.count == 0)
    holder.value = "b"
    #expect(tracker.count == 1)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aNonEquatableValueFiresOnEverySet() {
    struct Box { var n: Int }
    let holder = ValueHolder(Box(n: 1))
    let tracker = Tracker()
    tracker.track { holder.value.n }
    holder.value = Box(n: 1)
    #expect(tracker.count == 1)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func onChangeReadsTheNewValue() {
    let holder = ValueHolder(1)
    let tracker = Tracker()
    tracker.track({ holder.value }, reread: { "\(holder.value)" })
    holder.value = 7
    #expect(tracker.seen == ["7"])
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func writesThroughReceiveAndThroughAChainFire() {
    let holder = ValueHolder(0)
    let source = ValueHolder(0)
    let observer = source.chain().sendTo(holder).end()
    let tracker = Tracker()
    tracker.track { holder.value }
    holder.receive(value: 1)
    #expect(tracker.count == 1)
    tracker.track { holder.value }
    source.value = 5
    #expect(tracker.count == 2)
    #expect(holder.value == 5)
    observer.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aHolderReadOutsideTrackingFiresNothingAndStillDelivers() {
    let holder = ValueHolder(0)
    let received = Recorder<Int>()
    let observer = holder.chain().do { received.append($0) }.end()
    #expect(holder.value == 0)
    holder.value = 1
    holder.value = 2
    #expect(received.history == [1, 2])
    observer.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func anEventableValueHolderFires() {
    let holder = EventableValueHolder(1)
    let tracker = Tracker()
    tracker.track { holder.value }
    holder.resend()
    holder.value = 1
    #expect(tracker.count == 0)
    holder.value = 2
    #expect(tracker.count == 1)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func anArrayHolderFiresForEveryReadAccessor() {
    let holder = ArrayHolder([1, 2, 3])
    let reads: [(ArrayHolder<Int>) -> Int] = [
      { $0.raw.count }, { $0.count }, { $0.first ?? 0 }, { $0.last ?? 0 },
      { $0[1] }, { $0.element(at: 2) },
    ]
    for (index, read) in reads.enumerated() {
      let tracker = Tracker()
      tracker.track { read(holder) }
      holder.move(at: 1, to: 1)  // changes nothing
      #expect(tracker.count == 0, "read \(index)")
      holder.append(index)
      holder.append(index)
      #expect(tracker.count == 1, "read \(index)")
    }
    let tracker = Tracker()
    tracker.track { holder.count }
    holder.receive(value: .remove(at: 0))
    #expect(tracker.count == 1)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func anEmptyArrayHolderClearedFiresNothing() {
    let holder = ArrayHolder<Int>()
    let tracker = Tracker()
    tracker.track { holder.count }
    holder.removeAll()
    #expect(tracker.count == 0)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aDictionaryHolderFires() {
    let holder = DictionaryHolder(["a": 1])
    let tracker = Tracker()
    #expect(tracker.track { holder["a"] } == 1)
    holder.removeAll()
    #expect(tracker.count == 1)
    tracker.track { holder.count }
    holder.removeAll()
    #expect(tracker.count == 1)
    holder.insert(key: "b", value: 2)
    #expect(tracker.count == 2)
    tracker.track { holder.raw }
    holder.replace(key: "b", value: 3)
    #expect(tracker.count == 3)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func relayableHoldersFireOnTheirOwnChangesNotOnRelays() {
    let element = ValueHolder(1)
    let array = RelayableArrayHolder([element])
    let dictionary = RelayableDictionaryHolder(["k": element])
    let single = RelayableValueHolder(element)
    let tracker = Tracker()
    tracker.track { (array.count, dictionary.count, single.value.value) }
    element.value = 2  // relayed by all three: their own state is unchanged
    // Reading `single.value.value` tracked the element too: that is its change.
    #expect(tracker.count == 1)
    let holders = Tracker()
    holders.track { (array.raw.count, dictionary.raw.count, single.value === element) }
    element.value = 3
    #expect(holders.count == 0)
    array.append(ValueHolder(9))
    #expect(holders.count == 1)
    holders.track { dictionary["k"]?.value ?? 0 }
    dictionary.removeAll()
    #expect(holders.count == 2)
    holders.track { single.value }
    single.value = ValueHolder(4)
    #expect(holders.count == 3)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aSuspenderFires() {
    let suspender = Suspender()
    let tracker = Tracker()
    #expect(tracker.track { suspender.isSuspended } == false)
    suspender.resume()
    #expect(tracker.count == 0)
    suspender.suspend()
    #expect(tracker.count == 1)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aPropertyAdapterFires() {
    final class Model { var name = "a" }
    let model = Model()
    let adapter = PropertyAdapter(model, keyPath: \.name)
    let tracker = Tracker()
    #expect(tracker.track { adapter.value } == "a")
    adapter.value = "a"
    #expect(tracker.count == 0)
    adapter.value = "b"
    #expect(tracker.count == 1)
    tracker.track { adapter.safeValue }
    model.name = "c"
    adapter.broadcast()
    #expect(tracker.count == 2)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func fetchedValueRegistersNothing() {
    final class Model { var name = "a" }
    let model = Model()
    let value = ValueHolder(1)
    let eventable = EventableValueHolder(1)
    let array = ArrayHolder([1])
    let dictionary = DictionaryHolder(["a": 1])
    let adapter = PropertyAdapter(model, keyPath: \.name)
    let suspender = Suspender()
    let tracker = Tracker()
    tracker.track {
      _ = value.fetchedValue()
      _ = eventable.fetchedValue()
      _ = array.fetchedValue()
      _ = dictionary.fetchedValue()
      _ = adapter.fetchedValue()
      _ = suspender.fetchedValue()
    }
    value.value = 2
    eventable.value = 2
    array.append(2)
    dictionary.insert(key: "b", value: 2)
    adapter.value = "b"
    suspender.suspend()
    #expect(tracker.count == 0)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func trackingKeepsNoHolderAlive() {
    weak var weakHolder: ValueHolder<Int>?
    let tracker = Tracker()
    do {
      let holder = ValueHolder(1)
      weakHolder = holder
      tracker.track { holder.value }
    }
    #expect(weakHolder == nil)
    #expect(tracker.count == 0)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func concurrentWritersWhileTrackedMissNoTracking() {
    // Two threads write while a third tracks again and again. Every
    // tracking was started before the last write, so every one must have
    // fired. (Observation itself may call one `onChange` twice when two
    // threads write at the same moment, so more than once is allowed.)
    // Run under the thread sanitizer in CI.
    let holder = ValueHolder(0)
    let trackers = Recorder<Tracker>()
    race(threads: 3) { index in
      for step in 1...500 {
        if index == 2 {
          let tracker = Tracker()
          tracker.track { holder.value }
          trackers.append(tracker)
        } else {
          holder.value = index * 1000 + step
        }
      }
    }
    let last = Tracker()
    last.track { holder.value }
    holder.value = -1
    #expect(last.count == 1)
    let counts = trackers.history.map(\.count)
    #expect(counts.count == 500)
    #expect(counts.allSatisfy { $0 >= 1 })
    #expect(holder.value == -1)
  }
}
