import Chaining
import Dispatch
import Testing

@Suite struct DerivedArrayHolderTests {
  // MARK: Filtered

  @Test func aFilteredViewTakesEachEventAtItsOwnIndices() {
    let numbers = ArrayHolder([1, 2, 3, 4, 5, 6])
    let even = numbers.filtered { $0.isMultiple(of: 2) }
    let events = Recorder<ArrayHolder<Int>.Event>()
    let observer = even.chain().do { events.append($0) }.sync()
    #expect(events.history == [.fetched([2, 4, 6])])

    numbers.insert(8, at: 2)  // passes: after 2
    numbers.insert(9, at: 0)  // does not pass: nothing
    numbers.remove(at: 5)  // 4, at view index 2
    numbers.remove(at: 0)  // 9: nothing
    numbers.replace(10, at: 3)  // 3 -> 10: in, at 2
    numbers.replace(7, at: 0)  // 1 -> 7: out of nothing, nothing
    numbers.replace(12, at: 1)  // 2 -> 12: within, at 0
    numbers.replace(11, at: 1)  // 12 -> 11: out, from 0
    numbers.move(at: 3, to: 5)  // 10 after 5 and 6
    #expect(numbers.raw == [7, 11, 8, 5, 6, 10])
    #expect(
      events.history.dropFirst() == [
        .inserted(at: 1, element: 8),
        .removed(at: 2, element: 4),
        .inserted(at: 2, element: 10),
        .replaced(at: 0, element: 12),
        .removed(at: 0, element: 12),
        .moved(at: 1, to: 2, element: 10),
      ]
    )
    #expect(even.raw == [8, 6, 10])
    #expect(replay(events.history) == even.raw)
    #expect(even.count == 3 && even.first == 8 && even.last == 10 && even[1] == 6 && even.element(at: 2) == 10)
    withExtendedLifetime(observer) {}
  }

  @Test func aSetOfTheSourceIsASetOfTheView() {
    let numbers = ArrayHolder([1, 2])
    let even = numbers.filtered { $0.isMultiple(of: 2) }
    let events = Recorder<ArrayHolder<Int>.Event>()
    let observer = even.chain().do { events.append($0) }.end()
    numbers.set([4, 5, 6])
    numbers.removeAll()
    numbers.set([1, 3])  // empty before and after: nothing
    #expect(events.history == [.set([4, 6]), .set([])])
    withExtendedLifetime(observer) {}
  }

  @Test func aChangeOfWhatTheFilterReadsSendsTheRemovalsThenTheInsertions() {
    let words = ArrayHolder(["apple", "banana", "cherry", "date", "elder"])
    let search = ValueHolder("a")
    let matching = searched(words, for: search)
    let events = Recorder<ArrayHolder<String>.Event>()
    let observer = matching.chain().do { events.append($0) }.sync()
    #expect(matching.raw == ["apple", "banana", "date"])

    search.value = "e"
    #expect(matching.raw == ["apple", "cherry", "date", "elder"])
    #expect(
      events.history.dropFirst() == [
        .removed(at: 1, element: "banana"),
        .inserted(at: 1, element: "cherry"),
        .inserted(at: 3, element: "elder"),
      ]
    )
    search.value = "e"  // unchanged: nothing runs, nothing is sent
    search.value = ""
    #expect(matching.raw == words.raw)
    #expect(replay(events.history) == matching.raw)
    #expect(!events.history.dropFirst().contains { if case .set = $0 { true } else { false } })
    withExtendedLifetime(observer) {}
  }

  @Test func theArticlesExampleSendsWhatItSays() {
    // CollectionsAndChangeEvents.md, "Filtered and sorted views".
    let words = ArrayHolder(["apple", "banana", "cherry"])
    let search = ValueHolder("an")
    let matching = searched(words, for: search)
    let events = Recorder<ArrayHolder<String>.Event>()
    let observer = matching.chain().do { events.append($0) }.sync()
    words.append("mango")
    search.value = "err"
    #expect(
      events.history == [
        .fetched(["banana"]), .inserted(at: 1, element: "mango"), .removed(at: 1, element: "mango"),
        .removed(at: 0, element: "banana"), .inserted(at: 0, element: "cherry"),
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func whatTheFilterReadsIsFoundWhenTheSourceStopsBeingEmpty() {
    // A list screen starts empty: the filter has run on nothing yet.
    let words = ArrayHolder<String>()
    let search = ValueHolder("")
    let matching = searched(words, for: search)
    words.append(contentsOf: ["apple", "banana"])
    #expect(matching.raw == ["apple", "banana"])
    search.value = "nan"
    #expect(matching.raw == ["banana"])
    words.removeAll()
    words.append("cherry")
    #expect(matching.raw == [])
    search.value = "err"
    #expect(matching.raw == ["cherry"])
  }

  // MARK: Sorted

  @Test func aSortedViewPutsEachElementInItsPlace() {
    let numbers = ArrayHolder([5, 1, 4])
    let sorted = numbers.sorted(by: <)
    let events = Recorder<ArrayHolder<Int>.Event>()
    let observer = sorted.chain().do { events.append($0) }.sync()
    numbers.append(3)
    numbers.remove(at: 0)  // 5
    numbers.replace(0, at: 1)  // 4 -> 0: replaced at 2, moved to 0
    numbers.replace(2, at: 1)  // 0 -> 2: replaced at 0, moved to 1
    numbers.move(at: 0, to: 2)  // the source's order: nothing
    #expect(numbers.raw == [2, 3, 1])
    #expect(sorted.raw == [1, 2, 3])
    #expect(
      events.history == [
        .fetched([1, 4, 5]),
        .inserted(at: 1, element: 3),
        .removed(at: 3, element: 5),
        .replaced(at: 2, element: 0),
        .moved(at: 2, to: 0, element: 0),
        .replaced(at: 0, element: 2),
        .moved(at: 0, to: 1, element: 2),
      ]
    )
    #expect(replay(events.history) == sorted.raw)
    withExtendedLifetime(observer) {}
  }

  @Test func equalElementsKeepTheOrderInWhichTheyEnteredTheView() {
    let people = ArrayHolder([Person(name: "ann", age: 30), Person(name: "bob", age: 20), Person(name: "cy", age: 30)])
    let byAge = people.sorted { $0.age < $1.age }
    #expect(byAge.raw.map(\.name) == ["bob", "ann", "cy"])  // the source's order among equals
    people.insert(Person(name: "dee", age: 30), at: 0)
    #expect(byAge.raw.map(\.name) == ["bob", "ann", "cy", "dee"])  // after the equal ones
    people.replace(Person(name: "ann", age: 31), at: 1)
    #expect(byAge.raw.map(\.name) == ["bob", "cy", "dee", "ann"])
    people.replace(Person(name: "ann", age: 30), at: 1)  // replaced: back in its place among equals
    #expect(byAge.raw.map(\.name) == ["bob", "ann", "cy", "dee"])
  }

  @Test func viewsCompose() {
    let numbers = ArrayHolder([9, 2, 7, 4, 5])
    let rows = numbers.filtered { $0 > 3 }.sorted(by: >)
    let events = Recorder<ArrayHolder<Int>.Event>()
    let observer = rows.chain().do { events.append($0) }.sync()
    numbers.append(8)
    numbers.replace(1, at: 0)
    numbers.readOnly.filtered { _ in true }.chain().do { _ in }.end().invalidate()
    #expect(rows.raw == [8, 7, 5, 4])
    #expect(events.history.dropFirst() == [.inserted(at: 1, element: 8), .removed(at: 0, element: 9)])
    #expect(replay(events.history) == rows.raw)
    withExtendedLifetime(observer) {}
  }

  @Test func theGuidesListScreenSendsWhatItSays() {
    // ArrayHolder.md, "Filtered and sorted views".
    let items = ArrayHolder([Item(id: 1, title: "milk"), Item(id: 2, title: "eggs")])
    let search = ValueHolder("")
    let rows =
      items
      .filtered { item in
        let text = search.value
        return text.isEmpty || item.title.contains(text)
      }
      .sorted { $0.title < $1.title }
    let printed = Recorder<String>()
    let observer = rows.chain().do { event in
      switch event {
      case .fetched(let all), .set(let all): printed.append("reload \(all.map(\.title))")
      case .inserted(let index, let item): printed.append("insert \(item.title) at \(index)")
      case .removed(let index, let item): printed.append("delete \(item.title) at \(index)")
      case .replaced(let index, let item): printed.append("update \(item.title) at \(index)")
      case .moved(let from, let to, let item): printed.append("move \(item.title) \(from) to \(to)")
      }
    }.sync()
    items.append(Item(id: 3, title: "bread"))
    items.update(id: 1) { $0.title = "almond milk" }
    search.value = "m"
    #expect(
      printed.history == [
        "reload [\"eggs\", \"milk\"]", "insert bread at 0", "update almond milk at 2", "move almond milk 2 to 0",
        "delete eggs at 2", "delete bread at 1",
      ]
    )
    withExtendedLifetime(observer) {}
  }

  // MARK: Many changes

  @Test func randomChangesAlwaysReplayToTheView() {
    var random = SplitMix64(seed: 7)
    let source = ArrayHolder<Int>()
    let threshold = ValueHolder(50)
    let filtered = source.filtered { $0 % 100 >= threshold.value }
    let sorted = source.sorted { $0 % 37 < $1 % 37 }
    let both = source.filtered { $0 % 100 >= threshold.value }.sorted { $0 % 37 < $1 % 37 }
    // A view of a view: the sorted view's elements that pass.
    let stacked = source.sorted { $0 % 37 < $1 % 37 }.filtered { $0 % 100 >= threshold.value }
    let views = [filtered, sorted, both, stacked]
    let recorders = views.map { _ in Recorder<ArrayHolder<Int>.Event>() }
    let observers = zip(views, recorders).map { view, recorder in
      view.chain().do { recorder.append($0) }.sync()
    }
    // Each view's replay so far, and how many of its events it took: the
    // events of each step are applied to it, the same array as a replay of
    // the whole history, without replaying 2,000 steps' events each step.
    var copies = recorders.map { replay($0.history) }
    var replayed = recorders.map(\.history.count)
    var next = 0
    for step in 0..<2000 {
      let count = source.count
      switch random.next(below: 10) {
      case 0...2:
        next += 1
        source.insert(next * 1000 + random.next(below: 1000), at: random.next(below: count + 1))
      case 3 where count > 0:
        source.remove(at: random.next(below: count))
      case 4 where count > 0:
        next += 1
        source.replace(next * 1000 + random.next(below: 1000), at: random.next(below: count))
      case 5 where count > 1:
        source.move(at: random.next(below: count), to: random.next(below: count))
      case 6:
        threshold.value = random.next(below: 100)
      case 7:
        source.modify { elements in
          elements.removeAll { $0.isMultiple(of: 3) }
          next += 1
          elements.append(next * 1000 + 3)
        }
      case 8 where step.isMultiple(of: 97):
        var elements: [Int] = []
        for _ in 0..<random.next(below: 20) {
          next += 1
          elements.append(next * 1000 + random.next(below: 1000))
        }
        source.set(elements)
      default:
        next += 1
        source.append(next * 1000 + random.next(below: 1000))
      }
      let passing = source.raw.filter { $0 % 100 >= threshold.value }
      #expect(filtered.raw == passing)
      #expect(sorted.raw.map { $0 % 37 } == source.raw.map { $0 % 37 }.sorted())
      #expect(sorted.raw.sorted() == source.raw.sorted())
      #expect(both.raw.sorted() == passing.sorted())
      #expect(both.raw.map { $0 % 37 } == passing.map { $0 % 37 }.sorted())
      #expect(stacked.raw == sorted.raw.filter { $0 % 100 >= threshold.value })
      for index in views.indices {
        let history = recorders[index].history
        copies[index] = replay(history[replayed[index]...], onto: copies[index])
        replayed[index] = history.count
        #expect(copies[index] == views[index].raw)
      }
    }
    #expect(zip(views, recorders).allSatisfy { view, recorder in replay(recorder.history) == view.raw })
    withExtendedLifetime(observers) {}
  }

  // MARK: Waves

  @Test func aCombineOfTheViewAndItsSourceIsSentOnceWithBoth() {
    let numbers = ArrayHolder([1, 2, 3])
    let even = numbers.filtered { $0.isMultiple(of: 2) }
    let seen = Recorder<String>()
    let observer = numbers.chain().map { _ in numbers.count }
      .combine(even.chain().map { _ in even.count })
      .do { seen.append("\($0) \($1)") }
      .sync()
    withBatchedUpdates { numbers.append(4) }
    numbers.modify { $0.append(contentsOf: [6, 7]) }
    #expect(seen.history == ["3 1", "4 2", "6 3"])
    withExtendedLifetime(observer) {}
  }

  @Test func aWriteToTheSourceFromAHandlerOnTheViewReachesTheView() {
    // The handler's write comes while the view is taking the write before.
    // Its own chain skips the echo, as any chain does; the view and the
    // other chains on it take it, so that the view's indices stay right.
    let numbers = ArrayHolder([10])
    let small = numbers.filtered { $0 < 5 }
    let events = Recorder<ArrayHolder<Int>.Event>()
    let copy = small.chain().do { events.append($0) }.sync()
    let writer = small.chain().do { event in
      if case .inserted(_, let value) = event, value > 0 { numbers.append(value - 1) }
    }.end()
    numbers.append(3)
    #expect(numbers.raw == [10, 3, 2])
    #expect(small.raw == [3, 2])
    numbers.remove(at: 2)  // past an element the view would have missed
    numbers.insert(1, at: 1)  // the writer appends 0
    #expect(numbers.raw == [10, 1, 3, 0])
    #expect(small.raw == [1, 3, 0])
    #expect(replay(events.history) == small.raw)
    withExtendedLifetime((copy, writer)) {}
  }

  @Test func aComputedValueReadingTheViewFollowsIt() {
    let numbers = ArrayHolder([1, 2, 3])
    let even = numbers.filtered { $0.isMultiple(of: 2) }
    let evaluations = Locked(0)
    let total = Computed {
      evaluations.withLock { $0 += 1 }
      return even.raw.reduce(0, +)
    }
    #expect(total.value == 2)
    numbers.append(5)  // the view does not change: nothing to evaluate
    #expect(total.value == 2)
    #expect(evaluations.withLock { $0 } == 1)
    numbers.append(4)
    #expect(total.value == 6)
    #expect(evaluations.withLock { $0 } == 2)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aReadOfTheViewRegistersWithObservation() {
    let numbers = ArrayHolder([1, 2])
    let even = numbers.filtered { $0.isMultiple(of: 2) }
    let tracker = Tracker()
    #expect(tracker.track { even.raw } == [2])
    numbers.append(3)  // not in the view: the view did not change
    #expect(tracker.count == 0)
    numbers.append(4)
    #expect(tracker.count == 1)
    tracker.track { even.count }
    numbers.remove(at: 1)
    #expect(tracker.count == 2)
  }

  // MARK: Lifetimes

  @Test func theViewKeepsItsSourceAndNothingKeepsTheView() {
    weak var weakSource: ArrayHolder<Int>?
    weak var weakView: DerivedArrayHolder<Int>?
    var view: DerivedArrayHolder<Int>? = {
      let source = ArrayHolder([1, 2])
      weakSource = source
      return source.filtered { $0 > 1 }.sorted(by: <)
    }()
    weakView = view
    #expect(weakSource != nil)
    #expect(view?.raw == [2])
    view = nil
    #expect(weakView == nil)
    #expect(weakSource == nil)
  }

  // MARK: Threads: the list screen

  @Test func aListScreenFedFromFourThreadsReplaysToItsRows() {
    // Server updates by id on 4 threads, the search text on a fifth; the
    // rows are the items matching the search, by title.
    let items = ArrayHolder<Item>()
    let search = ValueHolder("")
    let rows = items.filtered { item in
      let text = search.value
      return text.isEmpty || item.title.contains(text)
    }.sorted { $0.title < $1.title }
    let events = Recorder<ArrayHolder<Item>.Event>()
    let observer = rows.chain().do { events.append($0) }.sync()
    let texts = ["", "1", "2", "7", ""]
    for round in 0..<10 {
      race(threads: 5) { thread in
        guard thread < 4 else {
          for text in texts { search.value = text }
          return
        }
        // Each thread owns the ids `thread`, `thread + 4`, ...: adds them,
        // renames them, removes every third.
        let ids = stride(from: thread, to: 400, by: 4)
        for id in ids where round == 0 {
          items.append(Item(id: id, title: "item \(id) v0"))
        }
        for id in ids { items.update(id: id) { $0.title = "item \(id) v\(round + 1)" } }
        for id in ids where id.isMultiple(of: 3) && round == 9 {
          #expect(items.remove(id: id)?.id == id)
        }
      }
      let expected = items.raw.filter { search.value.isEmpty || $0.title.contains(search.value) }
        .sorted { $0.title < $1.title }
      #expect(search.value == "")
      #expect(rows.raw == expected)
      #expect(replay(events.history) == rows.raw)
    }
    let remaining = (0..<400).filter { !$0.isMultiple(of: 3) }
    #expect(rows.raw.map(\.id).sorted() == remaining)
    #expect(rows.raw.allSatisfy { $0.title == "item \($0.id) v10" })
    withExtendedLifetime(observer) {}
  }

  // MARK: Bad input

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func anIndexOutOfRangeStopsWithAMessageNamingIt() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let view = ArrayHolder([1, 2, 3]).filtered { $0 > 1 }
      _ = view[2]
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(text.contains("DerivedArrayHolder.element(at:): index 2 is out of range for count 2"))
  }

  @Test func aFilterThatReadsItsViewStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let source = ArrayHolder([1])
      let box = ViewBox()
      box.view = source.filtered { _ in box.view?.count ?? 0 >= 0 }
      source.append(2)
    }
    let text = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(text.contains("The filter or the comparison of a filtered or sorted array view read that view"))
  }
  #endif
}

// MARK: - Helpers

private struct Person: Equatable {
  let name: String
  let age: Int
}

private struct Item: Identifiable, Equatable {
  let id: Int
  var title: String
}

/// Holds a view for a filter that reads it (the exit test).
private final class ViewBox: @unchecked Swift.Sendable {
  var view: DerivedArrayHolder<Int>?
}

/// The words that contain the search text, all of them when it is empty:
/// the filter of a search field, which reads the text first.
private func searched(_ words: ArrayHolder<String>, for search: ValueHolder<String>) -> DerivedArrayHolder<String> {
  words.filtered { word in
    let text = search.value
    return text.isEmpty || word.contains(text)
  }
}
