import Chaining
import Dispatch
import Testing

/// Issue #35: a two-way binding to a model never steps the holder back to a
/// value older than one it has held, and both sides end on the last write.
@Suite struct BindOrderTests {
  let queue = DispatchQueue(label: "BindOrderTests")

  /// The interleaving that stepped the holder back, made deterministic: the
  /// model's read that follows the binding's write of "a" runs after the
  /// holder changed to "b", whose write is still queued behind the read.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aReadOlderThanTheBindingsLastWriteIsNotSetOnTheHolder() {
    bound { profile, field, values in
      whileQueueHeld {
        field.value = "a"  // queues the model's write of "a"
        queue.async { field.value = "b" }  // runs before the read "a" schedules
      }
      #expect(values.history == ["a", "b"])
      #expect(field.value == "b")
      #expect(queue.sync { profile.first } == "b")
    }
  }

  /// The same with the model written on its queue between the binding's
  /// write and its read: the holder's newer value, queued behind, stands on
  /// both sides, as the write that reached the queue last.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aModelWriteOverwrittenByAQueuedHolderWriteIsNotSetOnTheHolder() {
    bound { profile, field, values in
      whileQueueHeld {
        field.value = "a"
        queue.async { profile.first = "model" }
        queue.async { field.value = "b" }
      }
      #expect(values.history == ["a", "b"])
      #expect(queue.sync { profile.first } == "b")
    }
  }

  /// A write of the model after the holder's writes stands on both sides.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aModelWriteAfterTheHoldersStandsOnBothSides() {
    bound { profile, field, values in
      whileQueueHeld {
        field.value = "a"
        field.value = "b"
        queue.async { profile.first = "model" }
      }
      #expect(values.history == ["a", "b", "model"])
      #expect(queue.sync { profile.first } == "model")
    }
  }

  /// The check of the issue: 20 rounds of 500 writes from one thread. The
  /// holder's history only goes forward, and both sides end on the last.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aHolderWrittenNonstopNeverStepsBack() {
    for _ in 0..<20 {
      bound { profile, field, values in
        DispatchQueue.global().sync {
          for index in 0..<500 { field.value = "v\(index)" }
        }
        drain()
        let indices = values.history.map { Int($0.dropFirst())! }
        #expect(stepsBack(indices) == [])
        // Forward only, 500 of 0..<500: each once, in order.
        #expect(indices.count == 500)
        #expect(field.value == "v499")
        #expect(queue.sync { profile.first } == "v499")
      }
    }
  }

  /// Two threads write the holder nonstop: each one's values reach the
  /// holder in its order, none twice, and both sides end on the same value.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func twoWritersNeverStepTheHolderBack() {
    for _ in 0..<10 {
      bound { profile, field, values in
        DispatchQueue.concurrentPerform(iterations: 2) { writer in
          let name = writer == 0 ? "a" : "b"
          for index in 0..<300 { field.value = "\(name)\(index)" }
        }
        drain()
        let history = values.history
        for name in ["a", "b"] {
          let indices = history.filter { $0.hasPrefix(name) }.map { Int($0.dropFirst())! }
          #expect(stepsBack(indices) == [], "writer \(name)")
          #expect(indices.count == 300, "writer \(name)")
        }
        #expect(history.count == 600)
        #expect(queue.sync { profile.first } == field.value)
      }
    }
  }

  /// Binds a field to a new profile's `first` on the queue, records the
  /// field's changes from then on, and runs `body`.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  private func bound(_ body: (Profile, ValueHolder<String>, Recorder<String>) -> Void) {
    let profile = Profile()
    let field = ValueHolder("")
    let binding = field.bind(to: profile, \.first, on: queue)
    let values = Recorder<String>()
    let watcher = field.chain().do { values.append($0) }.end()
    body(profile, field, values)
    binding.invalidate()
    watcher.invalidate()
  }

  /// Runs `body` while the queue is held, so that what it queues runs after
  /// it returns; then lets the queue run it all (`drain()`).
  private func whileQueueHeld(_ body: () -> Void) {
    let held = DispatchSemaphore(value: 0)
    queue.async { held.wait() }
    body()
    held.signal()
    drain()
  }

  /// The first few places where `indices` does not go forward, as the
  /// pair of the index before and the index after.
  private func stepsBack(_ indices: [Int]) -> [[Int]] {
    Array(zip(indices, indices.dropFirst()).filter { $0 >= $1 }.prefix(5).map { [$0, $1] })
  }

  /// Lets the queue run what the binding and the model's reads queued: a
  /// write, the read it schedules, and the write that read may have been
  /// behind, each queued before the next `sync` returns.
  private func drain() {
    for _ in 0..<3 { queue.sync {} }
  }
}
