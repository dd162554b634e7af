import Observation

// MARK: - Suspender

/// A switch that holds back the values of the chains that use it.
///
/// Add ``Chain/suspend(_:)`` to a chain and flip the suspender to pause and
/// resume it. A suspender is a ``Syncable`` of `Bool` (`true` while
/// suspended) and a ``Receivable`` of `Bool`, so it can itself be bound:
///
/// ```swift
/// let isEditing = ValueHolder(false)
/// let suspender = Suspender()
/// let pause = isEditing.chain().sendTo(suspender).sync()
/// let title = ValueHolder("Draft")
/// let observer = title.chain().suspend(suspender).do { print("title", $0) }.sync()
/// // Prints "title Draft"
/// isEditing.value = true
/// title.value = "Dra"
/// title.value = "Drafts"   // held back while editing
/// isEditing.value = false
/// // Prints "title Drafts"
/// ```
///
/// A suspender may be used from any thread and by many chains at once.
public final class Suspender: Syncable, Receivable {
  /// `true` while suspended.
  public typealias ChainValue = Bool
  /// `true` to suspend, `false` to resume.
  public typealias ReceiveValue = Bool

  private let state: ValueHolder<Bool>

  /// Creates a suspender.
  ///
  /// - Parameter isSuspended: Whether it starts suspended. Defaults to `false`.
  public init(isSuspended: Bool = false) {
    state = ValueHolder(isSuspended)
  }

  /// Whether the chains that use this suspender are held back.
  ///
  /// Setting it to the value it already has does nothing.
  public var isSuspended: Bool {
    get { state.store.read(observedBy: self) { $0 } }
    set { state.value = newValue }
  }

  /// Holds back the values of the chains that use this suspender.
  public func suspend() {
    isSuspended = true
  }

  /// Lets values through again; see ``Chain/suspend(_:)`` for what is replayed.
  public func resume() {
    isSuspended = false
  }

  /// Returns ``isSuspended``.
  public func fetchedValue() -> Bool {
    state.fetchedValue()
  }

  /// Sets ``isSuspended``.
  public func receive(value: Bool) {
    isSuspended = value
  }

  /// The core of the suspender's state. Not API.
  public func _senderCore(creating: Bool) -> _SenderCore<Bool>? {
    state._senderCore(creating: creating)
  }

  /// Subscribes a finished chain and takes the value ``Chain/sync()`` sends, in one step. Not API.
  public func _subscribe(_ context: _ChainContext, _ handler: @escaping (Bool) -> Void) {
    state._subscribe(context, handler)
  }

  /// Does nothing: ``_subscribe(_:_:)`` took the value to fetch. Not API.
  public func _addFetch(_ context: _ChainContext, _ handler: @escaping (Bool) -> Void) {}

  /// Sends the suspender's changes into a chain being finished, as commands
  /// that are never dropped as echoes.
  func subscribeCommands(_ context: _ChainContext, _ handler: @escaping (Bool) -> Void) {
    guard let core = _senderCore(creating: true) else { return }
    context.add(core.subscribe(gate: context.gate, dropsEchoes: false, handler: handler))
  }
}

extension Suspender: Swift.Sendable {}

/// Reading ``isSuspended`` inside `withObservationTracking`, as a SwiftUI
/// view's `body` does, registers the read; the next write that changes the
/// holder's state calls the tracking's `onChange`, once, after the change is
/// stored. See <doc:ObservationAndSwiftUI>.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
extension Suspender: Observable {}
