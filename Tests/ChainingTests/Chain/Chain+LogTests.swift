import Dispatch
import Foundation
import Testing

@testable import Chaining

#if canImport(Darwin)
import Darwin
#endif

/// The calling thread's number as the log lines write it, found without the
/// library: on Linux the kernel's thread id, read from `/proc/thread-self`
/// (a link to `<pid>/task/<tid>`); on Apple platforms `pthread_threadid_np`.
private func threadNumber() -> String {
  #if canImport(Darwin)
  var id: UInt64 = 0
  pthread_threadid_np(nil, &id)
  return "0x" + String(id, radix: 16)
  #else
  let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? "?"
  return String(link.split(separator: "/").last ?? "?")
  #endif
}

/// A value with a description of its own.
private struct Point: CustomStringConvertible {
  let x: Int
  let y: Int
  var description: String { "(\(x), \(y))" }
}

@Suite struct ChainLogTests {
  // MARK: - Lines

  @MainActor @Test func logWritesEachValueWithItsLabelAndPassesItOn() {
    let holder = ValueHolder(1)
    let lines = Recorder<String>()
    var received: [Int] = []
    let observer = holder.chain()
      .log("count", to: lines.append)
      .do { received.append($0) }
      .sync()
    holder.value = 2
    #expect(lines.history == ["count: 1 (main)", "count: 2 (main)"])
    #expect(received == [1, 2])
    observer.invalidate()
  }

  @MainActor @Test func endLogsOnlyTheValuesSentLater() {
    let holder = ValueHolder("a")
    let lines = Recorder<String>()
    let observer = holder.chain().log("text", to: lines.append).end()
    #expect(lines.history == [])
    holder.value = "b"
    #expect(lines.history == ["text: b (main)"])
    observer.invalidate()
  }

  @MainActor @Test func eachLogStepWritesWhatReachesIt() {
    let notifier = Notifier<Int>()
    let lines = Recorder<String>()
    // The last `log` is the last step: it runs all the same.
    let observer = notifier.chain()
      .log("in", to: lines.append)
      .filter { $0 > 1 }
      .map { $0 * 10 }
      .log("out", to: lines.append)
      .end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(lines.history == ["in: 1 (main)", "in: 2 (main)", "out: 20 (main)"])
    observer.invalidate()
  }

