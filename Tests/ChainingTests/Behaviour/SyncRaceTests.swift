import Chaining
import Dispatch
import Testing

/// `sync()` against a thread that keeps writing: the fetched value and the
/// events after it must fit together exactly, with nothing twice and
/// nothing before the fetched value.
@Suite(.serialized) struct SyncRaceTests {
  @Test func eventsAfterAFetchedArrayReproduceItExactlyWhileAnotherThreadAppends() {
    let holder = ArrayHolder<Int>()
    let writing = ValueHolder(true)
    let writer = spawn {
      for value in 0..<20_000 { holder.append(value) }
      writing.value = false
    }
    var checked = 0
    while writing.value || checked == 0 {
      let copy = Recorder<[Int]>()
      let problems = Recorder<String>()
      let observer = holder.chain().do { event in
        var current = copy.history.last
        switch event {
        case .fetched(let all):
          if current != nil { problems.append("fetched twice") }
          current = all
        case .inserted(let index, let element):
          guard current != nil else { return problems.append("event before fetched") }
          current!.insert(element, at: index)
        default:
          problems.append("unexpected \(event)")
        }
        copy.append(current!)
      }.sync()
      observer.invalidate()
      // Up to the moment it was invalidated, the copy is a prefix of the
      // final array with no duplicate.
      let last = copy.history.last ?? []
      #expect(problems.history.isEmpty)
      #expect(last.elementsEqual(0..<last.count), "the copy diverged at count \(last.count)")
      checked += 1
    }
    writer.wait()
    #expect(holder.count == 20_000)
    #expect(checked > 0)
  }

  @Test func aValueHolderNeverDeliversAnOlderValueAfterTheFetchedOne() {
    let holder = ValueHolder(0)
    let writing = ValueHolder(true)
    let writer = spawn {
      for value in 1...20_000 { holder.value = value }
      writing.value = false
    }
    var checked = 0
    while writing.value || checked == 0 {
      let received = Recorder<Int>()
      let observer = holder.chain().do { received.append($0) }.sync()
      observer.invalidate()
      let history = received.history
      // Strictly increasing: no value twice, none older than one before it.
      #expect(zip(history, history.dropFirst()).allSatisfy { $0 < $1 }, "not increasing: \(history.prefix(5))…")
      checked += 1
    }
    writer.wait()
  }
}
