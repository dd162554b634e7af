// The everyday patterns, as short as the README shows them: plain closures,
// a handler that appends to a local array or updates `self`. They compile in
// Swift 6 language mode with no warning.
import Chaining
import Testing

/// A view model that owns its bindings and updates itself.
private final class ProfileViewModel {
  let name = ValueHolder("Ann")
  private(set) var greeting = ""
  private let pool = ObserverPool()

  init() {
    name.chain().map { "Hello, \($0)!" }.do { [weak self] in self?.greeting = $0 }.sync().addTo(pool)
  }
}

/// A label of the user's own, as a receiver.
private final class Label: Receivable {
  var text = ""
  func receive(value: String) { text = value }
}

@Suite struct EverydayPatternsTests {
  @Test func handlerAppendsToALocalArray() {
    let name = ValueHolder("Ann")
    var log: [String] = []
    let observer = name.chain().do { log.append($0) }.sync()
    name.value = "Bob"
    #expect(log == ["Ann", "Bob"])
    withExtendedLifetime(observer) {}
  }

  @Test func handlerUpdatesSelf() {
    let viewModel = ProfileViewModel()
    viewModel.name.value = "Cleo"
    #expect(viewModel.greeting == "Hello, Cleo!")
  }

  @Test func chainEndsInAReceiver() {
    let count = ValueHolder(3)
    let label = Label()
    let observer = count.chain().map { "\($0) items" }.sendTo(label).sync()
    #expect(label.text == "3 items")
    withExtendedLifetime(observer) {}
  }

  @Test func twoWayBindingOfAFieldAndAModel() {
    let model = ValueHolder("Ann")
    let field = ValueHolder("")
    let pool = ObserverPool()
    model.chain().sendTo(field).sync().addTo(pool)
    field.chain().sendTo(model).end().addTo(pool)
    field.value = "Bob"
    #expect(model.value == "Bob")
  }
}
