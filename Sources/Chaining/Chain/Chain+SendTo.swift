import _ChainingThreadContext

// MARK: - sendTo

extension Chain {
  /// Hands each value to a receiver's ``Receivable/receive(value:)`` and passes it on.
  ///
  /// ```swift
  /// final class Label: Receivable {
  ///   var text = ""
  ///   func receive(value: String) { text = value }
  /// }
  /// let label = Label()
  /// let name = ValueHolder("Ann")
  /// let observer = name.chain().sendTo(label).sync()
  /// print(label.text)
  /// // Prints "Ann"
  /// ```
  ///
  /// The receiver's ``Receivable/ReceiveValue`` must be this chain's `Value`;
  /// anything else does not compile. Use ``map(_:isolation:)`` first to convert.
  ///
  /// - Parameters:
  ///   - receiver: The object to send to. Held weakly: once it is
  ///     released, this step skips it and passes values on. Pass
  ///     `receiver.retain()` to have the observer keep it alive.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain with the same values.
  ///
  /// `receive(value:)` runs where `isolation` says, also for the value
  /// ``sync()`` sends.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(
    _ receiver: Receiver,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Receiver.ReceiveValue == Value {
    // A value holder: its store, which only the holder keeps (and frees
    // with it), through a link that does not keep it alive (see
    // `StoreLink`).
    if let holder = receiver as? ValueHolder<Value> {
      return isolated(to: isolation).sendingToStore(of: holder)
    }
    return isolated(to: isolation).linked(to: receiver).appendingLast { downstream in
      guard let downstream else {
        return { [weak receiver] value in receiver?.receive(value: value) }
      }
      return { [weak receiver] value in
        receiver?.receive(value: value)
        downstream(value)
      }
    }
  }

  /// Hands each value to a retained receiver and passes it on.
  ///
  /// Like ``sendTo(_:isolation:)-1b7uw``, but the finished observer holds the receiver
  /// strongly until it is invalidated or released.
  ///
  /// ```swift
  /// let observer = holder.chain().sendTo(Label().retain()).sync()
  /// ```
  ///
  /// - Parameters:
  ///   - retainer: The receiver, from ``Chainable/retain()`` or
  ///     ``Retainer/init(_:)``.
  ///   - isolation: Where the step runs. Leave it out: it is the isolation
  ///     of the code that builds the chain. Built on an actor (in a
  ///     `@MainActor` type, an `actor`), the step and the ones after it run
  ///     on that actor: at once when the value arrives there and nothing
  ///     waits, otherwise queued there, in order. Built in nonisolated code,
  ///     the step runs on the delivering thread.
  /// - Returns: A chain with the same values.
  @inlinable
  public consuming func sendTo<Receiver: Receivable>(
    _ retainer: Retainer<Receiver>,
    isolation: isolated (any Actor)? = #isolation
  ) -> Chain<Value, Source>
  where Receiver.ReceiveValue == Value {
    let receiver = retainer.object
    return isolated(to: isolation).linked(to: receiver).appending { downstream in
      { value in
        receiver.receive(value: value)
        downstream(value)
      }
    }
  }
}

extension Chain {
  /// The `sendTo` step into a value holder's store, with the holder's core
  /// linked in the graph of ranks (see `linked(to:)`).
  ///
  /// Right after `map`, `filter` and `compactMap` steps composed since the
  /// source (see `Steps`), the write joins their function: one closure
  /// holds both the composed steps and the `StoreLink`. Behind a closure
  /// of its own, each value would load one more object and make one more
  /// call, and each link would allocate one more context: in a chain of
  /// holders, a hop is one such step.
  @inlinable
  consuming func sendingToStore(of holder: ValueHolder<Value>) -> Chain {
    let store = holder.store
    switch steps {
    case .mapped(let head, let transform):
      return writing(to: store) { link, downstream, context in
        guard let downstream else {
          return head({ link.send(transform($0)) }, context)
        }
        head(
          { source in
            let value = transform(source)
            link.send(value)
            downstream(value)
          },
          context
        )
      }
    case .filtered(let head, let transform):
      return writing(to: store) { link, downstream, context in
        guard let downstream else {
          return head({ if let value = transform($0) { link.send(value) } }, context)
        }
        head(
          { source in
            guard let value = transform(source) else { return }
            link.send(value)
            downstream(value)
          },
          context
        )
      }
    case .source, .guarded, .built:
      let build = self.build
      return writing(to: store) { link, downstream, context in
        guard let downstream else {
          return build({ link.send($0) }, context)
        }
        build(
          { value in
            link.send(value)
            downstream(value)
          },
          context
        )
      }
    }
  }

