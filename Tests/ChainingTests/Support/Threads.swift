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
    let thread = Thread {
      ready.signal()
      start.wait()
      body(index)
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
func spawn(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
  let group = DispatchGroup()
  group.enter()
  Thread {
    body()
    group.leave()
  }.start()
  return group
}
