import Chaining
import Foundation
import Testing

/// A name no other test posts, so that tests running in parallel never meet.
private func uniqueName(_ label: String = #function) -> Notification.Name {
  Notification.Name("NotificationAdapterTests.\(label).\(UUID().uuidString)")
}

@Suite struct NotificationAdapterTests {
  @Test func postingSendsTheNotificationWithItsNameObjectAndUserInfo() {
    let center = NotificationCenter()
    let name = uniqueName()
    let sender = Token()
    let adapter = NotificationAdapter(name, center: center)
    let received = Recorder<Notification>()
    let observer = adapter.chain().do { received.append($0) }.end()
    center.post(name: name, object: sender, userInfo: ["count": 3, "label": "three"])
    let history = received.history
    #expect(history.count == 1)
    #expect(history.first?.name == name)
    #expect((history.first?.object as? Token) === sender)
    #expect(history.first?.userInfo?["count"] as? Int == 3)
    #expect(history.first?.userInfo?["label"] as? String == "three")
    #expect(history.first?.userInfo?.count == 2)
    withExtendedLifetime(observer) {}
  }

  @Test func everyPostIsSentInOrder() {
    let center = NotificationCenter()
    let name = uniqueName()
    let adapter = NotificationAdapter(name, center: center)
    let received = Recorder<Int>()
    let observer = adapter.chain().map { $0.userInfo?["index"] as? Int ?? -1 }.do { received.append($0) }.end()
    for index in 0..<5 { center.post(name: name, object: nil, userInfo: ["index": index]) }
    #expect(received.history == [0, 1, 2, 3, 4])
    withExtendedLifetime(observer) {}
  }

  @Test func objectFilterPassesOnlyThatObjectsNotifications() {
    let center = NotificationCenter()
    let name = uniqueName()
    let watched = Token()
    let other = Token()
    let adapter = NotificationAdapter(name, object: watched, center: center)
    let received = Recorder<String>()
    let observer = adapter.chain()
      .do { notification in
        let object = notification.object as? Token
        received.append(object === watched ? "watched" : object === other ? "other" : "nil")
      }
      .end()
    center.post(name: name, object: other)
    center.post(name: name, object: nil)
    center.post(name: name, object: watched)
    #expect(received.history == ["watched"])
    withExtendedLifetime(observer) {}
  }

  @Test func withoutAnObjectFilterEveryObjectsNotificationsPass() {
    let center = NotificationCenter()
    let name = uniqueName()
    let a = Token()
    let b = Token()
    let adapter = NotificationAdapter(name, center: center)
    let received = Recorder<String>()
    let observer = adapter.chain()
      .do { notification in
        let object = notification.object as? Token
        received.append(object === a ? "a" : object === b ? "b" : "nil")
      }
      .end()
    center.post(name: name, object: a)
    center.post(name: name, object: nil)
    center.post(name: name, object: b)
    #expect(received.history == ["a", "nil", "b"])
    withExtendedLifetime(observer) {}
  }

  @Test func notificationsUnderOtherNamesAreNotSent() {
    let center = NotificationCenter()
    let name = uniqueName()
    let otherName = uniqueName()
    let adapter = NotificationAdapter(name, center: center)
    let received = Recorder<Notification.Name>()
    let observer = adapter.chain().map(\.name).do { received.append($0) }.end()
    center.post(name: otherName, object: nil)
    center.post(name: name, object: nil)
    center.post(name: otherName, object: nil)
    #expect(received.history == [name])
    withExtendedLifetime(observer) {}
  }

  @Test func notificationsPostedOnAnotherCenterAreNotSent() {
    let center = NotificationCenter()
    let otherCenter = NotificationCenter()
    let name = uniqueName()
    let adapter = NotificationAdapter(name, center: center)
    let received = Recorder<Notification.Name>()
    let observer = adapter.chain().map(\.name).do { received.append($0) }.end()
    otherCenter.post(name: name, object: nil)
    #expect(received.history.isEmpty)
    center.post(name: name, object: nil)
    #expect(received.history == [name])
    withExtendedLifetime(observer) {}
  }

  @Test func eachAdapterOfTheSameNameSendsEveryPost() {
    let center = NotificationCenter()
    let name = uniqueName()
    let first = NotificationAdapter(name, center: center)
    let second = NotificationAdapter(name, center: center)
    let received = Recorder<String>()
    let observers = [
      first.chain().do { _ in received.append("first") }.end(),
      second.chain().do { _ in received.append("second") }.end(),
    ]
    center.post(name: name, object: nil)
    #expect(received.history.sorted() == ["first", "second"])
    withExtendedLifetime(observers) {}
  }

