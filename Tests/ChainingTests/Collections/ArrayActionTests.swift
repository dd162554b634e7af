import Chaining
import Testing

private typealias IntEvent = ArrayHolder<Int>.Event

@Suite struct ArrayActionTests {
  // MARK: Receiving actions

  @Test func receivingSetReplacesEverything() {
    let holder = ArrayHolder([1, 2])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .set([7]))
    #expect(holder.raw == [7])
    #expect(received.history == [.set([7])])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingAppendAppends() {
    let holder = ArrayHolder([1])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .append(2))
    #expect(holder.raw == [1, 2])
    #expect(received.history == [.inserted(at: 1, element: 2)])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingAppendContentsOfSendsOneInsertedPerElement() {
    let holder = ArrayHolder([1])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .appendContentsOf([2, 3]))
    holder.receive(value: .appendContentsOf([]))
    #expect(holder.raw == [1, 2, 3])
    #expect(received.history == [.inserted(at: 1, element: 2), .inserted(at: 2, element: 3)])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingInsertInsertsAtTheIndex() {
    let holder = ArrayHolder([1, 3])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .insert(2, at: 1))
    #expect(holder.raw == [1, 2, 3])
    #expect(received.history == [.inserted(at: 1, element: 2)])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingRemoveRemovesAtTheIndex() {
    let holder = ArrayHolder([1, 2, 3])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .remove(at: 0))
    #expect(holder.raw == [2, 3])
    #expect(received.history == [.removed(at: 0, element: 1)])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingRemoveAllEmptiesAndSendsNothingWhenAlreadyEmpty() {
    let holder = ArrayHolder([1, 2])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .removeAll)
    holder.receive(value: .removeAll)
    #expect(holder.raw == [])
    #expect(received.history == [.set([])])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingReplaceReplacesAtTheIndex() {
    let holder = ArrayHolder([1, 2])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .replace(9, at: 1))
    #expect(holder.raw == [1, 9])
    #expect(received.history == [.replaced(at: 1, element: 9)])
    withExtendedLifetime(observer) {}
  }

  @Test func receivingMoveMovesAndSendsNothingForTheSameIndex() {
    let holder = ArrayHolder([1, 2, 3])
    let received = Recorder<IntEvent>()
    let observer = holder.chain().do { received.append($0) }.end()
    holder.receive(value: .move(at: 2, to: 0))
    holder.receive(value: .move(at: 1, to: 1))
    #expect(holder.raw == [3, 1, 2])
    #expect(received.history == [.moved(at: 2, to: 0, element: 3)])
    withExtendedLifetime(observer) {}
  }

  @Test func actionsSentThroughAChainDriveTheHolder() {
    let commands = Notifier<ArrayAction<Int>>()
    let holder = ArrayHolder<Int>()
    let observer = commands.chain().sendTo(holder).end()
    commands.notify(value: .appendContentsOf([1, 2, 3]))
    commands.notify(value: .move(at: 0, to: 2))
    commands.notify(value: .remove(at: 0))
    commands.notify(value: .insert(0, at: 0))
    commands.notify(value: .replace(5, at: 2))
    #expect(holder.raw == [0, 3, 5])
    withExtendedLifetime(observer) {}
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func receivingAnActionWithAnIndexOutOfRangeStopsWithTheMethodsMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ArrayHolder([1, 2])
      holder.receive(value: .move(at: 0, to: 2))
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("ArrayHolder.move(at:to:): index 2 is out of range for count 2"))
  }
  #endif

  // MARK: Events as actions

  @Test func eachEventBecomesItsMatchingAction() {
    let pairs: [(IntEvent, ArrayAction<Int>)] = [
      (.fetched([1, 2]), .set([1, 2])),
      (.set([3]), .set([3])),
      (.set([]), .set([])),
      (.inserted(at: 4, element: 7), .insert(7, at: 4)),
      (.removed(at: 2, element: 7), .remove(at: 2)),
      (.replaced(at: 1, element: 8), .replace(8, at: 1)),
      (.moved(at: 0, to: 3, element: 9), .move(at: 0, to: 3)),
    ]
    for (event, action) in pairs {
      #expect(event.action == action, "\(event)")
    }
  }

  @Test func mirrorFollowsEveryKindOfWrite() {
    let source = ArrayHolder([1, 2, 3])
    let mirror = ArrayHolder([9, 9])
    let actions = Recorder<ArrayAction<Int>>()
    let observer = source.chain().map(\.action).do { actions.append($0) }.sendTo(mirror).sync()
    #expect(mirror.raw == [1, 2, 3])

    let steps: [(String, () -> Void)] = [
      ("append", { source.append(4) }),
      ("append(contentsOf:)", { source.append(contentsOf: [5, 6]) }),
      ("insert", { source.insert(0, at: 0) }),
      ("move forward", { source.move(at: 0, to: 5) }),
      ("move backward", { source.move(at: 6, to: 1) }),
      ("move to the same index", { source.move(at: 2, to: 2) }),
      ("remove first", { source.remove(at: 0) }),
      ("remove last", { source.remove(at: source.count - 1) }),
      ("remove middle", { source.remove(at: 2) }),
      ("replace", { source.replace(30, at: 1) }),
      ("subscript", { source[0] = 10 }),
      ("removeAll", { source.removeAll() }),
      ("removeAll when empty", { source.removeAll() }),
      ("insert into empty", { source.insert(1, at: 0) }),
      ("set", { source.set([4, 3, 2, 1]) }),
    ]
    for (name, step) in steps {
      step()
      #expect(mirror.raw == source.raw, "after \(name)")
    }
    #expect(source.raw == [4, 3, 2, 1])
    #expect(
      actions.history == [
        .set([1, 2, 3]),
        .insert(4, at: 3),
        .insert(5, at: 4),
        .insert(6, at: 5),
        .insert(0, at: 0),
        .move(at: 0, to: 5),
        .move(at: 6, to: 1),
        .remove(at: 0),
        .remove(at: 5),
        .remove(at: 2),
        .replace(30, at: 1),
        .replace(10, at: 0),
        .set([]),
        .insert(1, at: 0),
        .set([4, 3, 2, 1]),
      ]
    )
    withExtendedLifetime(observer) {}
  }

  @Test func mirrorSendsTheSameEventsAsItsSource() {
    let source = ArrayHolder(["a", "b", "c"])
    let mirror = ArrayHolder<String>()
    let sourceEvents = Recorder<ArrayHolder<String>.Event>()
    let mirrorEvents = Recorder<ArrayHolder<String>.Event>()
    let observers = [
      mirror.chain().do { mirrorEvents.append($0) }.end(),
      source.chain().do { sourceEvents.append($0) }.sync(),
      source.chain().map(\.action).sendTo(mirror).sync(),
    ]
    source.move(at: 2, to: 0)
    source.remove(at: 1)
    source.replace("z", at: 1)
    source.append(contentsOf: ["d", "e"])
    source.removeAll()

    #expect(mirror.raw == [])
    // The mirror's first event is the `.set` its sync caused; after that it
    // repeats the source's events one for one.
    #expect(mirrorEvents.history.first == .set(["a", "b", "c"]))
    #expect(Array(mirrorEvents.history.dropFirst()) == Array(sourceEvents.history.dropFirst()))
    #expect(
      Array(sourceEvents.history.dropFirst()) == [
        .moved(at: 2, to: 0, element: "c"),
        .removed(at: 1, element: "a"),
        .replaced(at: 1, element: "z"),
        .inserted(at: 2, element: "d"),
        .inserted(at: 3, element: "e"),
        .set([]),
      ]
    )
    withExtendedLifetime(observers) {}
  }

  @Test func mirrorOfAMirrorFollowsTheSource() {
    let source = ArrayHolder([1, 2])
    let middle = ArrayHolder<Int>()
    let last = ArrayHolder<Int>()
    let observers = [
      middle.chain().map(\.action).sendTo(last).sync(),
      source.chain().map(\.action).sendTo(middle).sync(),
    ]
    #expect(last.raw == [1, 2])
    source.move(at: 0, to: 1)
    source.insert(3, at: 1)
    source.remove(at: 0)
    #expect(middle.raw == [3, 1])
    #expect(last.raw == [3, 1])
    withExtendedLifetime(observers) {}
  }

  @Test func mirrorStopsFollowingOnceInvalidated() {
    let source = ArrayHolder([1])
    let mirror = ArrayHolder<Int>()
    let observer = source.chain().map(\.action).sendTo(mirror).sync()
    source.append(2)
    observer.invalidate()
    source.append(3)
    #expect(source.raw == [1, 2, 3])
    #expect(mirror.raw == [1, 2])
  }

  @Test func concurrentWritesKeepTheMirrorExact() {
    let source = ArrayHolder([0, 0])
    let mirror = ArrayHolder<Int>()
    let observer = source.chain().map(\.action).sendTo(mirror).sync()
    race(threads: 4) { thread in
      for round in 0..<1_000 {
        switch thread {
        case 0: source.append(round)
        case 1: source.insert(round, at: 1)
        case 2: source.move(at: 0, to: 1)
        default: source.replace(round, at: 0)
        }
      }
    }
    #expect(source.count == 2_002)
    #expect(mirror.raw == source.raw)
    withExtendedLifetime(observer) {}
  }
}
