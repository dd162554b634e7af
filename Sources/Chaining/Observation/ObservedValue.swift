import Dispatch
import Observation

// MARK: - ObservedValue

/// A source that sends what a closure reads from `@Observable` models, each
/// time anything it read changes.
///
/// Observation tells a tracking that something it read is about to change;
/// `ObservedValue` turns that into a chain source with Chaining's
/// guarantees. ``Chain/sync()`` starts a chain with the last value read, and
/// every change of anything the closure read sends the closure's new result:
///
/// ```swift
/// import Observation
///
/// @Observable final class Profile: @unchecked Swift.Sendable {
///   // @unchecked: written and read on `queue` only.
///   var first = "Ann"
///   var last = "Lee"
/// }
///
/// let profile = Profile()
/// let queue = DispatchQueue(label: "profile")
/// let fullName = ObservedValue(of: profile, on: queue) { "\($0.first) \($0.last)" }
/// let observer = fullName.chain().do { print($0) }.sync()
/// // Prints "Ann Lee"
/// queue.sync { profile.first = "Bea" }
/// queue.sync {}
/// // Prints "Bea Lee"
/// ```
///
/// ### When values arrive
/// - The closure runs on `queue`, never on two threads at once: once when
///   the source is made (in a `sync` block of `queue` when it is made
///   elsewhere, so never make it in a block that `queue` waits for, nor on
///   the main thread with a queue that targets the main queue), and then
///   after each change. Made off the main actor with `on: .main`, it
///   reads on the calling thread, and once more on the main queue.
///   ``Chain/sync()`` sends the last value it read, at once, on the thread
///   that calls it.
/// - Observation reports a change in its `willSet`, before the new value is
///   stored, so the closure cannot run on the writer's thread. The change
///   schedules one read on `queue`, which sends the value as stored by then.
///   Changes made before that read runs are coalesced into it: values
///   arrive in the order of the writes, never an earlier one after a later
///   one, and the last value written always arrives.
/// - Each read is tracked anew, so a closure that reads different models
///   depending on what it read follows the change (an implicit switch).
/// - When `Value` is `Equatable`, a result equal to the last one sends
///   nothing.
///
/// ### Who may write the model
/// - A write made on `queue` itself is read after the write's own code has
///   returned: the read it schedules is queued behind the work already on
///   `queue`, so after `queue.sync { model.name = "Bea" }` a following
///   `queue.sync {}` returns once the new value has been sent.
/// - A model written from other threads must make each write, its
///   `willSet` included, and the closure's reads exclusive, for example
///   with one lock around both. Otherwise the read may run between the
///   `willSet` and the store, see the old value, and miss the change.
///   Chaining's holders tell Observation after storing, so they may be
///   written from any thread.
/// - Each change is read twice, both times under tracking, so that a
///   write landing while the first read installs its tracking is read by
///   the second.
///
/// ### Lifetime
/// The tracking Observation keeps for the source holds it weakly: nothing
/// the source reads keeps it alive. The source keeps what `read` captures;
/// ``init(of:on:_:)`` keeps its model weakly instead, and once the model is
/// gone the source sends nothing more and ``Chain/sync()`` sends nothing.
/// Like any source, a chain does not keep the source alive unless it was
/// started with ``Chainable/retain()``.
///
/// A newer toolchain's `didSet` tracking could read on the writer's thread
/// at once; `scheduleRead()` is the one place that would change.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
public final class ObservedValue<Value>: Syncable {
  /// The type of the values chains receive.
  public typealias ChainValue = Value

  let store: HolderStore<Value, Value>
  private let loop: ReadLoop<Value>

  /// Makes a source of what `read` returns, reading it once now.
  ///
  /// - Parameters:
  ///   - queue: A serial queue on which `read` runs after each change and
  ///     the values are sent: the queue the model is written on (see
  ///     "Who may write the model"), such as `.main` for a model the main thread
  ///     writes.
  ///   - read: Reads `@Observable` state. Called now, on `queue` (see
  ///     "When values arrive"), then on `queue` after each change, one
  ///     call at a time. It must not write what it reads.
  public init(on queue: DispatchQueue, _ read: @escaping @Sendable () -> Value) {
    loop = ReadLoop(queue: queue, read: { read() }, isAlive: { true })
    // Never `nil`: this closure has no model to lose.
    store = HolderStore(loop.firstRead()!, publishing: true)
    loop.start(sendingTo: store)
  }

