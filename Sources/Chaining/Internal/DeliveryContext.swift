#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(Android)
import Android
#endif

// MARK: - DeliveryContext

/// What the calling thread is delivering: one context per thread, never shared.
///
/// - `depth` counts the chains this thread is running right now. `invalidate()`
///   uses it to avoid waiting while the thread is itself inside a handler.
/// - `causes` lists the chains the value being delivered has already passed
///   through. A value that reaches a chain on that list is an echo of that
///   chain's own delivery (a binding loop) and is dropped. When a value is
///   queued for another thread, its causes travel with it, so a loop that
///   crosses threads is broken the same way as one on a single thread.
@usableFromInline
final class DeliveryContext {
  @usableFromInline @exclusivity(unchecked) var depth = 0
  /// Unretained: each is kept alive by the delivery it belongs to, or by the
  /// queued item whose causes were installed.
  @usableFromInline @exclusivity(unchecked) var causes: [Unmanaged<DeliveryGate>] = []

  @usableFromInline
  init() {}

  /// The calling thread's context, created on first use and released when
  /// the thread ends.
  @inlinable @inline(__always)
  static var current: DeliveryContext {
    if let raw = pthread_getspecific(contextKey) {
      return Unmanaged<DeliveryContext>.fromOpaque(raw).takeUnretainedValue()
    }
    let context = DeliveryContext()
    pthread_setspecific(contextKey, Unmanaged.passRetained(context).toOpaque())
    return context
  }

  /// Whether `gate` is among the causes of the value being delivered.
  @inlinable @inline(__always)
  func isCaused(by gate: DeliveryGate) -> Bool {
    if causes.isEmpty { return false }
    let target = Unmanaged.passUnretained(gate).toOpaque()
    return causes.contains { $0.toOpaque() == target }
  }

  /// The causes, retained, for a value that is queued for later.
  @usableFromInline
  func capture() -> Causes {
    Causes(gates: causes.map { $0.takeUnretainedValue() })
  }

  /// Runs `body` with `causes` (plus `gate`, when given) installed, then
  /// restores the thread's own causes.
  @inlinable @inline(__always)
  func run(with causes: Causes, adding gate: DeliveryGate? = nil, _ body: () -> Void) {
    let saved = self.causes
    self.causes = causes.gates.map { Unmanaged.passUnretained($0) }
    if let gate { self.causes.append(Unmanaged.passUnretained(gate)) }
    body()
    self.causes = saved
    withExtendedLifetime(causes) {}
  }
}

/// The chains a queued value had passed through when it was queued.
///
/// @unchecked: created by the queuing thread, read once by the delivering
/// thread after the hand-over through a lock.
@usableFromInline
struct Causes: @unchecked Swift.Sendable {
  @usableFromInline let gates: [DeliveryGate]

  @usableFromInline
  init(gates: [DeliveryGate]) {
    self.gates = gates
  }
}

/// The thread-local slot of `DeliveryContext.current`; created once.
@usableFromInline let contextKey: pthread_key_t = {
  var key = pthread_key_t()
  let status = pthread_key_create(&key, releaseContext)
  precondition(status == 0, "Chaining: pthread_key_create failed with status \(status)")
  return key
}()

#if canImport(Darwin)
private func releaseContext(_ raw: UnsafeMutableRawPointer) {
  Unmanaged<DeliveryContext>.fromOpaque(raw).release()
}
#else
private func releaseContext(_ raw: UnsafeMutableRawPointer?) {
  if let raw { Unmanaged<DeliveryContext>.fromOpaque(raw).release() }
}
#endif
