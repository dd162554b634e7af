import Chaining
import Testing

/// A model that publishes its state through a read-only view.
private final class Counter {
  private let holder = ValueHolder(0)
  var count: ReadOnlyValueHolder<Int> { holder.readOnly }
  func increment() { holder.value += 1 }
}

@Suite struct ReadOnlyValueHolderTests {
  @Test func viewReadsTheHoldersCurrentValue() {
    let holder = ValueHolder("Ann")
    let view = holder.readOnly
    #expect(view.value == "Ann")
    holder.value = "Bob"
    #expect(view.value == "Bob")
    #expect(view.fetchedValue() == "Bob")
  }

  @Test func viewKeepsNoCopyOfAReferenceValue() {
    let token = Token()
    let holder = ValueHolder(token)
    let view = holder.readOnly
    #expect(view.value === token)
    let next = Token()
    holder.value = next
    #expect(view.value === next)
  }

  @Test func syncFromTheViewSendsTheCurrentValueThenChanges() {
    let counter = Counter()
    let recorder = Recorder<Int>()
    let observer = counter.count.chain().do { recorder.append($0) }.sync()
    counter.increment()
    counter.increment()
    #expect(recorder.history == [0, 1, 2])
    observer.invalidate()
    counter.increment()
    #expect(recorder.history == [0, 1, 2])
  }

  @Test func endFromTheViewSendsOnlyChanges() {
    let holder = ValueHolder(1)
    let receiver = RecordingReceiver<Int>()
    let observer = holder.readOnly.chain().sendTo(receiver).end()
    #expect(receiver.history == [])
    holder.value = 2
    #expect(receiver.history == [2])
    observer.invalidate()
  }

  @Test func viewIsAFetchableSourceOfItsValueType() {
    func show(_ title: some Fetchable<String>) -> String { title.fetchedValue() }
    let holder = ValueHolder("Inbox")
    let source: any Fetchable<String> = holder.readOnly
    #expect(show(holder.readOnly) == "Inbox")
    #expect(source.fetchedValue() == "Inbox")
  }

  @Test func viewKeepsTheHolderAlive() {
    weak var weakHolder: ValueHolder<Int>?
    var view: ReadOnlyValueHolder<Int>?
    do {
      let holder = ValueHolder(1)
      weakHolder = holder
      view = holder.readOnly
    }
    #expect(weakHolder != nil)
    #expect(view?.value == 1)
    view = nil
    #expect(weakHolder == nil)
  }

  @Test func holderDoesNotKeepTheView() {
    let holder = ValueHolder(1)
    weak var weakView: ReadOnlyValueHolder<Int>?
    do {
      let view = holder.readOnly
      weakView = view
    }
    #expect(weakView == nil)
  }

  @Test func observerFollowsTheHolderNotTheView() {
    let holder = ValueHolder(1)
    weak var weakView: ReadOnlyValueHolder<Int>?
    let recorder = Recorder<Int>()
    var observer: Observer?
    do {
      let view = holder.readOnly
      weakView = view
      observer = view.chain().do { recorder.append($0) }.sync()
    }
    #expect(weakView == nil)
    holder.value = 2
    #expect(recorder.history == [1, 2])
    observer?.invalidate()
  }

  @Test func observerFromTheViewDoesNotKeepTheHolderAlive() {
    weak var weakHolder: ValueHolder<Int>?
    var observer: Observer?
    do {
      let holder = ValueHolder(1)
      weakHolder = holder
      observer = holder.readOnly.chain().do { _ in }.sync()
    }
    #expect(weakHolder == nil)
    #expect(observer != nil)
  }

  @Test func retainedViewKeepsTheHolderAliveForTheObserver() {
    weak var weakHolder: ValueHolder<Int>?
    var observer: Observer?
    do {
      let holder = ValueHolder(1)
      weakHolder = holder
      observer = holder.readOnly.retain().chain().do { _ in }.sync()
    }
    #expect(weakHolder != nil)
    observer?.invalidate()
    observer = nil
    #expect(weakHolder == nil)
  }

  @Test func codeHoldingOnlyTheViewCannotWrite() throws {
    let attempts = [
      "view.value = 2",
      "view.receive(value: 2)",
      "view.broadcast(value: 2)",
      "let holder: ValueHolder<Int> = view",
      "let sink: any Receivable<Int> = view",
    ]
    for attempt in attempts {
      let failing = try CompileCheck.typecheck(
        """
        func touch(_ view: ReadOnlyValueHolder<Int>) {
          \(attempt)
        }
        """
      )
      #expect(!failing.succeeded, "\(attempt) compiled")
    }
    let assignment = try CompileCheck.typecheck(
      """
      func touch(_ view: ReadOnlyValueHolder<Int>) {
        view.value = 2
      }
      """
    )
    #expect(assignment.diagnostics.contains("'value' is a get-only property"), "\(assignment.diagnostics)")
    let control = try CompileCheck.typecheck(
      """
      func touch(_ view: ReadOnlyValueHolder<Int>) -> Observer {
        print(view.value, view.fetchedValue())
        return view.chain().map { $0 + 1 }.do { print($0) }.sync()
      }
      let holder = ValueHolder(1)
      let observer = touch(holder.readOnly)
      holder.value = 2
      """,
      warningsAsErrors: true
    )
    #expect(control.succeeded, "\(control.diagnostics)")
  }

  @Test func viewIsUsedFromSeveralThreads() {
    let holder = ValueHolder(0)
    let view = holder.readOnly
    let sink: any Receivable<Int> & Swift.Sendable = holder
    let recorder = Recorder<Int>()
    let observer = view.chain().do { recorder.append($0) }.sync()
    let readers = Recorder<Bool>()
    race(threads: 4) { index in
      if index == 0 {
        for value in 1...1000 { sink.receive(value: value) }
      } else {
        var last = 0
        var ordered = true
        for _ in 0..<1000 {
          let value = view.value
          if value < last { ordered = false }
          last = value
          let synced = Recorder<Int>()
          let inner = view.chain().do { synced.append($0) }.sync()
          inner.invalidate()
          if synced.history.first.map({ $0 < last }) ?? true { ordered = false }
        }
        readers.append(ordered)
      }
    }
    #expect(view.value == 1000)
    #expect(recorder.history == Array(0...1000))
    #expect(readers.history == [true, true, true])
    observer.invalidate()
  }
}