  /// Makes a source of what `read` returns from `object`, holding `object`
  /// weakly: once it is gone, the source sends nothing more.
  ///
  /// - Parameters:
  ///   - object: The model, held weakly.
  ///   - queue: As in ``init(on:_:)``.
  ///   - read: Reads `object`'s state, as in ``init(on:_:)``.
  public init<Object: AnyObject & Swift.Sendable>(
    of object: Object,
    on queue: DispatchQueue,
    _ read: @escaping @Sendable (Object) -> Value
  ) {
    let loop = ReadLoop(
      queue: queue,
      read: { [weak object] in object.map(read) },
      isAlive: { [weak object] in object != nil }
    )
    // Not `nil`: `object` is alive during this call.
    store = HolderStore(withExtendedLifetime(object) { loop.firstRead()! }, publishing: true)
    self.loop = loop
    loop.start(sendingTo: store)
  }

  /// The last value the closure returned.
  ///
  /// Inside `withObservationTracking` (a SwiftUI `body`) the read is
  /// registered, as a holder's is: a new value sent calls `onChange`.
  public var value: Value {
    store.read(observedBy: self) { $0 }
  }

  /// Returns the last value the closure returned; ``Chain/sync()`` sends it.
  public func fetchedValue() -> Value {
    store.read { $0 }
  }

  /// Whether the model is still there: `false` once the object given to
  /// ``init(of:on:_:)`` is gone, so that ``Chain/sync()`` sends nothing.
  public func canFetch() -> Bool {
    loop.isAlive()
  }

  /// Subscribes a finished chain and takes the value ``Chain/sync()`` sends, in one step. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Value) -> Void) {
    store.attach(context, handler) { [loop] value in loop.isAlive() ? value : nil }
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (Value) -> Void) {}

  /// The stored core of this source. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Value>? {
    store.core
  }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ObservedValue where Value: Swift.Sendable {
  /// Makes a source of what `read` returns from a `@MainActor` model,
  /// reading it on the main queue and holding the model weakly.
  ///
  /// A SwiftUI view model is usually `@MainActor`: its properties can be
  /// read only there, and its writes are made there. This reads once now,
  /// on the main actor, and after each change on the main queue (which runs
  /// on the main actor), where its values are sent:
  ///
  /// ```swift
  /// import Observation
  ///
  /// @MainActor @Observable final class SearchModel {
  ///   var query = ""
  /// }
  ///
  /// @MainActor func bindSearch(_ model: SearchModel) -> Observer {
  ///   ObservedValue(onMainActor: model) { $0.query }
  ///     .retain().chain()
  ///     .do { print("searching for", $0) }
  ///     .sync()
  /// }
  /// ```
  ///
  /// On Linux the main queue runs only while the main thread waits in
  /// `dispatchMain()`, a run loop or the main actor's executor.
  ///
  /// - Parameters:
  ///   - object: The model, held weakly: once it is gone, nothing more is
  ///     sent.
  ///   - read: Reads the model's state on the main actor.
  @MainActor
  public convenience init<Object: AnyObject & Swift.Sendable>(
    onMainActor object: Object,
    _ read: @escaping @MainActor @Sendable (Object) -> Value
  ) {
    // Every read runs on the main queue, or here, on the main actor.
    self.init(of: object, on: .main) { object in MainActor.assumeIsolated { read(object) } }
  }
}

@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ObservedValue {
  /// Unavailable: an `ObservedValue` reads on the queue where its model is
  /// written, so it needs that queue.
  ///
  /// It once defaulted to a private queue, on which no model is written: a
  /// write made on the caller's thread could be read before it was stored,
  /// and was then lost.
  @available(
    *,
    unavailable,
    message:
      "pass the queue the model is written on, ObservedValue(on: queue) { ... } (the writer rule in Observation.md), or use ObservedValue(onMainActor:_:) for a @MainActor model"
  )
  public convenience init(_ read: @escaping @Sendable () -> Value) {
    fatalError("unavailable")
  }

  /// Unavailable: as ``init(_:)``, pass the queue the model is written on.
  @available(
    *,
    unavailable,
    message:
      "pass the queue the model is written on, ObservedValue(of: model, on: queue) { ... } (the writer rule in Observation.md), or use ObservedValue(onMainActor:_:) for a @MainActor model"
  )
  public convenience init<Object: AnyObject & Swift.Sendable>(
    of object: Object,
    _ read: @escaping @Sendable (Object) -> Value
  ) {
    fatalError("unavailable")
  }
}

// @unchecked: the value and the observers are guarded by the store, the
// loop guards itself, and values cross threads only when `Value` is
// `Swift.Sendable`.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ObservedValue: @unchecked Swift.Sendable where Value: Swift.Sendable {}

/// Reading ``value`` inside `withObservationTracking` registers the read; a
/// new value calls the tracking's `onChange`. See <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension ObservedValue: Observable {}

// MARK: - ReadLoop

