#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

// MARK: - Protected

/// A value guarded by a lock: all access goes through ``withLock(_:)``.
///
/// The lock is the platform's own (`os_unfair_lock` on Apple platforms, a
/// `pthread_mutex_t` elsewhere), in an allocation of its own so that its
/// address never changes. These are the primitives the thread sanitizer
/// understands, so a missing lock shows up in the sanitizer run. Unlike
/// `Synchronization.Mutex`, the state may be non-`Swift.Sendable` (values of
/// a generic `T`, user closures): callers promise by construction that it
/// never leaves the lock unguarded. Never call out to user code from inside
/// `withLock`; the one documented exception is a value holder's `==`.
@usableFromInline
final class Protected<State>: @unchecked Swift.Sendable {
  // @unchecked: `state` is only reached through `withLock`.
  @usableFromInline let lock: UnsafeMutablePointer<PlatformLock.Primitive>
  @usableFromInline @exclusivity(unchecked) var state: State

  @usableFromInline
  init(_ initial: State) {
    lock = .allocate(capacity: 1)
    PlatformLock.initialize(lock)
    state = initial
  }

  deinit {
    PlatformLock.destroy(lock)
    lock.deallocate()
  }

  /// Runs `body` with exclusive access to the state and returns its result.
  @inlinable @inline(__always)
  func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    PlatformLock.lock(lock)
    defer { PlatformLock.unlock(lock) }
    return try body(&state)
  }
}

/// The platform's lock primitive.
@usableFromInline
enum PlatformLock {
  #if canImport(Darwin)
  @usableFromInline typealias Primitive = os_unfair_lock

  @usableFromInline static func initialize(_ lock: UnsafeMutablePointer<Primitive>) {
    lock.initialize(to: os_unfair_lock())
  }

  @usableFromInline static func destroy(_ lock: UnsafeMutablePointer<Primitive>) {
    lock.deinitialize(count: 1)
  }

  @inlinable @inline(__always)
  static func lock(_ lock: UnsafeMutablePointer<Primitive>) {
    os_unfair_lock_lock(lock)
  }

  @inlinable @inline(__always)
  static func unlock(_ lock: UnsafeMutablePointer<Primitive>) {
    os_unfair_lock_unlock(lock)
  }
  #else
  @usableFromInline typealias Primitive = pthread_mutex_t

  @usableFromInline static func initialize(_ lock: UnsafeMutablePointer<Primitive>) {
    lock.initialize(to: pthread_mutex_t())
    let status = pthread_mutex_init(lock, nil)
    precondition(status == 0, "Chaining: pthread_mutex_init failed with status \(status)")
  }

  @usableFromInline static func destroy(_ lock: UnsafeMutablePointer<Primitive>) {
    pthread_mutex_destroy(lock)
    lock.deinitialize(count: 1)
  }

  @inlinable @inline(__always)
  static func lock(_ lock: UnsafeMutablePointer<Primitive>) {
    let status = pthread_mutex_lock(lock)
    precondition(status == 0, "Chaining: pthread_mutex_lock failed with status \(status)")
  }

  @inlinable @inline(__always)
  static func unlock(_ lock: UnsafeMutablePointer<Primitive>) {
    let status = pthread_mutex_unlock(lock)
    precondition(status == 0, "Chaining: pthread_mutex_unlock failed with status \(status)")
  }
  #endif
}
