import ChainingDemoKit
import Foundation
import Testing

/// Collects the demo's lines; the demo writes from a background queue too.
private final class Lines: @unchecked Swift.Sendable {
  // @unchecked: `lines` is only touched under `lock`.
  private let lock = NSLock()
  private var lines: [String] = []
  func append(_ line: String) { lock.withLock { lines.append(line) } }
  var all: [String] { lock.withLock { lines } }
}

@Suite struct DemoTests {
  @Test func demoPrintsTheWalkthroughExactly() {
    let output = Lines()
    runDemo { output.append($0) }
    #expect(output.all == Self.expected)
  }

  @Test func demoOutputIsTheSameOnEveryRun() {
    var runs: [[String]] = []
    for _ in 0..<20 {
      let output = Lines()
      runDemo { output.append($0) }
      runs.append(output.all)
    }
    #expect(Set(runs).count == 1)
  }

  static let expected: [String] = [
    "1. The view syncs: it shows the list and the footer at once.",
    "list: [ ] Buy milk, [ ] Call Ann",
    "footer: 2 left",
    "2. Adding a to-do inserts one row; the footer follows.",
    "footer: 3 left",
    "row 2 added: [ ] Book flights",
    "3. Each item has its own holders; editing one relays a row change.",
    "footer: 2 left",
    "row 0 changed: [x] Buy milk",
    "4. A text field bound both ways to an item's title.",
    "   field shows \"Call Ann\"",
    "row 1 changed: [ ] Call Ann back",
    "row 1 changed: [ ] Call Ann tonight",
    "   field shows \"Call Ann tonight\"",
    "5. Hiding done items changes only the footer.",
    "footer: 2 left (done hidden)",
    "6. A sync from a background queue, delivered on the view's queue.",
    "footer: 3 left (done hidden)",
    "row 3 added: [ ] Water plants",
    "   received \"Water plants\" on the view queue",
    "7. Closing the view ends its bindings: later changes print nothing.",
    "view closed",
    "   the model still counts 3 left",
  ]
}
