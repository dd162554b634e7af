// MARK: - Chain

/// A binding being built: a source, then steps, then ``end()`` or ``sync()``.
///
/// Start a chain with ``Chainable/chain()``, add steps, and finish it to get
/// the ``Observer`` that keeps the binding alive:
///
/// ```swift
/// let count = ValueHolder(1)
/// let observer = count.chain()
///   .map { $0 * 10 }
///   .do { print("count x 10 =", $0) }
///   .sync()
/// // Prints "count x 10 = 10"
/// count.value = 2
/// // Prints "count x 10 = 20"
/// ```
///
/// The chain is typed end to end: `Value` is the type of the values at the
/// current step, `Source` the type of the object the chain started from (it
/// decides whether ``sync()`` is available).
///
/// A `Chain` is a one-shot builder: a noncopyable value whose steps are
/// `consuming`. Each step consumes the chain it is called on and returns a
/// new one, so using a chain again after a step, `end()` or `sync()` does
/// not compile ("'chain' consumed more than once"). Being a struct, a chain
/// being built allocates nothing of its own. Build a chain on one thread;
/// the finished observer may then be used from any.
///
/// When finished, the steps become one pipeline of typed closures: a value
/// goes from the source to the last step by plain closure calls, with no
/// type-erased storage or casts in between.
public struct Chain<Value, Source: Chainable>: ~Copyable {
  /// Wires the steps so far in front of `downstream`, for every source of
  /// the chain, into `context`. A `nil` downstream means nothing follows:
  /// the last step can then skip calling it.
  @usableFromInline typealias Build = (_ downstream: ((Value) -> Void)?, _ context: _ChainContext) -> Void

  /// The build function of the steps so far.
  @usableFromInline let build: Build

  @inlinable
  init(build: @escaping Build) {
    self.build = build
  }

  /// Returns the chain with one more step: `step` turns the next step's
  /// handler into this step's handler.
  ///
  /// `step` runs once for each finished chain, so state it creates belongs
  /// to that chain. The chain's gate runs one value at a time, so such state
  /// needs no lock of its own.
  @inlinable
  consuming func appending<Next>(
    _ step: @escaping (_ downstream: @escaping (Next) -> Void) -> (Value) -> Void
  ) -> Chain<Next, Source> {
    appending { downstream, _ in step(downstream) }
  }

  /// Like the other `appending`, for a step that also needs the
  /// context of the chain being finished.
  @inlinable
  consuming func appending<Next>(
    _ step: @escaping (_ downstream: @escaping (Next) -> Void, _ context: _ChainContext) -> (Value) -> Void
  ) -> Chain<Next, Source> {
    let build = self.build
    return Chain<Next, Source> { downstream, context in
      // `if let`, not `??`: the generic `??` would wrap the closure in
      // reabstraction thunks that every value then goes through.
      if let downstream {
        build(step(downstream, context), context)
      } else {
        build(step({ _ in }, context), context)
      }
    }
  }

  /// Like `appending`, for a step that does its own work and then passes
  /// the value on: it gets `nil` when it is the last step, and can then
  /// return its work alone, saving a closure and a call per value.
  @inlinable
  consuming func appendingLast<Next>(
    _ step: @escaping (_ downstream: ((Next) -> Void)?) -> (Value) -> Void
  ) -> Chain<Next, Source> {
    let build = self.build
    return Chain<Next, Source> { downstream, context in
      build(step(downstream), context)
    }
  }
}

extension Chain where Value == Source.ChainValue {
  /// A chain that starts at `source`.
  @inlinable
  init(source: Source, retained: Bool) {
    self.init { downstream, context in
      if retained { context.retain(source) }
      guard let downstream else {
        // Nothing follows: subscribe all the same, so that the chain keeps
        // its source's lifetime rules and `sync()` still fetches.
        source._subscribe(context) { _ in }
        source._addFetch(context) { _ in }
        return
      }
      source._subscribe(context, downstream)
      source._addFetch(context, downstream)
    }
  }
}

@available(*, unavailable)
extension Chain: Swift.Sendable {}
