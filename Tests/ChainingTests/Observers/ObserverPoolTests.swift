import Chaining
import Testing

@Suite struct ObserverPoolTests {
  @Test func invalidateEndsEveryObserverInThePool() {
    let holder = ValueHolder(0)
    let received = Recorder<String>()
    let pool = ObserverPool()
    holder.chain().do { received.append("a\($0)") }.end().addTo(pool)
    pool.add(holder.chain().do { received.append("b\($0)") }.end())
    #expect(pool.count == 2)
    holder.value = 1
    pool.invalidate()
    holder.value = 2
    #expect(received.history == ["a1", "b1"])
    #expect(pool.count == 0)
  }

  @Test func releasingThePoolInvalidatesItsObservers() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    var pool: ObserverPool? = ObserverPool()
    notifier.chain().do { received.append($0) }.end().addTo(pool!)
    notifier.notify(value: 1)
    pool = nil
    notifier.notify(value: 2)
    #expect(received.history == [1])
  }

  @Test func removeLetsGoWithoutInvalidating() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let pool = ObserverPool()
    let observer = notifier.chain().do { received.append($0) }.end()
    pool.add(observer)
    pool.remove(observer)
    pool.invalidate()
    notifier.notify(value: 1)
    #expect(received.history == [1])
    #expect(!observer.isInvalidated)
    #expect(pool.count == 0)
  }

  @Test func removingTheOnlyReferenceInvalidates() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let pool = ObserverPool()
    weak var weakObserver: Observer?
    do {
      let observer = notifier.chain().do { received.append($0) }.end()
      weakObserver = observer
      pool.add(observer)
    }
    #expect(weakObserver != nil)
    pool.remove(weakObserver!)
    #expect(weakObserver == nil)
    notifier.notify(value: 1)
    #expect(received.history.isEmpty)
  }

  @Test func addingTheSameObserverTwiceKeepsOne() {
    let pool = ObserverPool()
    let observer = Notifier<Int>().chain().end()
    pool.add(observer)
    observer.addTo(pool)
    #expect(pool.count == 1)
  }

  @Test func poolStaysUsableAfterInvalidate() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let pool = ObserverPool()
    notifier.chain().end().addTo(pool)
    pool.invalidate()
    notifier.chain().do { received.append($0) }.end().addTo(pool)
    notifier.notify(value: 3)
    #expect(received.history == [3])
    #expect(pool.count == 1)
  }

  @Test func poolsNest() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let outer = ObserverPool()
    let inner = ObserverPool()
    notifier.chain().do { received.append($0) }.end().addTo(inner)
    inner.addTo(outer)
    outer.invalidate()
    notifier.notify(value: 1)
    #expect(received.history.isEmpty)
    #expect(inner.count == 0)
  }

  @Test func handlerCanInvalidateThePoolItBelongsTo() {
    let notifier = Notifier<Int>()
    let received = Recorder<Int>()
    let pool = ObserverPool()
    notifier.chain().do { value in
      received.append(value)
      pool.invalidate()
    }.end().addTo(pool)
    notifier.notify(value: 1)
    notifier.notify(value: 2)
    #expect(received.history == [1])
  }

  @Test func observersEndedFromAHandlerAreReleasedByTheNextInvalidateOrThePool() {
    // A pool invalidated from inside a handler did not wait, so it keeps
    // the observers it ended for a later call to wait for; that call, or
    // releasing the pool, lets them go.
    let trigger = Notifier<Void>()
    for releasesThePool in [false, true] {
      weak var weakObserver: Observer?
      var pool: ObserverPool? = ObserverPool()
      do {
        let observer = Notifier<Int>().chain().do { _ in }.end()
        weakObserver = observer
        pool!.add(observer)
      }
      let invalidator = trigger.chain().do { [pool] in pool?.invalidate() }.end()
      trigger.notify()
      invalidator.invalidate()
      #expect(weakObserver?.isInvalidated == true)
      if releasesThePool {
        pool = nil
      } else {
        pool!.invalidate()
        #expect(pool!.count == 0)
      }
      #expect(weakObserver == nil)
      withExtendedLifetime(pool) {}
    }
  }
}
