// MARK: - ChainValues

/// The values of a chain as an `AsyncSequence`: what ``Chain/values`` returns.
///
/// ```swift
/// let progress = ValueHolder(0)
/// Task {
///   for await percent in progress.chain().values {
///     print("\(percent)%")
///     if percent == 100 { break }
///   }
/// }
/// ```
///
/// Each iterator finishes the chain anew, with its own ``Observer``: when
/// the chain's source is ``Fetchable``, the sequence starts with the
/// current value, as with ``Chain/sync()``; then every value the chain
/// delivers follows. The observer lives as long as the iteration: breaking
/// out of the loop, returning from it, or cancelling the task that runs it
/// invalidates the observer. Nothing is subscribed until iteration starts
/// (`makeAsyncIterator()`, which `for await` calls first).
///
/// As each iterator finishes the chain anew, the sequence keeps the chain
/// as built for as long as the sequence is kept, iterated or not: its
/// source strongly, as a chain being built does, and its steps with what
/// their closures capture. An iteration's observer holds only what
/// ``Chain/end()``'s would (not the source, unless it comes from
/// ``Chainable/retain()``). So a `for await` loop over
/// `holder.chain().values` does not keep `holder` alive, but a sequence
/// stored in a property does, until the property lets it go.
///
/// The sequence finishes, after the values already sent, when the binding
/// ends: a step such as ``Chain/prefix(_:)`` or ``Chain/first()`` ended it,
/// or every sender of the chain was freed (a library holder, notifier or
/// adapter; a class of yours that adopts ``Sendable`` does not tell when it
/// is freed).
///
/// Values wait in a buffer between the thread that sends them and the task
/// that iterates; the buffering policy says what happens when the task falls
/// behind (by default nothing is dropped).
public struct ChainValues<Element: Swift.Sendable>: AsyncSequence {
  /// The error the sequence throws: `Never`, as it never throws.
  public typealias Failure = Never

  private let start: (AsyncStream<Element>.Continuation) -> Observer
  private let bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy

  init(
    bufferingPolicy: AsyncStream<Element>.Continuation.BufferingPolicy,
    start: @escaping (AsyncStream<Element>.Continuation) -> Observer
  ) {
    self.start = start
    self.bufferingPolicy = bufferingPolicy
  }

  /// Finishes the chain and returns an iterator over its values.
  public func makeAsyncIterator() -> Iterator {
    let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: bufferingPolicy)
    let observer = start(continuation)
    continuation.onTermination = { _ in observer.invalidate() }
    return Iterator(base: stream.makeAsyncIterator(), lifetime: IterationLifetime(observer))
  }

  /// An iterator over a chain's values; its observer ends with it.
  public struct Iterator: AsyncIteratorProtocol {
    private var base: AsyncStream<Element>.Iterator
    private let lifetime: IterationLifetime

    init(base: AsyncStream<Element>.Iterator, lifetime: IterationLifetime) {
      self.base = base
      self.lifetime = lifetime
    }

    /// Waits for the next value; `nil` once the task is cancelled.
    public mutating func next() async -> Element? {
      await base.next()
    }

    /// Waits for the next value on the caller's actor; `nil` once the task is cancelled.
    @available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
    public mutating func next(isolation actor: isolated (any Actor)?) async -> Element? {
      await base.next(isolation: actor)
    }
  }
}

@available(*, unavailable)
extension ChainValues: Swift.Sendable {}

/// Finishes an iteration's stream when the observer lets it go, that is when
/// the binding ends.
final class StreamFinisher<Element: Swift.Sendable>: Swift.Sendable {
  let continuation: AsyncStream<Element>.Continuation
  init(_ continuation: AsyncStream<Element>.Continuation) { self.continuation = continuation }
  deinit { continuation.finish() }
}

/// Invalidates an iteration's observer when the iterator is gone.
final class IterationLifetime: Swift.Sendable {
  let observer: Observer
  init(_ observer: Observer) { self.observer = observer }
  deinit { observer.invalidate() }
}

// MARK: - values

extension Chain where Value: Swift.Sendable {
  /// The chain's values as an `AsyncSequence`, buffering every value.
  ///
  /// ```swift
  /// for await name in profile.name.chain().map { $0.uppercased() }.values {
  ///   print(name)
  /// }
  /// ```
  ///
  /// Finishes the chain, like ``end()``: do not use this chain again.
  /// Unlike the steps, this property does not consume the chain (a
  /// consuming property is not yet usable in a `for await` loop), so the
  /// compiler does not stop a second use; a second use would build a second,
  /// separate binding.
  /// See ``ChainValues`` for when it subscribes and when it stops.
  ///
  /// The sequence holds the chain's source strongly, and the steps'
  /// closures, until the sequence is released, even if it is never
  /// iterated; each iteration's observer holds what ``end()``'s would.
  ///
  /// The buffer is unbounded: a binding library must not lose a value
  /// silently, and a holder's values are few. Use
  /// ``values(bufferingPolicy:)`` with `.bufferingNewest(1)` to keep only the
  /// latest state when the consumer may fall far behind.
  public var values: ChainValues<Value> {
    Self.makeValues(bufferingPolicy: .unbounded, build: build)
  }

  /// The chain's values as an `AsyncSequence`, with a buffering policy.
  ///
  /// - Parameter bufferingPolicy: What to keep when the iterating task falls
  ///   behind: `.unbounded`, `.bufferingNewest(n)` or `.bufferingOldest(n)`.
  /// - Returns: The sequence; see ``ChainValues``.
  public consuming func values(
    bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy
  ) -> ChainValues<Value> {
    Self.makeValues(bufferingPolicy: bufferingPolicy, build: build)
  }

  /// The sequence of the values of the chain that `build` wires, which
  /// finishes the chain when iterated.
  static func makeValues(
    bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy,
    build: @escaping Build
  ) -> ChainValues<Value> {
    ChainValues(bufferingPolicy: bufferingPolicy) { continuation in
      // The observer is the context the build collects into, as in `finish()`.
      let observer = Observer()
      build({ continuation.yield($0) }, observer)
      // However the binding ends (a `prefix`, `first`, an `invalidate()`,
      // the end of the loop), the observer releases this and the
      // sequence finishes; and it ends when every sender is freed.
      observer.retain(StreamFinisher(continuation))
      observer.invalidateWhenSendersEnd()
      observer.start(fetching: true)
      return observer
    }
  }
}
