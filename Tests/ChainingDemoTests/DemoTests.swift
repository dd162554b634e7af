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
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func demoPrintsTheWalkthroughExactly() {
    let output = Lines()
    runDemo { output.append($0) }
    #expect(output.all == Self.expected)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func demoOutputIsTheSameOnEveryRun() {
    var runs: [[String]] = []
    for _ in 0..<20 {
      let output = Lines()
      runDemo { output.append($0) }
      runs.append(output.all)
    }
    #expect(Set(runs).count == 1)
  }

  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @Test func demoUsesNoUnderscoredAPI() throws {
    // The demo is what a user copies: it must need nothing the README
    // calls not API (such as `_senderCore(creating:)`).
    let folder = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Sources/ChainingDemoKit")
    let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
    #expect(files.count >= 4)
    for file in files {
      let text = try String(contentsOf: file, encoding: .utf8)
      let usesUnderscored = text.contains("._") || text.contains(" _sender") || text.contains("func _")
      #expect(!usesUnderscored, "\(file.lastPathComponent)")
    }
  }

  static let expected: [String] = [
    "1. The view syncs: it shows the list and the footer.",
    "list: [ ] Buy milk, [ ] Call Ann",
    "footer: 2 left",
    "2. Adding a to-do: the view adds the row, then the footer shows the new count.",
    "row 2 added: [ ] Book flights",
    "footer: 3 left",
    "3. Ticking one off: the item's edit arrives as a row change, then the footer recounts.",
    "row 0 changed: [x] Buy milk",
    "footer: 2 left",
    "4. A text field bound both ways to an item's title.",
    "   field shows \"Call Ann\"",
    "   the user types \"Call Ann back\"",
    "row 1 changed: [ ] Call Ann back",
    "   the title sent the text back to the field once, and that echo stopped there: the loop settled",
    "   the model sets the title to \"Call Ann tonight\"",
    "row 1 changed: [ ] Call Ann tonight",
    "   field shows \"Call Ann tonight\"",
    "5. The 'show done' switch changes only the footer (this view does not filter rows).",
    "footer: 2 left (done hidden)",
    "6. An @Observable view model: the view shows its title, read again after each change.",
    "title: To-do",
    "   the view model's title becomes \"Today\"",
    "title: Today",
    "   its toggle is bound both ways to the list's switch, which takes the toggle's value (on)",
    "footer: 2 left",
    "   the user turns the toggle off",
    "footer: 2 left (done hidden)",
    "   the model turns the switch on",
    "footer: 2 left",
    "   the toggle follows: on",
    "7. An import on a background queue: the view still shows it on its own queue.",
    "row 3 added: [ ] Water plants",
    "footer: 3 left",
    "8. Closing the view ends its bindings: later changes show nothing.",
    "view closed",
    "   the model still counts 3 left",
  ]
}