/// The tag by which a read loop knows its queue: see `ReadLoop.isOnQueue`.
private let queueKey = DispatchSpecificKey<ObjectIdentifier>()

/// Runs an `ObservedValue`'s closure under Observation tracking, again on
/// its queue after each change, and stores each result.
///
/// The tracking's `onChange` holds the loop weakly, and so do the reads
/// queued for it: the model's registrar keeps nothing alive.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
final class ReadLoop<Value>: @unchecked Swift.Sendable {
  // @unchecked: `read` runs on `queue` only, after the initializer's first
  // read; `state` guards the rest.

  private struct State {
    /// A read is queued and has not started.
    var scheduled = false
    /// Where values go; set by `start`, just after the first read.
    var target: HolderStore<Value, Value>?
    /// A read ran before `start`: `start` queues another.
    var missed = false
    /// The first read was made off the queue: `start` queues another.
    var readAgain = false
  }

  private let queue: DispatchQueue
  private let read: () -> Value?
  private let state = Protected(State())
  /// Whether the model is still there. Any thread.
  let isAlive: @Sendable () -> Bool

  init(queue: DispatchQueue, read: @escaping () -> Value?, isAlive: @escaping @Sendable () -> Bool) {
    self.queue = queue
    self.read = read
    self.isAlive = isAlive
  }

  /// Starts sending to `store`, which holds the first read's value. A
  /// change made since that read, whose read ran too early to send, is
  /// read again, and so is a first read made off the queue.
  func start(sendingTo store: HolderStore<Value, Value>) {
    let again = state.withLock { state in
      state.target = store
      return state.missed || state.readAgain
    }
    if again { scheduleRead() }
  }

  /// Reads for the first time, on the queue, where the model is written:
  /// a read on another thread could run while a write of the queue is
  /// between its `willSet` and its store, see the old value, and miss the
  /// change for good (Verification/ReadLoop.pml finds it). So the read
  /// runs here when this is the queue, in a `sync` block of it otherwise.
  /// The main queue runs only when the main thread lets it (on Linux not
  /// in every program), so off the main actor it reads here, and once
  /// more on the queue from `start`.
  ///
  /// Two reads, as every read (`trackedReadTwice()`). `nil` when the
  /// model is gone.
  func firstRead() -> Value? {
    if queue === DispatchQueue.main {
      if isOnMainActor { return trackedReadTwice() }
      state.withLock { $0.readAgain = true }
      return trackedReadTwice()
    }
    return isOnQueue ? trackedReadTwice() : queue.sync { trackedReadTwice() }
  }

  /// Whether this code runs in a block of the queue (or of a queue that
  /// targets it): the queue is tagged with its own identity once, and
  /// `getSpecific` finds the tag of the queue running the caller or of
  /// one of its targets.
  private var isOnQueue: Bool {
    let identity = ObjectIdentifier(queue)
    if queue.getSpecific(key: queueKey) != identity {
      queue.setSpecific(key: queueKey, value: identity)
    }
    return DispatchQueue.getSpecific(key: queueKey) == identity
  }

  /// Runs the closure under tracking. `nil` when the model is gone.
  func trackedRead() -> Value? {
    withObservationTracking(read) { [weak self] in self?.scheduleRead() }
  }

  /// Reads twice, each under tracking, and returns the second read: a
  /// write that lands between the first read and the moment its tracking
  /// is installed (the end of `withObservationTracking`) reaches no
  /// tracking, but the second read, which starts after that moment, sees
  /// it. A write that lands during the second read's window calls the
  /// first tracking's `onChange`, which queues a read. Both trackings may
  /// call `onChange`; `scheduled` makes that one read. `nil` once the
  /// model is gone: such a read runs nothing and tracks nothing, so the
  /// reads stop there.
  private func trackedReadTwice() -> Value? {
    guard trackedRead() != nil else { return nil }
    return trackedRead()
  }

  /// Called by Observation in a tracked model's `willSet`, on the writing
  /// thread, before the change is stored: queues one read, unless one is
  /// queued and has not started (it will read this change too).
  ///
  /// The seam for `didSet` tracking: with it, this could read at once.
  private func scheduleRead() {
    let first = state.withLock { state in
      defer { state.scheduled = true }
      return !state.scheduled
    }
    guard first else { return }
    queue.async { [weak self] in self?.readAndSend() }
  }

  /// Reads on the queue, twice (`trackedReadTwice()`), and sends the result.
  private func readAndSend() {
    let target = state.withLock { state in
      state.scheduled = false
      if state.target == nil { state.missed = true }
      return state.target
    }
    guard let target, let value = trackedReadTwice() else { return }
    target.replace(with: value) { $0 }
  }
}
