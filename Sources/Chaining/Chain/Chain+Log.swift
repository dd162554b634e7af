import Dispatch
import _ChainingThreadContext

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

// MARK: - log

extension Chain {
  /// Writes a line to standard error for each value that reaches this
  /// step, naming the label and the thread, and passes the value on
  /// unchanged.
  ///
  /// Put it anywhere in a chain to see what flows there, and where, without
  /// a breakpoint:
  ///
  /// ```swift
  /// let name = ValueHolder("Ann")
  /// let observer = name.chain().log("name").map { $0.uppercased() }.sync()
  /// // Writes "name: Ann (main)" to standard error
  /// name.value = "Bob"
  /// // Writes "name: Bob (main)" to standard error
  /// ```
  ///
  /// Each line is written with a line break in one `write` call, so that
  /// lines from several threads do not mix. To write the lines elsewhere,
  /// use ``log(_:to:)``, which describes the line and where the step runs.
  ///
  /// - Parameter label: Names this step in the lines, to tell several apart.
  /// - Returns: A chain with the same values.
  ///
  /// The step runs where the value is, on the delivering thread or on the
  /// actor a hop before it moved the chain to, also for the value
  /// ``sync()`` sends; it never adds a hop. The finished observer holds
  /// `label` until it is invalidated or released.
  public consuming func log(_ label: String) -> Chain<Value, Source> {
    log(label, to: writeLineToStandardError)
  }

  /// Hands `sink` a line for each value that reaches this step, naming the
  /// label and the thread, and passes the value on unchanged.
  ///
  /// Put it anywhere in a chain to see what flows there, and where, without
  /// a breakpoint. ``log(_:)`` writes the same lines to standard error.
  ///
  /// ```swift
  /// let name = ValueHolder("Ann")
  /// let observer = name.chain()
  ///   .log("name") { print($0) }
  ///   .map { $0.uppercased() }
  ///   .log("upper") { print($0) }
  ///   .sync()
  /// // Prints "name: Ann (main)"
  /// // Prints "upper: ANN (main)"
  /// ```
  ///
  /// Each line is `label: value (thread)`, with the value as
  /// `String(describing:)` writes it, and the thread as:
  /// - `main` on the main thread, or in a block of the main queue, wherever
  ///   it runs (on Linux, a program with an `async` main runs the main
  ///   actor there): where the main actor runs;
  /// - otherwise `thread` and a number: on Linux the kernel's thread id, in
  ///   decimal, as `ps -L`, `top -H` and gdb show it; on Apple platforms the
  ///   thread id of `pthread_threadid_np`, in hexadecimal, as lldb shows
  ///   it (`tid = 0x…`);
  /// - then, after a comma, the label of the dispatch queue the code runs on,
  ///   as `dispatch_queue_get_label` returns it, unless it is empty or the
  ///   main queue's: `queue "search"` for a queue of yours; a global queue's
  ///   label, such as `"com.apple.root.default-qos"`, for a global queue or
  ///   a thread that runs no queue of its own; in a task, the queue of
  ///   Swift's global executor (`"Swift global concurrent queue"` on
  ///   Linux).
  ///
  /// So `query: sw (thread 4321, queue "search")` is the value `sw` on a
  /// thread of the `search` queue.
  ///
  /// - Parameters:
  ///   - label: Names this step in the lines, to tell several apart.
  ///   - sink: Called with each line, without a line break: `print`, a
  ///     logger of your app, or a list in a test.
  /// - Returns: A chain with the same values.
  ///
  /// The step runs where the value is, on the delivering thread or on the
  /// actor a hop before it moved the chain to; also for the value
  /// ``sync()`` sends. Unlike ``do(_:isolation:)``, it does not take the
  /// isolation of the code that builds the chain: adding it to a chain
  /// never adds a hop, or moves a step to another thread, and it reports
  /// the thread the values really arrive on. So `sink` is `@Sendable`, and
  /// the compiler checks that it can run on any thread; `description` of
  /// the value runs there too. A value the chain skips as an echo does not
  /// reach the step and writes nothing. The finished observer holds `sink`
  /// (and what it captures) and `label` strongly, until it is invalidated
  /// or released.
  public consuming func log(
    _ label: String,
    to sink: @escaping @Sendable (String) -> Void
  ) -> Chain<Value, Source> {
    appendingLast { downstream in
      guard let downstream else {
        return { value in sink(logLine(label, value)) }
      }
      return { value in
        sink(logLine(label, value))
        downstream(value)
      }
    }
  }
}

/// The line `log(_:to:)` writes for `value`.
func logLine<Value>(_ label: String, _ value: Value) -> String {
  "\(label): \(value) (\(currentThreadDescription()))"
}

/// The label of the main queue, the same on every platform.
private let mainQueueLabel = DispatchQueue.main.label

/// Where the calling code runs, as the lines of `log(_:to:)` name it: see
/// its documentation.
func currentThreadDescription() -> String {
  var description: String
  if isOnMainActor {
    description = "main"
  } else {
    let id = _chaining_thread_id()
    #if canImport(Darwin)
    description = "thread 0x" + String(id, radix: 16)
    #else
    description = "thread \(id)"
    #endif
  }
  if let label = _chaining_current_queue_label().map({ String(cString: $0) }), !label.isEmpty, label != mainQueueLabel {
    description += ", queue \"\(label)\""
  }
  return description
}

/// Writes `line` and a line break to standard error, in one `write` call
/// unless the system writes only part of it: the sink of ``Chain/log(_:)``.
func writeLineToStandardError(_ line: String) {
  let bytes = Array((line + "\n").utf8)
  bytes.withUnsafeBytes { buffer in
    guard var next = buffer.baseAddress else { return }
    var remaining = buffer.count
    while remaining > 0 {
      let written = write(2, next, remaining)
      if written < 0 {
        if errno == EINTR { continue }
        return  // nowhere to report it: standard error is the report
      }
      next += written
      remaining -= written
    }
  }
}
