import Observation

// MARK: - ComputedObservation

/// A computed value's Observation registrar, on systems with Observation
/// (iOS 17, macOS 14 and later): a ``RegisteringComputedObservation``;
/// before them, an object that tells nobody. Reads and changes name this
/// object, so that the walk can retain it without the value (see
/// `ComputedGraph`). A tracking is told by the registrar, whatever the
/// subject.
class ComputedObservation: @unchecked Swift.Sendable {
  // @unchecked: no state here; the subclass's registrar is `Swift.Sendable`.

  /// A new object: with a registrar where the system has Observation.
  static func make() -> ComputedObservation {
    if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
      return RegisteringComputedObservation()
    }
    return ComputedObservation()
  }

  /// Registers a read with the tracking in progress on this thread.
  func access() {}

  /// Tells the trackings that read the value that it changed.
  func changed() {}
}

/// A ``ComputedObservation`` with Observation's registrar.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class RegisteringComputedObservation: ComputedObservation, Observable, @unchecked Swift.Sendable {
  // @unchecked: the registrar is `Swift.Sendable`, and `value` is never
  // stored.

  let registrar = ObservationRegistrar()
  /// What reads and changes name.
  var value: Void { () }
  /// `\.value`, made once: a key path literal is looked up on every use.
  /// Unchecked: a key path is immutable.
  nonisolated(unsafe) static let keyPath: KeyPath<RegisteringComputedObservation, Void> = \.value

  override func access() {
    registrar.access(self, keyPath: Self.keyPath)
  }

  override func changed() {
    registrar.willSet(self, keyPath: Self.keyPath)
    registrar.didSet(self, keyPath: Self.keyPath)
  }
}
