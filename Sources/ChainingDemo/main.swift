import ChainingDemoKit

// A walkthrough of Chaining: a to-do list model bound to a console view.
// The model and the view are in ChainingDemoKit, where a test checks this
// output line by line.
if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
  runDemo { print($0) }
} else {
  print("The demo binds an @Observable model: it needs macOS 14, iOS 17, tvOS 17 or watchOS 10.")
}
