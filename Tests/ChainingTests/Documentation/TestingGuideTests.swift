import Chaining
import Dispatch
import Testing

/// The examples of Documentation/Testing.md, run: the snippet tests only
/// type-check them.
@Suite struct TestingGuideTests {
  @Test func writesFromFourThreadsAreAllRecordedBeforeInvalidateReturns() {
    let counter = ValueHolder(-1)
    let seen = Recorder<Int>()
    let observer = counter.chain().do { seen.append($0) }.end()
    DispatchQueue.concurrentPerform(iterations: 4) { thread in
      for step in 0..<100 { counter.value = thread * 100 + step }
    }
    observer.invalidate()
    #expect(seen.history.count == 400)
    #expect(Set(seen.history) == Set(0..<400))
  }

  final class Inbox: @unchecked Swift.Sendable {
    // @unchecked: `task` is set once, before the test reads it.
    let unread = Notifier<Int>()
    private(set) var task: Task<[Int], Never>?

    func startCounting() {
      let unread = self.unread
      task = Task {
        var counts: [Int] = []
        for await count in unread.chain().prefix(2).values { counts.append(count) }
        return counts
      }
    }
  }

  @Test func inboxCountsTwoUpdates() async {
    let inbox = Inbox()
    inbox.startCounting()
    await inbox.unread.waitForObservers()
    inbox.unread.notify(value: 3)
    inbox.unread.notify(value: 5)
    #expect(await inbox.task?.value == [3, 5])
  }

  @Test func aScreenThatEndedItsBindingsLeavesNoObserver() {
    let title = ValueHolder("Inbox")
    let screen = ObserverPool()
    title.chain().do { _ in }.sync().addTo(screen)
    #expect(title.observerCount == 1)
    screen.invalidate()
    #expect(title.observerCount == 0)
  }
}
