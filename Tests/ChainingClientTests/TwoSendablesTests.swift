// A separate module that uses Chaining the way a client does: both
// `Sendable` protocols appear side by side in this one file.
import Chaining
import Dispatch
import Testing

/// Chaining's protocol, written unqualified: in a file that imports
/// Chaining, `Sendable` means `Chaining.Sendable`.
final class Thermometer: Sendable {
  typealias ChainValue = Reading
  func measure(_ celsius: Double) { broadcast(value: Reading(celsius: celsius)) }
}

/// Chaining's protocol, written qualified.
final class Doorbell: Chaining.Sendable {
  typealias ChainValue = Void
  func ring() { broadcast(value: ()) }
}

/// Swift's concurrency marker, written qualified.
struct Reading: Swift.Sendable, Equatable {
  let celsius: Double
}

/// Both at once: a sender of ours that is also safe to share across threads.
final class Counter: Chaining.Sendable, Swift.Sendable {
  typealias ChainValue = Int
  func emit(_ value: Int) { broadcast(value: value) }
}

func requiresConcurrencySendable<T: Swift.Sendable>(_ value: T) -> T { value }

@Suite struct TwoSendablesTests {
  @Test func unqualifiedSendableIsChainingsProtocol() {
    let thermometer = Thermometer()
    var readings: [Reading] = []
    let observer = thermometer.chain().do { readings.append($0) }.end()
    thermometer.measure(21.5)
    #expect(readings == [Reading(celsius: 21.5)])
    withExtendedLifetime(observer) {}
  }

  @Test func qualifiedChainingSendableWorks() {
    let doorbell = Doorbell()
    var rings = 0
    let observer = doorbell.chain().do { rings += 1 }.end()
    doorbell.ring()
    doorbell.ring()
    #expect(rings == 2)
    withExtendedLifetime(observer) {}
  }

  @Test func swiftSendableValuesCrossThreads() {
    let counter = requiresConcurrencySendable(Counter())
    let holder = requiresConcurrencySendable(ValueHolder(Reading(celsius: 0)))
    let observer: any AnyObserver = requiresConcurrencySendable(
      counter.chain().map { Reading(celsius: Double($0)) }.sendTo(holder).end()
    )
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) {
      counter.emit(7)
    }
    group.wait()
    #expect(holder.value == Reading(celsius: 7))
    observer.invalidate()
  }

  @Test func sendableClosuresAreUnaffected() {
    let work: @Sendable () -> Int = { 1 }
    #expect(work() == 1)
  }
}
