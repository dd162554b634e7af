#if canImport(Darwin)
import Darwin
#endif

// MARK: - Protected

/// A value guarded by a lock: all access goes through ``withLock(_:)``.
///
/// Unlike `Synchronization.Mutex`, the state may be non-`Swift.Sendable`
/// (values of a generic `T`, user closures): callers promise by
/// construction that it never leaves the lock unguarded. Never call out to
/// user code from inside `withLock`, except through `callingOut(_:_:)`: a
/// value holder's `==` and a property adapter's accessors.
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

  #if CHAINING_INTERNAL_CHECKS
  /// Checks the state at the end of every section under the lock, before
  /// giving it back: in builds with `CHAINING_INTERNAL_CHECKS` only, which
  /// a step of `.ci/run` runs the tests in (see `_SenderCore`'s
  /// `_invariantCheck`). Set once, before the lock is shared.
  @usableFromInline @exclusivity(unchecked) var invariant: ((State) -> Void)?
  #endif

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

  // MARK: Code of the user's under the lock

  /// Runs `body`, code of the user's (`call`) that must run under this
  /// lock, which the caller holds: a holder's `==`, a property adapter's
  /// accessors. Where that code calls back into the same object, the
  /// thread would take this lock again: the Linux lock would wait for
  /// ever and `os_unfair_lock` trap with a message of its own. Instead,
  /// the thread's context records the lock and the call while `body`
  /// runs, and a thread that finds the lock taken (`lockContended()`)
  /// stops with a precondition naming the call when the lock is its own.
  /// The record costs a load and two stores to the thread's context;
  /// only the contended path reads it. The enclosing record, of another
  /// lock, is put back after `body`. Thread-local only, so no model: a
  /// thread reads its own record. `CalloutTests` checks the record, and
  /// the message for a holder's `==` and a property adapter's observer.
  ///
  /// A lock's address is that of a Swift object, aligned to at least 8
  /// bytes (16 on Apple platforms and 64-bit Linux), so the record is one
  /// word: the address, with the call in its three low bits.
  @inlinable @inline(__always)
  func callingOut<Result>(_ call: Callout, _ body: () throws -> Result) rethrows -> Result {
    let (context, enclosing) = call.begin(under: calloutAddress)
    defer { context.pointee.callout = enclosing }
    return try body()
  }

  /// This lock's address, as `callout` records it.
  @inlinable @inline(__always)
  var calloutAddress: UInt { UInt(bitPattern: Unmanaged.passUnretained(self).toOpaque()) }

  /// Stops with a message when the calling thread holds this lock while it
  /// runs code of the user's that called back into it (see `callingOut`).
  /// Called when the lock is found taken, before waiting.
  @usableFromInline
  func checkNotCalledBack() {
    let callout = DeliveryContext.current.state.pointee.callout
    guard callout & ~0b111 == calloutAddress else { return }
    let call = Callout(rawValue: callout & 0b111).map(\.description) ?? "Code run under a lock of the library"
    // fatalError, not preconditionFailure: its message is kept in optimized builds.
    fatalError("\(call).")
  }

  /// Runs `body` with exclusive access to the state and returns its result.
  @inlinable @inline(__always)
  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    #if canImport(Darwin)
    if !os_unfair_lock_trylock(lock) { lockContended() }
    defer { os_unfair_lock_unlock(lock) }
    #else
    if !lock.compareExchange(expected: Self.free, desired: Self.taken, ordering: .acquiring).exchanged {
      lockContended()
    }
    defer {
      if lock.exchange(Self.free, ordering: .releasing) == Self.contended { wakeWaiters() }
    }
    #endif
    #if CHAINING_INTERNAL_CHECKS
    let result = try body(&state)
    invariant?(state)
    return result
    #else
    return try body(&state)
    #endif
  }

  #if canImport(Darwin)
  /// Takes the lock that a thread holds, after checking that it is not
  /// this one, called back (see `callingOut`).
  @usableFromInline
  func lockContended() {
    checkNotCalledBack()
    os_unfair_lock_lock(lock)
  }
  #else
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
    checkNotCalledBack()
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

// MARK: - Callout

/// The code of the user's that the library runs under a lock.
@usableFromInline
enum Callout: UInt {
  /// A holder's comparison of its old and new values.
  case equality = 1
  /// A `PropertyAdapter`'s read or write of its object's property.
  case propertyAccess = 2
  /// `Equatable` values compared by a `PropertyAdapter`.
  case propertyEquality = 3
  /// A closure an array holder runs on its elements under its lock
  /// (`modify`, `removeAll(where:)`, `update(id:_:)`), or the `==` or `id`
  /// of its elements.
  case arrayClosure = 4
  /// The filter or the comparison of a ``DerivedArrayHolder``, which runs
  /// under the view's lock.
  case viewClosure = 5
  /// A closure a dictionary holder runs on its entries under its lock
  /// (`modify`), or the `==` of its values.
  case dictionaryClosure = 6

  /// What the message of a call back into the lock says.
  var description: String {
    switch self {
    case .equality:
      "The `==` of a holder's value type read or wrote that holder. It runs under the holder's lock, while a write "
        + "compares the new value with the current one: compare the two values only"
    case .propertyAccess:
      "A property read or written through a `PropertyAdapter` (its getter, setter or observers) read or wrote "
        + "the adapter. They run under the adapter's lock: change the object through the adapter from outside them"
    case .propertyEquality:
      "The `==` of a `PropertyAdapter`'s value type read or wrote the adapter. It runs under the adapter's lock, "
        + "while a write compares the new value with the property's: compare the two values only"
    case .arrayClosure:
      "A closure passed to an array holder's modify(_:), removeAll(where:) or update(id:_:), or the `==` or `id` "
        + "of its elements, read or wrote that holder. They run under the holder's lock, so that the change is "
        + "made in one step: change the elements they are given only"
    case .dictionaryClosure:
      "A closure passed to a dictionary holder's modify(_:), or the `==` of its values, read or wrote that holder. "
        + "They run under the holder's lock, so that the change is made in one step: change the entries they are "
        + "given only"
    case .viewClosure:
      "The filter or the comparison of a filtered or sorted array view read that view. They run under the view's "
        + "lock, while it takes in a change of its source: decide from the elements they are given, and from other "
        + "holders, only"
    }
  }

  /// Records this call as running under the lock at `address` (see
  /// `Protected.callingOut(_:_:)`), for a caller that cannot pass a
  /// closure (one capturing generic values costs metadata lookups on
  /// every call) or that reaches the lock only unretained. Returns what
  /// to put back, after the call, into the context's `callout`.
  @inlinable @inline(__always)
  func begin(under address: UInt) -> (UnsafeMutablePointer<DeliveryContext.State>, enclosing: UInt) {
    let context = DeliveryContext.current.state
    let enclosing = context.pointee.callout
    context.pointee.callout = address | rawValue
    return (context, enclosing)
  }
}
