import Chaining
import Dispatch
import Foundation
import Testing

/// `sync()` of a chain that is its holder's only observer, while another
/// thread writes: the fetched value is handed to the chain on the syncing
/// thread, the next write's delivery runs the same chain on the writer's
/// thread without claiming the chain's gate. The handlers touch state with
/// no lock of its own (`Unlocked`): the thread sanitizer reports a race
/// unless the library orders the two runs, as Threading.md promises ("a
/// chain's handlers never run on two threads at once").
///
/// Each test syncs a fixed number of chains during a fixed number of writes,
/// invalidating each at once: the race is between the fetch and the very
/// next delivery.
@Suite(.serialized) struct OnlyObserverSyncRaceTests {
  /// What one chain's handler saw; touched only by that chain's handlers,
  /// and read once its observer is invalidated.
  final class Unlocked: @unchecked Swift.Sendable {
    // @unchecked: that is the point: the library must order the handlers.
    var seen: [Int] = []
  }

  static let writes = 10_000
  static let rounds = 100

  /// Writes `0..<writes` with `write` on another thread while syncing
  /// `rounds` chains made by `bind`, each invalidated at once; returns
  /// what each chain saw.
  private func syncWhileWriting(
    _ write: @escaping @Sendable (Int) -> Void,
    bind: (Unlocked) -> Observer
  ) -> [[Int]] {
    let started = DispatchSemaphore(value: 0)
    let writer = spawn {
      write(0)
      started.signal()
      for value in 1..<Self.writes { write(value) }
    }
    started.wait()
    var all: [[Int]] = []
    for _ in 0..<Self.rounds {
      let unlocked = Unlocked()
      bind(unlocked).invalidate()
      all.append(unlocked.seen)
    }
    writer.wait()
    return all
  }

  /// Each history starts with the fetched value and goes on one by one.
  private func expectConsecutive(_ histories: [[Int]], _ kind: String) {
    #expect(histories.count == Self.rounds)
    for history in histories {
      #expect(!history.isEmpty, "\(kind): no fetched value")
      guard let first = history.first else { continue }
      #expect(history == Array(first..<(first + history.count)), "\(kind): \(history.prefix(6))…")
    }
  }

  @Test func valueHolder() {
    let holder = ValueHolder(-1)
    let histories = syncWhileWriting(
      { holder.value = $0 },
      bind: { unlocked in
        holder.chain().do { unlocked.seen.append($0) }.sync()
      }
    )
    expectConsecutive(histories, "ValueHolder")
  }

  @Test func eventableValueHolder() {
    let holder = EventableValueHolder(-1)
    let histories = syncWhileWriting(
      { holder.value = $0 },
      bind: { unlocked in
        holder.chain().do { unlocked.seen.append($0.value) }.sync()
      }
    )
    expectConsecutive(histories, "EventableValueHolder")
  }

  @Test func relayableValueHolder() {
    let holder = RelayableValueHolder(ValueHolder(-1))
    let histories = syncWhileWriting(
      { holder.value = ValueHolder($0) },
      bind: { unlocked in
        holder.chain().do { event in
          switch event {
          case .fetched(let element), .current(let element): unlocked.seen.append(element.value)
          case .relayed: unlocked.seen.append(-100)
          }
        }.sync()
      }
    )
    expectConsecutive(histories, "RelayableValueHolder")
  }

  @Test func arrayHolder() {
    let holder = ArrayHolder<Int>()
    let histories = syncWhileWriting(
      { holder.append($0) },
      bind: { unlocked in
        holder.chain().do { event in
          switch event {
          case .fetched(let all): unlocked.seen.append(all.count - 1)
          case .inserted(_, let element): unlocked.seen.append(element)
          default: unlocked.seen.append(-100)
          }
        }.sync()
      }
    )
    expectConsecutive(histories, "ArrayHolder")
  }

  @Test func dictionaryHolder() {
    let holder = DictionaryHolder<Int, Int>()
    let histories = syncWhileWriting(
      { holder[$0] = $0 },
      bind: { unlocked in
        holder.chain().do { event in
          switch event {
          case .fetched(let all): unlocked.seen.append(all.count - 1)
          case .inserted(let key, _): unlocked.seen.append(key)
          default: unlocked.seen.append(-100)
          }
        }.sync()
      }
    )
    expectConsecutive(histories, "DictionaryHolder")
  }

  @Test func relayableArrayHolder() {
    let holder = RelayableArrayHolder<ValueHolder<Int>>()
    let histories = syncWhileWriting(
      { holder.append(ValueHolder($0)) },
      bind: { unlocked in
        holder.chain().do { event in
          switch event {
          case .fetched(let all): unlocked.seen.append(all.count - 1)
          case .inserted(_, let element): unlocked.seen.append(element.value)
          default: unlocked.seen.append(-100)
          }
        }.sync()
      }
    )
    expectConsecutive(histories, "RelayableArrayHolder")
  }

  @Test func relayableDictionaryHolder() {
    let holder = RelayableDictionaryHolder<Int, ValueHolder<Int>>()
    let histories = syncWhileWriting(
      { holder[$0] = ValueHolder($0) },
      bind: { unlocked in
        holder.chain().do { event in
          switch event {
          case .fetched(let all): unlocked.seen.append(all.count - 1)
          case .inserted(let key, _): unlocked.seen.append(key)
          default: unlocked.seen.append(-100)
          }
        }.sync()
      }
    )
    expectConsecutive(histories, "RelayableDictionaryHolder")
  }

  /// A user's `Syncable`, thread-safe: it broadcasts each write after
  /// storing it, outside its lock, as a user's class would.
  final class LockedCounter: Syncable, @unchecked Swift.Sendable {
    // @unchecked: `stored` is guarded by `lock`.
    typealias ChainValue = Int
    private let lock = NSLock()
    private var stored = -1

    func write(_ value: Int) {
      lock.withLock { stored = value }
      broadcast(value: value)
    }

    func fetchedValue() -> Int { lock.withLock { stored } }
  }

  @Test func userSyncable() {
    let counter = LockedCounter()
    let histories = syncWhileWriting(
      { counter.write($0) },
      bind: { unlocked in
        counter.chain().do { unlocked.seen.append($0) }.sync()
      }
    )
    // A user's class fetches and broadcasts outside the library's lock:
    // a write broadcast while the chain syncs may arrive after a fetched
    // value newer than it (see Threading.md). What holds: the fetched
    // value first, then the writes in the order they were broadcast.
    #expect(histories.count == Self.rounds)
    for history in histories {
      #expect(!history.isEmpty)
      let broadcast = history.dropFirst()
      #expect(zip(broadcast, broadcast.dropFirst()).allSatisfy { $0 + 1 == $1 }, "\(history.prefix(6))…")
    }
  }
}
