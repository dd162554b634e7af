import Chaining
import Testing

@Suite struct ChainOptionalTests {
  // MARK: - optional

  @Test func optionalWrapsEachValue() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int?>()
    let observer = notifier.chain().optional().do { received.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [.some(1), .some(2)])
    withExtendedLifetime(observer) {}
  }

  @Test func optionalWrapsNilInsteadOfFlatteningIt() {
    let notifier = Notifier<Int?>()
    let received = Recorder<Int??>()
    let observer = notifier.chain().optional().do { received.append($0) }.end()
    notifier.notify(value: nil)
    notifier.notify(value: 3)
    #expect(received.history == [.some(nil), .some(.some(3))])
    withExtendedLifetime(observer) {}
  }

  @Test func optionalFeedsAHolderOfOptionalsOnSync() {
    let name = ValueHolder("Ann")
    let selection = ValueHolder<String?>(nil)
    let observer = name.chain().optional().sendTo(selection).sync()
    #expect(selection.value == "Ann")
    name.value = "Bob"
    #expect(selection.value == "Bob")
    withExtendedLifetime(observer) {}
  }

  @Test func optionalWrapsTheSyncedValueOfAUserHolder() {
    let holder = IntHolder(3)
    let received = Recorder<Int?>()
    let observer = holder.chain().optional().do { received.append($0) }.sync()
    #expect(received.history == [.some(3)])
    holder.value = 4
    #expect(received.history == [.some(3), .some(4)])
    withExtendedLifetime(observer) {}
  }

  @Test func optionalOnEndSendsNothingUntilABroadcast() {
    let holder = ValueHolder(1)
    let notifier = IntNotifier()
    let received = Recorder<Int?>()
    let observers = [
      holder.chain().optional().do { received.append($0) }.end(),
      notifier.chain().optional().do { received.append($0) }.end(),
    ]
    #expect(received.history.isEmpty)
    notifier.notify(value: 5)
    holder.value = 2
    #expect(received.history == [.some(5), .some(2)])
    withExtendedLifetime(observers) {}
  }

  @Test func invalidatedOptionalDeliversNothingMore() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int?>()
    let observer = notifier.chain().optional().do { received.append($0) }.end()
    notifier.notify(value: 1)
    observer.invalidate()
    notifier.notify(value: 2)
    #expect(received.history == [.some(1)])
  }

  @Test func optionalStopsQuietlyWhenItsSourceIsReleased() {
    weak var weakSource: IntNotifier?
    weak var weakToken: Token?
    let received = Recorder<Int?>()
    var observer: Observer?
    do {
      let source = IntNotifier()
      let token = Token()
      weakSource = source
      weakToken = token
      observer = source.chain().optional().do { value in
        withExtendedLifetime(token) {}
        received.append(value)
      }.end()
      source.notify(value: 1)
    }
    #expect(weakSource == nil)
    #expect(received.history == [.some(1)])
    #expect(observer?.isInvalidated == false)
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
  }

  // MARK: - unwrap

  @Test func unwrapPassesWrappedValuesAndDropsNil() {
    let notifier = Notifier<Int?>()
    let received = Recorder<Int>()
    let observer = notifier.chain().unwrap().do { received.append($0) }.end()
    for value in [1, nil, 2, nil, nil, 3] { notifier.notify(value: value) }
    #expect(received.history == [1, 2, 3])
    withExtendedLifetime(observer) {}
  }

  @Test func syncedNilIsNotDeliveredByUnwrap() {
    let holder = ValueHolder<Int?>(nil)
    let received = Recorder<Int>()
    let observer = holder.chain().unwrap().do { received.append($0) }.sync()
    #expect(received.history.isEmpty)
    holder.value = 3
    holder.value = nil
    #expect(received.history == [3])
    withExtendedLifetime(observer) {}
  }

  @Test func syncedValueIsUnwrapped() {
    let holder = ValueHolder<Int?>(4)
    let user = IntHolder(0)
    let received = Recorder<Int>()
    let observers = [
      holder.chain().unwrap().do { received.append($0) }.sync(),
      user.chain().map { $0 == 0 ? nil : $0 }.unwrap().do { received.append($0 * 100) }.sync(),
    ]
    #expect(received.history == [4])
    user.value = 2
    #expect(received.history == [4, 200])
    withExtendedLifetime(observers) {}
  }

  @Test func unwrapOnEndSendsNothingUntilABroadcast() {
    let holder = ValueHolder<Int?>(1)
    let notifier = IntNotifier()
    let received = Recorder<Int>()
    let observers = [
      holder.chain().unwrap().do { received.append($0) }.end(),
      notifier.chain().map { $0 < 0 ? nil : $0 }.unwrap().do { received.append($0) }.end(),
    ]
    #expect(received.history.isEmpty)
    notifier.notify(value: -1)
    notifier.notify(value: 5)
    holder.value = 2
    #expect(received.history == [5, 2])
    withExtendedLifetime(observers) {}
  }

  @Test func invalidatedUnwrapDeliversNothingMore() {
    let notifier = Notifier<Int?>()
    let received = Recorder<Int>()
    let observer = notifier.chain().unwrap().do { received.append($0) }.end()
    notifier.notify(value: 1)
    observer.invalidate()
    notifier.notify(value: 2)
    #expect(received.history == [1])
  }

  @Test func unwrapStopsQuietlyWhenItsSourceIsReleased() {
    weak var weakSource: ValueHolder<Int?>?
    weak var weakToken: Token?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let source = ValueHolder<Int?>(1)
      let token = Token()
      weakSource = source
      weakToken = token
      observer = source.chain().unwrap().do { value in
        withExtendedLifetime(token) {}
        received.append(value)
      }.sync()
      source.value = nil
      source.value = 2
    }
    #expect(weakSource == nil)
    #expect(received.history == [1, 2])
    #expect(observer?.isInvalidated == false)
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
  }

  // MARK: - compactMap

  @Test func compactMapPassesOnlyNonNilResults() {
    let notifier = Notifier<String>()
    let received = Recorder<Int>()
    let observer = notifier.chain().compactMap { Int($0) }.do { received.append($0) }.end()
    for text in ["1", "x", "22", ""] { notifier.notify(value: text) }
    #expect(received.history == [1, 22])
    withExtendedLifetime(observer) {}
  }

  @Test func compactMapTransformsTheSyncedValue() {
    let number = ValueHolder("12")
    let word = ValueHolder("twelve")
    let received = Recorder<Int>()
    let observers = [
      number.chain().compactMap { Int($0) }.do { received.append($0) }.sync(),
      word.chain().compactMap { Int($0) }.do { received.append($0) }.sync(),
    ]
    #expect(received.history == [12])
    word.value = "7"
    #expect(received.history == [12, 7])
    withExtendedLifetime(observers) {}
  }

  @Test func compactMapTransformsTheSyncedValueOfAUserHolder() {
    let even = IntHolder(4)
    let odd = IntHolder(5)
    let received = Recorder<Int>()
    func halves(of holder: IntHolder) -> Observer {
      holder.chain().compactMap { $0.isMultiple(of: 2) ? $0 / 2 : nil }.do { received.append($0) }.sync()
    }
    let observers = [halves(of: even), halves(of: odd)]
    #expect(received.history == [2])
    odd.value = 8
    #expect(received.history == [2, 4])
    withExtendedLifetime(observers) {}
  }

  @Test func compactMapOnEndSendsNothingUntilABroadcast() {
    let holder = ValueHolder("1")
    let notifier = IntNotifier()
    let received = Recorder<Int>()
    let observers = [
      holder.chain().compactMap { Int($0) }.do { received.append($0) }.end(),
      notifier.chain().compactMap { $0 > 0 ? $0 * 10 : nil }.do { received.append($0) }.end(),
    ]
    #expect(received.history.isEmpty)
    notifier.notify(value: 0)
    notifier.notify(value: 3)
    holder.value = "2"
    #expect(received.history == [30, 2])
    withExtendedLifetime(observers) {}
  }

  @Test func invalidatedCompactMapIsNotCalledAndDeliversNothing() {
    let notifier = Notifier<Int>()
    let transformed = Recorder<Int>()
    let received = Recorder<Int>()
    let observer = notifier.chain().compactMap { value -> Int? in
      transformed.append(value)
      return value
    }.do { received.append($0) }.end()
    notifier.notify(value: 1)
    observer.invalidate()
    notifier.notify(value: 2)
    #expect(transformed.history == [1])
    #expect(received.history == [1])
  }

  @Test func compactMapStopsQuietlyWhenItsSourceIsReleased() {
    weak var weakSource: Notifier<Int>?
    weak var weakToken: Token?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let source = Notifier<Int>()
      let token = Token()
      weakSource = source
      weakToken = token
      observer = source.chain().compactMap { value -> Int? in
        withExtendedLifetime(token) {}
        return value > 0 ? value : nil
      }.do { received.append($0) }.end()
      source.notify(value: 1)
      source.notify(value: -1)
    }
    #expect(weakSource == nil)
    #expect(received.history == [1])
    #expect(observer?.isInvalidated == false)
    // The observer still holds the transform, until it is invalidated.
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
  }

  // MARK: - forceUnwrap

  @Test func forceUnwrapPassesWrappedValues() {
    let notifier = Notifier<Int?>()
    let received = Recorder<Int>()
    let observer = notifier.chain().forceUnwrap().do { received.append($0) }.end()
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [1, 2])
    withExtendedLifetime(observer) {}
  }

  @Test func forceUnwrapUnwrapsTheSyncedValue() {
    let holder = ValueHolder<Int?>(1)
    let user = IntHolder(7)
    let received = Recorder<Int>()
    let observers = [
      holder.chain().forceUnwrap().do { received.append($0) }.sync(),
      user.chain().optional().forceUnwrap().do { received.append($0 * 100) }.sync(),
    ]
    #expect(received.history == [1, 700])
    holder.value = 2
    #expect(received.history == [1, 700, 2])
    withExtendedLifetime(observers) {}
  }

  @Test func forceUnwrapOnEndIgnoresTheCurrentNil() {
    let holder = ValueHolder<Int?>(nil)
    let notifier = IntNotifier()
    let received = Recorder<Int>()
    let observers = [
      holder.chain().forceUnwrap().do { received.append($0) }.end(),
      notifier.chain().optional().forceUnwrap().do { received.append($0 * 100) }.end(),
    ]
    #expect(received.history.isEmpty)
    holder.value = 5
    notifier.notify(value: 6)
    #expect(received.history == [5, 600])
    withExtendedLifetime(observers) {}
  }

  @Test func invalidatedForceUnwrapIgnoresALaterNil() {
    let notifier = Notifier<Int?>()
    let received = Recorder<Int>()
    let observer = notifier.chain().forceUnwrap().do { received.append($0) }.end()
    notifier.notify(value: 1)
    observer.invalidate()
    notifier.notify(value: 2)
    notifier.notify(value: nil)  // would stop the program if it were delivered
    #expect(received.history == [1])
  }

  @Test func forceUnwrapStopsQuietlyWhenItsSourceIsReleased() {
    weak var weakSource: Notifier<Int?>?
    weak var weakToken: Token?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let source = Notifier<Int?>()
      let token = Token()
      weakSource = source
      weakToken = token
      observer = source.chain().forceUnwrap().do { value in
        withExtendedLifetime(token) {}
        received.append(value)
      }.end()
      source.notify(value: 1)
    }
    #expect(weakSource == nil)
    #expect(received.history == [1])
    #expect(observer?.isInvalidated == false)
    #expect(weakToken != nil)
    observer?.invalidate()
    #expect(weakToken == nil)
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func forceUnwrapOfABroadcastNilStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let notifier = Notifier<Int?>()
      let observer = notifier.chain().forceUnwrap().do { _ in }.end()
      notifier.notify(value: 1)
      notifier.notify(value: nil)
      withExtendedLifetime(observer) {}
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Chain.forceUnwrap(): a nil value of Optional<Int> reached forceUnwrap()"))
  }
  #endif

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func forceUnwrapOfASyncedNilStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let observer = ValueHolder<String?>(nil).chain().forceUnwrap().sync()
      withExtendedLifetime(observer) {}
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Chain.forceUnwrap(): a nil value of Optional<String> reached forceUnwrap()"))
  }
  #endif
}
