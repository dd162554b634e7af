// MARK: - withBatchedUpdates

/// Runs `body` as one wave: a ``Chain/combine(_:)-6p7cs`` over holders
/// written inside it sends once, with all the new values, when `body`
/// returns.
///
/// Every write still delivers at once: a chain with one source sees every
/// value, in order, inside the closure, and a read of a holder's `value`
/// (or of an ``ObservedValue`` fed by one) sees the writes made so far.
/// Only a `combine` waits: whichever of its sources changed in the batch,
/// it sends one value when the batch ends, built from every side's final
/// value, after the batch's other deliveries. A combine whose sources did
/// not change sends nothing.
///
/// ```swift
/// let width = ValueHolder(1)
/// let height = ValueHolder(1)
/// let observer = width.chain().combine(height.chain()).do { print($0 * $1) }.end()
/// withBatchedUpdates {
///   width.value = 3
///   height.value = 4
/// }
/// // Prints "12" (never "4", the area of a 3 x 1 rectangle)
/// observer.invalidate()
/// ```
///
/// - Parameter body: The writes to make as one wave. It runs at once, on
///   the calling thread, and is not retained.
/// - Returns: What `body` returns.
///
/// The batch belongs to the calling thread: writes that other threads make
/// meanwhile are their own waves, delivered as usual, and a combine that
/// one of them reaches sends at that wave's end. A batch inside a batch, or
/// inside a delivery (a handler that writes), joins the outer wave, which
/// sends when it ends. When `body` throws, the combines that changed send
/// all the same, then the error is rethrown. Values that a step hands to a
/// queue or an actor (``Chain/receive(on:)``, a step written on an actor
/// other than the caller's) arrive there later, in waves of their own.
public func withBatchedUpdates<Result, Failure: Error>(
  _ body: () throws(Failure) -> Result
) throws(Failure) -> Result {
  let context = DeliveryContext.current
  context.beginWave()
  defer { context.endWave() }
  return try body()
}
