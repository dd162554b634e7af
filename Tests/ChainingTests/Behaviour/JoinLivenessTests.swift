import Chaining
import Dispatch
import Foundation
import Testing

@testable import Chaining

/// Joins fed nonstop from several threads keep delivering every side, and
/// no thread is held running other threads' values (issue #34).
///
/// Before the bounded drain, the thread holding a joined chain's gate ran
/// every value the other producers queued there for as long as they kept
/// coming: its own source's values stopped, for seconds or for good. Here
/// the producers write until every side has reached the steps after the
/// join `deliveries` times, so a side that stops reaching them makes the
/// round hang; the deadline only turns that hang into a failure.
@Suite struct JoinLivenessTests {
  private static let rounds = 20
  private static let deliveries = 200
  /// Only turns a hang into a failure: a round takes milliseconds.
  private static let deadline: DispatchTimeInterval = .seconds(60)

  enum Join: String, CaseIterable, CustomTestStringConvertible {
    case combine, tuple, merge
    var testDescription: String { rawValue }
  }

  /// Which side crosses a hop (`receive(on:)`): then the thread of the
  /// hop's queue runs the join's own gate, and the other side's values
  /// reach that gate from inside their delivery (they wait for their turn
  /// at the end of their wave).
  enum Hop: String, CaseIterable, CustomTestStringConvertible {
    case none, left, right
    var testDescription: String { rawValue }
  }

  /// Counts, per side, the values that reach the steps after the join, and
  /// signals `reached` once every side has `deliveries` of them.
  final class SideCounts: @unchecked Swift.Sendable {
    // @unchecked: `counts` and `signaled` are touched only under `lock`.
    private let lock = NSLock()
    private var counts = [0, 0]
    private var signaled = false
    let reached = DispatchSemaphore(value: 0)

    func count(side: Int) {
      let signals = lock.withLock { () -> Bool in
        counts[side] += 1
        guard !signaled, counts.allSatisfy({ $0 >= JoinLivenessTests.deliveries }) else { return false }
        signaled = true
        return true
      }
      if signals { reached.signal() }
    }

    var snapshot: [Int] { lock.withLock { counts } }
  }

  /// Builds `join` of `left` and `right`, with a hop on the side `hop`
  /// names, counting each side's values after the join.
  private func build(
    _ join: Join,
    hop: Hop,
    _ left: Notifier<Int>,
    _ right: Notifier<Int>,
    _ queue: DispatchQueue,
    _ counts: SideCounts
  ) -> Observer {
    let first = hop == .left ? left.chain().receive(on: queue) : left.chain()
    let second = hop == .right ? right.chain().receive(on: queue) : right.chain()
    switch join {
    case .merge:
      // Each producer writes its side in the lowest bit.
      return first.merge(second).do { counts.count(side: $0 & 1) }.end()
    case .tuple:
      return first.tuple(second).do { pair in
        if pair.0 != nil { counts.count(side: 0) }
        if pair.1 != nil { counts.count(side: 1) }
      }.end()
    case .combine:
      // A side reached the join when its part of the pair changed: each
      // producer's values only grow, and two producers of one side write
      // values that differ.
      let last = Box2()
      return first.combine(second).do { pair in
        if pair.0 != last.values.0 { counts.count(side: 0) }
        if pair.1 != last.values.1 { counts.count(side: 1) }
        last.values = pair
      }.end()
    }
  }

  /// The last pair a combine sent: touched only by the chain's steps,
  /// which run one value at a time.
  final class Box2: @unchecked Swift.Sendable {
    var values = (-1, -1)
  }

  @Test(arguments: Join.allCases, Hop.allCases)
  func joinsFedNonstopFromSeveralThreadsKeepDeliveringEverySide(join: Join, hop: Hop) {
    for producers in 2...4 {
      for round in 0..<Self.rounds {
        let left = Notifier<Int>()
        let right = Notifier<Int>()
        let queue = DispatchQueue(label: "JoinLivenessTests.hop")
        let counts = SideCounts()
        let observer = build(join, hop: hop, left, right, queue, counts)
        let stop = StopFlag()
        let done = DispatchGroup()
        for producer in 0..<producers {
          done.enter()
          let work = Producer(left: left, right: right, index: producer, stop: stop)
          Thread {
            work.run()
            done.leave()
          }.start()
        }
        let arrived = counts.reached.wait(timeout: .now() + Self.deadline) == .success
        stop.set()
        done.wait()
        #expect(arrived, "\(producers) producers, round \(round): sides reached \(counts.snapshot)")
        observer.invalidate()
        if !arrived { return }
      }
    }
  }

  /// Tells the producers to stop.
  final class StopFlag: @unchecked Swift.Sendable {
    // @unchecked: `stopped` is touched only under `lock`.
    private let lock = NSLock()
    private var stopped = false
    func set() { lock.withLock { stopped = true } }
    var isSet: Bool { lock.withLock { stopped } }
  }

  /// A producer thread's loop: writes its side (`index % 2`) until told
  /// to stop, each value with the side in its lowest bit and the producer
  /// in the next, so that two producers of one side never write the same.
  final class Producer: @unchecked Swift.Sendable {
    // @unchecked: constants only.
    let left: Notifier<Int>
    let right: Notifier<Int>
    let index: Int
    let stop: StopFlag

    init(left: Notifier<Int>, right: Notifier<Int>, index: Int, stop: StopFlag) {
      self.left = left
      self.right = right
      self.index = index
      self.stop = stop
    }

    func run() {
      let side = index % 2
      let target = side == 0 ? left : right
      var step = 0
      while !stop.isSet {
        target.notify(value: step << 2 | (index / 2) << 1 | side)
        step += 1
      }
    }
  }
}
