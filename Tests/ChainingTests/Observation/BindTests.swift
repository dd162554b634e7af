import Chaining
import Dispatch
import Observation
import Testing

/// A value that is not `Equatable`: every write of it counts as a change.
struct Opaque: Swift.Sendable {
  var text: String
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@Observable final class OpaqueModel: @unchecked Swift.Sendable {
  // @unchecked: written and read on the tests' queue, or by the binding
  // on the thread that wrote the holder, never at once.
  var item = Opaque(text: "model")
  @ObservationIgnored let writes = Locked(0)

  var counted: Opaque {
    get { item }
    set {
      writes.withLock { $0 += 1 }
      item = newValue
    }
  }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor @Observable final class MainActorForm {
  var name = "Ann"
  var item = Opaque(text: "model")
  @ObservationIgnored var writes = 0

  var counted: Opaque {
    get { item }
    set {
      writes += 1
      item = newValue
    }
  }
}

@Suite struct BindTests {
  let queue = DispatchQueue(label: "BindTests")

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aHolderBoundToAModelStartsFromTheModelAndFollowsBothWays() {
    let profile = Profile()
    let field = ValueHolder("")
    let binding = field.bind(to: profile, \.first, on: queue)
    #expect(field.value == "Ann")
    #expect(profile.first == "Ann")
    field.value = "Bea"
    queue.sync {}  // the binding's write to the model
    #expect(profile.first == "Bea")
    queue.sync {}  // the model's change read back, which changes nothing
    #expect(field.value == "Bea")
    queue.sync { profile.first = "Cy" }
    queue.sync {}
    #expect(field.value == "Cy")
    binding.invalidate()
    field.value = "Di"
    queue.sync { profile.first = "Ed" }
    queue.sync {}
    #expect(profile.first == "Ed")
    #expect(field.value == "Di")
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func forwardAndBackwardConvert() {
    let profile = Profile()
    let text = ValueHolder("")
    let binding = text.bind(
      to: profile,
      \.age,
      on: queue,
      forward: { String($0) },
      backward: { Int($0) ?? 0 }
    )
    #expect(text.value == "30")
    text.value = "41"
    queue.sync {}
    #expect(profile.age == 41)
    queue.sync { profile.age = 42 }
    queue.sync {}
    #expect(text.value == "42")
    binding.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aRejectedValueLeavesTheModelAndTheHolderAsTheyAre() {
    let profile = Profile()
    let text = ValueHolder("")
    let binding = text.bind(to: profile, \.age, on: queue, forward: { String($0) }, backward: { Int($0) })
    #expect(text.value == "30")
    text.value = "14"
    queue.sync {}
    #expect(profile.age == 14)
    text.value = "14x"  // rejected: the model keeps 14, the field what was typed
    queue.sync {}
    queue.sync {}
    #expect(profile.age == 14)
    #expect(text.value == "14x")
    text.value = "15"  // accepted again: the binding still runs both ways
    queue.sync {}
    #expect(profile.age == 15)
    queue.sync { profile.age = 16 }
    queue.sync {}
    #expect(text.value == "16")
    binding.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aNonEquatableBindingSettlesWithNoPingPong() {
    let model = OpaqueModel()
    let field = ValueHolder(Opaque(text: ""))
    let fieldValues = Recorder<String>()
    let watcher = field.chain().do { fieldValues.append($0.text) }.end()
    let binding = field.bind(to: model, \.counted, on: queue)
    #expect(field.value.text == "model")
    #expect(model.writes.withLock { $0 } == 0)

    // From the holder: the model is written once; its change comes back
    // on the queue and is set on the holder once, and goes no further.
    field.value = Opaque(text: "typed")
    queue.sync {}
    queue.sync {}
    #expect(model.writes.withLock { $0 } == 1)
    #expect(model.item.text == "typed")
    #expect(fieldValues.history == ["model", "typed", "typed"])

    // From the model: the holder is set once and the model not written back.
    queue.sync { model.item = Opaque(text: "saved") }
    queue.sync {}
    queue.sync {}
    #expect(model.writes.withLock { $0 } == 1)
    #expect(fieldValues.history == ["model", "typed", "typed", "saved"])
    binding.invalidate()
    watcher.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func twoHoldersBoundSettleForNonEquatableValues() {
    let model = ValueHolder(Opaque(text: "model"))
    let field = ValueHolder(Opaque(text: ""))
    let modelValues = Recorder<String>()
    let fieldValues = Recorder<String>()
    let watchers = [
      model.chain().do { modelValues.append($0.text) }.end(),
      field.chain().do { fieldValues.append($0.text) }.end(),
    ]
    let binding = field.bind(to: model)
    #expect(field.value.text == "model")
    field.value = Opaque(text: "a")
    model.value = Opaque(text: "b")
    #expect(modelValues.history == ["a", "b"])
    #expect(fieldValues.history == ["model", "a", "b"])
    binding.invalidate()
    model.value = Opaque(text: "c")
    #expect(field.value.text == "b")
    for watcher in watchers { watcher.invalidate() }
  }

  /// A write to the other holder made while a change of this one is on its
  /// way to the binding: the old binding copied each change's own value, so
  /// the two crossing writes left each holder with the other's.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func twoHoldersWrittenAcrossEachOtherEndEqual() {
    let field = ValueHolder(0)
    let model = ValueHolder(0)
    // Subscribed before the binding, so it runs first with the field's 1:
    // the model is written on another thread before the binding sees 1.
    let interleaver = field.chain().do { value in
      guard value == 1 else { return }
      let written = DispatchSemaphore(value: 0)
      DispatchQueue.global().async {
        model.value = 2
        written.signal()
      }
      written.wait()
    }.end()
    let binding = field.bind(to: model)
    field.value = 1
    #expect(field.value == 2)
    #expect(model.value == 2)
    binding.invalidate()
    interleaver.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func twoHoldersWrittenFromSeveralThreadsAtBothEndsEndEqual() {
    for round in 0..<20 {
      let field = ValueHolder(-1)
      let model = ValueHolder(-1)
      let binding = field.bind(to: model)
      DispatchQueue.concurrentPerform(iterations: 4) { thread in
        for step in 0..<500 {
          let value = thread * 1_000 + step
          if (thread + step) % 2 == 0 { field.value = value } else { model.value = value }
        }
      }
      #expect(field.value == model.value, "round \(round)")
      binding.invalidate()
    }
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aHolderBoundToItselfStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ValueHolder(0)
      _ = holder.bind(to: holder)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("ValueHolder.bind(to:): a holder cannot be bound to itself"))
  }
  #endif

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func theBindingKeepsNeitherSideAlive() {
    weak var weakProfile: Profile?
    weak var weakField: ValueHolder<String>?
    var binding: Observer?
    do {
      let profile = Profile()
      let field = ValueHolder("")
      weakProfile = profile
      weakField = field
      binding = field.bind(to: profile, \.first, on: queue)
    }
    #expect(weakProfile == nil)
    #expect(weakField == nil)
    binding?.invalidate()
    binding = nil
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func aModelFreedWhileBoundEndsTheBindingQuietly() {
    var profile: Profile? = Profile()
    let field = ValueHolder("")
    let binding = field.bind(to: profile!, \.first, on: queue)
    profile = nil
    field.value = "Bea"
    queue.sync {}
    #expect(field.value == "Bea")
    binding.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test @MainActor func aHolderBoundToAMainActorModelFollowsBothWays() async {
    let form = MainActorForm()
    let field = ValueHolder("")
    let binding = field.bind(onMainActor: form, \.name)
    #expect(field.value == "Ann")
    field.value = "Bea"
    #expect(form.name == "Ann")  // written on the main queue, after this turn
    await mainQueueTurn()
    #expect(form.name == "Bea")
    await Task.detached { field.value = "Cy" }.value  // from another thread
    await mainQueueTurn()
    await mainQueueTurn()
    #expect(form.name == "Cy")
    form.name = "Di"
    await mainQueueTurn()
    #expect(field.value == "Di")
    binding.invalidate()
    form.name = "Ed"
    await mainQueueTurn()
    #expect(field.value == "Di")
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test @MainActor func aRejectedValueLeavesTheMainActorModelAndTheHolderAsTheyAre() async {
    let form = MainActorForm()
    let field = ValueHolder("")
    let binding = field.bind(
      onMainActor: form,
      \.name,
      forward: { $0 },
      backward: { $0.isEmpty ? nil : $0 }
    )
    #expect(field.value == "Ann")
    field.value = ""  // rejected
    await mainQueueTurn()
    await mainQueueTurn()
    #expect(form.name == "Ann")
    #expect(field.value == "")
    field.value = "Bea"
    await mainQueueTurn()
    #expect(form.name == "Bea")
    form.name = "Cy"
    await mainQueueTurn()
    #expect(field.value == "Cy")
    binding.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test @MainActor func aNonEquatableMainActorBindingSettles() async {
    let form = MainActorForm()
    let field = ValueHolder(Opaque(text: ""))
    let fieldValues = Recorder<String>()
    let watcher = field.chain().do { fieldValues.append($0.text) }.end()
    let binding = field.bind(
      onMainActor: form,
      \.counted,
      forward: { $0 },
      backward: { Opaque(text: $0.text + "!") }
    )
    field.value = Opaque(text: "typed")
    await mainQueueTurn()  // the binding's write
    await mainQueueTurn()  // the model's change read back
    #expect(form.writes == 1)
    #expect(form.item.text == "typed!")
    #expect(fieldValues.history == ["model", "typed", "typed!"])
    form.item = Opaque(text: "saved")
    await mainQueueTurn()
    await mainQueueTurn()
    #expect(form.writes == 1)
    #expect(fieldValues.history == ["model", "typed", "typed!", "saved"])
    binding.invalidate()
    watcher.invalidate()
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test @MainActor func aMainActorBindingKeepsNeitherSideAlive() async {
    weak var weakForm: MainActorForm?
    weak var weakField: ValueHolder<String>?
    var binding: Observer?
    do {
      let form = MainActorForm()
      let field = ValueHolder("")
      weakForm = form
      weakField = field
      binding = field.bind(onMainActor: form, \.name)
    }
    await mainQueueTurn()
    #expect(weakForm == nil)
    #expect(weakField == nil)
    binding?.invalidate()
    binding = nil
  }
}
