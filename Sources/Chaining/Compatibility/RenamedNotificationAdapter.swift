// MARK: - SwiftChaining's NotificationAdapter initializer (deprecated)

// SwiftChaining 0.5.36's labels for `NotificationAdapter.init`, kept as a
// deprecated forwarding initializer (see Renamed.swift). In a file of its
// own: it wraps Foundation's `NotificationCenter`, the one reason a file of
// the library imports Foundation.

import Foundation

extension NotificationAdapter {
  /// Starts observing `name` in `notificationCenter`. SwiftChaining's
  /// labels; see ``init(_:object:center:)``.
  ///
  /// - Parameters:
  ///   - name: The notification name.
  ///   - object: Only notifications posted by this object, or any when `nil`.
  ///   - notificationCenter: The center to observe.
  @available(*, deprecated, renamed: "init(_:object:center:)")
  public convenience init(_ name: Notification.Name, object: AnyObject?, notificationCenter: NotificationCenter) {
    self.init(name, object: object, center: notificationCenter)
  }
}
