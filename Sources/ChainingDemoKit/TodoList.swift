import Chaining

/// The model: the items, and what the screen derives from them.
public final class TodoList: Swift.Sendable {
  /// The items; each item's edits are relayed as `.relayed` events.
  public let items = RelayableArrayHolder<TodoItem>()
  /// Whether the view shows done items.
  public let showsDone = ValueHolder(true)
  /// How many items are not done, kept up to date from `items`.
  public let remaining = ValueHolder(0)
  private let pool = ObserverPool()

  /// Creates an empty list.
  public init() {
    items.chain().map { [weak self] _ in self?.countRemaining() ?? 0 }.sendTo(remaining).sync().addTo(pool)
  }

  /// Adds a to-do at the end.
  public func add(_ title: String) {
    items.append(TodoItem(title))
  }

  private func countRemaining() -> Int {
    items.raw.filter { !$0.isDone.value }.count
  }
}
