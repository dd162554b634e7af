import Chaining
import Testing

/// A source whose value is set by the test, fetchable only once set, as
/// an RxSwift observable that has not emitted yet is not there to read.
private final class Latest<Value>: Fetchable {
  typealias ChainValue = Value
  var value: Value?
  func canFetch() -> Bool { value != nil }
  func fetchedValue() -> Value { value! }
}

@Suite struct ChainWithLatestFromTests {
  @Test func eachValueIsPairedWithTheOtherSourcesValueAtThatMoment() {
    // RxSwift's `withLatestFrom_Simple1`, its events in their order: a
    // value before the other source has one is dropped.
    let source = Notifier<Int>()
    let other = Latest<String>()
    let received = Recorder<String>()
    let observer = source.chain().withLatestFrom(other).map { "\($0)\($1)" }.do { received.append($0) }.end()
    source.notify(value: 3)
    other.value = "bar"
    source.notify(value: 4)
    source.notify(value: 5)
    other.value = "foo"
    source.notify(value: 6)
    other.value = "qux"
    for value in 7...10 { source.notify(value: value) }
    #expect(received.history == ["4bar", "5bar", "6foo", "7qux", "8qux", "9qux", "10qux"])
    withExtendedLifetime(observer) {}
  }

  @Test func theOtherSourcesChangesSendNothingAndItIsNotSubscribed() {
    let taps = Notifier<Void>()
    let username = ValueHolder("ann")
    let received = Recorder<String>()
    let observer = taps.chain().withLatestFrom(username).map { $1 }.do { received.append($0) }.end()
    #expect(username.observerCount == 0)
    username.value = "anna"
    #expect(received.history == [])
    taps.notify(value: ())
    taps.notify(value: ())
    #expect(received.history == ["anna", "anna"])
    withExtendedLifetime(observer) {}
  }

  @Test func theSyncedValueIsPairedToo() {
    let count = ValueHolder(2)
    let unit = ValueHolder("items")
    let received = Recorder<String>()
    let observer = count.chain().withLatestFrom(unit).map { "\($0) \($1)" }.do { received.append($0) }.sync()
    unit.value = "files"
    count.value = 3
    #expect(received.history == ["2 items", "3 files"])
    withExtendedLifetime(observer) {}
  }

  @Test func aComputedValueIsReadAsItIsThen() {
    let price = ValueHolder(10)
    let quantity = ValueHolder(2)
    let total = Computed { price.value * quantity.value }
    let checkout = Notifier<String>()
    let received = Recorder<String>()
    let observer = checkout.chain().withLatestFrom(total).map { "\($0): \($1)" }.do { received.append($0) }.end()
    quantity.value = 3
    checkout.notify(value: "pay")
    #expect(received.history == ["pay: 30"])
    withExtendedLifetime(observer) {}
  }

  @Test func theOtherSourceIsHeldUntilTheObserverIsInvalidated() {
    let taps = Notifier<Void>()
    let received = Recorder<Int>()
    weak var weakOther: ValueHolder<Int>?
    let observer: Observer
    do {
      let other = ValueHolder(7)
      weakOther = other
      observer = taps.chain().withLatestFrom(other).do { received.append($1) }.end()
    }
    #expect(weakOther != nil)
    taps.notify(value: ())
    #expect(received.history == [7])
    observer.invalidate()
    #expect(weakOther == nil)
  }
}
