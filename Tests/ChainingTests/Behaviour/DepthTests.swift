import Chaining
import Testing
import _ChainingThreadContext

/// Deliveries nested deeper than a thread's stack could hold (#36): past
/// 128 nested runs of chains, a run is postponed to a shallower frame of
/// the same write, so a chain of any length delivers in a bounded stack.
/// Each chain still gets its values in order, and every delivery is done
/// when the write returns.
@Suite struct DepthTests {
  /// The nesting limit the library documents (Threading.md).
  static let limit = 128

  @Test func aChainOfOneHundredThousandHoldersDeliversOnA512KilobyteStack() {
    let results = Recorder<[Int]>()
    let stack = Recorder<Int>()
    spawn(stackSize: 512 * 1024) {
      for length in [1_000, 100_000] {
        let chain = HolderChain(length: length, measuresStack: true)
        let top = stackAddress()
        chain.deepest = top
        chain.holders[0].value = 7
        chain.holders[0].value = 8
        stack.append(top - chain.deepest)
        results.append(chain.received.history)
        results.append([chain.holders.indices.allSatisfy { chain.holders[$0].value == 8 + $0 } ? 1 : 0])
      }
    }.wait()
    #expect(results.history == [[1_007, 1_008], [1], [100_007, 100_008], [1]])
    // The deepest frame is as deep at 100,000 holders as at 1,000: the
    // stack the delivery takes does not grow with the length.
    let used = stack.history
    #expect(used.count == 2)
    if used.count == 2 { #expect(used[1] <= used[0] + 16 * 1024, "stack used: \(used)") }
  }

  @Test func runsWithLargeFramesArePostponedBeforeTheStackEnds() {
    // Each link's handler holds about 4 KB of stack while it writes the
    // next holder, so 128 links would need all of a 512 KB stack and
    // more: runs are postponed once less than the reserve is left.
    let results = Recorder<[Int]>()
    spawn(stackSize: 512 * 1024) {
      let length = 1_000
      let holders = (0...length).map { _ in ValueHolder(0) }
      let addresses = Recorder<Int>()
      let observers = (0..<length).map { index in
        holders[index].chain().do { value in
          if index < 2 { addresses.append(stackAddress()) }
          holdingStack(levels: 16) { holders[index + 1].value = value + 1 }
        }.end()
      }
      holders[0].value = 5
      let perLink = addresses.history.count == 2 ? addresses.history[0] - addresses.history[1] : 0
      results.append([holders[length].value, perLink >= 4_096 ? 1 : perLink])
      withExtendedLifetime(observers) {}
    }.wait()
    #expect(results.history == [[1_005, 1]])
  }

  @Test func aShallowFanOutDeliversDepthFirst() {
    let log = Recorder<String>()
    let source = ValueHolder(0)
    let branches = ["a", "b"].map { Branch(label: $0, from: source, length: 100, log: log) }
    source.value = 1
    #expect(log.history == (1...100).map { "a\($0)" } + (1...100).map { "b\($0)" })
    withExtendedLifetime(branches) {}
  }

  @Test func pastTheLimitARunWaitsForTheRunsPostponedBeforeIt() {
    let log = Recorder<String>()
    let source = ValueHolder(0)
    let branches = ["a", "b"].map { Branch(label: $0, from: source, length: 300, log: log) }
    source.value = 1
    // The write's delivery to `a` nests until the limit, then `b`'s does;
    // each postponed run goes on from the outermost frame, oldest first.
    // Branch holder k runs its chain at nesting k + 1 (the source's chain
    // is the first): the first stretch is 127 holders, every later one
    // 128.
    let stretches = [1...127, 128...255, 256...300]
    let expected = stretches.flatMap { range in range.map { "a\($0)" } + range.map { "b\($0)" } }
    #expect(log.history == expected)
    #expect(branches.allSatisfy { $0.holders.last?.value == 301 })
  }

  @Test func aValueForAPostponedChainWaitsBehindIt() {
    // The source's chain runs at nesting 1 and holder k's at k + 2, so
    // `target`'s chain, at `length + 3`, is the first past the limit: it
    // is postponed with the deep value. The source's second chain then
    // writes `target` from a shallow frame: that value arrives second and
    // runs second, so `target` holds it, and so does the chain's end.
    let length = Self.limit - 2
    let source = ValueHolder(0)
    let deep = HolderChain(length: length, from: source)
    let target = ValueHolder(0)
    let received = Recorder<Int>()
    let observers = [
      deep.holders.last!.chain().sendTo(target).end(),
      target.chain().do { received.append($0) }.end(),
      source.chain().map { $0 * -1 }.sendTo(target).end(),
    ]
    source.value = 5
    #expect(received.history == [5 + length, -5])
    #expect(target.value == -5)
    withExtendedLifetime(observers) {}
  }

  @Test func aChainInvalidatedWhileItsRunIsPostponedDoesNotRun() {
    // The end's chain, at nesting `length + 2`, is the first past the
    // limit; the source's second chain invalidates it before its
    // postponed run.
    let length = Self.limit - 1
    let source = ValueHolder(0)
    let deep = HolderChain(length: length, from: source)
    let received = Recorder<Int>()
    let end = deep.holders.last!.chain().do { received.append($0) }.end()
    let invalidator = source.chain().do { _ in end.invalidate() }.end()
    source.value = 5
    #expect(deep.holders.last!.value == 5 + length)
    #expect(received.history == [])
    // A chain one holder shorter runs before the invalidation.
    let shorter = HolderChain(length: length - 1, from: source)
    let shorterReceived = Recorder<Int>()
    let shorterEnd = shorter.holders.last!.chain().do { shorterReceived.append($0) }.end()
    let shorterInvalidator = source.chain().do { _ in shorterEnd.invalidate() }.end()
    source.value = 6
    #expect(shorterReceived.history == [6 + length - 1])
    withExtendedLifetime((invalidator, shorterInvalidator)) {}
  }

  @Test func aWriteInABatchHasReachedTheEndWhenItReturns() {
    let chain = HolderChain(length: 1_000)
    let other = ValueHolder(0)
    let pairs = Recorder<[Int]>()
    let observer = chain.holders.last!.chain().combine(other.chain()).do { pairs.append([$0, $1]) }.end()
    var seen = -1
    withBatchedUpdates {
      chain.holders[0].value = 3
      seen = chain.holders.last!.value
      other.value = 4
    }
    #expect(seen == 1_003)
    // One pair for the batch, of both final values.
    #expect(pairs.history == [[1_003, 4]])
    withExtendedLifetime(observer) {}
  }

  @Test func aLoopThroughAChainPastTheLimitSettles() {
    // A ring: the last holder sends back to the first. The value that
    // comes back is an echo of the first chain's own delivery, and is
    // dropped there, though it went through postponed runs.
    let chain = HolderChain(length: 1_000)
    let back = chain.holders.last!.chain().sendTo(chain.holders[0]).end()
    chain.holders[0].value = 2
    #expect(chain.holders[0].value == 1_002)
    #expect(chain.holders[1].value == 3)
    #expect(chain.received.history == [1_002])
    withExtendedLifetime(back) {}
  }

  @Test func twoThreadsWritingAChainPastTheLimitKeepEveryValueInOrder() {
    // Each holder's chain sees its values in broadcast order, so the end
    // of the chain gets every write of the first holder, in the order
    // that holder broadcast them, whichever thread's postponed runs carry
    // them (a value that reaches a chain whose run another thread has
    // postponed waits in its queue).
    let chain = HolderChain(length: 300)
    let first = Recorder<Int>()
    let observer = chain.holders[0].chain().do { first.append($0) }.end()
    race(threads: 2) { thread in
      for index in 1...200 { chain.holders[0].value = thread * 1_000_000 + index }
    }
    #expect(first.count == 400)
    #expect(chain.received.history == first.history.map { $0 + 300 })
    #expect(chain.holders.indices.allSatisfy { chain.holders[$0].value == chain.holders[0].value + $0 })
    withExtendedLifetime(observer) {}
  }

  @Test func syncThroughAChainPastTheLimitDelivers() {
    // Built from the end, so that each `sync()` reaches one more holder
    // and the last one runs through all of them.
    let holders = (0...1_000).map { ValueHolder($0 == 0 ? 9 : 0) }
    var observers: [Observer] = []
    for index in (0..<1_000).reversed() {
      observers.append(holders[index].chain().map { $0 + 1 }.sendTo(holders[index + 1]).sync())
    }
    #expect(holders.indices.allSatisfy { holders[$0].value == 9 + $0 })
    withExtendedLifetime(observers) {}
  }
}

/// Holders, each `map`ped (plus one) and sent to the next; the last one's
/// values are recorded. With `measuresStack`, `deepest` is the lowest
/// stack address a `map` reached.
private final class HolderChain: @unchecked Swift.Sendable {
  // @unchecked: `deepest` is written only with `measuresStack`, by the
  // one thread that writes the chain then; the rest is immutable or
  // thread-safe.
  let holders: [ValueHolder<Int>]
  let received = Recorder<Int>()
  var deepest = 0
  private var observers: [Observer] = []

