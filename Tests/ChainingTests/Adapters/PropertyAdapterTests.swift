import Chaining
import Testing

/// A class the adapters bind, as a user's settings object would be.
private final class Settings {
  var fontSize: Int
  var title = "Inbox"
  var box = Box(number: 0)

  init(fontSize: Int = 12) {
    self.fontSize = fontSize
  }
}

/// An adapter to share with `race(threads:)`.
///
/// @unchecked: `PropertyAdapter` is not `Swift.Sendable`, since its object
/// need not be. The adapter serializes its reads and writes of the property
/// under its own lock, and nothing else touches `settings` until the race
/// is over (`race` returns only after every thread has finished).
private final class SharedAdapter: @unchecked Swift.Sendable {
  let settings: Settings
  let adapter: PropertyAdapter<Settings, Int>

  init(_ settings: Settings) {
    self.settings = settings
    adapter = PropertyAdapter(settings, keyPath: \.fontSize)
  }
}

@Suite struct PropertyAdapterTests {
  // MARK: Reading and writing

  @Test func valueReadsThePropertyThroughAfterADirectChange() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.fontSize)
    #expect(adapter.value == 12)
    settings.fontSize = 20
    #expect(adapter.value == 20)
    #expect(adapter.fetchedValue() == 20)
  }

  @Test func settingWritesThePropertyAndBroadcasts() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.fontSize)
    let received = Recorder<Int>()
    let observer = adapter.chain().do { received.append($0) }.end()
    adapter.value = 14
    adapter.value = 16
    #expect(settings.fontSize == 16)
    #expect(received.history == [14, 16])
    withExtendedLifetime(observer) {}
  }

  @Test func settingTheValueThePropertyHasSendsNothing() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.title)
    let received = Recorder<String>()
    let observer = adapter.chain().do { received.append($0) }.end()
    adapter.value = "Inbox"
    adapter.value = "Sent"
    adapter.value = "Sent"
    #expect(received.history == ["Sent"])
    #expect(settings.title == "Sent")
    withExtendedLifetime(observer) {}
  }

  @Test func settingComparesWithThePropertyNotWithTheLastValueWritten() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.fontSize)
    let received = Recorder<Int>()
    let observer = adapter.chain().do { received.append($0) }.end()
    adapter.value = 14
    settings.fontSize = 20
    adapter.value = 20  // what the property already has
    adapter.value = 14  // differs from the property, though it was the last write
    #expect(received.history == [14, 14])
    #expect(settings.fontSize == 14)
    withExtendedLifetime(observer) {}
  }

  @Test func nonEquatablePropertyBroadcastsEverySet() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.box)
    let received = Recorder<Int>()
    let observer = adapter.chain().map(\.number).do { received.append($0) }.end()
    adapter.value = Box(number: 0)
    adapter.value = Box(number: 0)
    adapter.value = Box(number: 1)
    #expect(received.history == [0, 0, 1])
    #expect(settings.box.number == 1)
    withExtendedLifetime(observer) {}
  }

  @Test func syncSendsThePropertysCurrentValue() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.fontSize)
    settings.fontSize = 18
    let received = Recorder<Int>()
    let observer = adapter.chain().do { received.append($0) }.sync()
    adapter.value = 19
    #expect(received.history == [18, 19])
    withExtendedLifetime(observer) {}
  }

  @Test func directChangeIsSentOnlyByBroadcast() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.fontSize)
    let received = Recorder<Int>()
    let observer = adapter.chain().do { received.append($0) }.end()
    settings.fontSize = 30
    #expect(received.history.isEmpty)
    adapter.broadcast()
    #expect(received.history == [30])
    withExtendedLifetime(observer) {}
  }

  @Test func broadcastSendsEvenAnUnchangedValue() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.fontSize)
    let received = Recorder<Int>()
    let observer = adapter.chain().do { received.append($0) }.end()
    adapter.broadcast()
    adapter.broadcast()
    #expect(received.history == [12, 12])
    withExtendedLifetime(observer) {}
  }

  @Test func receiveWritesThePropertyAndBroadcasts() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.fontSize)
    let received = Recorder<Int>()
    let observer = adapter.chain().do { received.append($0) }.end()
    adapter.receive(value: 5)
    #expect(settings.fontSize == 5)
    #expect(received.history == [5])
    withExtendedLifetime(observer) {}
  }

  @Test func chainSendingToTheAdapterWritesTheProperty() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.fontSize)
    let slider = ValueHolder(24)
    let observer = slider.chain().sendTo(adapter).sync()
    #expect(settings.fontSize == 24)
    slider.value = 25
    #expect(settings.fontSize == 25)
    withExtendedLifetime(observer) {}
  }

  @Test func handlerWritingTheAdapterReachesOtherChainsAfterTheCurrentValue() {
    let settings = Settings()
    let adapter = PropertyAdapter(settings, keyPath: \.fontSize)
    let clamping = Recorder<Int>()
    let other = Recorder<Int>()
    let observers = [
      // Clamp: a value above 20 is written back as 20 from inside the delivery.
      adapter.chain()
        .do { value in
          clamping.append(value)
          if value > 20 { adapter.value = 20 }
        }
        .end(),
      adapter.chain().do { other.append($0) }.end(),
    ]
    adapter.value = 35
    #expect(settings.fontSize == 20)
    #expect(adapter.value == 20)
    // The write-back is an echo for the chain that made it, which skips it.
    #expect(clamping.history == [35])
    #expect(other.history == [35, 20])
    withExtendedLifetime(observers) {}
  }

  // MARK: Lifetime

  @Test func adapterHoldsTheObjectWeakly() {
    weak var weakSettings: Settings?
    var adapter: PropertyAdapter<Settings, Int>?
    do {
      let settings = Settings()
      weakSettings = settings
      adapter = PropertyAdapter(settings, keyPath: \.fontSize)
      #expect(adapter?.object === settings)
      #expect(adapter?.canFetch() == true)
    }
    #expect(weakSettings == nil)
    #expect(adapter?.object == nil)
    #expect(adapter?.canFetch() == false)
  }

  @Test func afterTheObjectIsReleasedSyncSendsNothingAndWritesDoNothing() {
    var settings: Settings? = Settings()
    let adapter = PropertyAdapter(settings!, keyPath: \.fontSize)
    let received = Recorder<Int>()
    let observer = adapter.chain().do { received.append($0) }.end()
    adapter.value = 14
    settings = nil
    #expect(!adapter.canFetch())
    let syncReceived = Recorder<Int>()
    let syncObserver = adapter.chain().do { syncReceived.append($0) }.sync()
    #expect(syncReceived.history.isEmpty)
    adapter.value = 15
    adapter.receive(value: 16)
    adapter.broadcast()
    #expect(received.history == [14])
    #expect(syncReceived.history.isEmpty)
    #expect(adapter.value == 14)
    _ = (observer, syncObserver)
  }

  @Test func afterTheObjectIsReleasedValueIsTheLastValueRead() {
    var settings: Settings? = Settings()
    let adapter = PropertyAdapter(settings!, keyPath: \.fontSize)
    adapter.value = 14
    settings?.fontSize = 40
    #expect(adapter.value == 40)
    settings?.fontSize = 41  // never read through the adapter
    settings = nil
    #expect(adapter.value == 40)
  }

  @Test func afterTheObjectIsReleasedValueIsTheInitialValueWhenNothingElseWasSeen() {
    var settings: Settings? = Settings(fontSize: 9)
    let adapter = PropertyAdapter(settings!, keyPath: \.fontSize)
    settings = nil
    #expect(adapter.value == 9)
  }

  @Test func adapterIsReleasedWhileItsObserverLives() {
    let settings = Settings()
    weak var weakAdapter: PropertyAdapter<Settings, Int>?
    let received = Recorder<Int>()
    var observer: Observer?
    do {
      let adapter = PropertyAdapter(settings, keyPath: \.fontSize)
      weakAdapter = adapter
      observer = adapter.chain().do { received.append($0) }.sync()
    }
    #expect(weakAdapter == nil)
    #expect(received.history == [12])
    #expect(observer?.isInvalidated == false)
  }

  // MARK: Shared adapters

  @Test func commonReturnsTheSameAdapterForTheSameObjectAndKeyPath() {
    let settings = Settings()
    let first = PropertyAdapter.common(settings, keyPath: \.fontSize)
    let second = PropertyAdapter.common(settings, keyPath: \.fontSize)
    #expect(first === second)
    #expect(first.object === settings)
  }

  @Test func commonReturnsDifferentAdaptersForDifferentKeyPaths() {
    let settings = Settings()
    let fontSize = PropertyAdapter.common(settings, keyPath: \.fontSize)
    let title = PropertyAdapter.common(settings, keyPath: \.title)
    #expect(fontSize !== title)
    #expect(fontSize.value == 12)
    #expect(title.value == "Inbox")
  }

  @Test func commonReturnsDifferentAdaptersForDifferentObjects() {
    let a = Settings(fontSize: 1)
    let b = Settings(fontSize: 2)
    let adapterA = PropertyAdapter.common(a, keyPath: \.fontSize)
    let adapterB = PropertyAdapter.common(b, keyPath: \.fontSize)
    #expect(adapterA !== adapterB)
    #expect(adapterA.value == 1)
    #expect(adapterB.value == 2)
  }

  @Test func usersOfTheCommonAdapterSeeEachOthersWrites() {
    let settings = Settings()
    let slider = PropertyAdapter.common(settings, keyPath: \.fontSize)
    let label = PropertyAdapter.common(settings, keyPath: \.fontSize)
    let labelReceived = Recorder<Int>()
    let sliderReceived = Recorder<Int>()
    let observers = [
      label.chain().do { labelReceived.append($0) }.end(),
      slider.chain().do { sliderReceived.append($0) }.end(),
    ]
    slider.value = 7
    label.value = 8
    #expect(labelReceived.history == [7, 8])
    #expect(sliderReceived.history == [7, 8])
    #expect(settings.fontSize == 8)
    withExtendedLifetime(observers) {}
  }

  @Test func commonMakesAFreshWorkingAdapterOnceTheSharedOneIsReleased() {
    let settings = Settings()
    weak var weakShared: PropertyAdapter<Settings, Int>?
    do {
      let shared = PropertyAdapter.common(settings, keyPath: \.fontSize)
      weakShared = shared
      shared.value = 13
    }
    #expect(weakShared == nil)
    let fresh = PropertyAdapter.common(settings, keyPath: \.fontSize)
    #expect(fresh.object === settings)
    #expect(fresh.value == 13)
    let received = Recorder<Int>()
    let observer = fresh.chain().do { received.append($0) }.end()
    fresh.value = 14
    #expect(settings.fontSize == 14)
    #expect(received.history == [14])
    #expect(PropertyAdapter.common(settings, keyPath: \.fontSize) === fresh)
    withExtendedLifetime(observer) {}
  }

  @Test func newObjectAtADeadObjectsAddressNeverGetsTheDeadObjectsAdapter() {
    // Every adapter stays alive, so a dead object's entry still names a
    // live adapter when a new object takes its address.
    var adapters: [PropertyAdapter<Settings, Int>] = []
    var deadAddresses: Set<ObjectIdentifier> = []
    var reused = 0
    for round in 0..<200 {
      // The dead objects' memory, out of the address sanitizer's quarantine.
      releaseQuarantinedMemory()
      let settings = Settings(fontSize: round)
      if deadAddresses.contains(ObjectIdentifier(settings)) { reused += 1 }
      let adapter = PropertyAdapter.common(settings, keyPath: \.fontSize)
      #expect(adapter.object === settings)
      #expect(adapter.value == round)
      adapter.value = round + 1_000
      #expect(settings.fontSize == round + 1_000)
      adapters.append(adapter)
      deadAddresses.insert(ObjectIdentifier(settings))
    }
    // The allocator does reuse addresses, so the checks above were exercised.
    #expect(reused > 0)
    #expect(adapters.allSatisfy { $0.object == nil })
  }

  // MARK: Concurrency

  @Test func concurrentWritesEndWithThePropertyTheAdapterAndABoundReceiverAgreeing() {
    let threads = 4
    let perThread = 2_500
    let shared = SharedAdapter(Settings(fontSize: -1))
    let mirror = ValueHolder(-2)
    let broadcasts = Recorder<Int>()
    let observers = [
      shared.adapter.chain().sendTo(mirror).sync(),
      shared.adapter.chain().do { broadcasts.append($0) }.end(),
    ]
    #expect(mirror.value == -1)

    race(threads: threads) { thread in
      // Every value is distinct and differs from the initial one, so every
      // write changes the property and is broadcast exactly once.
      for index in 0..<perThread {
        shared.adapter.value = thread * 10_000 + index
      }
    }

    let final = shared.settings.fontSize
    let lastWrites = (0..<threads).map { $0 * 10_000 + perThread - 1 }
    #expect(lastWrites.contains(final))
    #expect(shared.adapter.value == final)
    #expect(mirror.value == final)
    let history = broadcasts.history
    #expect(history.count == threads * perThread)
    #expect(history.last == final)
    for thread in 0..<threads {
      let fromThread = history.filter { $0 / 10_000 == thread }
      #expect(fromThread == Array(thread * 10_000..<thread * 10_000 + perThread))
    }
    withExtendedLifetime(observers) {}
  }
}

@Suite struct PropertyAdapterSafeValueTests {
  final class Profile {
    var name = "Ann"
  }

  @Test func safeValueIsNilOnceTheObjectIsGone() {
    var profile: Profile? = Profile()
    let adapter = PropertyAdapter(profile!, keyPath: \.name)
    #expect(adapter.safeValue == "Ann")
    profile!.name = "Bob"
    #expect(adapter.safeValue == "Bob")
    profile = nil
    #expect(adapter.safeValue == nil)
    #expect(adapter.value == "Bob")
  }
}
