// MARK: - Entry points

#if CHAINING_LIBFUZZER

/// libFuzzer's entry: runs the script the input decodes to. Built with
/// `-sanitize=fuzzer`, libFuzzer provides `main`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
  Run.run(Script(UnsafeBufferPointer(start: data, count: count)))
  return 0
}

#else

import Foundation

/// Without libFuzzer: replays the inputs given as arguments (files, or
/// folders of files), as the fuzzer would, and says how many ran.
@main
enum Replay {
  static func main() throws {
    let manager = FileManager.default
    var count = 0
    for argument in CommandLine.arguments.dropFirst() {
      var isFolder: ObjCBool = false
      guard manager.fileExists(atPath: argument, isDirectory: &isFolder) else {
        fatalError("ChainingFuzz: no file or folder at \(argument)")
      }
      let paths =
        isFolder.boolValue
        ? try manager.contentsOfDirectory(atPath: argument).sorted().map { argument + "/" + $0 }
        : [argument]
      for path in paths {
        Run.run(Script(try Data(contentsOf: URL(fileURLWithPath: path))))
        count += 1
      }
    }
    print("ChainingFuzz: \(count) inputs replayed, every invariant held")
  }
}

#endif