  init(length: Int, from source: ValueHolder<Int>? = nil, measuresStack: Bool = false) {
    holders = (0...length).map { _ in ValueHolder(0) }
    if let source { observers.append(source.chain().sendTo(holders[0]).end()) }
    for index in 0..<length {
      observers.append(
        holders[index].chain().map { [unowned self] value in
          if measuresStack { deepest = min(deepest, stackAddress()) }
          return value + 1
        }.sendTo(holders[index + 1]).end()
      )
    }
    observers.append(holders[length].chain().do { [received] in received.append($0) }.end())
  }
}

/// A branch of holders from `source`, each logging "label index" when its
/// chain runs, then sending its value to the next.
private final class Branch {
  let holders: [ValueHolder<Int>]
  private var observers: [Observer] = []

  init(label: String, from source: ValueHolder<Int>, length: Int, log: Recorder<String>) {
    holders = (0...length).map { _ in ValueHolder(0) }
    observers.append(source.chain().sendTo(holders[0]).end())
    for index in 0..<length {
      observers.append(
        holders[index].chain().map { value in
          log.append("\(label)\(index + 1)")
          return value + 1
        }.sendTo(holders[index + 1]).end()
      )
    }
  }
}

/// Calls `body` with `levels` frames of 256 bytes or more above it, in any
/// build: each frame's buffer is filled by a function the optimizer does
/// not inline, so it stays on the stack.
@inline(never)
private func holdingStack(levels: Int, _ body: () -> Void) {
  var pad = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
  withUnsafeMutableBytes(of: &pad) { bytes in
    fill(bytes, with: UInt8(truncatingIfNeeded: levels))
    if levels == 0 { body() } else { holdingStack(levels: levels - 1, body) }
    precondition(bytes[bytes.count - 1] == UInt8(truncatingIfNeeded: levels))
  }
}

@inline(never)
private func fill(_ bytes: UnsafeMutableRawBufferPointer, with value: UInt8) {
  for index in bytes.indices { bytes[index] = value }
}

/// The address of this function's frame: how deep the caller's stack is.
/// The frame itself, not a local's address: the address sanitizer moves
/// locals whose address is taken to a stack of its own on the heap.
@inline(never)
private func stackAddress() -> Int {
  Int(bitPattern: _chaining_stack_address())
}
