import Chaining

// A walkthrough of Chaining: a small profile model bound to a console "view".
// Each section prints what its binding does.

// MARK: - The view

/// A console stand-in for a UI label: it prints whatever it receives.
final class ConsoleLabel: Receivable {
  let name: String
  private(set) var text = ""

  init(_ name: String) { self.name = name }

  func receive(value: String) {
    text = value
    print("  [\(name)] \(value)")
  }
}

// MARK: - The model

/// A user's own model class: adopting `Syncable` takes a typealias and two lines.
final class StepCounter: Syncable {
  typealias ChainValue = Int
  var steps = 0 { didSet { if steps != oldValue { broadcast(value: steps) } } }
  func fetchedValue() -> Int { steps }
}

final class Profile {
  let name = ValueHolder("Ann")
  let age = ValueHolder(29)
  let saved = Notifier<Void>()
  let steps = StepCounter()
}

let profile = Profile()
let nameLabel = ConsoleLabel("name")
let ageLabel = ConsoleLabel("age")
let pool = ObserverPool()

print("1. sync() shows the current value at once, then every change:")
profile.name.chain().map { "Name: \($0)" }.sendTo(nameLabel).sync().addTo(pool)
profile.name.value = "Bob"

print("2. map turns values into text; an equal value sends nothing:")
profile.age.chain().map { "Age: \($0)" }.sendTo(ageLabel).sync().addTo(pool)
profile.age.value = 30
profile.age.value = 30

print("3. A notifier sends events; end() starts without a value:")
profile.saved.chain().do { print("  saved \(profile.name.value), \(profile.age.value)") }.end().addTo(pool)
profile.saved.notify()

print("4. Your own Syncable class binds like the library's holders:")
profile.steps.chain().map { "\($0) steps" }.do { print("  [steps] \($0)") }.sync().addTo(pool)
profile.steps.steps = 1200

print("5. Two holders bound both ways settle after one round:")
let field = ValueHolder("")  // a text field's contents
let toField = profile.name.chain().sendTo(field).sync()
let toModel = field.chain().sendTo(profile.name).end()
print("  field shows \"\(field.value)\"")
field.value = "Cleo"  // the user types
print("  model name is now \"\(profile.name.value)\"")

print("6. Invalidating the pool ends its bindings:")
toField.invalidate()
toModel.invalidate()
pool.invalidate()
profile.name.value = "Dan"
profile.saved.notify()
print("  nothing printed after the pool was invalidated; name label still shows \"\(nameLabel.text)\"")
