import Chaining
import Testing

private typealias StringEvent = DictionaryHolder<String, Int>.Event

@Suite struct DictionaryActionTests {
  // MARK: Receiving actions

  @Test func receivingSetReplacesEverything() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .set(["b": 2]))
    #expect(holder.raw == ["b": 2])
    #expect(received.history == [.set(["b": 2])])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingUpdateOfANewKeyInserts() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .update(key: "b", value: 2))
    #expect(holder.raw == ["a": 1, "b": 2])
    #expect(received.history == [.inserted(key: "b", value: 2)])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingUpdateOfAnExistingKeyReplaces() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .update(key: "a", value: 5))
    #expect(holder.raw == ["a": 5])
    #expect(received.history == [.replaced(key: "a", value: 5)])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingRemoveRemovesAndSendsNothingForAnAbsentKey() {
    let holder = DictionaryHolder(["a": 1, "b": 2])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .remove(key: "a"))
    holder.receive(value: .remove(key: "z"))
    #expect(holder.raw == ["b": 2])
    #expect(received.history == [.removed(key: "a", value: 1)])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingRemoveAllEmptiesAndSendsNothingWhenAlreadyEmpty() {
    let holder = DictionaryHolder(["a": 1])
    let received = Recorder<StringEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .removeAll)
    holder.receive(value: .removeAll)
    #expect(holder.raw == [:])
    #expect(received.history == [.set([:])])
    withExtendedLifetime(observer) {}
  }

  @Test func actionsSentThroughAChainDriveTheHolder() {
    let commands = Notifier<DictionaryAction<String, Int>>()
    let holder = DictionaryHolder<String, Int>()
    let observer = commands.chain().sendTo(holder).end()
    commands.notify(value: .set(["a": 1, "b": 2]))
    commands.notify(value: .update(key: "c", value: 3))
    commands.notify(value: .update(key: "a", value: 4))
    commands.notify(value: .remove(key: "b"))
    #expect(holder.raw == ["a": 4, "c": 3])
    withExtendedLifetime(observer) {}
  }

  // MARK: Events as actions

  @Test func eachEventBecomesItsMatchingAction() {
    let pairs: [(StringEvent, DictionaryAction<String, Int>)] = [
      (.fetched(["a": 1]), .set(["a": 1])),
      (.set(["b": 2]), .set(["b": 2])),
      (.set([:]), .set([:])),
      (.inserted(key: "c", value: 3), .update(key: "c", value: 3)),
      (.replaced(key: "c", value: 4), .update(key: "c", value: 4)),
      (.removed(key: "c", value: 4), .remove(key: "c")),
    ]
    for (event, action) in pairs {
      #expect(event.action == action, "\(event)")
    }
  }

  @Test func mirrorFollowsEveryKindOfWrite() {
    let source = DictionaryHolder(["a": 1, "b": 2])
    let mirror = DictionaryHolder(["stale": 0])
    let actions = Recorder<DictionaryAction<String, Int>>()
    let observer = source.chain().map(\.action).do { actions.append($0) }.sendTo(mirror).sync()
    #expect(mirror.raw == ["a": 1, "b": 2])

    let steps: [(String, () -> Void)] = [
      ("insert", { source["c"] = 3 }),
      ("replace", { source["a"] = 10 }),
      ("remove by subscript", { source["b"] = nil }),
      ("remove an absent key", { source["zz"] = nil }),
      ("removeValue", { source.removeValue(forKey: "c") }),
      ("removeAll", { source.removeAll() }),
      ("removeAll when empty", { source.removeAll() }),
      ("insert into empty", { source["d"] = 4 }),
      ("set", { source.set(["e": 5, "f": 6]) }),
    ]
    for (name, step) in steps {
      step()
      #expect(mirror.raw == source.raw, "after \(name)")
    }
    #expect(source.raw == ["e": 5, "f": 6])
    #expect(
      actions.history == [
        .set(["a": 1, "b": 2]),
        .update(key: "c", value: 3),
        .update(key: "a", value: 10),
        .remove(key: "b"),
        .remove(key: "c"),
        .set([:]),
        .update(key: "d", value: 4),
        .set(["e": 5, "f": 6]),
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func mirrorSendsTheSameEventsAsItsSource() {
    let source = DictionaryHolder(["a": 1, "b": 2])
    let mirror = DictionaryHolder<String, Int>()
    let sourceEvents = Recorder<StringEvent>()
    let mirrorEvents = Recorder<StringEvent>()
    let observers = [
      mirror.chain().do { mirrorEvents.append($0) }.end(),
      source.chain().do { sourceEvents.append($0) }.sync(),
      source.chain().map(\.action).sendTo(mirror).sync(),
    ]
    source["c"] = 3
    source["a"] = 4
    source.removeValue(forKey: "b")
    source.removeAll()

    #expect(mirror.raw == [:])
    // The mirror's first event is the `.set` its sync caused; after that it
    // repeats the source's events one for one: an update of a key the mirror
    // holds is a replacement there too.
    #expect(mirrorEvents.history.first == .set(["a": 1, "b": 2]))
    #expect(Array(mirrorEvents.history.dropFirst()) == Array(sourceEvents.history.dropFirst()))
    #expect(
      Array(sourceEvents.history.dropFirst()) == [
        .inserted(key: "c", value: 3),
        .replaced(key: "a", value: 4),
        .removed(key: "b", value: 2),
        .set([:]),
      ]
    )
    withExtendedLifetime(observers) {}
  }

  @Test func mirrorStopsFollowingOnceInvalidated() {
    let source = DictionaryHolder(["a": 1])
    let mirror = DictionaryHolder<String, Int>()
    let observer = source.chain().map(\.action).sendTo(mirror).sync()
    source["b"] = 2
    observer.invalidate()
    source["c"] = 3
    #expect(source.raw == ["a": 1, "b": 2, "c": 3])
    #expect(mirror.raw == ["a": 1, "b": 2])
  }

  @Test func concurrentWritesKeepTheMirrorExact() {
    let source = DictionaryHolder<Int, Int>()
    let mirror = DictionaryHolder<Int, Int>()
    let observer = source.chain().map(\.action).sendTo(mirror).sync()
    race(threads: 4) { thread in
      for round in 0..<2_000 {
        let key = round % 32
        switch thread {
        case 0: source[key] = round
        case 1: source[key] = nil
        case 2: source[key + 100] = round
        default: source.removeValue(forKey: key + 100)
        }
      }
    }
    #expect(mirror.raw == source.raw)
    withExtendedLifetime(observer) {}
  }
}
