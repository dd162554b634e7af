import ChainingDemoKit

// A walkthrough of Chaining: a to-do list model bound to a console view.
// The model and the view are in ChainingDemoKit, where a test checks this
// output line by line.
runDemo { print($0) }
