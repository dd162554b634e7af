import Chaining
import Dispatch

/// A console "view" of a `TodoList`: it writes a line for everything it shows.
///
/// Like a screen, it has its own queue, and it shows things only there:
/// every binding hops to that queue with `receive(on:)` before it writes,
/// whichever thread changed the model.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public final class ConsoleView {
  private let queue: DispatchQueue
  private let write: (String) -> Void
  private let pool = ObserverPool()

  /// Binds the view to `list`; lines go to `write`, on `queue`.
  public init(list: TodoList, queue: DispatchQueue, write: @escaping (String) -> Void) {
    self.queue = queue
    self.write = write
    // The list itself: reload on sync, then one line per change.
    list.items.chain()
      .receive(on: queue)
      .do { [weak self] event in self?.show(event) }
      .sync()
      .addTo(pool)
    // A derived value: the footer combines the count with the switch.
    list.remaining.chain()
      .combine(list.showsDone.chain())
      .map { remaining, showsDone in "footer: \(remaining) left\(showsDone ? "" : " (done hidden)")" }
      .receive(on: queue)
      .do { [weak self] in self?.line($0) }
      .sync()
      .addTo(pool)
  }

  /// Also shows the title of `viewModel`, an `@Observable` model, as a line
  /// now and one more each time it changes; closing the view ends this too.
  ///
  /// The chain reads the title on `modelQueue` after each change, then
  /// hops to the view's queue like the other bindings. Call it where the
  /// view model may be read, on `modelQueue`: it reads the title at once.
  public func show(_ viewModel: TodoViewModel, readingOn modelQueue: DispatchQueue) {
    // `chain(_:on:)` is `ObservedValue(of:on:)` reading one property.
    viewModel.chain(\.title, on: modelQueue)
      .map { "title: \($0)" }
      .receive(on: queue)
      .do { [weak self] in self?.line($0) }
      .sync()
      .addTo(pool)
  }

  /// Ends every binding of the view, as closing a screen does.
  public func close() {
    pool.invalidate()
    queue.sync { line("view closed") }
  }

  /// Writes a line; only ever on the view's queue.
  private func line(_ text: String) {
    dispatchPrecondition(condition: .onQueue(queue))
    write(text)
  }

  private func show(_ event: RelayableArrayHolder<TodoItem>.Event) {
    switch event {
    case .fetched(let items), .set(let items):
      line("list: \(items.map(Self.line).joined(separator: ", "))")
    case .inserted(let index, let item):
      line("row \(index) added: \(Self.line(item))")
    case .removed(let index, _):
      line("row \(index) removed")
    case .replaced(let index, let item):
      line("row \(index) replaced: \(Self.line(item))")
    case .moved(let from, let to, _):
      line("row \(from) moved to \(to)")
    case .relayed(_, let index, let item):
      line("row \(index) changed: \(Self.line(item))")
    }
  }

  private static func line(_ item: TodoItem) -> String {
    "[\(item.isDone.value ? "x" : " ")] \(item.title.value)"
  }
}
