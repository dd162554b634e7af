import Testing

@testable import Chaining

/// The library's atomics (`AtomicReference`): what each operation returns
/// and stores, and, for every class that stores atomic words, that the
/// address a reference finds is the stored property's own.
@Suite struct AtomicsTests {
  /// A class holding one word, first, as the library's classes do.
  final class Box<Value>: @unchecked Swift.Sendable {
    var storage: Value
    init(_ value: Value) { storage = value }
    var reference: AtomicReference<Int> { AtomicReference(in: self) }
  }

  @Test func operationsReturnAndStoreWhatSynchronizationsDo() {
    let box = Box(5)
    let word = box.reference
    #expect(word.load(ordering: .relaxed) == 5)
    word.store(7, ordering: .releasing)
    #expect(box.storage == 7)
    #expect(word.exchange(9, ordering: .acquiringAndReleasing) == 7)
    #expect(word.compareExchange(expected: 8, desired: 1, ordering: .sequentiallyConsistent) == (false, 9))
    #expect(word.compareExchange(expected: 9, desired: 1, ordering: .acquiring) == (true, 9))
    #expect(word.bitwiseOr(0b110, ordering: .relaxed) == (1, 0b111))
    #expect(word.bitwiseAnd(0b011, ordering: .relaxed) == (0b111, 0b011))
    #expect(word.wrappingAdd(Int.max, ordering: .relaxed) == (3, Int.min + 2))
    #expect(word.wrappingSubtract(3, ordering: .relaxed) == (Int.min + 2, Int.max))
    #expect(word.update { $0 == Int.max ? 4 : nil } == Int.max)
    #expect(word.update { _ in nil } == 4)
    #expect(box.storage == 4)
  }

  @Test func boolAndThirtyTwoBitWords() {
    let flag = Box(false)
    let flagWord = AtomicReference<Bool>(in: flag)
    #expect(flagWord.exchange(true, ordering: .acquiringAndReleasing) == false)
    #expect(flagWord.compareExchange(expected: false, desired: false, ordering: .relaxed) == (false, true))
    #expect(flag.storage)
    let lock = Box<UInt32>(2)
    let lockWord = AtomicReference<UInt32>(in: lock)
    #expect(lockWord.wrappingSubtract(3, ordering: .relaxed) == (2, UInt32.max))
    #expect(lock.storage == UInt32.max)
  }

  /// Whether `reference` points at `property`.
  private func expectSameAddress<Value>(
    _ reference: AtomicReference<Value>,
    _ property: UnsafeMutablePointer<Value>,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(
      UnsafeMutableRawPointer(reference.pointer) == UnsafeMutableRawPointer(property),
      sourceLocation: sourceLocation
    )
  }

  @Test func eachClassFindsItsOwnWords() {
    let gate = DeliveryGate(held: false)
    expectSameAddress(gate.word, &gate.words.word)
    expectSameAddress(gate.requests, &gate.words.requests)

    let core = _SenderCore<String>()
    expectSameAddress(core.word, &core.wordStorage)

    let flush = WaveFlush(gate: gate) {}
    expectSameAddress(flush.rank, &flush.words.rank)
    expectSameAddress(flush.sentNothing, &flush.words.sentNothing)
    #expect(flush.rank.load(ordering: .relaxed) == Int.min)
    #expect(flush.sentNothing.load(ordering: .relaxed) == 0)
    // The pins, in the half word after the hint's.
    #expect(!flush.isPinned)
    flush.pin()
    #expect(flush.isPinned)
    #expect(flush.words.pins == 1)
    #expect(flush.words.sentNothing == 0)
    flush.orphan()
    #expect(flush.removePin())
    #expect(!flush.isPinned)

    let hop = IsolationHop<String>(to: MainActor.shared) { _ in }
    expectSameAddress(AtomicReference<Bool>(in: hop), &hop.scheduledStorage)

    let countdown = Countdown(2)
    expectSameAddress(AtomicReference<Int>(in: countdown), &countdown.remainingStorage)
    #expect(!countdown.decrement())
    #expect(countdown.decrement())

    let computed = ComputedNode(name: "node", publishesWord: true)
    expectSameAddress(computed.publishedStamp, &computed.publishedWords.stamp)
    expectSameAddress(computed.publishedBits, &computed.publishedWords.bits)

    #if !canImport(Darwin)
    let protected = Protected([1, 2, 3])
    expectSameAddress(protected.lock, &protected.lockWord)

    let graphLock = GraphLock()
    expectSameAddress(graphLock.word, &graphLock.words.word)
    expectSameAddress(graphLock.parked, &graphLock.words.parked)
    #endif
  }
}
