import Dispatch
import Foundation

/// A tag on the main queue, set by these tests, for `isOnMainQueue()`.
private let mainQueueTag: DispatchSpecificKey<Bool> = {
  let key = DispatchSpecificKey<Bool>()
  DispatchQueue.main.setSpecific(key: key, value: true)
  return key
}()

/// Whether the caller runs on the main queue (or the main thread): where the
/// main actor runs, on Linux too, where another thread may drain the queue.
func isOnMainQueue() -> Bool {
  Thread.isMainThread || DispatchQueue.getSpecific(key: mainQueueTag) == true
}
