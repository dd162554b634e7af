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
/// ### Biased to the thread that takes it
/// Most programs use their computed values from one thread at a time,
/// and each compare-and-swap that takes the lock costs that thread about
/// 5 ns here, a dozen plain instructions' worth (a write through a chain
/// of 50 computed values takes the lock 53 times). So, where the heavy
/// fence is `membarrier`, the lock is biased to a thread that took it
/// `biasThreshold` times in a row: that thread then takes it with plain
/// stores, and another thread takes the bias away before it takes the
/// lock.
///
/// - Each thread the lock was ever biased to has a hold word of its own
///   (`BiasWords`, the thread's `DeliveryContext.State.holdWord`), and
///   `bias` holds the address of the biased thread's, or 0.
/// - The biased thread stores 1 in its hold word, runs the light fence,
///   and reads `bias` again: still its own, it holds the lock; otherwise
///   it stores 0 and takes `word` as any thread does. It gives the lock
///   back by storing 0 in its hold word (releasing).
/// - Any other thread takes `word` (its compare-and-swap, and parking, as
///   above), then reads `bias`, which only a holder of `word` writes. Not
///   0, it stores 0 there, runs the heavy fence, and waits until the hold
///   word `bias` named is 0 (acquiring), spinning, then yielding its
///   processor: the biased thread's hold is short, as every hold of this
///   lock is. Then it holds the lock.
/// - The pair of fences makes the two meet, as between the release and a
///   parking thread: either the biased thread's second read of `bias`
///   sees the 0, or the taking thread's read of the hold word sees the 1.
///   What is written under the lock passes from the biased thread to the
///   other through the hold word (a releasing store, an acquiring load),
///   and back through `word`, which the biased thread takes again.
/// - Hold words are per thread because a thread whose bias was taken away
///   between its two reads of `bias` stores 0 in its word when it backs
///   off: in one word shared by all, that 0 could land over the 1 of the
///   thread biased since, whose hold a third take of `word` would then
///   not wait for (`GraphLockTests` lost increments so).
/// - A thread that takes `word` `biasThreshold` times in a row sets `bias`
///   to its hold word, in that hold. Each time the bias is taken away,
///   the count a thread needs doubles (up to `maximumBiasThreshold`), so
///   threads that take turns pay the heavy fence (about 10 µs here, with
///   another thread running) rarely, and never more than once per
///   `biasThreshold` holds.
///
/// `Verification/GraphLockBias.pml` models the stores waiting in store
/// buffers: spin finds two threads holding the lock at once without the
/// heavy fence, without the biased thread's second read, without the
/// wait for the hold word, and with one hold word for every thread.
/// `GraphLockTests` checks that a thread taking the bias waits for the
/// biased thread's hold (without the wait, it failed 3 rounds of 3), and
/// counts under the lock on two threads that take the bias from each
/// other. Where the heavy fence is a full fence of the calling thread
/// only (no `membarrier`, or `CHAINING_SYMMETRIC_FENCES`), nothing is
/// biased: the light fence would cost what the compare-and-swap does.
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
  /// With them, `bias` (see "Biased to the thread that takes it").
  var words: (word: UInt32, parked: UInt32, bias: Int) = (0, 0, 0)

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

  /// The address of the hold word of the thread the lock is biased to
  /// (see `BiasWords`), or 0; written only with `word` taken.
  var bias: AtomicReference<Int> {
    @inline(__always) get { AtomicReference(in: self, offset: 2 * MemoryLayout<UInt32>.stride) }
  }

  // Under the lock:
  /// The hold word through which the holder holds the lock (its
  /// address), or 0 when it holds `word`.
  @exclusivity(unchecked) private var heldThrough = 0
  /// The thread that took `word` last, and how many times in a row.
  @exclusivity(unchecked) private var lastTaker = 0
  @exclusivity(unchecked) private var takesInARow = 0
  /// How many times in a row a thread takes `word` before the lock is
  /// biased to it: `biasThreshold` at first, doubled each time the bias
  /// is taken away, up to `maximumBiasThreshold`.
  @exclusivity(unchecked) private var threshold = GraphLock.biasThreshold
  /// How many times the bias was taken away (for the tests).
  @exclusivity(unchecked) private(set) var revocations = 0

  /// How many times in a row a thread takes the lock, at first, before it
  /// is biased to that thread.
  static var biasThreshold: Int { 64 }
  static var maximumBiasThreshold: Int { 1 << 20 }
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
    lock(runner: DeliveryContext.current.runner)
    #endif
  }

  /// Takes the lock on the thread `runner` (the caller's).
  @inline(__always)
  func lock(runner: Int) {
    #if canImport(Darwin)
    os_unfair_lock_lock(unfairLock)
    #else
    let own = DeliveryContext.state(runner: runner).pointee.holdWord
    if bias.load(ordering: .relaxed) == own {
      // Biased to this thread: held unless another thread takes the bias
      // away meanwhile (see "Biased to the thread that takes it"). The
      // second read acquires, so that the holder's reads stay after it.
      let held = BiasWords.word(at: own)
      held.store(1, ordering: .relaxed)
      // The light fence, a compiler barrier: a lock is biased only where
      // the heavy fence is `membarrier`.
      _chaining_light_fence_asymmetric()
      if bias.load(ordering: .acquiring) == own {
        heldThrough = own
        return
      }
      held.store(0, ordering: .releasing)
    }
    lockWord(runner: runner)
    #endif
  }

  /// Gives the lock back.
  @inline(__always)
  func unlock() {
    #if canImport(Darwin)
    os_unfair_lock_unlock(unfairLock)
    #else
    if heldThrough != 0 {
      let held = BiasWords.word(at: heldThrough)
      heldThrough = 0
      held.store(0, ordering: .releasing)
    } else {
      unlockWord()
    }
    #endif
  }

  #if !canImport(Darwin)
  /// Takes `word`, on the thread `runner`, and looks at the bias (see
  /// `tookWord(runner:)`). Out of line, as is `unlockWord()`: inlined,
  /// with the bias's path beside them, they made callers large enough
  /// that the optimizer stopped inlining others into them (a write
  /// through one computed value with a chain took 130 instructions more,
  /// callgrind); a thread the lock is biased to rarely comes here.
  @inline(never)
  private func lockWord(runner: Int) {
    if !word.compareExchange(expected: Self.free, desired: Self.taken, ordering: .acquiring).exchanged {
      lockContended()
    }
    // A load and two compares, then nothing, once a thread that keeps the
    // lock to itself has counted to its bias, or on a machine that never
    // biases (where the count stops at the threshold).
    if bias.load(ordering: .relaxed) != 0 || lastTaker != runner || takesInARow < threshold {
      tookWord(runner: runner)
    }
  }

  /// Gives `word` back.
  @inline(never)
  private func unlockWord() {
    // A lock given back twice would let two threads in: checked in debug
    // builds (`ComputedTests`' questions asked in one hold).
    assert(word.load(ordering: .relaxed) == Self.taken, "GraphLock.unlock(): the lock is not taken")
    word.store(Self.free, ordering: .releasing)
    // The store before the read of `parked`: a compiler barrier, as a
    // parking thread runs the heavy fence (see above).
    _chaining_light_fence()
    if parked.load(ordering: .relaxed) != 0 { wakeParked() }
  }
  #endif

  /// Runs `body` with the lock taken, on the walk's stack.
  @inline(__always)
  func withLock<Result>(_ body: (inout NodeList) -> Result) -> Result {
    lock()
    defer { unlock() }
    return body(&stack)
  }

  /// `withLock(_:)` on the thread `runner` (the caller's).
  @inline(__always)
  func withLock<Result>(runner: Int, _ body: (inout NodeList) -> Result) -> Result {
    lock(runner: runner)
    defer { unlock() }
    return body(&stack)
  }

  /// Whether the lock is biased to the thread `runner` (for the tests).
  func isBiased(to runner: Int) -> Bool {
    #if canImport(Darwin)
    false
    #else
    bias.load(ordering: .relaxed) == DeliveryContext.state(runner: runner).pointee.holdWord
    #endif
  }

  #if !canImport(Darwin)
  /// After `word` is taken by the thread `runner`: takes the bias away
  /// from the thread that has it, or counts this take, and biases the
  /// lock to this thread at its threshold (see "Biased to the thread that
  /// takes it"). Under `word`.
  @inline(never)
  private func tookWord(runner: Int) {
    let biased = bias.load(ordering: .relaxed)
    if biased != 0 {
      // Relaxed: the heavy fence orders it before the read of the hold
      // word, and makes the biased thread's second read see it if that
      // read comes after (`Verification/GraphLockBias.pml`).
      bias.store(0, ordering: .relaxed)
      _chaining_heavy_fence()
      let held = BiasWords.word(at: biased)
      var looks = 0
      while held.load(ordering: .acquiring) != 0 {
        looks += 1
        if looks > 100 { yieldProcessor() }
      }
      revocations += 1
      threshold = Swift.min(threshold * 2, Self.maximumBiasThreshold)
      lastTaker = runner
      takesInARow = 1
      return
    }
    if lastTaker != runner {
      lastTaker = runner
      takesInARow = 1
      return
    }
    guard takesInARow < threshold else { return }
    takesInARow += 1
    guard takesInARow == threshold, _chaining_fences_are_asymmetric() != 0 else { return }
    // Stored under `word`: the next thread to take `word` reads it there,
    // and takes the bias away.
    let state = DeliveryContext.state(runner: runner)
    if state.pointee.holdWord == BiasWords.none { state.pointee.holdWord = BiasWords.take() }
    bias.store(state.pointee.holdWord, ordering: .relaxed)
  }

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

