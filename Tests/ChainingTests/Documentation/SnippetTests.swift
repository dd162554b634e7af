import Foundation
import Testing

/// Type-checks every ```` ```swift ```` block of `README.md`,
/// `Documentation/*.md` and the DocC articles against the freshly built `Chaining` module, so the
/// documentation cannot drift from the API. See ``MarkdownSnippet`` for the
/// rules a block follows.
@Suite struct SnippetTests {
  @Test(arguments: MarkdownSnippet.all.compiled)
  func snippetTypeChecks(_ snippet: MarkdownSnippet) throws {
    // Warnings fail too: a snippet that uses a deprecated API has started to rot.
    let result = try CompileCheck.typecheck(snippet.compilationUnit, warningsAsErrors: true)
    let compiles = result.succeeded
    #expect(compiles, "\(snippet.id) does not compile:\n\(result.diagnostics)")
  }

  /// The same blocks in a module built with Xcode 26's app-template
  /// settings: the main actor as default isolation, nonisolated async
  /// functions running on their caller's actor, and conformances that
  /// take their type's isolation (issue #38).
  @Test(arguments: MarkdownSnippet.all.compiled)
  func snippetTypeChecksUnderAppTemplateSettings(_ snippet: MarkdownSnippet) throws {
    let result = try CompileCheck.typecheck(
      snippet.compilationUnit,
      warningsAsErrors: true,
      flags: CompileCheck.appTemplateFlags
    )
    let compiles = result.succeeded
    #expect(compiles, "\(snippet.id) does not compile with the app template's settings:\n\(result.diagnostics)")
  }

  @Test func fencesAreWellFormed() {
    let scan = MarkdownSnippet.all
    let wellFormed = scan.problems.isEmpty
    #expect(wellFormed, "\(scan.problems.joined(separator: "\n"))")
    #expect(scan.files.contains("README.md"))
    #expect(scan.files.contains { $0.hasPrefix("Documentation/") })
    #expect(scan.files.contains { $0.hasPrefix("Sources/Chaining/Chaining.docc/") })
    #expect(!scan.compiled.isEmpty)
  }

  @Test func plainSwiftFencesAreCompiledAndBadFencesReported() {
    let text = """
      Prose.

      ```swift
      let a = 1
      ```

      - A list item:

        ~~~swift
        let b = 2
          .description
        ~~~

      ```swift declarations
      public func f()
      ```

      ```text
      not Swift
      ```

      ```swift-signatures
      ```

      ```swift declaration
      ```

      ```
      unlabeled
      ```

      ```swift
      let c = 3
      """
    let scan = MarkdownSnippet.scan([(file: "Guide.md", text: text)])
    #expect(scan.compiled.map(\.id) == ["Guide.md:3", "Guide.md:9", "Guide.md:32"])
    #expect(scan.compiled.map(\.code) == ["let a = 1", "let b = 2\n  .description", "let c = 3"])
    #expect(
      scan.problems.map { $0.prefix { $0 != " " } } == [
        "Guide.md:32:", "Guide.md:22:", "Guide.md:25:", "Guide.md:28:",
      ]
    )
  }
}

/// One fenced code block of a Markdown file.
///
/// Every ```` ```swift ```` block is compiled on its own, as the `main.swift`
/// of a client module, after an implicit `import Chaining`: it may not use a
/// name that another block declares, and imports anything else it needs
/// (`import Foundation`, `import Dispatch`) itself. It must compile in Swift 6
/// language mode without warnings. Diagnostics point at the Markdown file and
/// line.
///
/// A `swift` block that is not client code says so in its fence's info
/// string, after the language, and is not compiled:
///
/// - ```` ```swift declarations ````: a listing of public signatures without
///   bodies, as in the Detailed Design sections.
/// - ```` ```swift package-manifest ````: an excerpt of a `Package.swift`.
/// - ```` ```swift Combine ````, ```` ```swift RxSwift ````,
///   ```` ```swift SwiftChaining ````: another library's code, shown for
///   comparison in the migration guides.
///
/// Blocks in other languages (```` ```text ````, ```` ```sh ````) are skipped.
/// A fence without a language, a `swift` fence with any other attribute, or a
/// language such as `swift-signatures` fails `fencesAreWellFormed()`, so no
/// block drops out of the check unnoticed.
struct MarkdownSnippet: Identifiable, CustomTestStringConvertible, Swift.Sendable {
  /// The Markdown file, relative to the repository root.
  let file: String
  /// The 1-based line of the opening fence.
  let line: Int
  /// The fence's info string: the language, then optional attributes.
  let info: [String]
  /// The lines between the fences, without the fence's indentation.
  let code: String

  var id: String { "\(file):\(line)" }
  var testDescription: String { id }

