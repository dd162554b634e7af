import Chaining
import Testing

@Suite struct ChainSendToOptionalTests {
  final class Label: @unchecked Swift.Sendable {
    // @unchecked: touched on the test's thread only.
    var text = ""
    var optionalText: String? = "unset"
  }

  @Test func anOptionalChainSkipsNilForANonOptionalReceiver() {
    let selection = ValueHolder<String?>(nil)
    let title = ValueHolder("none")
    let passed = Recorder<String?>()
    let observer = selection.chain().sendTo(title).do { passed.append($0) }.sync()
    #expect(title.value == "none")
    selection.value = "Inbox"
    #expect(title.value == "Inbox")
    selection.value = nil
    #expect(title.value == "Inbox")
    #expect(passed.history == [nil, "Inbox", nil])
    withExtendedLifetime(observer) {}
  }

  @Test func aChainWrapsForAnOptionalReceiver() {
    let count = ValueHolder(1)
    let maybe = ValueHolder<Int?>(nil)
    let observer = count.chain().sendTo(maybe).sync()
    #expect(maybe.value == 1)
    count.value = 2
    #expect(maybe.value == 2)
    withExtendedLifetime(observer) {}
  }

  @Test func retainedReceiversBridgeToo() {
    weak var weakTitle: ValueHolder<String>?
    weak var weakMaybe: ValueHolder<String?>?
    let source = ValueHolder<String?>("a")
    let plain = ValueHolder("b")
    let observers: [Observer]
    do {
      let title = ValueHolder("")
      let maybe = ValueHolder<String?>(nil)
      weakTitle = title
      weakMaybe = maybe
      observers = [source.chain().sendTo(title.retain()).sync(), plain.chain().sendTo(maybe.retain()).sync()]
    }
    #expect(weakTitle?.value == "a")
    #expect(weakMaybe?.value == "b")
    for observer in observers { observer.invalidate() }
    #expect(weakTitle == nil)
    #expect(weakMaybe == nil)
  }

  @Test func keyPathsBridgeBothWays() {
    let label = Label()
    let optional = ValueHolder<String?>("x")
    let plain = ValueHolder("y")
    let first = optional.chain().sendTo(label, \.text).sync()
    let second = plain.chain().sendTo(label, \.optionalText).sync()
    #expect(label.text == "x")
    #expect(label.optionalText == "y")
    optional.value = nil
    #expect(label.text == "x")
    withExtendedLifetime((first, second)) {}
  }

  @Test func tuplePartsBridgeBothWays() {
    let pairs = Notifier<(String?, Int)>()
    let name = ValueHolder("")
    let count = ValueHolder<Int?>(nil)
    let observer = pairs.chain().sendTo(name, from: \.0).sendTo(count, from: \.1).end()
    pairs.notify(value: ("Ann", 1))
    pairs.notify(value: (nil, 2))
    #expect(name.value == "Ann")
    #expect(count.value == 2)
    withExtendedLifetime(observer) {}
  }

  @Test func theExactTypeFormsAreNotAmbiguous() throws {
    let result = try CompileCheck.typecheck(
      """
      final class Label { var text = ""; var maybe: Int? = nil }
      let label = Label()
      let text = ValueHolder("a"), maybe = ValueHolder<Int?>(1), pair = Notifier<(Int?, String)>()
      let other = ValueHolder(""), otherMaybe = ValueHolder<Int?>(nil)
      let observers = [
        text.chain().sendTo(other).sync(),
        maybe.chain().sendTo(otherMaybe).sync(),
        text.chain().sendTo(label, \\.text).sync(),
        maybe.chain().sendTo(label, \\.maybe).sync(),
        pair.chain().sendTo(otherMaybe, from: \\.0).sendTo(other, from: \\.1).end(),
      ]
      """
    )
    #expect(result.succeeded, "\(result.diagnostics)")
  }
}
