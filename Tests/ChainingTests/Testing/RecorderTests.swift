import Chaining
import ChainingTesting
import Dispatch
import Testing

/// ChainingTesting's `Recorder` (named in full: the tests' own `Recorder`
/// in Support/ shadows it here).
@Suite struct ChainingTestingRecorderTests {
  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func valuesFromSeveralThreadsAreAllRecordedInTheirOrder() async throws {
    let counter = ValueHolder(-1)
    let recorder = ChainingTesting.Recorder<Int>()
    let observer = counter.chain().dropFirst().sendTo(recorder).sync()
    DispatchQueue.concurrentPerform(iterations: 4) { thread in
      for step in 0..<100 { counter.value = thread * 100 + step }
    }
    let all = try await recorder.values(count: 400)
    #expect(all.count == 400)
    for thread in 0..<4 {
      let own = all.filter { $0 / 100 == thread }
      #expect(own == Array(thread * 100..<thread * 100 + 100))
    }
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func nextReturnsEachValueOnceWaitingForTheOnesToCome() async throws {
    let notifier = Notifier<String>()
    let recorder = ChainingTesting.Recorder<String>()
    let observer = notifier.chain().do { recorder.append($0) }.end()
    notifier.notify(value: "a")
    #expect(try await recorder.next() == "a")
    let later = Task.detached { notifier.notify(value: "b") }
    #expect(try await recorder.next() == "b")  // waits for the task's value
    await later.value
    notifier.notify(value: "c")
    notifier.notify(value: "d")
    #expect(try await recorder.next() == "c")
    #expect(try await recorder.next() == "d")
    #expect(recorder.values == ["a", "b", "c", "d"])
    observer.invalidate()
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func aWaitThatRunsOutOfTimeSaysWhatCame() async {
    let recorder = ChainingTesting.Recorder<Int>(timeout: .milliseconds(100))
    recorder.receive(value: 1)
    recorder.receive(value: 2)
    do {
      _ = try await recorder.values(count: 3)  // no third value ever comes
      Issue.record("values(count: 3) returned with two values")
    } catch let timeout as ChainingTesting.Recorder<Int>.Timeout {
      #expect(timeout.description == "Recorder.values(count: 3) waited 0.1 seconds and got 2 value(s): [1, 2]")
    } catch {
      Issue.record("unexpected error \(error)")
    }
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test(.timeLimit(.minutes(1))) func aCancelledWaitThrowsCancellation() async {
    let recorder = ChainingTesting.Recorder<Int>()
    let started = ChainingTesting.Recorder<Bool>()
    let waiting = Task {
      started.receive(value: true)
      return try await recorder.next()
    }
    _ = try? await started.next()
    waiting.cancel()
    await #expect(throws: CancellationError.self) { try await waiting.value }
  }
}
