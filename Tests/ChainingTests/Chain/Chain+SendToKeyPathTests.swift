import Chaining
import Testing

/// A plain class with writable properties and no protocol, as `sendTo(_:_:)` binds them.
private final class Label {
  var text = ""
  var writes: [String] = []
  var number = 0 {
    didSet { writes.append("number \(number)") }
  }
}

@Suite struct ChainSendToKeyPathTests {
  // MARK: - sendTo(_:_:)

  @Test func sendToKeyPathWritesEachValueAndPassesItOn() {
    let notifier = Notifier<Int>()
    let label = Label()
    let after = Recorder<Int>()
    let observer = notifier.chain().sendTo(label, \.number).do { after.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(label.writes == ["number 1", "number 2"])
    #expect(after.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func sendToKeyPathWritesTheSyncedValue() {
    let title = ValueHolder("Inbox")
    let label = Label()
    let observer = title.chain().sendTo(label, \.text).sync()
    #expect(label.text == "Inbox")
    title.value = "Archive"
    #expect(label.text == "Archive")
    withExtendedLifetime(observer) {}
  }

  @Test func sendToKeyPathOnANotifierWritesNothingUntilItSends() {
    let notifier = Notifier<String>()
    let label = Label()
    label.text = "unchanged"
    let observer = notifier.chain().sendTo(label, \.text).end()
    #expect(label.text == "unchanged")
    notifier.notify(value: "sent")
    #expect(label.text == "sent")
    withExtendedLifetime(observer) {}
  }

  @Test func sendToKeyPathWritesPropertiesOfTheValueType() {
    let holder = ValueHolder("abc")
    let label = Label()
    let observer = holder.chain().map(\.count).sendTo(label, \.number).sync()
    holder.value = "de"
    #expect(label.writes == ["number 3", "number 2"])
    withExtendedLifetime(observer) {}
  }

  @Test func sendToKeyPathHoldsTheObjectWeakly() {
    let notifier = Notifier<String>()
    let after = Recorder<String>()
    weak var weakLabel: Label?
    var observer: Observer?
    do {
      let label = Label()
      weakLabel = label
      observer = notifier.chain().sendTo(label, \.text).do { after.append($0) }.end()
    }
    #expect(weakLabel == nil)
    // The released object is skipped; the rest of the chain still runs.
    notifier.notify(value: "a")
    #expect(after.history == ["a"])
    withExtendedLifetime(observer) {}
  }

  @Test func sendToKeyPathSkipsAnObjectReleasedMidStream() {
    let holder = ValueHolder(1)
    let after = Recorder<Int>()
    weak var weakLabel: Label?
    var label: Label? = Label()
    weakLabel = label
    let observer = holder.chain().sendTo(label!, \.number).do { after.append($0) }.sync()
    holder.value = 2
    #expect(label?.writes == ["number 1", "number 2"])
    label = nil
    #expect(weakLabel == nil)
    holder.value = 3
    #expect(after.history == [1, 2, 3])
    withExtendedLifetime(observer) {}
  }

  @Test func sendToKeyPathStopsWritingOnceInvalidated() {
    let holder = ValueHolder(1)
    let label = Label()
    let observer = holder.chain().sendTo(label, \.number).sync()
    holder.value = 2
    observer.invalidate()
    holder.value = 3
    #expect(label.writes == ["number 1", "number 2"])
    #expect(label.number == 2)
  }

  @Test func twoWayKeyPathBindingOfHoldersSettles() {
    let a = ValueHolder(Box(number: 1))
    let b = ValueHolder(Box(number: 0))
    let crossings = Recorder<String>()
    let observers = [
      a.chain().do { crossings.append("a→b \($0.number)") }.sendTo(b, \.value).sync(),
      b.chain().do { crossings.append("b→a \($0.number)") }.sendTo(a, \.value).end(),
    ]
    #expect(b.value.number == 1)
    b.value = Box(number: 2)
    #expect(a.value.number == 2)
    // Box is not Equatable: the write back into b is an echo of the b→a
    // chain and is skipped there.
    #expect(crossings.history == ["a→b 1", "b→a 2", "a→b 2"])
    withExtendedLifetime(observers) {}
  }

  @Test func concurrentWritesLeaveTheBoundPropertyOnTheHoldersLatestValue() {
    let holder = ValueHolder(-1)
    let label = Label()
    let observer = holder.chain().sendTo(label, \.number).sync()
    race(threads: 4) { thread in
      for index in 0..<2_500 {
        holder.value = thread * 10_000 + index
      }
    }
    #expect(label.number == holder.value)
    // Every write changed the value, so every write reached the label once.
    #expect(label.writes.count == 1 + 4 * 2_500)
    withExtendedLifetime(observer) {}
  }

  // MARK: - sendTo(_:from:)

  @Test func sendToFromRoutesEachElementOfACombinedPairToItsReceiver() {
    let name = ValueHolder("Ann")
    let city = ValueHolder("Oslo")
    let nameLabel = RecordingReceiver<String>()
    let cityLabel = RecordingReceiver<String>()
    let after = Recorder<(String, String)>()
    let observer = name.chain().combine(city.chain())
      .sendTo(nameLabel, from: \.0)
      .sendTo(cityLabel, from: \.1)
      .do { after.append($0) }
      .sync()
    #expect(nameLabel.history == ["Ann"])
    #expect(cityLabel.history == ["Oslo"])
    city.value = "Bergen"
    #expect(nameLabel.history == ["Ann", "Ann"])
    #expect(cityLabel.history == ["Oslo", "Bergen"])
    #expect(after.history.map(\.0) == ["Ann", "Ann"])
    #expect(after.history.map(\.1) == ["Oslo", "Bergen"])
    withExtendedLifetime(observer) {}
  }

  @Test func sendToFromRoutesOneSideOfATupleIncludingItsNil() {
    let name = Notifier<String>()
    let age = Notifier<Int>()
    let ages = RecordingReceiver<Int?>()
    let observer = name.chain().tuple(age.chain()).sendTo(ages, from: \.1).end()
    age.notify(value: 30)
    name.notify(value: "Ann")
    #expect(ages.history == [30, nil])
    withExtendedLifetime(observer) {}
  }

  @Test func sendToFromRoutesAnyPropertyOfTheValue() {
    let word = ValueHolder("abc")
    let lengths = RecordingReceiver<Int>()
    let words = RecordingReceiver<String>()
    let observer = word.chain().sendTo(lengths, from: \.count).sendTo(words).sync()
    word.value = "de"
    #expect(lengths.history == [3, 2])
    #expect(words.history == ["abc", "de"])
    withExtendedLifetime(observer) {}
  }

  @Test func sendToFromHoldsTheReceiverWeakly() {
    let holder = ValueHolder((1, "a"))
    let after = Recorder<Int>()
    weak var weakReceiver: RecordingReceiver<String>?
    var observer: Observer?
    do {
      let receiver = RecordingReceiver<String>()
      weakReceiver = receiver
      observer = holder.chain().sendTo(receiver, from: \.1).do { after.append($0.0) }.sync()
      #expect(receiver.history == ["a"])
    }
    #expect(weakReceiver == nil)
    holder.value = (2, "b")
    #expect(after.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func sendToFromStopsOnceInvalidated() {
    let notifier = Notifier<(Int, String)>()
    let receiver = RecordingReceiver<String>()
    let observer = notifier.chain().sendTo(receiver, from: \.1).end()
    notifier.notify(value: (1, "a"))
    observer.invalidate()
    notifier.notify(value: (2, "b"))
    #expect(receiver.history == ["a"])
  }

  @Test func sendToFromIntoASourceOfTheSameChainSkipsTheEcho() {
    let pair = ValueHolder((0, Box(number: 0)))
    let boxes = ValueHolder(Box(number: -1))
    let log = Recorder<String>()
    let observers = [
      pair.chain().do { log.append("pair \($0.0) \($0.1.number)") }.sendTo(boxes, from: \.1).sync(),
      boxes.chain().do { log.append("boxes \($0.number)") }.map { (9, $0) }.sendTo(pair).end(),
    ]
    pair.value = (1, Box(number: 1))
    // boxes → pair writes (9, 1) into pair; the pair chain caused it and skips it.
    #expect(log.history == ["pair 0 0", "pair 1 1", "boxes 1"])
    #expect(pair.value.0 == 9)
    #expect(boxes.value.number == 1)
    withExtendedLifetime(observers) {}
  }
}
