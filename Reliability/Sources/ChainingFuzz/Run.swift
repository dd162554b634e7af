import Chaining

// MARK: - Run

/// Runs one script against the library and the model side by side, and
/// checks after every operation that the two agree:
/// - every holder's value, array and dictionary equals the model's;
/// - every live chain's last value and number of values equal the model's;
/// - every replayed array or dictionary equals its holder;
/// - an invalidated or released chain has released what it captured, and
///   a released holder is freed (nothing else holds it);
/// - at the end, with everything released, nothing is left alive.
///
/// A broken invariant prints the script and stops the program, which is
/// what libFuzzer reports as a crash.
final class Run {
  /// What a chain's steps saw, kept by the run; the chain's closures hold it.
  final class Record {
    var last: [Int] = []
    var count = 0
    var array: [Int] = []
    var dictionary: [Int: Int] = [:]
    var failure: String?

    func note(_ values: [Int]) {
      last = values
      count += 1
    }

    /// Notes an event that does not fit the replayed copy.
    func reject(_ reason: String) {
      failure = failure ?? reason
    }
  }

  /// Captured by a chain's closures only: it is freed when they are.
  final class Token {}

  struct Slot {
    var observer: Observer?
    let chain: Int
    let record: Record
    weak var token: Token?
  }

  let script: Script
  let model = Model()
  var holders: [ValueHolder<Int>?] = (0..<Script.holderCount).map { _ in ValueHolder(0) }
  let notifier = Notifier<Int>()
  let suspender = Suspender()
  let arrays = [ArrayHolder<Int>(), ArrayHolder<Int>()]
  let dictionary = DictionaryHolder<Int, Int>()
  var slots: [Slot?] = Array(repeating: nil, count: Script.slotCount)
  /// The operations run so far, for the report of a failure.
  var done = 0

  init(_ script: Script) {
    self.script = script
  }

  /// Runs the whole script, then releases everything and checks that it is freed.
  static func run(_ script: Script) {
    weak var notifier: Notifier<Int>?
    weak var suspender: Suspender?
    weak var array: ArrayHolder<Int>?
    weak var dictionary: DictionaryHolder<Int, Int>?
    var holders: [Weak<ValueHolder<Int>>] = []
    do {
      let run = Run(script)
      for operation in script.operations {
        run.perform(operation)
        run.done += 1
        run.check()
      }
      for slot in run.slots.indices { run.releaseSlot(slot) }
      notifier = run.notifier
      suspender = run.suspender
      array = run.arrays[0]
      dictionary = run.dictionary
      holders = run.holders.map { Weak($0) }
    }
    let leftAlive =
      [notifier == nil, suspender == nil, array == nil, dictionary == nil] + holders.map { $0.object == nil }
    if leftAlive.contains(false) {
      fail(script, done: script.operations.count, "an object is alive after the run released everything")
    }
  }

  // MARK: Operations

  func perform(_ operation: Operation) {
    switch operation {
    case .write(let index, let value):
      guard let holder = holders[index] else { return }
      holder.value = value
      model.write(holder: index, value)
    case .resend(let index):
      guard let holder = holders[index] else { return }
      holder.resend()
      model.resend(holder: index)
    case .notify(let value):
      notifier.notify(value: value)
      model.notify(value)
    case .chain(let slot, let spec):
      releaseSlot(slot)
      makeChain(spec, in: slot)
    case .invalidate(let slot):
      guard let existing = slots[slot] else { return }
      existing.observer?.invalidate()
      model.end(chain: existing.chain)
    case .release(let slot):
      releaseSlot(slot)
    case .replaceHolder(let index):
      if holders[index] == nil {
        holders[index] = ValueHolder(0)
        model.makeHolder(index)
      } else {
        weak let released = holders[index]
        holders[index] = nil
        model.releaseHolder(index)
        expect(released == nil, "holders[\(index)] is alive after its release")
      }
    case .array(let write):
      guard let write = resolved(write, count: model.arrays[0].count) else { return }
      // The holder's own `receive(value:)`: each action calls its method.
      arrays[0].receive(value: write)
      model.write(array: 0, write)
    case .dictionary(let write):
      perform(write)
    case .suspend(let suspends):
      if suspends { suspender.suspend() } else { suspender.resume() }
      model.setSuspended(suspends)
    }
  }

