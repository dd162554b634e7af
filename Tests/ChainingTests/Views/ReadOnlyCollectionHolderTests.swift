import Chaining
import Testing

@Suite struct ReadOnlyCollectionHolderTests {
  // MARK: - ArrayHolder

  @Test func arrayViewReadsTheHolder() {
    let todos = ArrayHolder(["milk"])
    let view = todos.readOnly
    todos.append("eggs")
    #expect(view.raw == ["milk", "eggs"])
    #expect(view.count == 2)
    #expect(view.first == "milk")
    #expect(view.last == "eggs")
    #expect(view[1] == "eggs")
    #expect(view.element(at: 0) == "milk")
  }

  @Test func arrayViewSyncsTheHoldersEvents() {
    let todos = ArrayHolder(["milk"])
    let recorder = Recorder<ArrayHolder<String>.Event>()
    let observer = todos.readOnly.chain().do { recorder.append($0) }.sync()
    todos.append("eggs")
    _ = todos.remove(at: 0)
    #expect(
      recorder.history == [
        .fetched(["milk"]), .inserted(at: 1, element: "eggs"), .removed(at: 0, element: "milk"),
      ]
    )
    observer.invalidate()
  }

  @Test func arrayViewKeepsTheHolderAliveAndTheObserverDoesNot() {
    weak var weakHolder: ArrayHolder<Int>?
    var view: ReadOnlyArrayHolder<Int>?
    var observer: Observer?
    do {
      let holder = ArrayHolder([1])
      weakHolder = holder
      view = holder.readOnly
      observer = view?.chain().do { _ in }.sync()
    }
    #expect(weakHolder != nil)
    view = nil
    #expect(weakHolder == nil)
    #expect(observer != nil)
  }

  @Test func codeHoldingOnlyAnArrayViewCannotWrite() throws {
    for attempt in ["view.append(2)", "view.set([])", "view.receive(value: .removeAll)", "_ = view.remove(at: 0)"] {
      let failing = try CompileCheck.typecheck("func touch(_ view: ReadOnlyArrayHolder<Int>) { \(attempt) }")
      #expect(!failing.succeeded, "\(attempt) compiled")
    }
    let control = try CompileCheck.typecheck(
      "func touch(_ view: ReadOnlyArrayHolder<Int>) -> Observer { print(view.raw, view.count); return view.chain().sync() }",
      warningsAsErrors: true
    )
    #expect(control.succeeded, "\(control.diagnostics)")
  }

  // MARK: - DictionaryHolder

  @Test func dictionaryViewReadsTheHolder() {
    let scores = DictionaryHolder(["ann": 1])
    let view = scores.readOnly
    scores.insert(key: "bob", value: 2)
    #expect(view.raw == ["ann": 1, "bob": 2])
    #expect(view.count == 2)
    #expect(view["bob"] == 2)
    #expect(view["cleo"] == nil)
  }

  @Test func dictionaryViewSyncsTheHoldersEvents() {
    let scores = DictionaryHolder(["ann": 1])
    let recorder = Recorder<DictionaryHolder<String, Int>.Event>()
    let observer = scores.readOnly.chain().do { recorder.append($0) }.sync()
    scores.insert(key: "bob", value: 2)
    #expect(recorder.history == [.fetched(["ann": 1]), .inserted(key: "bob", value: 2)])
    observer.invalidate()
  }

  @Test func dictionaryViewKeepsTheHolderAlive() {
    weak var weakHolder: DictionaryHolder<String, Int>?
    var view: ReadOnlyDictionaryHolder<String, Int>?
    do {
      let holder = DictionaryHolder(["ann": 1])
      weakHolder = holder
      view = holder.readOnly
    }
    #expect(weakHolder != nil)
    #expect(view?.count == 1)
    view = nil
    #expect(weakHolder == nil)
  }

  @Test func codeHoldingOnlyADictionaryViewCannotWrite() throws {
    for attempt in ["view.insert(key: \"a\", value: 1)", "view.set([:])", "_ = view.removeValue(forKey: \"a\")"] {
      let failing = try CompileCheck.typecheck(
        "func touch(_ view: ReadOnlyDictionaryHolder<String, Int>) { \(attempt) }"
      )
      #expect(!failing.succeeded, "\(attempt) compiled")
    }
    let control = try CompileCheck.typecheck(
      "func touch(_ view: ReadOnlyDictionaryHolder<String, Int>) -> Observer { print(view[\"a\"] ?? 0); return view.chain().sync() }",
      warningsAsErrors: true
    )
    #expect(control.succeeded, "\(control.diagnostics)")
  }
}
