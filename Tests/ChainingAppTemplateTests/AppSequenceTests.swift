// An `AsyncSequence` declared in the app-template module: its conformance
// is isolated to the main actor (`InferIsolatedConformances`), so
// `AsyncSequenceSource` iterates it in a task there (AsyncSources.md, "A
// sequence declared in an app").
import Chaining
import Dispatch
import Foundation
import Testing

final class Ticker {
  struct Ticks: AsyncSequence {
    typealias Element = Int
    struct AsyncIterator: AsyncIteratorProtocol {
      var count = 0
      mutating func next() async -> Int? {
        count += 1
        return count <= 3 ? count : nil
      }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
  }

  let ticks = AsyncSequenceSource(Ticks())
}

@Suite struct AppSequenceTests {
  @Test func anAppDeclaredSequenceIsIteratedOnTheMainActor() async {
    let ticker = Ticker()
    var received: [Int] = []
    var onMainActor: [Bool] = []
    let observer = ticker.ticks.chain().do { tick in
      received.append(tick)
      onMainActor.append(isOnMainQueue())
    }.end()
    let ended = await ticker.ticks.waitForCompletion()
    guard case .finished = ended else {
      Issue.record("the iteration ended with \(ended)")
      return
    }
    #expect(received == [1, 2, 3])
    #expect(onMainActor == [true, true, true])
    observer.invalidate()
  }
}

/// A tag on the main queue, for `isOnMainQueue()`.
nonisolated let mainQueueTag: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()

/// Whether the caller runs on the main queue (or the main thread): where the
/// main actor runs, on Linux too, where another thread may drain the queue.
nonisolated func isOnMainQueue() -> Bool {
  Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueTag) == true
}
