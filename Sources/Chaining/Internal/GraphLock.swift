#if canImport(Darwin)
import Darwin
#else
import _ChainingThreadContext
#endif

// MARK: - GraphLock

/// The lock of the graph of computed values (`ComputedGraph`), with the
/// marking walk's stack: `Protected`'s lock, given back with a plain store
/// on Linux.
///
/// A write through a computed value takes this lock three times or more,
/// and an evaluation gives it back and takes it again, so its release is on
/// the hot path of every computed value. `Protected` gives its lock back
/// with an exchange, which also tells whether a thread parked: an atomic
/// read-modify-write, a full barrier on x86. Here the release is a store,
/// the light fence, and a read of `parked`, the count of threads parked or
/// about to park. A thread that finds the lock taken spins briefly, then
/// counts itself in `parked`, runs the heavy fence, and under its stripe's
/// lock (`ParkingLot.locks`) tries the lock again before it sleeps. The
/// fence pair (`ChainingFences.h`) makes the two meet: either that try sees
/// the release's store, or the release reads the count and wakes the
/// stripe (taking the stripe's lock, so the wake cannot fall between the
/// try and the sleep). `Verification/GraphLock.pml` models the release's
/// store waiting in its thread's store buffer: without the heavy fence
/// (`MUTANT_NO_HEAVY_FENCE`) spin finds a thread parked forever, and
/// without the read of `parked` (`MUTANT_NO_PARKED_READ`) too. The taking
/// compare-and-swap acquires and the store releases, so the thread
/// sanitizer sees the lock (`ComputedTests`' readers on 8 threads, and
/// `GraphLockTests`).
///
/// Never held while user code runs (see `ComputedGraph`), so it needs no
/// check of a call back into it, as `Protected` has.
///
/// On Apple platforms it is an `os_unfair_lock`, as `Protected`'s.
final class GraphLock: @unchecked Swift.Sendable {
  // @unchecked: `stack` is reached only with the lock taken.

  #if canImport(Darwin)
  /// The lock, in an allocation of its own so that its address never changes.
  private let unfairLock: UnsafeMutablePointer<os_unfair_lock>
  #else
  /// The lock's word (`free` or `taken`) and the count of threads parked
  /// or parking: reached only through `word` and `parked` (see
  /// `AtomicReference`: "Where the word lives"); must stay the first
  /// stored property.
  var words: (word: UInt32, parked: UInt32) = (0, 0)

  /// The lock's word.
  var word: AtomicReference<UInt32> {
    @inline(__always) get { AtomicReference(in: self) }
  }

  /// The threads parked, or about to park, on this lock.
  var parked: AtomicReference<UInt32> {
    @inline(__always) get { AtomicReference(in: self, offset: MemoryLayout<UInt32>.stride) }
  }

  /// Nobody holds the lock.
  static var free: UInt32 { 0 }
  /// A thread holds the lock.
  static var taken: UInt32 { 1 }
  #endif

  /// The marking walk's stack, reused by every walk (see `ComputedGraph`).
  /// Under the lock.
  @exclusivity(unchecked) var stack = NodeList()

  init() {
    #if canImport(Darwin)
    unfairLock = .allocate(capacity: 1)
    unfairLock.initialize(to: os_unfair_lock())
    #endif
  }

  #if canImport(Darwin)
  deinit {
    unfairLock.deinitialize(count: 1)
    unfairLock.deallocate()
  }
  #endif

  /// Takes the lock.
  @inline(__always)
  func lock() {
    #if canImport(Darwin)
    os_unfair_lock_lock(unfairLock)
    #else
    if !word.compareExchange(expected: Self.free, desired: Self.taken, ordering: .acquiring).exchanged {
      lockContended()
    }
    #endif
  }

  /// Gives the lock back.
  @inline(__always)
  func unlock() {
    #if canImport(Darwin)
    os_unfair_lock_unlock(unfairLock)
    #else
    // A lock given back twice would let two threads in: checked in debug
    // builds (`ComputedTests`' questions asked in one hold).
    assert(word.load(ordering: .relaxed) == Self.taken, "GraphLock.unlock(): the lock is not taken")
    word.store(Self.free, ordering: .releasing)
    // The store before the read of `parked`: a compiler barrier, as a
    // parking thread runs the heavy fence (see above).
    _chaining_light_fence()
    if parked.load(ordering: .relaxed) != 0 { wakeParked() }
    #endif
  }

  /// Runs `body` with the lock taken, on the walk's stack.
  @inline(__always)
  func withLock<Result>(_ body: (inout NodeList) -> Result) -> Result {
    lock()
    defer { unlock() }
    return body(&stack)
  }

  #if !canImport(Darwin)
  /// Takes the lock that a thread holds: spins a little, then parks (see
  /// above).
  @inline(never)
  private func lockContended() {
    for _ in 0..<100 {
      // Relaxed: only a hint that the lock looks free; the acquiring
      // compare-and-swap takes it.
      if word.load(ordering: .relaxed) == Self.free,
        word.compareExchange(expected: Self.free, desired: Self.taken, ordering: .acquiring).exchanged
      {
        return
      }
    }
    _ = parked.wrappingAdd(1, ordering: .relaxed)
    // The count before the try: the release runs the light fence between
    // its store and its read of the count.
    _chaining_heavy_fence()
    ParkingLot.locks.wait(for: self) {
      word.compareExchange(expected: Self.free, desired: Self.taken, ordering: .acquiring).exchanged
    }
    _ = parked.wrappingSubtract(1, ordering: .relaxed)
  }

  /// Wakes the threads parked on this lock, after giving it back. Under
  /// the stripe's lock, which a parking thread holds from its try to its
  /// sleep.
  @inline(never)
  private func wakeParked() {
    ParkingLot.locks.withLock(self) { ParkingLot.locks.wakeAll(self) }
  }
  #endif
}
