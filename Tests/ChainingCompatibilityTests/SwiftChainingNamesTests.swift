import Chaining
import Foundation
import Testing

// Code written with SwiftChaining 0.5.36's public names, as its users wrote
// it, and what it does here.
//
// Each scenario's `run()` is marked deprecated, which keeps the deprecation
// warnings of the old names inside it (CI builds with warnings as errors);
// a test calls it through `OldNamesScenario`, which a deprecated method may
// satisfy without a warning. `oldCodeCompilesWithDeprecationWarningsOnly`
// checks the warnings a user would see.

/// A piece of code that uses SwiftChaining's names.
protocol OldNamesScenario {
  func run()
}

/// Runs `scenario` (see `OldNamesScenario`).
func exercise(_ scenario: some OldNamesScenario) {
  scenario.run()
}

/// A user's holder-like class, as SwiftChaining's README wrote one.
final class IntSender: Chaining.Sendable {
  typealias ChainValue = Int
  func send(_ value: Int) { broadcast(value: value) }
}

/// Records what it receives; any type.
final class Collector<Value>: Receivable, @unchecked Swift.Sendable {
  // @unchecked: used on the test's thread only.
  var received: [Value] = []
  func receive(value: Value) { received.append(value) }
}

struct SuspenderKeepsItsOldNames: OldNamesScenario {
  @available(*, deprecated, message: "uses SwiftChaining's names")
  func run() {
    let suspender = Suspender(true)
    #expect(suspender.isSuspend)
    suspender.isSuspend = false
    #expect(!suspender.isSuspended)
    #expect(!Suspender().isSuspend)
  }
}

struct SendNToSendsEachElementAndPassesTheTupleOn: OldNamesScenario {
  @available(*, deprecated, message: "uses SwiftChaining's names")
  func run() {
    let notifier = Notifier<(Int, String, Double, Bool, Character)>()
    let c0 = Collector<Int>()
    let c1 = Collector<String>()
    let c2 = Collector<Double>()
    let c3 = Collector<Bool>()
    let c4 = Collector<Character>()
    let passed = Collector<Int>()
    let observer = notifier.chain()
      .send0To(c0).send1To(c1).send2To(c2).send3To(c3).send4To(c4.retain())
      .map { $0.0 * 10 }.sendTo(passed)
      .end()
    notifier.notify(value: (1, "a", 0.5, true, "x"))
    #expect(c0.received == [1])
    #expect(c1.received == ["a"])
    #expect(c2.received == [0.5])
    #expect(c3.received == [true])
    #expect(c4.received == ["x"])
    #expect(passed.received == [10])
    observer.invalidate()
  }
}

struct SendNToBridgesOptionalsBothWays: OldNamesScenario {
  @available(*, deprecated, message: "uses SwiftChaining's names")
  func run() {
    let notifier = Notifier<(Int?, String)>()
    let unwrapped = Collector<Int>()
    let wrapped = Collector<String?>()
    let observer = notifier.chain().send0To(unwrapped).send1To(wrapped).end()
    notifier.notify(value: (1, "a"))
    notifier.notify(value: (nil, "b"))
    #expect(unwrapped.received == [1])
    #expect(wrapped.received == ["a", "b"])
    observer.invalidate()
  }
}

struct AJoinedChainSyncsFromItsFetchableSide: OldNamesScenario {
  @available(*, deprecated, message: "uses SwiftChaining's names")
  func run() {
    let notifier = Notifier<Int>()
    let holder = ValueHolder(1)
    let merged = Collector<Int>()
    let combined = Collector<String>()
    let pool = ObserverPool()
    notifier.chain().merge(holder.chain()).sendTo(merged).sync().addTo(pool)
    notifier.chain().combine(holder.chain()).map { "\($0)-\($1)" }.sendTo(combined).sync().addTo(pool)
    notifier.notify(value: 2)
    #expect(merged.received == [1, 2])
    #expect(combined.received == ["2-1"])
  }
}

struct SendToBridgesOptionals: OldNamesScenario {
  @available(*, deprecated, message: "uses SwiftChaining's names")
  func run() {
    let optional = ValueHolder<Int?>(nil)
    let plain = ValueHolder(0)
    let intoPlain = ValueHolder(-1)
    let intoOptional = ValueHolder<Int?>(nil)
    let pool = ObserverPool()
    optional.chain().sendTo(intoPlain).sync().addTo(pool)
    plain.chain().sendTo(intoOptional).sync().addTo(pool)
    optional.value = 5
    #expect(intoPlain.value == 5)
    #expect(intoOptional.value == 0)
  }
}

