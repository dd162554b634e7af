import Chaining
import Dispatch

/// Runs the walkthrough: a to-do list bound to a console view. Each step
/// writes what it does, then what the bindings show.
///
/// The output is the same on every run: the one step that works on a
/// background queue waits for it before going on.
public func runDemo(write: @escaping (String) -> Void) {
  let list = TodoList()
  list.add("Buy milk")
  list.add("Call Ann")

  write("1. The view syncs: it shows the list and the footer at once.")
  let view = ConsoleView(list: list, write: write)

  write("2. Adding a to-do inserts one row; the footer follows.")
  list.add("Book flights")

  write("3. Each item has its own holders; editing one relays a row change.")
  list.items[0].isDone.value = true

  write("4. A text field bound both ways to an item's title.")
  let field = ValueHolder("")
  let editing = ObserverPool()
  list.items[1].title.chain().sendTo(field).sync().addTo(editing)
  field.chain().sendTo(list.items[1].title).end().addTo(editing)
  write("   field shows \"\(field.value)\"")
  field.value = "Call Ann back"  // the user types
  list.items[1].title.value = "Call Ann tonight"  // the model changes
  write("   field shows \"\(field.value)\"")
  editing.invalidate()

  write("5. Hiding done items changes only the footer.")
  list.showsDone.value = false

  write("6. A sync from a background queue, delivered on the view's queue.")
  let background = DispatchQueue(label: "sync")
  let viewQueue = DispatchQueue(label: "view")
  let arrived = DispatchGroup()
  arrived.enter()
  let syncLog = list.items.chain()
    .compactMap { event -> String? in
      guard case .inserted(_, let item) = event else { return nil }
      return item.title.value
    }
    .receive(on: viewQueue)
    .do { title in
      write("   received \"\(title)\" on the view queue")
      arrived.leave()
    }
    .end()
  background.async { list.add("Water plants") }
  arrived.wait()
  viewQueue.sync {}
  syncLog.invalidate()

  write("7. Closing the view ends its bindings: later changes print nothing.")
  view.close()
  list.add("Not shown")
  list.items[2].isDone.value = true
  write("   the model still counts \(list.remaining.value) left")
}