  /// A chain whose build runs `build` with a new link to `store`, linked
  /// to the store's core in the graph of ranks (see `linked(to:)`).
  @inlinable
  func writing(
    to store: HolderStore<Value, Value>,
    _ build: @escaping (StoreLink<Value>, _ downstream: ((Value) -> Void)?, _ context: _ChainContext) -> Void
  ) -> Chain {
    Chain(isolation: isolation) { downstream, context in
      RankGraph.building(intoCore: store.core, in: context) { build(StoreLink(store), downstream, context) }
    }
  }

  /// The chain, its build so far linked to `receiver`'s sender core in
  /// the graph of ranks, when it has one (a holder, see `RankGraph`): a
  /// `sendTo` step's writes then rank the joins that read `receiver`
  /// above the joins before the step. Changes the build only, not the
  /// closures a value runs through.
  @inlinable
  consuming func linked(to receiver: AnyObject) -> Chain {
    let build = self.build
    // A value holder's core is found without a cast to a protocol.
    let holder = receiver as? ValueHolder<Value>
    return Chain(isolation: isolation) { downstream, context in
      if let holder {
        RankGraph.building(intoCore: holder.store.core, in: context) { build(downstream, context) }
      } else {
        RankGraph.building(into: receiver, in: context) { build(downstream, context) }
      }
    }
  }
}

/// A `sendTo` step's hold on a value holder's store: the store's memory,
/// not its life, as a weak reference, without a weak reference's cost.
///
/// A weak reference gives the object it names a side table, and every
/// retain and release of that object then takes the runtime's slow path
/// through it: the weak load and the release after each write were 40%
/// of a chain of holders' time per hop (`holder chain 1000`, perf). This
/// link holds an unowned reference, which keeps only the store's memory
/// allocated, and retains the store for each write with the runtime's
/// `swift_tryRetain`, which fails once the store's deinit has begun (the
/// holder is gone): the write is then skipped, as the weak reference's
/// nil was. So the store is freed with its holder, its state with it, and
/// a write either retains it before its last release, and runs on a live
/// store, or finds it going and does nothing. Checked by
/// `ChainSendToTests.sendToAValueHolderHoldsNeitherItNorItsValue` (the
/// holder and its value freed, a later write skipped) and
/// `aHolderFreedWhileAnotherThreadSendsToItIsSkipped` (one thread writes
/// while another frees the holder, also under the thread sanitizer; it
/// crashes when `send(_:)` writes without the conditional retain).
///
/// A value, kept in the step's closure context, so that a write loads no
/// object of its own before the store. The compiler must keep `pin`
/// there although nothing reads it:
/// `aSendToLinkPinsTheStoresMemoryUntilTheChainGoes` counts the store's
/// unowned references (it fails with `unowned(unsafe)`, which pins
/// nothing), in the debug and the optimized runs of the suite.
@usableFromInline
struct StoreLink<Value>: @unchecked Swift.Sendable {
  // @unchecked: both references are constants, and the store guards
  // itself.

  /// Keeps the store's memory allocated after its deinit, so that
  /// `send(_:)` may ask it whether it is alive. Never read: a read of an
  /// unowned reference stops the program once the deinit has begun.
  private unowned let pin: HolderStore<Value, Value>
  /// The store, unretained.
  @usableFromInline let store: Unmanaged<HolderStore<Value, Value>>

  @usableFromInline
  init(_ store: HolderStore<Value, Value>) {
    pin = store
    self.store = .passUnretained(store)
  }

  /// Writes `value` to the store, as the holder's setter does, unless
  /// the holder is gone. Any thread.
  @inlinable @inline(__always)
  func send(_ value: Value) {
    guard _chaining_try_retain(store.toOpaque()) != nil else { return }
    store._withUnsafeGuaranteedRef { $0.replace(with: value) { $0 } }
    // May be the last release, when the holder went meanwhile: the store
    // is then freed here.
    store.release()
  }
}

extension Receivable {
  /// Returns a wrapper that makes the finished ``Observer`` keep this receiver alive.
  ///
  /// Pass it to ``Chain/sendTo(_:isolation:)-1s4fs``.
  ///
  /// - Returns: A ``Retainer`` holding this object strongly.
  public func retain() -> Retainer<Self> {
    Retainer(self)
  }
}

extension Receivable where Self: Chainable {
  /// Returns a wrapper that makes the finished ``Observer`` keep this object alive.
  ///
  /// For an object that is both a source and a receiver; see
  /// ``Chainable/retain()``.
  ///
  /// - Returns: A ``Retainer`` holding this object strongly.
  public func retain() -> Retainer<Self> {
    Retainer(self)
  }
}