struct HoldersAreEquatableAndKeepTheirRawNames: OldNamesScenario {
  @available(*, deprecated, message: "uses SwiftChaining's names")
  func run() {
    #expect([ValueHolder(1), ValueHolder(2)] == [ValueHolder(1), ValueHolder(2)])
    #expect(EventableValueHolder(3) == EventableValueHolder(3))
    #expect(RelayableValueHolder(ValueHolder(1)) == RelayableValueHolder(ValueHolder(1)))
    #expect(ValueHolder("a").raw == "a")
    #expect(EventableValueHolder(4).rawValue == 4)
    #expect(RelayableValueHolder(ValueHolder(6)).rawValue.value == 6)
    let first: ValueHolder<Int>.FirstChain = ValueHolder(7).chain()
    first.end().invalidate()
  }
}

struct CollectionHoldersKeepTheirOldAPI: OldNamesScenario {
  @available(*, deprecated, message: "uses SwiftChaining's names")
  func run() {
    let array = ArrayHolder([1, 2])
    array.reserveCapacity(10)
    #expect(array.capacity >= 10)
    array.removeAll(keepingCapacity: true)
    #expect(array.capacity >= 10)
    #expect(array.raw.isEmpty)
    let dictionary = DictionaryHolder<String, Int>()
    let events = Collector<DictionaryHolder<String, Int>.Event>()
    let observer = dictionary.chain().sendTo(events).end()
    dictionary.insert(key: "a", value: 1)
    dictionary.replace(key: "a", value: 2)
    dictionary.removeAll(keepingCapacity: false)
    #expect(events.received == [.inserted(key: "a", value: 1), .replaced(key: "a", value: 2), .set([:])])
    observer.invalidate()
  }
}

struct AdaptersKeepTheirOldAPI: OldNamesScenario {
  @available(*, deprecated, message: "uses SwiftChaining's names")
  func run() {
    final class Profile { var name = "Ann" }
    var profile: Profile? = Profile()
    let adapter = PropertyAdapter(profile!, keyPath: \.name)
    #expect(adapter.safeValue == "Ann")
    profile = nil
    #expect(adapter.safeValue == nil)

    let name = Notification.Name("SwiftChainingNamesTests")
    let center = NotificationCenter()
    let notifications = NotificationAdapter(name, object: nil, notificationCenter: center)
    let posted = Collector<Notification>()
    let observer = notifications.chain().sendTo(posted).end()
    center.post(name: name, object: nil)
    notifications.invalidate()
    center.post(name: name, object: nil)
    #expect(posted.received.count == 1)
    observer.invalidate()
  }
}

struct AUserSenderWorksAsBefore: OldNamesScenario {
  @available(*, deprecated, message: "uses SwiftChaining's names")
  func run() {
    let sender = IntSender()
    let collector = Collector<Int>()
    let observer = sender.chain().guard { $0 > 0 }.sendTo(collector).end()
    sender.send(-1)
    sender.send(2)
    #expect(collector.received == [2])
    observer.invalidate()
  }
}

@Suite struct SwiftChainingNamesTests {
  @Test func suspenderKeepsItsOldNames() {
    exercise(SuspenderKeepsItsOldNames())
  }

  @Test func sendNToSendsEachElementAndPassesTheTupleOn() {
    exercise(SendNToSendsEachElementAndPassesTheTupleOn())
  }

  @Test func sendNToBridgesOptionalsBothWays() {
    exercise(SendNToBridgesOptionalsBothWays())
  }

  @Test func aJoinedChainSyncsFromItsFetchableSide() {
    exercise(AJoinedChainSyncsFromItsFetchableSide())
  }

  @Test func sendToBridgesOptionals() {
    exercise(SendToBridgesOptionals())
  }

  @Test func holdersAreEquatableAndKeepTheirRawNames() {
    exercise(HoldersAreEquatableAndKeepTheirRawNames())
  }

  @Test func collectionHoldersKeepTheirOldAPI() {
    exercise(CollectionHoldersKeepTheirOldAPI())
  }

  @Test func adaptersKeepTheirOldAPI() {
    exercise(AdaptersKeepTheirOldAPI())
  }

  @Test func aUserSenderWorksAsBefore() {
    exercise(AUserSenderWorksAsBefore())
  }
}