  @Test func afterTheAdapterIsReleasedPostingDeliversNothing() {
    let center = NotificationCenter()
    let name = uniqueName()
    let received = Recorder<Notification.Name>()
    weak var weakAdapter: NotificationAdapter?
    var observer: Observer?
    do {
      let adapter = NotificationAdapter(name, center: center)
      weakAdapter = adapter
      observer = adapter.chain().map(\.name).do { received.append($0) }.end()
      center.post(name: name, object: nil)
    }
    #expect(weakAdapter == nil)
    center.post(name: name, object: nil)
    center.post(name: name, object: nil)
    #expect(received.history == [name])
    #expect(observer?.isInvalidated == false)
    observer?.invalidate()
    #expect(observer?.isInvalidated == true)
  }

  @Test func invalidatedObserverReceivesNothing() {
    let center = NotificationCenter()
    let name = uniqueName()
    let adapter = NotificationAdapter(name, center: center)
    let received = Recorder<Notification.Name>()
    let observer = adapter.chain().map(\.name).do { received.append($0) }.end()
    center.post(name: name, object: nil)
    observer.invalidate()
    center.post(name: name, object: nil)
    #expect(received.history == [name])
  }

  @Test func postingOnAnotherThreadDeliversOnThatThreadBeforePostReturns() {
    let center = NotificationCenter()
    let name = uniqueName()
    let adapter = NotificationAdapter(name, center: center)
    // Threads are told apart by their `Thread` objects, kept alive by the
    // recorders so that no other thread's object can take their address (on
    // Linux, setting `Thread.current.name` does not change what `name` returns).
    let handlerThreads = Recorder<Thread>()
    let observer = adapter.chain().do { _ in handlerThreads.append(Thread.current) }.end()
    let posterThreads = Recorder<Thread>()
    let deliveredWhenPostReturned = Recorder<Int>()
    spawn {
      posterThreads.append(Thread.current)
      center.post(name: name, object: nil)
      deliveredWhenPostReturned.append(handlerThreads.count)
    }
    .wait()
    let poster = posterThreads.history.first
    #expect(poster != nil)
    #expect(poster !== Thread.current)
    #expect(handlerThreads.count == 1)
    #expect(handlerThreads.history.first === poster)
    #expect(deliveredWhenPostReturned.history == [1])
    withExtendedLifetime(observer) {}
  }

  @Test func postsFromManyThreadsAreEachSentOnceInPerThreadOrder() {
    let threads = 4
    let perThread = 500
    let center = NotificationCenter()
    let name = uniqueName()
    let adapter = NotificationAdapter(name, center: center)
    let received = Recorder<Int>()
    let observer = adapter.chain()
      .map { ($0.userInfo?["thread"] as? Int ?? -1) * perThread + ($0.userInfo?["index"] as? Int ?? -1) }
      .do { received.append($0) }
      .end()
    race(threads: threads) { thread in
      for index in 0..<perThread {
        center.post(name: name, object: nil, userInfo: ["thread": thread, "index": index])
      }
    }
    let history = received.history
    #expect(history.count == threads * perThread)
    for thread in 0..<threads {
      let fromThread = history.filter { $0 / perThread == thread }
      #expect(fromThread == Array(thread * perThread..<(thread + 1) * perThread))
    }
    withExtendedLifetime(observer) {}
  }
}

@Suite struct NotificationAdapterInvalidateTests {
  @Test func invalidateStopsObservingAtOnce() {
    let name = uniqueName()
    let center = NotificationCenter()
    let adapter = NotificationAdapter(name, center: center)
    let received = Recorder<String>()
    let observer = adapter.chain().map(\.name.rawValue).do { received.append($0) }.end()
    center.post(name: name, object: nil)
    adapter.invalidate()
    center.post(name: name, object: nil)
    adapter.invalidate()  // again: harmless
    #expect(received.history == [name.rawValue])
    #expect(!observer.isInvalidated)
    withExtendedLifetime((adapter, observer)) {}
  }

  @Test func invalidatingFromSeveralThreadsAtOnceIsSafe() {
    let name = uniqueName()
    let center = NotificationCenter()
    let adapter = NotificationAdapter(name, center: center)
    let received = Recorder<Int>()
    let observer = adapter.chain().do { _ in received.append(1) }.end()
    race(threads: 4) { _ in adapter.invalidate() }
    center.post(name: name, object: nil)
    #expect(received.count == 0)
    withExtendedLifetime(observer) {}
  }
}