  /// Releases the observer in `slot`, and checks that its closures are freed.
  func releaseSlot(_ slot: Int) {
    guard let chain = slots[slot]?.chain else { return }
    weak let token = slots[slot]?.token
    slots[slot] = nil
    model.end(chain: chain)
    expect(token == nil, "slot \(slot): a released observer's closures are alive")
  }

  private func perform(_ write: DictionaryWrite) {
    switch write {
    case .update(let key, let value): dictionary[key] = value
    case .remove(let key): dictionary.removeValue(forKey: key)
    case .insert(let key, let value):
      guard dictionary[key] == nil else { return }
      dictionary.insert(key: key, value: value)
    case .replace(let key, let value):
      guard dictionary[key] != nil else { return }
      dictionary.replace(key: key, value: value)
    case .set(let entries): dictionary.set(entries)
    case .removeAll: dictionary.removeAll()
    }
    model.write(dictionary: write)
  }

  /// `write` with its indices brought into range, or `nil` when it needs
  /// an element and there is none.
  private func resolved(_ write: ArrayWrite, count: Int) -> ArrayWrite? {
    switch write {
    case .insert(let element, let index): return .insert(element, at: index % (count + 1))
    case .remove(let index): return count == 0 ? nil : .remove(at: index % count)
    case .replace(let element, let index): return count == 0 ? nil : .replace(element, at: index % count)
    case .move(let from, let to): return count == 0 ? nil : .move(at: from % count, to: to % count)
    default: return write
    }
  }

  // MARK: Invariants

  func check() {
    for index in holders.indices {
      expect((holders[index] == nil) == (model.generations[index] == nil), "holders[\(index)]: alive or not")
      if let holder = holders[index] {
        expect(
          holder.value == model.values[index],
          "holders[\(index)].value \(holder.value), model \(model.values[index])"
        )
      }
    }
    expect(arrays[0].raw == model.arrays[0], "arrays[0] \(arrays[0].raw), model \(model.arrays[0])")
    expect(arrays[1].raw == model.arrays[1], "arrays[1] \(arrays[1].raw), model \(model.arrays[1])")
    expect(dictionary.raw == model.dictionary, "dictionary \(dictionary.raw), model \(model.dictionary)")
    expect(suspender.isSuspended == model.isSuspended, "suspender")
    for (index, slot) in slots.enumerated() {
      guard let slot, let chain = model.chains[slot.chain] else { continue }
      let record = slot.record
      let name = "slot \(index) (\(chain.spec))"
      if let failure = record.failure { expect(false, "\(name): \(failure)") }
      expect(record.count == chain.count, "\(name): \(record.count) values, model \(chain.count)")
      expect(record.last == chain.last, "\(name): last \(record.last), model \(chain.last)")
      expect(
        chain.isAlive == (slot.token != nil),
        "\(name): closures alive \(slot.token != nil), chain alive \(chain.isAlive)"
      )
      guard chain.isAlive else { continue }
      switch chain.spec {
      case .arrayReplay(let array):
        expect(record.array == arrays[array].raw, "\(name): replayed \(record.array), holder \(arrays[array].raw)")
      case .dictionaryReplay:
        expect(record.dictionary == dictionary.raw, "\(name): replayed \(record.dictionary), holder \(dictionary.raw)")
      default: break
      }
    }
  }

  func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { Self.fail(script, done: done, message()) }
  }

  static func fail(_ script: Script, done: Int, _ message: String) -> Never {
    var report = "Chaining fuzz: invariant broken after operation \(done) of this script:\n"
    for (index, operation) in script.operations.enumerated() {
      report += "  \(index + 1). \(operation)\n"
    }
    fatalError(report + message)
  }
}

struct Weak<Object: AnyObject> {
  weak var object: Object?

  init(_ object: Object?) {
    self.object = object
  }
}
