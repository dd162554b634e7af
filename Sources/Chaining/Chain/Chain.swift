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

  /// Like `Build`, for the values the source sends.
  @usableFromInline typealias Head = (
    _ downstream: ((Source.ChainValue) -> Void)?, _ context: _ChainContext
  ) -> Void

  /// The steps so far, kept apart while they are only `map`, `filter` and
  /// `compactMap` steps.
  ///
  /// Those steps, from the source on, are composed into one function of
  /// the source's value, apart from the steps that follow. The compiler can
  /// then fold the ones whose closures capture nothing into one function,
  /// even when a later closure captures. Nested in front of the next step,
  /// as other steps are, each would cost two closure calls per value.
  @usableFromInline enum Steps {
    /// No steps yet, so `Value` is `Source.ChainValue`: the source's build
    /// function, once for each type.
    case source(Build, Head)
    /// Only `filter` steps since the source, so `Value` is
    /// `Source.ChainValue`: the source's build function, once for each
    /// type, and the filters composed.
    case guarded(Build, Head, (Value) -> Bool)
    /// Only `map` steps since the source: the source's build function and
    /// the maps composed.
    case mapped(Head, (Source.ChainValue) -> Value)
    /// Only `map`, `filter` and `compactMap` steps since the source, some of
    /// which may drop values and some change them (a `compactMap`, or both
    /// `map` and `filter`): the source's build function and the steps
    /// composed, returning `nil` for a dropped value.
    case filtered(Head, (Source.ChainValue) -> Value?)
    /// Any other steps: their build function.
    case built(Build)
  }

  @usableFromInline let steps: Steps

  /// The actor the values are known to reach this point on, or `nil` when
  /// they may come on any thread: set by a hop to an actor, kept by the
  /// steps that deliver on the thread they are called on, and cleared by
  /// those that may deliver elsewhere (``receive(on:)``, ``suspend(_:)``,
  /// joins of chains on different actors). Only the build reads it, to
  /// leave out a hop that would always run inline (see `isolated(to:)`).
  /// `nil` is never wrong: a step then adds a hop that checks.
  @usableFromInline let isolation: (any Actor)?

  @inlinable
  init(isolation: (any Actor)?, steps: Steps) {
    self.steps = steps
    self.isolation = isolation
  }

  @inlinable
  init(isolation: (any Actor)?, build: @escaping Build) {
    self.steps = .built(build)
    self.isolation = isolation
  }

  /// The build function of the steps so far.
  @inlinable
  var build: Build {
    // With nothing downstream, the composed steps still run, as other
    // steps do.
    switch steps {
    case .source(let build, _), .built(let build):
      return build
    case .guarded(let build, _, let isIncluded):
      return { downstream, context in
        if let downstream {
          build({ if isIncluded($0) { downstream($0) } }, context)
        } else {
          build({ _ = isIncluded($0) }, context)
        }
      }
    case .mapped(let head, let transform):
      return { downstream, context in
        if let downstream {
          head({ downstream(transform($0)) }, context)
        } else {
          head({ _ = transform($0) }, context)
        }
      }
    case .filtered(let head, let transform):
      return { downstream, context in
        if let downstream {
          head({ if let value = transform($0) { downstream(value) } }, context)
        } else {
          head({ _ = transform($0) }, context)
        }
      }
    }
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
    return Chain<Next, Source>(isolation: isolation) { downstream, context in
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
    return Chain<Next, Source>(isolation: isolation) { downstream, context in
      build(step(downstream), context)
    }
  }
}

extension Chain where Value == Source.ChainValue {
  /// A chain that starts at `source`.
  @inlinable
  init(source: Source, retained: Bool) {
    let build: Build = { downstream, context in
      if retained { context.retain(source) }
      #if DEBUG
      let fetches = context.fetchCount
      #endif
      if let downstream {
        source._subscribe(context, downstream)
        source._addFetch(context, downstream)
      } else {
        // Nothing follows: subscribe all the same, so that the chain keeps
        // its source's lifetime rules and `sync()` still fetches.
        source._subscribe(context) { _ in }
        source._addFetch(context) { _ in }
      }
      #if DEBUG
      // The contract of `_subscribe` and `_addFetch`: one fetch at most.
      // In debug builds only, as the test suite runs: in optimized ones,
      // reading the count twice cost 2% of a subscription.
      let added = context.fetchCount &- fetches
      if added > 1 { context.stopForFetches(of: Source.self, count: added) }
      #endif
    }
    // A source sends on the thread that changes it: any thread.
    self.init(isolation: nil, steps: .source(build, build))
  }
}

@available(*, unavailable)
extension Chain: Swift.Sendable {}

// MARK: - Composed steps

// In `source` and `guarded`, `Value` is `Source.ChainValue`, so a function of
// `Value` is cast to one of `Source.ChainValue` with `unsafeBitCast`, which
// changes nothing. Only functions whose result is a type parameter (or an
// optional of one) are cast: their form is already the most general one,
// as a generic function such as `unsafeBitCast` passes it. Casting one that
// returns `Bool` or `Void`, or using `as!`, would reabstract it and add
// thunks that every value then goes through.

