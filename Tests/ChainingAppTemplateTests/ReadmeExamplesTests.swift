// The README's examples, in a module built with the settings of a new app
// target in Xcode 26: the main actor as default isolation,
// `NonisolatedNonsendingByDefault` and `InferIsolatedConformances` (see
// Package.swift). Every type below is isolated to the main actor unless it
// says `nonisolated`, as in an app; each test checks what the README's
// comments say the example does.
import Chaining
import Testing

private final class TextLabel: Receivable {
  var text = ""
  func receive(value: String) { text = value }
}

private final class IntNotifier: Chaining.Sendable {
  typealias ChainValue = Int
  func notify(value: Int) { self.broadcast(value: value) }
}

private final class Battery: Fetchable {
  typealias ChainValue = Int
  var level = 80
  func fetchedValue() -> Int { level }
}

private final class IntHolder: Syncable, Receivable {
  typealias ChainValue = Int
  typealias ReceiveValue = Int
  var value: Int { didSet { if value != oldValue { self.broadcast(value: value) } } }
  init(_ initial: Int) { self.value = initial }
  func fetchedValue() -> Int { self.value }
  func receive(value: Int) { self.value = value }
}

private final class ReadingThermometer: Chaining.Sendable {
  typealias ChainValue = Reading
  func report(_ celsius: Double) { broadcast(value: Reading(celsius: celsius)) }
}

private struct Reading: Swift.Sendable {
  let celsius: Double
}

@Suite struct ReadmeExamplesTests {
  @Test func aHolderBoundToALabel() {
    let count = ValueHolder(2)
    let label = TextLabel()
    let pool = ObserverPool()
    count.chain()
      .map { "\($0) to do" }
      .sendTo(label)
      .sync()
      .addTo(pool)
    #expect(label.text == "2 to do")
    count.value = 3
    #expect(label.text == "3 to do")
    pool.invalidate()
    count.value = 4
    #expect(label.text == "3 to do")
  }

  @Test func aClassOfYoursThatSends() {
    var received: [Int] = []
    let notifier = IntNotifier()
    let observer = notifier.chain().do { received.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received == [1, 2])
    observer.invalidate()
  }

  @Test func aClassOfYoursThatIsFetched() {
    var received: [String] = []
    let observer = Battery().chain().do { received.append("battery \($0)") }.sync()
    #expect(received == ["battery 80"])
    observer.invalidate()
  }

  @Test func aClassOfYoursThatSyncsAndReceives() {
    let sender = IntHolder(0)
    let receiver = IntHolder(1)
    let observer = sender.chain().sendTo(receiver).sync()
    #expect(receiver.value == 0)
    sender.value = 2
    #expect(receiver.value == 2)
    observer.invalidate()
  }

  @Test func aRetainedHolderLivesAsLongAsItsChain() {
    let label = TextLabel()
    weak var weakHolder: ValueHolder<String>?
    let observer: Observer
    do {
      let holder = ValueHolder("Inbox")
      weakHolder = holder
      observer = holder.retain().chain().sendTo(label).sync()
    }
    #expect(label.text == "Inbox")
    #expect(weakHolder != nil)
    observer.invalidate()
    #expect(weakHolder == nil)
  }

  @Test func bothSendablesSideBySide() {
    var readings: [Double] = []
    let thermometer = ReadingThermometer()
    let observer = thermometer.chain().map(\.celsius).do { readings.append($0) }.end()
    thermometer.report(21.5)
    #expect(readings == [21.5])
    observer.invalidate()
  }
}
