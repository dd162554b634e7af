import Chaining

// MARK: - Script

/// The operations one fuzzer input stands for.
///
/// Every input decodes to a script, whatever its bytes: an operation is an
/// opcode byte followed by the bytes of its parameters, each taken modulo
/// its range, and a missing byte reads as 0. So libFuzzer's mutations
/// always give a valid script, and a short input gives a short script.
struct Script {
  static let holderCount = 4
  static let slotCount = 8
  static let maximumLength = 64

  var operations: [Operation] = []

  init(_ bytes: some Collection<UInt8>) {
    var reader = ByteReader(bytes: Array(bytes))
    while !reader.isAtEnd, operations.count < Self.maximumLength {
      operations.append(reader.operation())
    }
  }
}

/// One step of a script, run against the library and the model alike.
enum Operation: Equatable {
  /// `holders[holder].value = value`.
  case write(holder: Int, value: Int)
  /// `holders[holder].resend()`.
  case resend(holder: Int)
  /// `notifier.notify(value:)`.
  case notify(value: Int)
  /// Finishes a chain into `slot`, releasing the observer there first.
  case chain(slot: Int, ChainSpec)
  /// `observers[slot].invalidate()`.
  case invalidate(slot: Int)
  /// Releases `observers[slot]`.
  case release(slot: Int)
  /// Releases `holders[holder]`, or makes a new one holding 0 when released.
  case replaceHolder(Int)
  /// A write to the first array holder.
  case array(ArrayWrite)
  /// A write to the dictionary holder.
  case dictionary(DictionaryWrite)
  /// `suspender.suspend()`, or `resume()`.
  case suspend(Bool)
}

/// A chain the script builds, from the sources to its last step.
enum ChainSpec: Equatable {
  /// `holders[source].chain().map(transform)`, recorded, synced.
  case map(source: Int, Transform)
  /// `holders[source].chain().filter { $0 is even }`, recorded, synced.
  case filter(source: Int)
  /// `holders[first].chain().combine(holders[second].chain())`, synced.
  case combine(Int, Int)
  /// `holders[source].chain().combine(notifier.chain())`, synced.
  case combineNotifier(source: Int)
  /// `holders[first].chain().merge(holders[second].chain())`, synced.
  case merge(Int, Int)
  /// `holders[source].chain().merge(notifier.chain())`, synced.
  case mergeNotifier(source: Int)
  /// `holders[source].chain().suspend(suspender)`, synced.
  case suspended(source: Int)
  /// `notifier.chain().map(transform)`, ended.
  case notifier(Transform)
  /// `holders[source].chain().map(transform).sendTo(holders[target])`,
  /// synced or ended: a binding, a loop when it closes one.
  case sendTo(source: Int, target: Int, Transform, syncs: Bool)
  /// A `do` handler that writes `transform(value)` to `holders[target]`
  /// (maybe its own source) when the value is odd, holding it weakly.
  case writeFromHandler(source: Int, target: Int, Transform)
  /// Replays the events of `arrays[index]` onto a copy, synced.
  case arrayReplay(index: Int)
  /// `arrays[0].chain().map(\.action).sendTo(arrays[1])`, synced.
  case arrayMirror
  /// Writes `arrays[0].count` to `holders[target]` on every event, synced.
  case arrayCount(target: Int)
  /// Replays the events of the dictionary holder onto a copy, synced.
  case dictionaryReplay
}

/// A transform of a map or a binding; wrapping, so that no value traps.
enum Transform: Int, CaseIterable, Equatable {
  case identity, increment, double, negate

  func callAsFunction(_ value: Int) -> Int {
    switch self {
    case .identity: value
    case .increment: value &+ 1
    case .double: value &* 2
    case .negate: 0 &- value
    }
  }
}

/// A write to an array holder: the library's own action type. Indices are
/// taken modulo the count when the write runs; a write that needs an
/// element is skipped on an empty array.
typealias ArrayWrite = ArrayAction<Int>

/// A write to the dictionary holder. Keys are small, so that writes meet.
enum DictionaryWrite: Equatable {
  /// `dictionary[key] = value`.
  case update(key: Int, value: Int)
  /// `removeValue(forKey:)`.
  case remove(key: Int)
  /// `insert(key:value:)`, skipped when the key is present.
  case insert(key: Int, value: Int)
  /// `replace(key:value:)`, skipped when the key is missing.
  case replace(key: Int, value: Int)
  case set([Int: Int])
  case removeAll
}

// MARK: - ByteReader

private struct ByteReader {
  let bytes: [UInt8]
  var index = 0

  var isAtEnd: Bool { index >= bytes.count }

  mutating func byte() -> Int {
    defer { index += 1 }
    return index < bytes.count ? Int(bytes[index]) : 0
  }

  mutating func number(below bound: Int) -> Int { byte() % bound }

  /// Small values, so that equal writes (which send nothing) are common.
  mutating func value() -> Int { number(below: 16) }

  mutating func holder() -> Int { number(below: Script.holderCount) }

  mutating func transform() -> Transform { Transform(rawValue: number(below: Transform.allCases.count))! }

  mutating func values() -> [Int] { (0..<number(below: 4)).map { _ in value() } }

  mutating func operation() -> Operation {
    switch number(below: 16) {
    case 0, 1, 2: .write(holder: holder(), value: value())
    case 3: .resend(holder: holder())
    case 4: .notify(value: value())
    case 5, 6, 7: .chain(slot: number(below: Script.slotCount), chainSpec())
    case 8: .invalidate(slot: number(below: Script.slotCount))
    case 9: .release(slot: number(below: Script.slotCount))
    case 10: .replaceHolder(holder())
    case 11, 12: .array(arrayWrite())
    case 13: .dictionary(dictionaryWrite())
    default: .suspend(byte() % 2 == 0)
    }
  }

  mutating func chainSpec() -> ChainSpec {
    switch number(below: 14) {
    case 0: .map(source: holder(), transform())
    case 1: .filter(source: holder())
    case 2: .combine(holder(), holder())
    case 3: .combineNotifier(source: holder())
    case 4: .merge(holder(), holder())
    case 5: .mergeNotifier(source: holder())
    case 6: .suspended(source: holder())
    case 7: .notifier(transform())
    case 8: .sendTo(source: holder(), target: holder(), transform(), syncs: byte() % 2 == 0)
    case 9: .writeFromHandler(source: holder(), target: holder(), transform())
    case 10: .arrayReplay(index: number(below: 2))
    case 11: .arrayMirror
    case 12: .arrayCount(target: holder())
    default: .dictionaryReplay
    }
  }

  mutating func arrayWrite() -> ArrayWrite {
    switch number(below: 8) {
    case 0: .set(values())
    case 1: .append(value())
    case 2: .appendContentsOf(values())
    case 3: .insert(value(), at: byte())
    case 4: .remove(at: byte())
    case 5: .removeAll
    case 6: .replace(value(), at: byte())
    default: .move(at: byte(), to: byte())
    }
  }

  mutating func dictionaryWrite() -> DictionaryWrite {
    switch number(below: 6) {
    case 0: .update(key: number(below: 8), value: value())
    case 1: .remove(key: number(below: 8))
    case 2: .insert(key: number(below: 8), value: value())
    case 3: .replace(key: number(below: 8), value: value())
    case 4:
      .set(Dictionary((0..<number(below: 4)).map { _ in (number(below: 8), value()) }) { _, last in last })
    default: .removeAll
    }
  }
}
