#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

// MARK: - Thread identity

/// The identity and delivery depth of the calling thread.
///
/// Serializers record which thread is delivering so that a value re-entering
/// on that same thread can be told apart from a value sent by another thread.
enum CurrentThread {
  /// A nonzero number that identifies the calling thread while it runs.
  ///
  /// Two threads alive at the same time never share a number. A number may be
  /// reused after its thread ends, which is harmless here: a serializer clears
  /// its owner before the owning thread leaves the delivery.
  @inline(__always)
  static var id: UInt { bits(pthread_self()) }

  /// Whether the calling thread is inside a delivery (running a handler).
  static var isDelivering: Bool { pthread_getspecific(depthKey) != nil }

  /// Marks the calling thread as delivering until the matching `leave(_:)`.
  ///
  /// - Returns: The previous mark, to hand back to `leave(_:)`.
  @inline(__always)
  static func enter() -> UnsafeMutableRawPointer? {
    let previous = pthread_getspecific(depthKey)
    let depth = Int(bitPattern: previous) &+ 1
    pthread_setspecific(depthKey, UnsafeRawPointer(bitPattern: depth))
    return previous
  }

  /// Restores the mark that `enter()` returned.
  @inline(__always)
  static func leave(_ previous: UnsafeMutableRawPointer?) {
    pthread_setspecific(depthKey, previous)
  }

  @inline(__always)
  private static func bits(_ thread: UInt) -> UInt { thread }

  @inline(__always)
  private static func bits<T>(_ thread: UnsafeMutablePointer<T>) -> UInt { UInt(bitPattern: thread) }

  @inline(__always)
  private static func bits(_ thread: OpaquePointer) -> UInt { UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(thread))) }
}

/// The thread-local slot that counts how deeply the thread is nested in deliveries.
///
/// Created once, on first use; a global `let` is initialized exactly once.
private let depthKey: pthread_key_t = {
  var key = pthread_key_t()
  let status = pthread_key_create(&key, nil)
  precondition(status == 0, "Chaining: pthread_key_create failed with status \(status)")
  return key
}()
