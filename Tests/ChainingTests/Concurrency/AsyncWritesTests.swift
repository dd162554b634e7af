import Chaining
import Testing

@Suite struct AsyncWritesTests {
  @Test func holderWrittenFromManyTasksEndsConsistent() async {
    let holder = ValueHolder(-1)
    let mirror = ValueHolder(-2)
    let writes = Recorder<Int>()
    let observers = [
      holder.chain().sendTo(mirror).sync(),
      holder.chain().do { writes.append($0) }.end(),
    ]
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<50 {
        group.addTask {
          for index in 0..<40 { holder.value = task * 1_000 + index }
        }
      }
    }
    #expect(mirror.value == holder.value)
    // Every write was distinct, so every write was broadcast once.
    #expect(writes.count == 50 * 40)
    #expect(Set(writes.history).count == 50 * 40)
    withExtendedLifetime(observers) {}
  }

  @Test func arrayHolderAppendedFromManyTasksKeepsEveryElement() async {
    let list = ArrayHolder<Int>()
    let inserted = Recorder<Int>()
    let observer = list.chain().do { event in
      if case .inserted(_, let element) = event { inserted.append(element) }
    }.end()
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<20 {
        group.addTask {
          for index in 0..<50 { list.append(task * 100 + index) }
        }
      }
    }
    #expect(list.count == 1_000)
    #expect(inserted.history == list.raw)
    withExtendedLifetime(observer) {}
  }
}
