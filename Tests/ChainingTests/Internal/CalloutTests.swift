import Testing

@testable import Chaining

/// A value whose `==` reads `nosyHolder`: the holder of such values, if
/// it is that holder, is called back from under its own lock.
struct Nosy: Equatable {
  var number: Int
  static func == (lhs: Nosy, rhs: Nosy) -> Bool {
    _ = nosyHolder?.value
    return lhs.number == rhs.number
  }
}

nonisolated(unsafe) var nosyHolder: ValueHolder<Nosy>?

/// A model whose property's observer reads `nosyAdapter`.
final class NosyModel {
  var count = 0 {
    didSet { _ = nosyAdapter?.value }
  }
}

nonisolated(unsafe) var nosyAdapter: PropertyAdapter<NosyModel, Int>?

/// Code of the user's that runs under a lock of the library (a holder's
/// `==`, a property adapter's accessors) and calls back into the same
/// object stops with a message naming it, on every platform, instead of
/// waiting for ever (the Linux lock) or trapping in `os_unfair_lock`.
@Suite struct CalloutTests {
  @Test func anEqualityThatReadsAnotherHolderIsFine() {
    let other = ValueHolder(Nosy(number: 0))
    nosyHolder = other
    defer { nosyHolder = nil }
    let holder = ValueHolder(Nosy(number: 0))
    holder.value = Nosy(number: 1)
    holder.value = Nosy(number: 1)
    #expect(holder.value.number == 1)
  }

  @Test func onlyTheStandardLibrarysOwnEqualitiesGoUnmarked() {
    #expect(hasLibraryEquality(Int.self))
    #expect(hasLibraryEquality(Bool.self))
    #expect(hasLibraryEquality(Double.self))
    #expect(hasLibraryEquality(String.self))
    #expect(!hasLibraryEquality(Nosy.self))
    #expect(!hasLibraryEquality(Int?.self))
    #expect(!hasLibraryEquality(Float.self))
  }

  @Test func unmarkedComparisonsStillSkipEqualWritesAndSendTheOthers() {
    let number = ValueHolder(1.5)
    let flag = ValueHolder(false)
    let text = ValueHolder("a")
    var sent: [String] = []
    let observers = [
      number.chain().do { sent.append("\($0)") }.end(),
      flag.chain().do { sent.append("\($0)") }.end(),
      text.chain().do { sent.append($0) }.end(),
    ]
    number.value = 1.5
    flag.value = false
    text.value = "a"
    number.value = .nan
    number.value = .nan  // NaN is not equal to itself: sent again
    flag.value = true
    text.value = "b"
    #expect(sent == ["nan", "nan", "true", "b"])
    withExtendedLifetime(observers) {}
  }

  @Test func theRecordIsTheLockAndTheCallThenTheEnclosingOne() {
    let outer = Protected(0)
    let inner = Protected(0)
    let record = { DeliveryContext.current.state.pointee.callout }
    let address = { (lock: Protected<Int>) in UInt(bitPattern: Unmanaged.passUnretained(lock).toOpaque()) }
    #expect(record() == 0)
    outer.callingOut(.equality) {
      #expect(record() == address(outer) | Callout.equality.rawValue)
      inner.callingOut(.propertyAccess) {
        #expect(record() == address(inner) | Callout.propertyAccess.rawValue)
      }
      #expect(record() == address(outer) | Callout.equality.rawValue)
    }
    #expect(record() == 0)
  }

  #if !os(iOS) && !os(tvOS) && !os(watchOS) && !os(visionOS)  // no exit tests there
  @Test func anEqualityThatReadsItsOwnHolderStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let holder = ValueHolder(Nosy(number: 0))
      nosyHolder = holder
      holder.value = Nosy(number: 1)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("The `==` of a holder's value type read or wrote that holder."))
  }

  @Test func aPropertyObserverThatReadsItsAdapterStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let model = NosyModel()
      let adapter = PropertyAdapter(model, keyPath: \.count)
      nosyAdapter = adapter
      adapter.value = 1
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("A property read or written through a `PropertyAdapter`"))
  }
  #endif
}
