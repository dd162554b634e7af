import Chaining

/// One to-do: its own holders for the title and the done flag.
///
/// The item is itself a sender (Chaining's `Sendable`, with nothing to
/// store): it broadcasts `()` whenever its title or done flag changes, so a
/// `RelayableArrayHolder` of items relays every edit to the list's
/// observers. It keeps the bindings that do this in a pool of its own.
public final class TodoItem: Chaining.Sendable, Swift.Sendable {
  /// Broadcast `()` on every change.
  public typealias ChainValue = Void

  /// The title.
  public let title: ValueHolder<String>
  /// Whether the to-do is done.
  public let isDone: ValueHolder<Bool>
  private let pool = ObserverPool()

  /// Creates an item.
  public init(_ title: String, isDone: Bool = false) {
    self.title = ValueHolder(title)
    self.isDone = ValueHolder(isDone)
    self.title.chain().do { [weak self] _ in self?.broadcast(value: ()) }.end().addTo(pool)
    self.isDone.chain().do { [weak self] _ in self?.broadcast(value: ()) }.end().addTo(pool)
  }
}
