// MARK: - Relay

/// An element of a relaying holder, with the observer that relays its broadcasts.
///
/// A relaying holder stores one relay per element it holds (per position:
/// the same object stored twice has two relays). The observer's handler
/// holds the relay and the holder weakly, so nothing here keeps either
/// alive; releasing the relay invalidates the observer.
final class Relay<Element: Sendable, Key>: @unchecked Swift.Sendable {
  // @unchecked: `element` and `key` are constants; `observer` is set once,
  // before the relay is stored in the holder, and read after it leaves it.
  let element: Element
  let key: Key
  private(set) var observer: Observer?

  /// Creates the relay and starts relaying: `forward` receives each of the
  /// element's broadcasts, with this relay.
  init(_ element: Element, key: Key, forward: @escaping (Element.ChainValue, Relay) -> Void) {
    self.element = element
    self.key = key
    observer = element.chain().do { [weak self] value in
      if let self { forward(value, self) }
    }.end()
  }

  /// Stops relaying. Called after the relay left its holder, outside its lock.
  func stop() {
    observer?.invalidate()
  }
}

extension Sequence {
  /// Stops every relay in a sequence of relays that left their holder.
  func stopRelays<Element, Key>() where Self.Element == Relay<Element, Key> {
    for relay in self { relay.stop() }
  }
}
