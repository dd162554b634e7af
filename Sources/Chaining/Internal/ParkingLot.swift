#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

// MARK: - ParkingLot

/// A fixed table of locks and condition variables shared by all objects:
/// the slow path of objects too numerous to own a lock each.
///
/// A delivery gate takes no lock on the common path (one atomic
/// compare-and-swap to claim, a store to release), and locks only to queue
/// a value, run the queue or wait for a run to end; a sender core locks one only to wait for, or wake, an
/// `invalidate()`. A `pthread_mutex_t` and a `pthread_cond_t` of their own
/// would add about 100 bytes and two allocations to every binding, for
/// locks that are rarely taken. So each object is mapped by its address to
/// one of a fixed number of stripes, and takes that stripe's lock instead.
/// Two objects may share a stripe; that only makes them wait for each
/// other's few instructions under the lock, never for each other's user
/// code, because a stripe is never held while user code runs or while
/// another stripe of the same table is taken. (The one lock taken under a
/// stripe is a sender core's own, in `awaitRunAlone`; no stripe of
/// ``shared`` is taken under that one.) A thread waiting on a
/// stripe's condition may be woken for another object's change; every wait
/// rechecks its own condition.
///
/// There are two tables. ``shared`` serves the gates and cores. ``locks``
/// serves only the waiters of `Protected`'s lock, and nothing is taken
/// under its stripes: a thread may take a `Protected` lock while holding a
/// ``shared`` stripe (a core's check in `awaitRunAlone`), and would
/// deadlock if it then parked on that same stripe.
///
/// This is the idea of WebKit's and Rust's "parking lot", without the
/// per-thread queues: these locks are held for a handful of instructions.
struct ParkingLot: @unchecked Swift.Sendable {
  // @unchecked: the stripes are initialized once, then only used through
  // their own mutexes.

  /// The table of the delivery gates and sender cores.
  static let shared = ParkingLot()
  /// The table of `Protected`'s waiting threads.
  static let locks = ParkingLot()

  /// The number of stripes: a power of two.
  private static let count = 64

  /// Bytes from one stripe (a mutex, then a condition variable) to the
  /// next, rounded up to whole cache lines so that two stripes never share one.
  private static let stride =
    (MemoryLayout<pthread_mutex_t>.stride + MemoryLayout<pthread_cond_t>.size + 127) & ~127

  /// The stripes, created once and never freed.
  private let stripes: UnsafeMutableRawPointer

  private init() {
    let memory = UnsafeMutableRawPointer.allocate(byteCount: Self.count * Self.stride, alignment: 128)
    for index in 0..<Self.count {
      let stripe = Stripe(memory + index * Self.stride)
      stripe.mutex.initialize(to: pthread_mutex_t())
      stripe.condition.initialize(to: pthread_cond_t())
      var status = pthread_mutex_init(stripe.mutex, nil)
      precondition(status == 0, "Chaining: pthread_mutex_init failed with status \(status)")
      status = pthread_cond_init(stripe.condition, nil)
      precondition(status == 0, "Chaining: pthread_cond_init failed with status \(status)")
    }
    stripes = memory
  }

  /// One stripe's mutex and condition variable.
  private struct Stripe {
    let mutex: UnsafeMutablePointer<pthread_mutex_t>
    let condition: UnsafeMutablePointer<pthread_cond_t>

    init(_ base: UnsafeMutableRawPointer) {
      mutex = base.bindMemory(to: pthread_mutex_t.self, capacity: 1)
      condition = (base + MemoryLayout<pthread_mutex_t>.stride).bindMemory(to: pthread_cond_t.self, capacity: 1)
    }

    func lock() {
      let status = pthread_mutex_lock(mutex)
      precondition(status == 0, "Chaining: pthread_mutex_lock failed with status \(status)")
    }

    func unlock() {
      let status = pthread_mutex_unlock(mutex)
      precondition(status == 0, "Chaining: pthread_mutex_unlock failed with status \(status)")
    }
  }

  /// The stripe of `object`.
  private func stripe(of object: AnyObject) -> Stripe {
    // The address itself: `hashValue` would run a SipHash on every lock.
    let address = UInt(bitPattern: ObjectIdentifier(object))
    // Objects are at least 16-byte aligned; mix in higher bits so that
    // objects allocated one after the other spread over the stripes.
    let index = Int(truncatingIfNeeded: (address >> 4) ^ (address >> 10)) & (Self.count - 1)
    return Stripe(stripes + index * Self.stride)
  }

  /// Runs `body` while holding the lock of `object`'s stripe.
  ///
  /// `body` must not run user code, take another lock, or release the last
  /// reference to an object (a `deinit` could do either).
  func withLock<Result>(_ object: AnyObject, _ body: () throws -> Result) rethrows -> Result {
    let stripe = stripe(of: object)
    stripe.lock()
    defer { stripe.unlock() }
    return try body()
  }

  /// Waits, holding the lock of `object`'s stripe, until `isDone` returns true.
  ///
  /// `isDone` is checked under the lock; whoever makes it true must call
  /// ``wakeAll(_:)`` while holding the same stripe's lock.
  func wait(for object: AnyObject, until isDone: () -> Bool) {
    let stripe = stripe(of: object)
    stripe.lock()
    while !isDone() {
      let status = pthread_cond_wait(stripe.condition, stripe.mutex)
      precondition(status == 0, "Chaining: pthread_cond_wait failed with status \(status)")
    }
    stripe.unlock()
  }

  /// Wakes every thread waiting on `object`'s stripe; call it under that stripe's lock.
  func wakeAll(_ object: AnyObject) {
    pthread_cond_broadcast(stripe(of: object).condition)
  }
}
