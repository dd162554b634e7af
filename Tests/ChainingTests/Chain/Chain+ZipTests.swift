import Chaining
import Testing

/// `zip`, against the sequences of Combine's documentation examples for
/// `zip(_:)` and `zip(_:_:)` (RxSwift's `zip` gives the same).
@Suite struct ChainZipTests {
  @Test func valuesArePairedByRank() {
    let numbers = Notifier<Int>()
    let letters = Notifier<String>()
    let received = Recorder<String>()
    let observer = numbers.chain().zip(letters.chain()).do { received.append("\($0)\($1)") }.end()
    numbers.notify(value: 1)
    numbers.notify(value: 2)
    letters.notify(value: "A")
    numbers.notify(value: 3)
    letters.notify(value: "B")
    #expect(received.history == ["1A", "2B"])
    letters.notify(value: "C")
    letters.notify(value: "D")
    #expect(received.history == ["1A", "2B", "3C"])  // "D" waits for a fourth number
    withExtendedLifetime(observer) {}
  }

  @Test func threeChainsZipIntoFlatTriples() {
    let numbers = Notifier<Int>()
    let letters = Notifier<String>()
    let emoji = Notifier<String>()
    let received = Recorder<String>()
    let observer = numbers.chain().zip(letters.chain()).zip(emoji.chain())
      .do { number, letter, emoji in received.append("\(number)\(letter)\(emoji)") }
      .end()
    numbers.notify(value: 1)
    numbers.notify(value: 2)
    letters.notify(value: "A")
    emoji.notify(value: "😀")
    letters.notify(value: "B")
    emoji.notify(value: "🥰")
    #expect(received.history == ["1A😀", "2B🥰"])
    withExtendedLifetime(observer) {}
  }

  @Test func fiveChainsZipIntoFlatQuintuples() {
    let sources = (0..<5).map { _ in Notifier<Int>() }
    let received = Recorder<[Int]>()
    let observer = sources[0].chain()
      .zip(sources[1].chain())
      .zip(sources[2].chain())
      .zip(sources[3].chain())
      .zip(sources[4].chain())
      .do { received.append([$0, $1, $2, $3, $4]) }
      .end()
    for round in 0..<2 {
      for (index, source) in sources.enumerated().reversed() { source.notify(value: round * 10 + index) }
    }
    #expect(received.history == [[0, 1, 2, 3, 4], [10, 11, 12, 13, 14]])
    withExtendedLifetime(observer) {}
  }

  @Test func syncPairsTheFetchedValuesOfTwoHolders() {
    let name = ValueHolder("Ann")
    let age = ValueHolder(30)
    let received = Recorder<String>()
    let observer = name.chain().zip(age.chain()).do { received.append("\($0) \($1)") }.sync()
    #expect(received.history == ["Ann 30"])
    age.value = 31  // waits for a name of the same rank
    #expect(received.history == ["Ann 30"])
    name.value = "Bea"
    #expect(received.history == ["Ann 30", "Bea 31"])
    withExtendedLifetime(observer) {}
  }

  @Test func aNotifierZippedWithAHolderSyncsTheHoldersValueToWait() {
    let taps = Notifier<Int>()
    let label = ValueHolder("first")
    let received = Recorder<String>()
    let observer = taps.chain().zip(label.chain()).do { received.append("\($0) \($1)") }.sync()
    #expect(received.history == [])  // the label's value waits for a tap
    taps.notify(value: 1)
    #expect(received.history == ["1 first"])
    withExtendedLifetime(observer) {}
  }

  @Test func anOptionalValueOfNilIsZippedLikeAnyOther() {
    let values = Notifier<Int?>()
    let labels = Notifier<String>()
    let received = Recorder<String>()
    let observer = values.chain().zip(labels.chain()).do { received.append("\($0.map(String.init) ?? "nil") \($1)") }
      .end()
    values.notify(value: nil)
    labels.notify(value: "a")
    #expect(received.history == ["nil a"])
    withExtendedLifetime(observer) {}
  }
}
