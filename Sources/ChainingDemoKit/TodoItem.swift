import Chaining

/// One to-do: its own holders for the title and the done flag.
///
/// The item is itself a sender (Chaining's `Sendable`): it broadcasts `()`
/// whenever its title or done flag changes, so a `RelayableArrayHolder` of
/// items relays every edit to the list's observers.
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
    self.title.chain().replaceWithVoid().sendTo(changes).end().addTo(pool)
    self.isDone.chain().replaceWithVoid().sendTo(changes).end().addTo(pool)
  }

  /// Re-broadcasts the holders' changes as the item's own.
  private let changes = Notifier<Void>()

  /// The core of the item's changes. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Void>? {
    changes._senderCore(creating: creating)
  }
}
