import Dispatch
import Foundation

/// Runs `body(index)` on `threads` new threads at once and returns when all have finished.
///
/// Each thread waits at a start barrier so that the bodies overlap as much
/// as possible. Iteration counts are fixed by the callers.
func race(threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
  let ready = DispatchSemaphore(value: 0)
  let start = DispatchSemaphore(value: 0)
  let done = DispatchGroup()
  for index in 0..<threads {
    done.enter()
    let work = RunOnce { body(index) }
    let thread = Thread {
      ready.signal()
      start.wait()
      work.run()
      done.leave()
    }
    thread.stackSize = 1 << 20
    thread.start()
  }
  for _ in 0..<threads { ready.wait() }
  for _ in 0..<threads { start.signal() }
  done.wait()
}

/// Starts `body` on a new thread and returns a group that is left when it ends.
///
/// `body` and what it captures are released before the group is left, even
/// if something keeps the thread's `Thread` object. `stackSize`, in bytes:
/// the thread's stack, when not the platform's default.
func spawn(stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> DispatchGroup {
  let group = DispatchGroup()
  group.enter()
  let work = RunOnce(body)
  let thread = Thread {
    work.run()
    group.leave()
  }
  if let stackSize { thread.stackSize = stackSize }
  thread.start()
  return group
}

/// A thread's body, released as soon as it has run.
///
/// A `Thread` keeps the closure it was created with for as long as the
/// `Thread` object lives (swift-corelibs-foundation stores it in the object
/// and never clears it). A test that records `Thread.current` in a recorder
/// its body captures would otherwise make a cycle: recorder, `Thread`,
/// closure, recorder. The thread's closure holds this box instead.
private final class RunOnce: @unchecked Swift.Sendable {
  // @unchecked: `body` is set before the thread starts (which orders it
  // before the thread's reads) and then only touched by that one thread.
  private var body: (@Sendable () -> Void)?

  init(_ body: @escaping @Sendable () -> Void) {
    self.body = body
  }

  func run() {
    guard let body else { return }
    self.body = nil
    body()
  }
}