  @MainActor @Test func valuesAreDescribedAsPrintDescribesThem() {
    let lines = Recorder<String>()
    let pool = ObserverPool()
    let point = Notifier<Point>()
    let optional = Notifier<Int?>()
    let pair = Notifier<(String, Int)>()
    point.chain().log("point", to: lines.append).end().addTo(pool)
    optional.chain().log("optional", to: lines.append).end().addTo(pool)
    pair.chain().log("pair", to: lines.append).end().addTo(pool)
    point.notify(value: Point(x: 1, y: 2))
    optional.notify(value: 3)
    optional.notify(value: nil)
    pair.notify(value: ("a", 1))
    #expect(
      lines.history == [
        "point: (1, 2) (main)",
        "optional: Optional(3) (main)",
        "optional: nil (main)",
        "pair: (\"a\", 1) (main)",
      ]
    )
    pool.invalidate()
  }

  // MARK: - Threads

  @Test func offTheMainActorTheLineNamesTheThreadAndTheQueue() {
    let notifier = Notifier<Int>()
    let lines = Recorder<String>()
    let observer = notifier.chain().log("n", to: lines.append).end()
    let number = DispatchQueue(label: "log-test").sync {
      notifier.notify(value: 1)
      return threadNumber()
    }
    #expect(lines.history == ["n: 1 (thread \(number), queue \"log-test\")"])
    observer.invalidate()
  }

  @Test func aQueueWithoutALabelIsNotNamed() {
    let notifier = Notifier<Int>()
    let lines = Recorder<String>()
    let observer = notifier.chain().log("n", to: lines.append).end()
    let number = DispatchQueue(label: "").sync {
      notifier.notify(value: 1)
      return threadNumber()
    }
    #expect(lines.history == ["n: 1 (thread \(number))"])
    observer.invalidate()
  }

  @MainActor @Test func aLogWrittenOnTheMainActorAddsNoHop() async {
    let holder = ValueHolder(0)
    let lines = Recorder<String>()
    var onMain: [Int] = []
    // `log` runs where the value is; `do`, written here, hops to the main actor.
    let observer = holder.chain()
      .log("before", to: lines.append)
      .do { onMain.append($0) }
      .log("after", to: lines.append)
      .end()
    // Written on another thread while the main actor waits for it, so the
    // steps queued for the main actor cannot run meanwhile.
    let number = Recorder<String>()
    spawn {
      DispatchQueue(label: "writer").sync {
        holder.value = 5
        number.append(threadNumber())
      }
    }.wait()
    // Logged on the writing thread before the write returned; the steps
    // after the hop wait for the main actor.
    let before = "before: 5 (thread \(number.history[0]), queue \"writer\")"
    #expect(lines.history == [before])
    #expect(onMain == [])
    // Let the main actor run what was queued for it.
    await withCheckedContinuation { done in DispatchQueue.main.async { done.resume() } }
    #expect(onMain == [5])
    #expect(lines.history == [before, "after: 5 (main)"])
    observer.invalidate()
  }

  // MARK: - Reentrancy

  @MainActor @Test func aWriteFromTheSinkToTheSourceIsAnEchoAndIsNotLogged() {
    let holder = ValueHolder(0)
    let lines = Recorder<String>()
    let others = Recorder<Int>()
    let pool = ObserverPool()
    holder.chain()
      .log("n") { line in
        lines.append(line)
        if holder.value == 1 { holder.value = 2 }  // queued: the holder is delivering 1
      }
      .end()
      .addTo(pool)
    holder.chain().do { others.append($0) }.end().addTo(pool)
    holder.value = 1
    // The write reached the other chain; the logging chain caused it, and
    // skips it as an echo.
    #expect(lines.history == ["n: 1 (main)"])
    #expect(others.history == [1, 2])
    #expect(holder.value == 2)
    pool.invalidate()
  }

  // MARK: - Concurrency and lifetime

  @Test func concurrentSendersLogEveryValueOnceInEachSendersOrder() {
    let notifier = Notifier<Int>()
    let lines = Recorder<String>()
    let observer = notifier.chain().log("n", to: lines.append).end()
    let numbers = (0..<4).map { _ in Recorder<String>() }
    race(threads: 4) { thread in
      DispatchQueue(label: "sender-\(thread)").sync {
        numbers[thread].append(threadNumber())
        for index in 0..<250 { notifier.notify(value: thread * 1_000 + index) }
      }
    }
    observer.invalidate()
    let senders = (0..<4).map { "(thread \(numbers[$0].history[0]), queue \"sender-\($0)\")" }
    // "n: 1003 (thread …)": the value, and where it was logged.
    let logged = lines.history.map { line -> (value: Int, place: String) in
      let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
      return (Int(parts[1]) ?? -1, parts[2])
    }
    #expect(logged.count == 1_000)
    for thread in 0..<4 {
      let mine = logged.filter { $0.value / 1_000 == thread }.map(\.value)
      #expect(mine == (0..<250).map { thread * 1_000 + $0 })
    }
    // Each value is logged by the thread that delivers it: its sender, or
    // another sender that was delivering for the notifier at the time.
    for line in logged where !senders.contains(line.place) {
      Issue.record("\(line.value) was logged at \(line.place), no sender's thread")
    }
  }

  @Test func theObserverReleasesTheSinkWhenInvalidated() {
    let notifier = Notifier<Int>()
    weak var weakToken: Token?
    let observer: Observer
    do {
      let token = Token()
      weakToken = token
      observer = notifier.chain().log("n") { _ in _ = token }.end()
    }
    notifier.notify(value: 1)
    #expect(weakToken != nil)
    observer.invalidate()
    #expect(weakToken == nil)
  }

  // MARK: - Standard error

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func theDefaultSinkWritesEachLineToStandardError() async {
    let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
      let notifier = Notifier<Int>()
      let observer = notifier.chain().log("n").end()
      let number = DispatchQueue(label: "stderr-test").sync {
        notifier.notify(value: 1)
        notifier.notify(value: 2)
        return threadNumber()
      }
      observer.invalidate()
      // The expected text, last, for the parent process to compare.
      writeLineToStandardError("expected thread \(number)")
    }
    let written = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    let lines = written.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let number = lines.dropLast().last.map { $0.replacingOccurrences(of: "expected thread ", with: "") } ?? "?"
    #expect(
      lines.suffix(4) == [
        "n: 1 (thread \(number), queue \"stderr-test\")",
        "n: 2 (thread \(number), queue \"stderr-test\")",
        "expected thread \(number)",
        "",
      ]
    )
  }
  #endif
}
