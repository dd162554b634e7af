import Chaining

/// A console "view" of a `TodoList`: it writes a line for everything it shows.
public final class ConsoleView {
  private let write: (String) -> Void
  private let pool = ObserverPool()

  /// Binds the view to `list`; lines go to `write`.
  public init(list: TodoList, write: @escaping (String) -> Void) {
    self.write = write
    // The list itself: reload on sync, then one line per change.
    list.items.chain().do { [weak self] event in self?.show(event) }.sync().addTo(pool)
    // A derived value: the footer combines the count with the filter.
    list.remaining.chain()
      .combine(list.showsDone.chain())
      .map { remaining, showsDone in "footer: \(remaining) left\(showsDone ? "" : " (done hidden)")" }
      .do { [weak self] in self?.write($0) }
      .sync()
      .addTo(pool)
  }

  /// Ends every binding of the view, as closing a screen does.
  public func close() {
    pool.invalidate()
    write("view closed")
  }

  private func show(_ event: RelayableArrayHolder<TodoItem>.Event) {
    switch event {
    case .fetched(let items), .set(let items):
      write("list: \(items.map(Self.line).joined(separator: ", "))")
    case .inserted(let index, let item):
      write("row \(index) added: \(Self.line(item))")
    case .removed(let index, _):
      write("row \(index) removed")
    case .replaced(let index, let item):
      write("row \(index) replaced: \(Self.line(item))")
    case .moved(let from, let to, _):
      write("row \(from) moved to \(to)")
    case .relayed(_, let index, let item):
      write("row \(index) changed: \(Self.line(item))")
    }
  }

  private static func line(_ item: TodoItem) -> String {
    "[\(item.isDone.value ? "x" : " ")] \(item.title.value)"
  }
}
