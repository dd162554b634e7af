import Dispatch
// Foundation only for `Thread.isMainThread`, the fallback where the C check
// cannot tell (see `_chaining_is_main_thread`).
import Foundation
import _ChainingThreadContext

/// Whether the calling code runs on the main actor: on the main thread, or in
/// a block of the main queue.
///
/// Both count: on Linux, a program with an `async` main drains the main queue
/// (and so runs the main actor) on a thread that is not the main thread.
/// The main thread is recognized in C (`pthread_main_np`, or the thread that
/// loaded the library when it is the main one), a call of a few
/// instructions, as a hop to the main actor asks on every value; Foundation's
/// `Thread.isMainThread` answers only where C cannot.
var isOnMainActor: Bool {
  switch _chaining_is_main_thread() {
  case 1: return true
  case 0: break
  default: if Thread.isMainThread { return true }
  }
  _ = markMainQueue
  return DispatchQueue.getSpecific(key: mainQueueKey) == true
}

private let mainQueueKey = DispatchSpecificKey<Bool>()

/// Tags the main queue once, so that its blocks can be recognized.
private let markMainQueue: Void = {
  DispatchQueue.main.setSpecific(key: mainQueueKey, value: true)
}()