extension Chain {
  /// Returns the chain with a step that passes on `transform(value)`,
  /// composed with the steps before it where those can be (see `Steps`).
  @inlinable
  consuming func appendingMap<Next>(_ transform: @escaping (Value) -> Next) -> Chain<Next, Source> {
    switch steps {
    case .source(_, let head):
      let composed = unsafeBitCast(transform, to: ((Source.ChainValue) -> Next).self)
      return Chain<Next, Source>(isolation: isolation, steps: .mapped(head, composed))
    case .guarded(_, let head, let isIncluded):
      let composed: (Value) -> Next? = { isIncluded($0) ? transform($0) : nil }
      let cast = unsafeBitCast(composed, to: ((Source.ChainValue) -> Next?).self)
      return Chain<Next, Source>(isolation: isolation, steps: .filtered(head, cast))
    case .mapped(let head, let prior):
      return Chain<Next, Source>(isolation: isolation, steps: .mapped(head, { transform(prior($0)) }))
    case .filtered(let head, let prior):
      return Chain<Next, Source>(
        isolation: isolation,
        steps: .filtered(head, { if let value = prior($0) { transform(value) } else { nil } })
      )
    case .built:
      return appending { downstream in
        { value in downstream(transform(value)) }
      }
    }
  }

  /// Returns the chain with a step that passes on the values for which
  /// `isIncluded` returns `true`, composed with the steps before it where
  /// those can be (see `Steps`).
  @inlinable
  consuming func appendingFilter(_ isIncluded: @escaping (Value) -> Bool) -> Chain<Value, Source> {
    switch steps {
    case .source(let build, let head):
      return Chain(isolation: isolation, steps: .guarded(build, head, isIncluded))
    case .guarded(let build, let head, let prior):
      return Chain(isolation: isolation, steps: .guarded(build, head, { prior($0) && isIncluded($0) }))
    case .mapped(let head, let prior):
      return Chain(
        isolation: isolation,
        steps: .filtered(
          head,
          { source in
            let value = prior(source)
            return isIncluded(value) ? value : nil
          }
        )
      )
    case .filtered(let head, let prior):
      return Chain(
        isolation: isolation,
        steps: .filtered(head, { if let value = prior($0), isIncluded(value) { value } else { nil } })
      )
    case .built:
      return appending { downstream in
        { value in
          if isIncluded(value) { downstream(value) }
        }
      }
    }
  }

  /// Returns the chain with a step that passes on `transform(value)` unless
  /// it is `nil`, composed with the steps before it where those can be (see
  /// `Steps`).
  @inlinable
  consuming func appendingCompactMap<Next>(
    _ transform: @escaping (Value) -> Next?
  ) -> Chain<Next, Source> {
    switch steps {
    case .source(_, let head):
      let composed = unsafeBitCast(transform, to: ((Source.ChainValue) -> Next?).self)
      return Chain<Next, Source>(isolation: isolation, steps: .filtered(head, composed))
    case .guarded(_, let head, let isIncluded):
      let composed: (Value) -> Next? = { isIncluded($0) ? transform($0) : nil }
      let cast = unsafeBitCast(composed, to: ((Source.ChainValue) -> Next?).self)
      return Chain<Next, Source>(isolation: isolation, steps: .filtered(head, cast))
    case .mapped(let head, let prior):
      return Chain<Next, Source>(isolation: isolation, steps: .filtered(head, { transform(prior($0)) }))
    case .filtered(let head, let prior):
      return Chain<Next, Source>(
        isolation: isolation,
        steps: .filtered(head, { if let value = prior($0) { transform(value) } else { nil } })
      )
    case .built:
      return appending { downstream in
        { value in
          if let next = transform(value) { downstream(next) }
        }
      }
    }
  }
}

// MARK: - Isolation

extension Chain {
  /// Returns the chain with the rest of its steps on `actor`: unchanged when
  /// `actor` is `nil` (a step built in a nonisolated context) or when the
  /// values are known to be on `actor` already; otherwise with a hop
  /// (``IsolationHop``) that runs a value at once when it arrives on the
  /// actor and nothing waits, and queues it on the actor otherwise.
  ///
  /// Each step that runs user code calls this with the isolation of the code
  /// that built it, so a chain built on one actor has one hop, in front of
  /// its first such step, and one check per value.
  @inlinable
  consuming func isolated(to actor: (any Actor)?) -> Chain<Value, Source> {
    guard let actor, actor !== isolation else { return self }
    return hop(to: actor)
  }

  /// The chain, with no actor known for its values: what a step that hands
  /// them to another thread returns (``receive(on:)``), so that a later
  /// step written on an actor hops back.
  @inlinable
  consuming func onAnyThread() -> Chain<Value, Source> {
    Chain(isolation: nil, steps: steps)
  }

  /// The hop of `isolated(to:)`, out of line: it is built once per chain.
  ///
  /// Right after the source, the hop joins the source's build functions, so
  /// that the `map`, `filter` and `compactMap` steps after it are still
  /// composed into one function (see `Steps`).
  @usableFromInline
  consuming func hop(to actor: any Actor) -> Chain<Value, Source> {
    if case .source(let build, let head) = steps {
      return Chain(isolation: actor, steps: .source(hopping(build, to: actor), hopping(head, to: actor)))
    }
    return Chain(isolation: actor, build: hopping(build, to: actor))
  }
}

/// `build`, with a hop to `actor` in front of what follows it.
@usableFromInline
func hopping<Value>(
  _ build: @escaping (_ downstream: ((Value) -> Void)?, _ context: _ChainContext) -> Void,
  to actor: any Actor
) -> (_ downstream: ((Value) -> Void)?, _ context: _ChainContext) -> Void {
  { given, context in
    // Not `??`, which would wrap the closure in reabstraction thunks.
    let downstream: (Value) -> Void
    if let given { downstream = given } else { downstream = { _ in } }
    let hop = IsolationHop(to: actor, downstream: downstream)
    context.addHopGate(hop.gate)
    build({ value in hop.send(value) }, context)
  }
}

/// The actor both joined chains are known to deliver on, or `nil`.
@usableFromInline
func joinedIsolation(_ one: (any Actor)?, _ other: (any Actor)?) -> (any Actor)? {
  one === other ? one : nil
}