#if !canImport(Darwin)
// MARK: - BiasWords

/// The hold words of threads that graph locks are biased to: one per
/// thread, taken when a lock is first biased to it
/// (`DeliveryContext.State.holdWord`), 1 while the thread holds a lock
/// through its bias. Each in a cache line of its own, written by its
/// thread alone (a stale write from a thread whose bias was taken away
/// lands in its own word, not in the word of the thread biased now).
///
/// Never freed: a thread that takes a bias away reads the word of the
/// thread the lock was biased to, which may have ended since. A thread
/// that ends gives its word back (with 0 in it) for a later thread to
/// take; a lock still biased to it is then biased to that thread, which
/// is as safe as any bias: one live thread at a time has the word.
enum BiasWords {
  /// No hold word (a thread that never had a bias).
  static var none: Int { -1 }

  /// The words given back by threads that ended.
  private static let spare = Protected<[Int]>([])

  /// The word at `address`.
  @inline(__always)
  static func word(at address: Int) -> AtomicReference<UInt32> {
    AtomicReference(at: UnsafeMutablePointer(bitPattern: address).unsafelyUnwrapped)
  }

  /// A word for the calling thread: a spare one, or a new one.
  static func take() -> Int {
    if let address = spare.withLock({ $0.popLast() }) { return address }
    let line = 64
    let memory = UnsafeMutableRawPointer.allocate(byteCount: line, alignment: line)
    memory.initializeMemory(as: UInt8.self, repeating: 0, count: line)
    return Int(bitPattern: memory)
  }

  /// Gives back the word of a thread that ends.
  static func giveBack(_ address: Int) {
    spare.withLock { $0.append(address) }
  }
}
#endif
