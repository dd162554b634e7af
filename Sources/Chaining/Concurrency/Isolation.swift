import _ChainingThreadContext

// MARK: - Isolation check

/// Whether the calling code runs isolated to `actor`, answered without
/// trapping. `isMainActor` says whether `actor` is the main actor: the
/// caller works it out once, as reading `MainActor.shared` costs more than
/// the main actor's own check.
///
/// The main actor is asked with `isOnMainActor` (the main thread, or a
/// block of the main queue), on every platform: it is the cheapest answer
/// and the one that also holds for Linux programs whose main queue runs off
/// the main thread. Any other actor is asked of the Swift runtime, through
/// `_chaining_is_current_executor` (see ChainingIsolation.h): true inside
/// the actor's methods and tasks, false elsewhere. Where the runtime is older
/// than Swift 6.2's (Apple systems before macOS 26 and its peers), the answer
/// for an actor other than the main actor is always false, so its values
/// always hop: later than they could run, never off the actor.
@inline(__always)
func isCurrentlyIsolated(to actor: any Actor, isMainActor: Bool) -> Bool {
  if isMainActor { return isOnMainActor }
  // `UnownedSerialExecutor` is the runtime's executor reference: two words,
  // the executor's identity and its witness table with flags. `unsafeBitCast`
  // checks the size, and the runtime reads the same two words.
  let executor = unsafeBitCast(actor.unownedExecutor, to: (UnsafeRawPointer?, UnsafeRawPointer?).self)
  return _chaining_is_current_executor(executor.0, executor.1)
}
