import Chaining
import Foundation

/// A thread-safe list of what handlers saw, in order.
final class Recorder<Value>: @unchecked Swift.Sendable {
  // @unchecked: `values` is only touched under `lock`.
  // NSLock rather than Mutex: the sanitizer understands its pthread mutex.
  private let lock = NSLock()
  private var values: [Value] = []

  func append(_ value: Value) {
    lock.withLock { values.append(value) }
  }

  var history: [Value] {
    lock.withLock { values }
  }

  var count: Int {
    lock.withLock { values.count }
  }
}

/// A receiver that records every value it receives.
final class RecordingReceiver<Value>: Receivable, @unchecked Swift.Sendable {
  let recorder = Recorder<Value>()
  var history: [Value] { recorder.history }

  func receive(value: Value) {
    recorder.append(value)
  }
}

/// A user's own notifier: adopts `Sendable` with nothing but the typealias.
final class IntNotifier: Chaining.Sendable {
  typealias ChainValue = Int
  func notify(value: Int) { self.broadcast(value: value) }
}

/// A user's own holder, written exactly as in the issue and the README.
final class IntHolder: Syncable, Receivable {
  typealias ChainValue = Int
  typealias ReceiveValue = Int
  var value: Int { didSet { if value != oldValue { self.broadcast(value: value) } } }
  init(_ initial: Int) { self.value = initial }
  func fetchedValue() -> Int { self.value }
  func receive(value: Int) { self.value = value }
}

/// A value that is not `Equatable`, for the loops that equality cannot break.
struct Box: Swift.Sendable {
  let number: Int
}

/// An object to watch for deallocation through a weak reference.
final class Token: @unchecked Swift.Sendable {}
