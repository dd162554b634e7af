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

  // The list a broadcast reads is never changed in place: a change made
  // during a delivery goes to a copy (see `_SenderCore`). These cover it.

  @Test func aChainFinishedInsideAHandlerGetsOnlyLaterValues() {
    let notifier = Notifier<Int>()
    let late = Recorder<Int>()
    var lateObserver: Observer?
    let first = notifier.chain().do { _ in
      if lateObserver == nil {
        lateObserver = notifier.chain().do { late.append($0) }.end()
      }
    }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(late.history == [2])
    withExtendedLifetime(first) {}
  }

  @Test func anObserverInvalidatedInsideAHandlerGetsNothingMore() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    var second: Observer?
    let first = notifier.chain().do { value in
      received.append("first \(value)")
      second?.invalidate()
    }.end()
    second = notifier.chain().do { received.append("second \($0)") }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == ["first 1", "first 2"])
    withExtendedLifetime(first) {}
  }

  @Test func removingEveryObserverInsideAHandlerEmptiesTheSender() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    var observers: [Observer] = []
    observers.append(
      notifier.chain().do { value in
        received.append("first \(value)")
        for observer in observers { observer.invalidate() }
      }.end()
    )
    observers.append(notifier.chain().do { received.append("second \($0)") }.end())
    notifier.notify(value: 1)
    #expect(notifier._senderCore(creating: false)?.hasObservers == false)
    notifier.notify(value: 2)
    let later = notifier.chain().do { received.append("later \($0)") }.end()
    notifier.notify(value: 3)
    #expect(received.history == ["first 1", "later 3"])
    withExtendedLifetime(later) {}
  }

  @Test func observersRemovedInsideAHandlerLeaveTheRestInOrder() {
    let notifier = Notifier<Int>()
    let received = Recorder<String>()
    // The handler captures only the observers it removes: capturing an array
    // that also held its own observer would be a retain cycle (the observer
    // holds the handler), which the address sanitizer reports as a leak.
    var removed: [Observer] = []
    let first = notifier.chain().do { value in
      received.append("0:\(value)")
      // Enough to compact the list.
      if value == 1 {
        for observer in removed { observer.invalidate() }
      }
    }.end()
    var kept: [Observer] = []
    for index in 1..<100 {
      let observer = notifier.chain().do { received.append("\(index):\($0)") }.end()
      if index < 90 { removed.append(observer) } else { kept.append(observer) }
    }
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    let survivors = [0] + Array(90..<100)
    #expect(received.history == survivors.map { "\($0):1" } + survivors.map { "\($0):2" })
    withExtendedLifetime((first, kept)) {}
  }

  @Test func theClosuresOfAnObserverRemovedDuringADeliveryAreReleasedWhenItEnds() {
    final class Token: Swift.Sendable {}
    let notifier = Notifier<Int>()
    weak var weakToken: Token?
    var second: Observer?
    do {
      let token = Token()
      weakToken = token
      second = notifier.chain().do { _ in withExtendedLifetime(token) {} }.end()
    }
    let first = notifier.chain().do { _ in
      second?.invalidate()
      second = nil
    }.end()
    notifier.notify(value: 1)
    #expect(weakToken == nil)
    withExtendedLifetime(first) {}
  }
}
