import Chaining
import Testing

/// Which value a chain ends on: its sources' latest, except where an echo of
/// its own delivery was skipped (Threading.md, "The latest value").
@Suite struct LatestValueTests {
  // MARK: - Every value received: the latest one last

  @Test func chainsThatCauseNoEchoEndOnTheLatestValueOfEverySource() {
    let mode = ValueHolder("edit")
    let count = ValueHolder(0)
    let log = Recorder<String>()
    let observers = [
      mode.chain().combine(count.chain()).do { log.append("\($0) \($1)") }.sync(),
      // Another chain, not the combined one, resets `count`.
      mode.chain().do { if $0 == "reset" { count.value = 0 } }.end(),
    ]
    count.value = 5
    mode.value = "reset"
    mode.value = "view"
    #expect(count.value == 0)
    // Changed by glitch-free propagation (#24): the reset of `count` is part
    // of the wave of `mode`, so "reset 5" (half of that change) is not sent.
    #expect(log.history == ["edit 0", "edit 5", "reset 0", "view 0"])
    withExtendedLifetime(observers) {}
  }

  // MARK: - Echoes skipped: what they leave behind

  @Test func chainThatWritesItsOwnSourceEndsOnTheValueBeforeItsWrite() {
    let holder = ValueHolder(0)
    let writer = Recorder<Int>()
    let other = Recorder<Int>()
    let observers = [
      holder.chain().do { value in
        writer.append(value)
        if value == 1 { holder.value = 2 }
      }.sync(),
      holder.chain().do { other.append($0) }.sync(),
    ]
    holder.value = 1
    #expect(holder.value == 2)
    #expect(writer.history == [0, 1])
    #expect(other.history == [0, 1, 2])
    withExtendedLifetime(observers) {}
  }

  /// The example of Combining.md, "Reentrancy".
  @Test func combineThatResetsAnotherSideKeepsThatSidesValueFromBeforeTheEcho() {
    let mode = ValueHolder("edit")
    let count = ValueHolder(0)
    let log = Recorder<String>()
    let countLog = Recorder<Int>()
    let observers = [
      mode.chain().combine(count.chain()).do { currentMode, currentCount in
        log.append("\(currentMode) \(currentCount)")
        if currentMode == "reset" { count.value = 0 }
      }.sync(),
      count.chain().do { countLog.append($0) }.sync(),
    ]
    count.value = 5
    mode.value = "reset"
    mode.value = "view"
    #expect(count.value == 0)
    // The combined chain skipped its own write of 0: its `count` side stays 5.
    #expect(log.history == ["edit 0", "edit 5", "reset 5", "view 5"])
    // Every other chain of `count` receives it.
    #expect(countLog.history == [0, 5, 0])
    count.value = 7
    #expect(log.history == ["edit 0", "edit 5", "reset 5", "view 5", "view 7"])
    withExtendedLifetime(observers) {}
  }

  @Test func echoThatComesBackThroughAnotherBindingIsSkippedToo() {
    let mode = ValueHolder("edit")
    let count = ValueHolder(0)
    let resets = Notifier<Int>()
    let log = Recorder<String>()
    let observers = [
      resets.chain().sendTo(count).end(),
      mode.chain().combine(count.chain()).do { currentMode, currentCount in
        log.append("\(currentMode) \(currentCount)")
        if currentMode == "reset" { resets.notify(value: 0) }
      }.sync(),
    ]
    count.value = 5
    mode.value = "reset"
    mode.value = "view"
    #expect(count.value == 0)
    #expect(log.history == ["edit 0", "edit 5", "reset 5", "view 5"])
    withExtendedLifetime(observers) {}
  }

  @Test func twoWayBindingWhoseDirectionsDifferStopsAfterOneRoundTrip() {
    let model = ValueHolder("a")
    let field = ValueHolder("")
    let observers = [
      model.chain().map { $0.uppercased() }.sendTo(field).sync(),
      field.chain().sendTo(model).end(),
    ]
    // `field` is bound back to `model` only after the sync.
    #expect([model.value, field.value] == ["a", "A"])
    field.value = "b"
    // `b` reaches `model`, comes back to `field` as `B`, and the chain that
    // wrote `model` skips that echo: `model` keeps `b`.
    #expect([model.value, field.value] == ["b", "B"])
    model.value = "c"
    // `C` reaches `field`, comes back to `model`, and the chain that wrote
    // `field` skips that echo: both end on `C`.
    #expect([model.value, field.value] == ["C", "C"])
    withExtendedLifetime(observers) {}
  }

  // MARK: - Values a step drops

  @Test func combineSideAfterAFilterKeepsTheLastValueThatPassed() {
    let query = ValueHolder("swift")
    let page = ValueHolder(1)
    let log = Recorder<String>()
    let observer = query.chain().combine(page.chain().filter { $0 > 0 }).do { log.append("\($0) \($1)") }.sync()
    page.value = 0
    query.value = "chaining"
    #expect(page.value == 0)
    #expect(log.history == ["swift 1", "chaining 1"])
    withExtendedLifetime(observer) {}
  }
}
