import Chaining
import Dispatch

/// Runs the walkthrough: a to-do list bound to a console view. Each step
/// writes what it does, then what the view shows.
///
/// The view writes on its own queue; each step waits for that queue before
/// going on, so the output is the same on every run.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public func runDemo(write: @escaping @Sendable (String) -> Void) {
  let list = TodoList()
  list.add("Buy milk")
  list.add("Call Ann")
  let viewQueue = DispatchQueue(label: "view")
  /// Waits until the view has shown everything sent to it so far.
  func shown() { viewQueue.sync {} }

  write("1. The view syncs: it shows the list and the footer.")
  let view = ConsoleView(list: list, queue: viewQueue, write: write)
  shown()

  write("2. Adding a to-do: the view adds the row, then the footer shows the new count.")
  list.add("Book flights")
  shown()

  write("3. Ticking one off: the item's edit arrives as a row change, then the footer recounts.")
  list.items[0].isDone.value = true
  shown()

  write("4. A text field bound both ways to an item's title.")
  // A field's text is not `Equatable` here, as with many UI values: what
  // stops the loop is not equality but the echo rule.
  let field = ValueHolder(FieldText(""))
  let editing = ObserverPool()
  nonisolated(unsafe) var toField = 0  // both only touched on this thread
  nonisolated(unsafe) var toTitle = 0
  list.items[1].title.chain().do { _ in toField += 1 }.map(FieldText.init).sendTo(field).sync().addTo(editing)
  field.chain().do { _ in toTitle += 1 }.map(\.string).sendTo(list.items[1].title).end().addTo(editing)
  write("   field shows \"\(field.value.string)\"")
  write("   the user types \"Call Ann back\"")
  (toField, toTitle) = (0, 0)
  field.value = FieldText("Call Ann back")
  shown()
  write(
    toField == 1 && toTitle == 1
      ? "   the title sent the text back to the field once, and that echo stopped there: the loop settled"
      : "   the loop did not settle: \(toField) value(s) to the field, \(toTitle) to the title"
  )
  write("   the model sets the title to \"Call Ann tonight\"")
  list.items[1].title.value = "Call Ann tonight"
  shown()
  write("   field shows \"\(field.value.string)\"")
  editing.invalidate()

  write("5. The 'show done' switch changes only the footer (this view does not filter rows).")
  list.showsDone.value = false
  shown()

  write("6. An @Observable view model: the view shows its title, read again after each change.")
  // Observation reports a change before storing it, so the chains read the
  // view model on a queue of their own. The demo writes it only there too,
  // and waits for that queue, then for the view's, before going on.
  let viewModel = TodoViewModel(title: "To-do")
  let modelQueue = DispatchQueue(label: "view model")
  /// Runs `change` on the view model's queue, then waits until it was read
  /// again and the view has shown what that read sent.
  func onModelQueue<Result>(_ change: () -> Result) -> Result {
    let result = modelQueue.sync(execute: change)
    modelQueue.sync {}
    shown()
    return result
  }
  onModelQueue { view.show(viewModel, readingOn: modelQueue) }
  write("   the view model's title becomes \"Today\"")
  onModelQueue { viewModel.title = "Today" }
  write("   its toggle is bound both ways to the list's switch, which takes the toggle's value (on)")
  let binding = onModelQueue { list.showsDone.bind(to: viewModel, \.showsDone, on: modelQueue) }
  write("   the user turns the toggle off")
  onModelQueue { viewModel.showsDone = false }
  write("   the model turns the switch on")
  onModelQueue { list.showsDone.value = true }
  write("   the toggle follows: \(onModelQueue { viewModel.showsDone } ? "on" : "off")")
  binding.invalidate()

  write("7. An import on a background queue: the view still shows it on its own queue.")
  let importer = DispatchQueue(label: "import")
  importer.sync { list.add("Water plants") }
  shown()

  write("8. Closing the view ends its bindings: later changes show nothing.")
  view.close()
  list.add("Not shown")
  list.items[2].isDone.value = true
  onModelQueue { viewModel.title = "Not shown" }
  write("   the model still counts \(list.remaining.value) left")
}

/// What a text field shows: not `Equatable`, so every set broadcasts.
struct FieldText {
  let string: String
  init(_ string: String) { self.string = string }
}
