import Dispatch
// Foundation only for `Thread.isMainThread`: Linux has no other portable way
// to ask whether the calling thread is the main thread (glibc's `gettid` is
// not exported to Swift, and `pthread_main_np` is Apple's).
import Foundation

/// Whether the calling code runs on the main actor: on the main thread, or in
/// a block of the main queue.
///
/// Both count: on Linux, a program with an `async` main drains the main queue
/// (and so runs the main actor) on a thread that is not the main thread.
var isOnMainActor: Bool {
  _ = markMainQueue
  return Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueKey) == true
}

private let mainQueueKey = DispatchSpecificKey<Bool>()

/// Tags the main queue once, so that its blocks can be recognized.
private let markMainQueue: Void = {
  DispatchQueue.main.setSpecific(key: mainQueueKey, value: true)
}()
