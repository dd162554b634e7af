import Foundation
import Testing

@Suite struct ThreadsTests {
  // A `Thread` keeps its closure while it lives: these record the thread in
  // an object the body captures, and check that nothing is left holding it.

  @Test func spawnReleasesItsBodyEvenWhenTheThreadIsKept() {
    weak var weakThreads: Recorder<Thread>?
    do {
      let threads = Recorder<Thread>()
      weakThreads = threads
      spawn { threads.append(Thread.current) }.wait()
      #expect(threads.count == 1)
    }
    #expect(weakThreads == nil)
  }

  @Test func raceReleasesItsBodyEvenWhenTheThreadsAreKept() {
    weak var weakThreads: Recorder<Thread>?
    do {
      let threads = Recorder<Thread>()
      weakThreads = threads
      race(threads: 2) { _ in threads.append(Thread.current) }
      #expect(threads.count == 2)
    }
    #expect(weakThreads == nil)
  }
}
