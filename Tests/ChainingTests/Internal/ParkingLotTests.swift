import Dispatch
import Testing

@testable import Chaining

@Suite struct ParkingLotTests {
  /// A flag guarded by its own stripe.
  final class Flag: @unchecked Swift.Sendable {
    // @unchecked: `isSet` is only touched under the flag's stripe.
    var isSet = false

    func set() {
      ParkingLot.shared.withLock(self) {
        isSet = true
        ParkingLot.shared.wakeAll(self)
      }
    }

    func wait() {
      ParkingLot.shared.wait(for: self) { isSet }
    }
  }

  @Test func waitReturnsAtOnceWhenTheConditionHolds() {
    let flag = Flag()
    flag.set()
    flag.wait()
    #expect(ParkingLot.shared.withLock(flag) { flag.isSet })
  }

  @Test func everyWaiterWakesWhenManyObjectsShareStripes() {
    // Four times as many flags as stripes: several share each stripe, so
    // waiters are woken for each other's flags and must wait again.
    let flags = (0..<256).map { _ in Flag() }
    let done = Recorder<Int>()
    let waiters = (0..<flags.count).map { index in
      let flag = flags[index]
      return spawn {
        flag.wait()
        done.append(index)
      }
    }
    for flag in flags.reversed() { flag.set() }
    for waiter in waiters { waiter.wait() }
    #expect(done.history.sorted() == Array(0..<flags.count))
  }
}
