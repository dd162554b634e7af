import Foundation

// MARK: - NotificationAdapter

/// Broadcasts the notifications a `NotificationCenter` posts under one name.
///
/// ```swift
/// let didSave = Notification.Name("DidSave")
/// let saves = NotificationAdapter(didSave)
/// let observer = saves.chain().map(\.name.rawValue).do { print("posted", $0) }.end()
/// NotificationCenter.default.post(name: didSave, object: nil)
/// // Prints "posted DidSave"
/// ```
///
/// The adapter observes the center from its creation until it is released
/// or ``invalidate()`` is called. Handlers run on the thread that posts,
/// synchronously inside `post`.
public final class NotificationAdapter: Sendable {
  /// The notifications, as chains receive them.
  public typealias ChainValue = Notification

  private let core = _SenderCore<Notification>()
  private let center: NotificationCenter
  private let token: any NSObjectProtocol
  /// Set by the first ``invalidate()``, so that the center is told once.
  private let stopped = Protected(false)

  /// Starts observing `name`.
  ///
  /// - Parameters:
  ///   - name: The notification name.
  ///   - object: Only notifications posted by this object, or any when `nil`.
  ///     The center holds it weakly or not at all, as for its own observers.
  ///   - center: The center to observe. Defaults to `NotificationCenter.default`.
  public init(_ name: Notification.Name, object: AnyObject? = nil, center: NotificationCenter = .default) {
    self.center = center
    let core = self.core
    token = center.addObserver(forName: name, object: object, queue: nil) { notification in
      core.broadcast(notification)
    }
  }

  deinit {
    invalidate()
    core.senderEnded()
  }

  /// Stops observing the center at once: a notification posted after this
  /// returns is not broadcast. Releasing the adapter does the same.
  ///
  /// Safe to call more than once, from any thread; chains started from the
  /// adapter stay subscribed and simply receive nothing more. A handler
  /// already running for a notification posted before finishes.
  public func invalidate() {
    // Acquiring and releasing: the one call that flips it tells the center.
    let wasStopped = stopped.withLock { stopped in
      defer { stopped = true }
      return stopped
    }
    guard !wasStopped else { return }
    center.removeObserver(token)
  }

  /// The stored core of this adapter. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Notification>? {
    core
  }
}

// @unchecked: the adapter's state is constant after init but for `stopped`,
// which is atomic; the core guards itself.
extension NotificationAdapter: @unchecked Swift.Sendable {}
