import Dispatch
import Testing

@testable import Chaining

@Suite struct ChainSendToTests {
  @Test func sendToCallsReceiveAndPassesTheValueOn() {
    let notifier = Notifier<Int>()
    let receiver = RecordingReceiver<Int>()
    let after = Recorder<Int>()
    let observer = notifier.chain().sendTo(receiver).do { after.append($0) }.end()
    notifier.notify(value: 7)
    #expect(receiver.history == [7])
    #expect(after.history == [7])
    withExtendedLifetime(observer) {}
  }

  @Test func sendToHoldsTheReceiverWeakly() {
    let notifier = Notifier<Int>()
    let after = Recorder<Int>()
    weak var weakReceiver: RecordingReceiver<Int>?
    var observer: Observer?
    do {
      let receiver = RecordingReceiver<Int>()
      weakReceiver = receiver
      observer = notifier.chain().sendTo(receiver).do { after.append($0) }.end()
    }
    #expect(weakReceiver == nil)
    // The released receiver is skipped; the rest of the chain still runs.
    notifier.notify(value: 1)
    #expect(after.history == [1])
    withExtendedLifetime(observer) {}
  }

  /// A value holder is sent to through its store, held weakly, which the
  /// holder frees with it: neither the holder nor the value it held
  /// outlives it, nothing is written after, and the later steps still run.
  @Test func sendToAValueHolderHoldsNeitherItNorItsValue() {
    final class Box {
      let number: Int
      init(_ number: Int) { self.number = number }
    }
    let source = ValueHolder(Box(1))
    let after = Recorder<Int>()
    let watched = Recorder<Int>()
    weak var weakHolder: ValueHolder<Box>?
    weak var weakSent: Box?
    var observers: [Observer] = []
    do {
      let holder = ValueHolder(Box(0))
      weakHolder = holder
      observers.append(holder.chain().do { watched.append($0.number) }.end())
      observers.append(source.chain().sendTo(holder).do { after.append($0.number) }.sync())
      #expect(holder.value.number == 1)
      let sent = Box(2)
      weakSent = sent
      source.value = sent
      #expect(holder.value.number == 2)
    }
    #expect(weakHolder == nil)
    source.value = Box(3)
    #expect(weakSent == nil)
    #expect(watched.history == [1, 2])
    #expect(after.history == [1, 2, 3])
    withExtendedLifetime(observers) {}
  }

  /// A `sendTo` link into a holder keeps the memory of the holder's store
  /// (an unowned reference, so that `swift_tryRetain` may still ask it
  /// whether it is alive after the holder went), and gives it back with
  /// the chain. The link is a value in the step's closure: a field the
  /// closure never reads, which the compiler must keep.
  @Test func aSendToLinkPinsTheStoresMemoryUntilTheChainGoes() {
    let source = ValueHolder(0)
    let holder = ValueHolder(0)
    // Read first: the holder's registrar, made by the first read, holds
    // its store unowned too.
    #expect(holder.value == 0)
    let unowned = _getUnownedRetainCount(holder.store)
    do {
      // Each form of the link's closure: after composed steps or not,
      // with steps after it or not.
      let observers = [
        source.chain().sendTo(holder).end(),
        source.chain().sendTo(holder).do { _ in }.end(),
        source.chain().compactMap { $0 + 1 }.sendTo(holder).end(),
        source.chain().compactMap { $0 + 1 }.sendTo(holder).do { _ in }.end(),
        source.chain().map { $0 + 2 }.sendTo(holder).do { _ in }.end(),
        source.chain().map { $0 + 3 }.sendTo(holder).end(),
      ]
      #expect(_getUnownedRetainCount(holder.store) == unowned + 6)
      source.value = 1
      #expect(holder.value == 4)
      for (index, observer) in observers.enumerated() {
        observer.invalidate()
        #expect(_getUnownedRetainCount(holder.store) == unowned + 5 - UInt(index))
      }
      withExtendedLifetime(observers) {}
    }
    #expect(_getUnownedRetainCount(holder.store) == unowned)
  }

