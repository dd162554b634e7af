import Testing

@testable import Chaining

@Suite struct SenderCoreTests {
  @Test func removalKeepsTheOrderOfTheRemainingObserversAcrossCompaction() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    var observers: [Int: Observer] = [:]
    for index in 0..<200 {
      observers[index] = notifier.chain().do { _ in received.append(index) }.end()
    }
    // Remove enough to compact the list several times.
    for index in 0..<200 where index % 4 != 0 {
      observers[index]?.invalidate()
    }
    notifier.notify(value: 0)
    #expect(received.history == Array(stride(from: 0, to: 200, by: 4)))
    #expect(notifier._senderCore(creating: false)?.hasObservers == true)
    for observer in observers.values { observer.invalidate() }
    #expect(notifier._senderCore(creating: false)?.hasObservers == false)
  }

  @Test func observersAddedAfterCompactionAreDeliveredLast() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    var observers: [Observer] = (0..<100).map { index in
      notifier.chain().do { _ in received.append("old\(index)") }.end()
    }
    for observer in observers.dropLast() { observer.invalidate() }
    observers.append(notifier.chain().do { _ in received.append("new") }.end())
    notifier.notify(value: 0)
    #expect(received.history == ["old99", "new"])
  }
}
