#if canImport(Darwin)
import Darwin
#endif

// MARK: - Protected

/// A value guarded by a lock: all access goes through ``withLock(_:)``.
///
/// Unlike `Synchronization.Mutex`, the state may be non-`Swift.Sendable`
/// (values of a generic `T`, user closures): callers promise by
/// construction that it never leaves the lock unguarded. Never call out to
/// user code from inside `withLock`; the one documented exception is a
/// value holder's `==`.
///
/// ### The lock
/// On Apple platforms it is an `os_unfair_lock`, which donates the
/// waiter's priority to the owner. Elsewhere it is an atomic word of this
/// object: taking it free is one compare-and-swap, and giving it back one
/// exchange. `pthread_mutex_lock` and `pthread_mutex_unlock` do the same
/// atomic operations, behind a call and a check of the mutex's type each,
/// and need an allocation of their own; on a holder write, which takes
/// this lock once, that was a tenth of the time. A thread that finds the
/// lock taken spins briefly (the sections under it are a handful of
/// instructions), then parks in ``ParkingLot/locks``. Either lock is made
/// of operations the thread sanitizer understands (acquiring and releasing
/// atomics, or the platform's lock), so a missing lock still shows up in
/// the sanitizer run.
@usableFromInline
final class Protected<State>: @unchecked Swift.Sendable {
  // @unchecked: `state` is only reached through `withLock`.

  #if canImport(Darwin)
  /// The lock, in an allocation of its own so that its address never changes.
  @usableFromInline let lock: UnsafeMutablePointer<os_unfair_lock>
  #else
  /// The lock's word: `Self.free`, `Self.taken`, or `Self.contended`.
  /// Reached only through `lock`; must stay the first stored property.
  @usableFromInline var lockWord: UInt32 = 0

  /// The lock (see `AtomicReference`: "Where the word lives").
  @usableFromInline var lock: AtomicReference<UInt32> {
    @inline(__always) get { AtomicReference(in: self) }
  }
  #endif

  @usableFromInline @exclusivity(unchecked) var state: State

  @usableFromInline
  init(_ initial: State) {
    #if canImport(Darwin)
    lock = .allocate(capacity: 1)
    lock.initialize(to: os_unfair_lock())
    #endif
    state = initial
  }

  #if canImport(Darwin)
  deinit {
    lock.deinitialize(count: 1)
    lock.deallocate()
  }
  #endif

  /// Takes the lock, for a caller that must copy a generic value under it
  /// without a closure (whose captures of a generic type are looked up in
  /// the runtime's metadata caches on every call). Pair with `manualUnlock()`;
  /// prefer `withLock(_:)`.
  @inline(__always)
  func manualLock() {
    #if canImport(Darwin)
    os_unfair_lock_lock(lock)
    #else
    if !lock.compareExchange(expected: Self.free, desired: Self.taken, ordering: .acquiring).exchanged {
      lockContended()
    }
    #endif
  }

  /// Gives back the lock `manualLock()` took.
  @inline(__always)
  func manualUnlock() {
    #if canImport(Darwin)
    os_unfair_lock_unlock(lock)
    #else
    if lock.exchange(Self.free, ordering: .releasing) == Self.contended { wakeWaiters() }
    #endif
  }

  /// Runs `body` with exclusive access to the state and returns its result.
  @inlinable @inline(__always)
  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    #if canImport(Darwin)
    os_unfair_lock_lock(lock)
    defer { os_unfair_lock_unlock(lock) }
    #else
    if !lock.compareExchange(expected: Self.free, desired: Self.taken, ordering: .acquiring).exchanged {
      lockContended()
    }
    defer {
      if lock.exchange(Self.free, ordering: .releasing) == Self.contended { wakeWaiters() }
    }
    #endif
    return try body(&state)
  }

  #if !canImport(Darwin)
  /// Nobody holds the lock.
  @usableFromInline static var free: UInt32 { 0 }
  /// A thread holds the lock, and no thread has parked since it took it.
  @usableFromInline static var taken: UInt32 { 1 }
  /// A thread holds the lock, and threads may be parked: the one that
  /// gives it back wakes them.
  @usableFromInline static var contended: UInt32 { 2 }

  /// Takes the lock that a thread holds: spins a little, then parks.
  ///
  /// A parked thread marks the lock `contended` under its stripe's lock
  /// just before it sleeps, and the thread that then gives the lock back
  /// takes the same stripe's lock to wake it, so no wake is lost. A thread
  /// that takes the lock through parking keeps it marked `contended`: other
  /// threads may still be parked.
  @usableFromInline
  func lockContended() {
    for _ in 0..<100 {
      // Relaxed: only a hint that the lock looks free; the acquiring
      // compare-and-swap takes it.
      if lock.load(ordering: .relaxed) == Self.free,
        lock.compareExchange(expected: Self.free, desired: Self.taken, ordering: .acquiring).exchanged
      {
        return
      }
    }
    ParkingLot.locks.wait(for: self) {
      lock.exchange(Self.contended, ordering: .acquiring) == Self.free
    }
  }

  /// Wakes the threads parked on this lock, after giving it back.
  @usableFromInline
  func wakeWaiters() {
    ParkingLot.locks.withLock(self) { ParkingLot.locks.wakeAll(self) }
  }
  #endif
}
