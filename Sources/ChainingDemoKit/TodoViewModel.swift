import Observation

/// The screen's own state, kept the way SwiftUI code keeps it: an
/// `@Observable` class, not Chaining holders.
///
/// The console view shows ``title`` through a chain read with
/// `chain(_:on:)`, and the demo binds ``showsDone`` both ways to the list's
/// `showsDone` holder with `bind(to:_:on:)`. Observation tells a change
/// before it is stored, so Chaining reads the model again on a queue the
/// demo gives it, the same queue on which the demo writes the model.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable public final class TodoViewModel: @unchecked Swift.Sendable {
  // @unchecked: the stored properties are not guarded; the demo reads and
  // writes them on one serial queue only.

  /// The screen's title.
  public var title: String
  /// The screen's "show done" toggle.
  public var showsDone: Bool

  /// Creates a view model.
  public init(title: String, showsDone: Bool = true) {
    self.title = title
    self.showsDone = showsDone
  }
}