  /// The block as a `main.swift`, with diagnostics pointing into the Markdown
  /// file. ``CompileCheck/typecheck(_:warningsAsErrors:)`` adds `import Chaining`
  /// above it.
  var compilationUnit: String {
    let path = MarkdownSnippet.repositoryRoot.appendingPathComponent(file).path
    return "#sourceLocation(file: \"\(path)\", line: \(line + 1))\n\(code)\n#sourceLocation()\n"
  }

  /// Attributes that mark a `swift` block as not compilable client code.
  static let notCompiledAttributes: Set<String> = [
    "declarations", "package-manifest", "Combine", "RxSwift", "SwiftChaining",
  ]

  struct Scan: Swift.Sendable {
    var files: [String] = []
    var compiled: [MarkdownSnippet] = []
    var problems: [String] = []
  }

  static let all: Scan = scanRepository()

  /// `<root>/Tests/ChainingTests/Documentation/SnippetTests.swift` → `<root>`.
  static let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()  // Documentation
    .deletingLastPathComponent()  // ChainingTests
    .deletingLastPathComponent()  // Tests
    .deletingLastPathComponent()

  /// Scans `README.md`, `Documentation/*.md` and the DocC catalog's articles.
  static func scanRepository() -> Scan {
    let files = ["README.md"] + markdownFiles(in: "Documentation") + markdownFiles(in: "Sources/Chaining/Chaining.docc")
    return scan(
      files.map { file in
        (file, try? String(contentsOf: repositoryRoot.appendingPathComponent(file), encoding: .utf8))
      }
    )
  }

  /// The Markdown files of a folder, as paths from the repository root, sorted.
  static func markdownFiles(in folder: String) -> [String] {
    let names =
      (try? FileManager.default.contentsOfDirectory(atPath: repositoryRoot.appendingPathComponent(folder).path)) ?? []
    return names.filter { $0.hasSuffix(".md") }.sorted().map { "\(folder)/\($0)" }
  }

  /// Sorts the blocks of each document into compiled ones and problems.
  static func scan(_ documents: [(file: String, text: String?)]) -> Scan {
    var scan = Scan()
    for (file, text) in documents {
      scan.files.append(file)
      guard let text else {
        scan.problems.append("\(file): cannot be read")
        continue
      }
      for block in blocks(in: text, file: file, problems: &scan.problems) {
        guard let language = block.info.first else {
          scan.problems.append("\(block.id): a fence without a language; write ```swift, ```text or ```sh")
          continue
        }
        if language.lowercased() != "swift" {
          if language.lowercased().hasPrefix("swift") {
            scan.problems.append(
              "\(block.id): unknown language `\(language)`; write ```swift, or ```swift declarations"
            )
          }
          continue
        }
        if block.info.count == 1 {
          scan.compiled.append(block)
        } else if block.info.count > 2 || !notCompiledAttributes.contains(block.info[1]) {
          scan.problems.append(
            "\(block.id): unknown fence attributes `\(block.info.dropFirst().joined(separator: " "))`; "
              + "use one of \(notCompiledAttributes.sorted()) or none"
          )
        }
      }
    }
    return scan
  }

  /// The fenced code blocks of a CommonMark text, with ``` or ~~~ fences.
  static func blocks(in text: String, file: String, problems: inout [String]) -> [MarkdownSnippet] {
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
      $0.hasSuffix("\r") ? $0.dropLast() : $0
    }
    var result: [MarkdownSnippet] = []
    var index = 0
    while index < lines.count {
      let indent = lines[index].prefix { $0 == " " }.count
      let opening = lines[index].dropFirst(indent)
      guard let marker = opening.first, marker == "`" || marker == "~" else {
        index += 1
        continue
      }
      let fenceLength = opening.prefix { $0 == marker }.count
      let info = opening.dropFirst(fenceLength)
      guard fenceLength >= 3, !(marker == "`" && info.contains("`")) else {
        index += 1
        continue
      }
      var code: [Substring] = []
      var end = index + 1
      var closed = false
      while end < lines.count {
        let trimmed = lines[end].trimmingCharacters(in: .whitespaces)
        if trimmed.count >= fenceLength, trimmed.allSatisfy({ $0 == marker }) {
          closed = true
          break
        }
        let lineIndent = lines[end].prefix { $0 == " " }.count
        code.append(lines[end].dropFirst(min(indent, lineIndent)))
        end += 1
      }
      if !closed {
        problems.append("\(file):\(index + 1): the fence is never closed")
      }
      result.append(
        MarkdownSnippet(
          file: file,
          line: index + 1,
          info: info.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init),
          code: code.joined(separator: "\n")
        )
      )
      index = end + 1
    }
    return result
  }
}
