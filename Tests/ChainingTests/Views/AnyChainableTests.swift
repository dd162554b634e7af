import Chaining
import Testing

// MARK: - Functions that take sources by their value type

/// Takes any source of strings, as an opaque parameter.
private func collect(_ title: some Chainable<String>, into recorder: Recorder<String>) -> Observer {
  title.chain().do { recorder.append($0) }.end()
}

/// Takes a source that has a current value and pushes changes.
private func syncAll(_ source: some Fetchable<Int> & Sendable<Int>, into recorder: Recorder<Int>) -> Observer {
  source.chain().do { recorder.append($0) }.sync()
}

/// Returns a source as an existential.
private func erased(_ holder: ValueHolder<Int>) -> any Chainable<Int> {
  holder
}

/// Keeps a source in a property of an existential type.
private final class Screen {
  let title: any Fetchable<String> & Sendable
  init(title: any Fetchable<String> & Sendable) { self.title = title }
}

@Suite struct AnyChainableTests {
  @Test func opaqueChainableParameterChains() {
    let title = ValueHolder("Inbox")
    let recorder = Recorder<String>()
    let observer = collect(title, into: recorder)
    title.value = "Sent"
    #expect(recorder.history == ["Sent"])
    observer.invalidate()
  }

  @Test func functionTakingASyncableSourceOfIntSyncs() {
    let count = ValueHolder(3)
    let recorder = Recorder<Int>()
    let observer = syncAll(count, into: recorder)
    count.value = 4
    #expect(recorder.history == [3, 4])
    observer.invalidate()
  }

  @Test func usersOwnSyncableIsASyncableSourceOfInt() {
    let holder = IntHolder(7)
    let recorder = Recorder<Int>()
    let observer = syncAll(holder, into: recorder)
    holder.value = 8
    #expect(recorder.history == [7, 8])
    observer.invalidate()
  }

  @Test func anyChainableChainsAndSendsTo() {
    let count = ValueHolder(1)
    let source = erased(count)
    let receiver = RecordingReceiver<Int>()
    let observer = source.chain().map { $0 * 10 }.sendTo(receiver).end()
    count.value = 2
    count.value = 3
    #expect(receiver.history == [20, 30])
    withExtendedLifetime(observer) {}
  }

  @available(macOS 13, iOS 16, tvOS 16, watchOS 9, *)
  @Test func anyChainableSourcesOfMixedTypesAllChain() {
    let holder = ValueHolder(0)
    let notifier = Notifier<Int>()
    let own = IntNotifier()
    let sources: [any Chainable<Int>] = [holder, notifier, own]
    let recorder = Recorder<Int>()
    let observers = sources.map { $0.chain().do { recorder.append($0) }.end() }
    holder.value = 1
    notifier.notify(value: 2)
    own.notify(value: 3)
    #expect(recorder.history == [1, 2, 3])
    #expect(observers.count == 3)
    for observer in observers { observer.invalidate() }
  }

  @Test func existentialFetchableAndSendableSyncs() {
    let screen = Screen(title: ValueHolder("Inbox"))
    let recorder = Recorder<String>()
    let observer = screen.title.chain().do { recorder.append($0) }.sync()
    #expect(recorder.history == ["Inbox"])
    observer.invalidate()
  }

  @Test func existentialFetchableSyncFollowsChanges() {
    let count = ValueHolder(1)
    let source: any Fetchable<Int> = count
    let recorder = Recorder<Int>()
    let observer = source.chain().do { recorder.append($0) }.sync()
    count.value = 2
    #expect(recorder.history == [1, 2])
    observer.invalidate()
  }

  @Test func endThroughAnExistentialDeliversNoCurrentValue() {
    let count = ValueHolder(1)
    let source: any Fetchable<Int> = count
    let recorder = Recorder<Int>()
    let observer = source.chain().do { recorder.append($0) }.end()
    #expect(recorder.history == [])
    count.value = 2
    #expect(recorder.history == [2])
    observer.invalidate()
  }

  @Test func observerThroughAnExistentialDoesNotRetainTheSource() {
    weak var weakHolder: ValueHolder<Int>?
    var observer: Observer?
    do {
      let holder = ValueHolder(1)
      weakHolder = holder
      let source: any Fetchable<Int> = holder
      observer = source.chain().do { _ in }.sync()
    }
    #expect(weakHolder == nil)
    #expect(observer != nil)
  }

  @Test func anyChainableWrapperHoldsItsSourceStrongly() {
    weak var weakHolder: ValueHolder<Int>?
    var wrapper: AnyChainable<Int>?
    do {
      let holder = ValueHolder(1)
      weakHolder = holder
      wrapper = AnyChainable(holder)
    }
    #expect(weakHolder != nil)
    #expect(wrapper != nil)
    wrapper = nil
    #expect(weakHolder == nil)
  }

  @Test func anyFetchableForwardsFetchedValueAndCanFetch() {
    let count = ValueHolder(5)
    let wrapper = AnyFetchable(count)
    #expect(wrapper.fetchedValue() == 5)
    #expect(wrapper.canFetch())
    count.value = 6
    #expect(wrapper.fetchedValue() == 6)
  }

  @Test func concreteSourceStillGetsItsOwnChainType() {
    let count = ValueHolder(1)
    let chain: Chain<Int, ValueHolder<Int>> = count.chain()
    let observer = chain.end()
    observer.invalidate()
  }

  @Test func syncableTypealiasTakesNoArgumentButTheCompositionDoes() throws {
    let generic = try CompileCheck.typecheck(
      """
      func show(_ title: some Syncable<String>) {}
      """
    )
    #expect(!generic.succeeded)
    let composition = try CompileCheck.typecheck(
      """
      func show(_ title: some Fetchable<String> & Sendable<String>) -> Observer {
        title.chain().do { print($0) }.sync()
      }
      func keep(_ title: any Fetchable<String> & Sendable) -> Observer {
        title.chain().do { print($0) }.sync()
      }
      func old<S: Syncable>(_ source: S) -> Observer where S.ChainValue == String {
        source.chain().do { print($0) }.sync()
      }
      let holder = ValueHolder("a")
      let observers = [show(holder), keep(holder), old(holder)]
      """,
      warningsAsErrors: true
    )
    #expect(composition.succeeded, "\(composition.diagnostics)")
  }

  @Test func syncIsUnavailableThroughAnyChainable() throws {
    let failing = try CompileCheck.typecheck(
      """
      let source: any Chainable<Int> = ValueHolder(1)
      let observer = source.chain().sync()
      """
    )
    #expect(!failing.succeeded)
    let control = try CompileCheck.typecheck(
      """
      let source: any Fetchable<Int> = ValueHolder(1)
      let observer = source.chain().sync()
      """
    )
    #expect(control.succeeded, "\(control.diagnostics)")
  }
}