  /// A `sendTo` into a holder right after `map`, `filter` and
  /// `compactMap` steps joins their composed function (one closure per
  /// link): each value those steps pass on is written, in order, and
  /// handed to the steps after; a value they drop reaches neither; the
  /// synced value goes the same way; and a holder that went is skipped
  /// while the later steps still run.
  @Test func sendToAHolderAfterComposedStepsWritesWhatTheyPassOn() {
    let source = ValueHolder(1)
    let mappedAfter = Recorder<Int>()
    let compactedAfter = Recorder<Int>()
    let mapped = ValueHolder(0)
    let mappedLast = ValueHolder(0)
    let compacted = ValueHolder(0)
    let filteredLast = ValueHolder(0)
    let mappedWatch = Recorder<Int>()
    let compactedWatch = Recorder<Int>()
    let filteredWatch = Recorder<Int>()
    weak var weakGone: ValueHolder<Int>?
    var observers = [
      mapped.chain().do { mappedWatch.append($0) }.end(),
      compacted.chain().do { compactedWatch.append($0) }.end(),
      filteredLast.chain().do { filteredWatch.append($0) }.end(),
      source.chain().map { $0 * 10 }.sendTo(mapped).do { mappedAfter.append($0) }.sync(),
      source.chain().map { $0 * 100 }.sendTo(mappedLast).sync(),
      source.chain().compactMap { $0 % 2 == 0 ? nil : $0 + 1 }.sendTo(compacted)
        .do { compactedAfter.append($0) }.sync(),
      source.chain().filter { $0 > 1 }.map { $0 - 1 }.sendTo(filteredLast).sync(),
    ]
    #expect(mapped.value == 10)
    #expect(mappedLast.value == 100)
    #expect(compacted.value == 2)
    #expect(filteredLast.value == 0)
    for value in 2...5 { source.value = value }
    #expect(mappedWatch.history == [10, 20, 30, 40, 50])
    #expect(mappedAfter.history == [10, 20, 30, 40, 50])
    #expect(mappedLast.value == 500)
    #expect(compactedWatch.history == [2, 4, 6])
    #expect(compactedAfter.history == [2, 4, 6])
    #expect(filteredWatch.history == [1, 2, 3, 4])
    do {
      let gone = ValueHolder(0)
      weakGone = gone
      observers.append(source.chain().map { $0 + 1000 }.sendTo(gone).do { mappedAfter.append($0) }.sync())
      #expect(gone.value == 1005)
    }
    #expect(weakGone == nil)
    source.value = 7
    #expect(mappedAfter.history == [10, 20, 30, 40, 50, 1005, 70, 1007])
    #expect(compactedAfter.history == [2, 4, 6, 8])
    #expect(filteredLast.value == 6)
    withExtendedLifetime(observers) {}
  }

  /// One thread writes through `sendTo` into a holder while another
  /// drops the holder's last reference: each write either reaches the
  /// live holder or is skipped, in order, and the rest of the chain gets
  /// every value (see `StoreLink`; run under the thread sanitizer).
  @Test func aHolderFreedWhileAnotherThreadSendsToItIsSkipped() {
    final class Slot: @unchecked Swift.Sendable {
      // @unchecked: set before the threads start, cleared by one of them.
      var holder: ValueHolder<Int>?
    }
    let writes = 1_000
    for _ in 0..<50 {
      let source = ValueHolder(0)
      let slot = Slot()
      let watched = Recorder<Int>()
      let after = Recorder<Int>()
      weak var weakHolder: ValueHolder<Int>?
      var observers: [Observer] = []
      do {
        let holder = ValueHolder(0)
        weakHolder = holder
        slot.holder = holder
        observers.append(holder.chain().do { watched.append($0) }.end())
        observers.append(source.chain().sendTo(holder).do { after.append($0) }.end())
      }
      DispatchQueue.concurrentPerform(iterations: 2) { thread in
        if thread == 0 {
          for value in 1...writes { source.value = value }
        } else {
          // Drops the holder once writes reach it: the writes go on.
          while watched.history.count < 10 {}
          slot.holder = nil
        }
      }
      #expect(weakHolder == nil)
      #expect(after.history == Array(1...writes))
      let reached = watched.history
      #expect(reached.count >= 10)
      #expect(reached == Array(1...reached.count))
      withExtendedLifetime(observers) {}
    }
  }

  @Test func sendToARetainedReceiverKeepsItUntilInvalidation() {
    let notifier = Notifier<Int>()
    weak var weakReceiver: RecordingReceiver<Int>?
    var observer: Observer?
    do {
      let receiver = RecordingReceiver<Int>()
      weakReceiver = receiver
      observer = notifier.chain().sendTo(receiver.retain()).end()
    }
    notifier.notify(value: 4)
    #expect(weakReceiver?.history == [4])
    observer?.invalidate()
    #expect(weakReceiver == nil)
    withExtendedLifetime(observer) {}
  }

  @Test func sendToDeliversTheSyncedValue() {
    let holder = ValueHolder("now")
    let receiver = RecordingReceiver<String>()
    let observer = holder.chain().sendTo(receiver).sync()
    #expect(receiver.history == ["now"])
    withExtendedLifetime(observer) {}
  }

  @Test func retainOnAnObjectThatIsBothSourceAndReceiverIsUnambiguous() {
    let source = ValueHolder(1)
    let target = ValueHolder(0)
    let observer = source.retain().chain().sendTo(target.retain()).sync()
    #expect(target.value == 1)
    withExtendedLifetime(observer) {}
  }
}
