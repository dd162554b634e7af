import Dispatch
import Observation

// MARK: - bind(to:)

extension ValueHolder {
  /// Binds this holder and a property of an `@Observable` model both ways,
  /// starting from the model's value.
  ///
  /// The holder takes the model's value at once. From then on a change of
  /// the property is read on `queue` and set on the holder there, and a
  /// change of the holder is written to the property on `queue`, after the
  /// work already queued, so that the model is only ever written and read
  /// there. The binding settles, for `Equatable` values and others: a value
  /// that came from one side is not sent back to it.
  ///
  /// Neither side steps back. The model gets the holder's values in the
  /// order of the holder's writes, never one older than it had; a read of
  /// the model that the holder has since overtaken (the holder changed
  /// after the binding's last write to the model, or a write is still on
  /// its way there) is not set on the holder, as the model is about to be
  /// written anyway. From any number of threads, both sides end on the
  /// value of the write that reached `queue` last: the holder's writes
  /// reach it as the binding queues them.
  ///
  /// ```swift
  /// import Observation
  ///
  /// @Observable final class Profile: @unchecked Swift.Sendable {
  ///   var first = "Ann"
  /// }
  ///
  /// let profile = Profile()
  /// let field = ValueHolder("")
  /// let queue = DispatchQueue(label: "profile")
  /// let binding = field.bind(to: profile, \.first, on: queue)
  /// // field.value == "Ann"
  /// field.value = "Bea"
  /// queue.sync {}
  /// // profile.first == "Bea"
  /// queue.sync { profile.first = "Cy" }
  /// queue.sync {}
  /// // field.value == "Cy"
  /// binding.invalidate()
  /// ```
  ///
  /// - Parameters:
  ///   - model: The model, held weakly: once it is gone, the binding sends
  ///     nothing more either way.
  ///   - keyPath: The property to bind.
  ///   - queue: The serial queue on which the property is read after each
  ///     change, and written: the queue the model is written on (see
  ///     ``ObservedValue``).
  /// - Returns: The observer of both directions; invalidating or releasing
  ///   it ends both. It keeps the holder weakly.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  public func bind<Model: Observable & AnyObject & Swift.Sendable>(
    to model: Model,
    _ keyPath: ReferenceWritableKeyPath<Model, T> & Swift.Sendable,
    on queue: DispatchQueue
  ) -> Observer where T: Swift.Sendable {
    bind(to: model, keyPath, on: queue, forward: { $0 }, backward: { $0 })
  }

  /// Binds this holder and a property of an `@Observable` model of another
  /// type both ways, converting on the way.
  ///
  /// As ``bind(to:_:on:)``, with `forward` applied to the property's values
  /// on their way to the holder (on `queue`) and `backward` to the holder's
  /// on their way to the model:
  ///
  /// ```swift
  /// import Observation
  ///
  /// @Observable final class Settings: @unchecked Swift.Sendable {
  ///   var volume = 3
  /// }
  ///
  /// let settings = Settings()
  /// let settingsQueue = DispatchQueue(label: "settings")
  /// let text = ValueHolder("")
  /// let binding = text.bind(
  ///   to: settings, \.volume, on: settingsQueue,
  ///   forward: { String($0) },
  ///   backward: { Int($0) })
  /// // text.value == "3"
  /// text.value = "7"
  /// // settings.volume becomes 7 on settingsQueue
  /// text.value = "7x"
  /// // settings.volume stays 7, and text.value stays "7x"
  /// binding.invalidate()
  /// ```
  ///
  /// `backward` may reject a value by returning `nil`: the model is left
  /// as it is, and the holder keeps the value (what the user typed) until
  /// it or the model changes again. For an optional property, return
  /// `.some(nil)` to write `nil`; an optional value returned as it is
  /// (`{ $0 }`) is written, `nil` included.
  ///
  /// - Parameters:
  ///   - model: The model, held weakly.
  ///   - keyPath: The property to bind.
  ///   - queue: As in ``bind(to:_:on:)``.
  ///   - forward: Turns the property's value into the holder's.
  ///   - backward: Turns the holder's value into the property's, or
  ///     returns `nil` to leave the model as it is.
  /// - Returns: The observer of both directions.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  public func bind<Model: Observable & AnyObject & Swift.Sendable, Property>(
    to model: Model,
    _ keyPath: ReferenceWritableKeyPath<Model, Property> & Swift.Sendable,
    on queue: DispatchQueue,
    forward: @escaping @Sendable (Property) -> T,
    backward: @escaping (T) -> Property?
  ) -> Observer where T: Swift.Sendable, Property: Swift.Sendable {
    let ledger = BindingLedger()
    let source = ObservedValue(of: model, on: queue) { model in
      // On `queue`, where the binding's writes count themselves: the read
      // says how many of them it saw.
      ModelRead(value: forward(model[keyPath: keyPath]), writes: ledger.writesDone)
    }
    let write: @Sendable (Property?) -> Void = { [weak model] property in
      // A rejected value (`nil`) still counts as a write the binding made:
      // reads of the model that follow it saw it, as they see a write.
      if let property { model?[keyPath: keyPath] = property }
      ledger.wrote()
    }
    return bindToModel(source, ledger) { value in
      // On the model's queue: a write made on another thread could be read
      // by the source before it is stored (Observation reports it in
      // `willSet`), and would then be lost.
      let property = backward(value)
      queue.async { write(property) }
    }
  }

  /// Unavailable: the binding reads and writes the model on the queue
  /// where it is written, so it needs that queue; see ``bind(to:_:on:)``.
  @available(
    *,
    unavailable,
    message:
      "pass the queue the model is written on, bind(to: model, keyPath, on: queue) (the writer rule in Observation.md), or use bind(onMainActor:_:) for a @MainActor model"
  )
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  public func bind<Model: Observable & AnyObject & Swift.Sendable>(
    to model: Model,
    _ keyPath: ReferenceWritableKeyPath<Model, T> & Swift.Sendable
  ) -> Observer where T: Swift.Sendable {
    fatalError("unavailable")
  }

  /// Unavailable: as ``bind(to:_:)``, pass the queue the model is written
  /// on; see ``bind(to:_:on:forward:backward:)``.
  @available(
    *,
    unavailable,
    message:
      "pass the queue the model is written on, bind(to: model, keyPath, on: queue, forward:backward:) (the writer rule in Observation.md), or use bind(onMainActor:_:forward:backward:) for a @MainActor model"
  )
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  public func bind<Model: Observable & AnyObject & Swift.Sendable, Property>(
    to model: Model,
    _ keyPath: ReferenceWritableKeyPath<Model, Property> & Swift.Sendable,
    forward: @escaping @Sendable (Property) -> T,
    backward: @escaping (T) -> Property?
  ) -> Observer where T: Swift.Sendable, Property: Swift.Sendable {
    fatalError("unavailable")
  }

  /// Binds this holder and a property of a `@MainActor` model both ways,
  /// starting from the model's value.
  ///
  /// The form of ``bind(to:_:on:)`` for a SwiftUI view model, whose
  /// properties live on the main actor: their key paths are not
  /// `Swift.Sendable`, and the model is read and written only there. Call it
  /// on the main actor. The holder takes the model's value at once; a change
  /// of the property is read on the main queue and set on the holder there,
  /// and a change of the holder is written to the property on the main
  /// queue, after the work already queued there. It settles for values of
  /// any type, as ``bind(to:_:on:)`` does.
  ///
  /// ```swift
  /// import Observation
  ///
  /// @MainActor @Observable final class FormModel {
  ///   var name = "Ann"
  /// }
  ///
  /// @MainActor func bindName(_ model: FormModel, to field: ValueHolder<String>) -> Observer {
  ///   field.bind(onMainActor: model, \.name)  // field.value == "Ann"
  /// }
  /// ```
  ///
  /// On Linux the main queue runs only while the main thread waits in
  /// `dispatchMain()`, a run loop or the main actor's executor.
  ///
  /// - Parameters:
  ///   - model: The model, held weakly: once it is gone, the binding sends
  ///     nothing more either way.
  ///   - keyPath: The property to bind, used on the main actor only.
  /// - Returns: The observer of both directions; it keeps the holder weakly.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @MainActor
  public func bind<Model: Observable & AnyObject & Swift.Sendable>(
    onMainActor model: Model,
    _ keyPath: ReferenceWritableKeyPath<Model, T>
  ) -> Observer where T: Swift.Sendable {
    bind(onMainActor: model, keyPath, forward: { $0 }, backward: { $0 })
  }

  /// Binds this holder and a property of a `@MainActor` model of another
  /// type both ways, converting on the way.
  ///
  /// As ``bind(onMainActor:_:)``, with `forward` applied to the property's
  /// values on their way to the holder and `backward` to the holder's on
  /// their way to the model, both on the main actor.
  ///
  /// - Parameters:
  ///   - model: The model, held weakly.
  ///   - keyPath: The property to bind, used on the main actor only.
  ///   - forward: Turns the property's value into the holder's.
  ///   - backward: Turns the holder's value into the property's, or
  ///     returns `nil` to leave the model as it is.
  /// - Returns: The observer of both directions.
  @available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
  @MainActor
  public func bind<Model: Observable & AnyObject & Swift.Sendable, Property>(
    onMainActor model: Model,
    _ keyPath: ReferenceWritableKeyPath<Model, Property>,
    forward: @escaping @MainActor @Sendable (Property) -> T,
    backward: @escaping @MainActor @Sendable (T) -> Property?
  ) -> Observer where T: Swift.Sendable {
    // Not `Swift.Sendable` (its property is isolated to the main actor), so
    // boxed: it crosses to the closures below but is applied on the main
    // actor only, where `assumeIsolated` checks that it runs.
    let path = MainActorKeyPath(keyPath)
    let ledger = BindingLedger()
    let source = ObservedValue(onMainActor: model) { model in
      ModelRead(value: forward(model[keyPath: path.keyPath]), writes: ledger.writesDone)
    }
    let write: @Sendable (T) -> Void = { [weak model] value in
      MainActor.assumeIsolated {
        // A rejected value (`nil`) still counts as a write the binding
        // made, as in `bind(to:_:on:forward:backward:)`.
        if let model, let property = backward(value) { model[keyPath: path.keyPath] = property }
        ledger.wrote()
      }
    }
    return bindToModel(source, ledger) { value in
      // Always queued, even from the main thread, so that the holder's
      // writes reach the model in their order.
      DispatchQueue.main.async { write(value) }
    }
  }

  /// Binds this holder and another both ways, starting from the other's
  /// value.
  ///
  /// Both directions run in one chain, so the binding settles for values
  /// of any type: a value that came from one holder is not sent back to
  /// it. Written from any number of threads at once, at both ends, the two
  /// holders end on the same value, one of the last writes: the binding
  /// never sets a holder that changed since it last looked.
  ///
  /// ```swift
  /// let model = ValueHolder(1)
  /// let field = ValueHolder(0)
  /// let binding = field.bind(to: model)
  /// // field.value == 1
  /// field.value = 2
  /// // model.value == 2
  /// binding.invalidate()
  /// ```
  ///
  /// - Parameter other: The holder whose value wins at the start; not this
  ///   holder.
  /// - Returns: The observer of both directions. It keeps both holders
  ///   weakly.
  public func bind(to other: ValueHolder<T>) -> Observer {
    if other === self {
      fatalError("ValueHolder.bind(to:): a holder cannot be bound to itself")
    }
    // Each holder writes the other, by hand, where no build sees it: the
    // graph of ranks links them both ways.
    RankGraph.linkBothWays(store.core, other.store.core)
    let ledger = HolderBindingLedger()
    return other.retain().chain()
      .map { _ in () }
      .merge(Chain(source: ChangesOf(self), retained: true).map { _ in () })
      .do { [weak self, weak other] in
        guard let self, let other else { return }
        ledger.settle(self.store, other.store)
      }
      .sync()
  }

  /// The two directions of a binding to a model property, as one chain:
  /// the model's reads are set on this holder, this holder's changes go to
  /// `write`, which queues them for the model's queue.
  ///
  /// The model's queue is behind the holder: a read of the model may still
  /// hold a value the holder has since replaced, and setting it would step
  /// the holder back. So each side is written only when it is the newer:
  /// - A change of the holder writes the holder's newest value (not the
  ///   change's own, which may be older), and only if the model does not
  ///   have it yet: the model gets the holder's values in their order, and
  ///   never one older than it had.
  /// - A read of the model is set on the holder only if it saw every write
  ///   the binding queued (`ModelRead.writes`), and, in one step under the
  ///   holder's lock, only if the holder has not changed since the binding
  ///   last wrote or set it (`HolderStore.replace(with:ifVersion:event:)`).
  ///   Either way the read is older than a write on its way to the model,
  ///   whose own read follows.
  ///
  /// The handler runs one value at a time (one chain, one gate), so the
  /// ledger's `written` and `queued` change in the order of the values.
  /// Modeled in Verification/Binding.pml, where spin finds the step-back of
  /// the code without these checks.
  private func bindToModel<Source: Syncable>(
    _ source: Source,
    _ ledger: BindingLedger,
    write: @escaping (T) -> Void
  ) -> Observer where Source.ChainValue == ModelRead<T> {
    source.retain().chain()
      .map { Optional($0) }
      // `nil`: a change of the holder, whose value may be older than its newest.
      .merge(Chain(source: ChangesOf(self, ledger: ledger), retained: true).map { _ in nil })
      .do { [weak self] read in
        guard let self else { return }
        if let read, let written = ledger.written(ifSaw: read.writes),
          let version = store.replace(with: read.value, ifVersion: written, event: { $0 })
        {
          ledger.set(written: version)
        }
        // A change of the holder, or one made by the chains the set above
        // ran (an echo to this chain, which does not receive it).
        let (value, version) = store.readVersioned()
        if ledger.write(version: version) { write(value) }
      }
      .sync()
  }
}

/// A read of a bound model's property, with how many of the binding's
/// writes had reached the model when it was made.
private struct ModelRead<Value> {
  let value: Value
  let writes: UInt64
}

extension ModelRead: Swift.Sendable where Value: Swift.Sendable {}

/// What a binding to a model knows of both sides. See
/// `ValueHolder.bindToModel(_:_:write:)`.
private final class BindingLedger: Swift.Sendable {
  private struct State {
    /// The holder's version the model has, or is sent: the one the binding
    /// last wrote to the model or set from it.
    var written: UInt64 = 0
    /// How many writes the binding has queued for the model.
    var queued: UInt64 = 0
    /// How many of them have been made, on the model's queue.
    var done: UInt64 = 0
  }

  private let state = Protected(State())

  /// How many writes have been made. On the model's queue.
  var writesDone: UInt64 { state.withLock { $0.done } }

  /// Counts a write made, on the model's queue, after making it.
  func wrote() {
    state.withLock { $0.done += 1 }
  }

  /// The version the model has, when a read that saw `writes` of the
  /// binding's writes saw all of them; `nil` otherwise.
  func written(ifSaw writes: UInt64) -> UInt64? {
    state.withLock { $0.queued == writes ? $0.written : nil }
  }

  /// Records that the model has the holder's `version`: set from the
  /// model, or, as the binding subscribes (under the holder's lock), the
  /// one it starts from.
  func set(written version: UInt64) {
    state.withLock { $0.written = version }
  }

  /// Whether the holder's `version` is newer than what the model has; if
  /// so, records it as written, and the caller writes it.
  func write(version: UInt64) -> Bool {
    state.withLock { state in
      guard state.written != version else { return false }
      state.written = version
      state.queued += 1
      return true
    }
  }
}

/// What a binding of two holders last made of them: the version of each
/// after the binding last set one from the other. See
/// `ValueHolder.bind(to:)`.
///
/// Used by the binding's handler only, which runs one value at a time (one
/// chain, one gate, whose hand-over orders its runs): plain fields.
private final class HolderBindingLedger {
  private var mine: UInt64?
  private var theirs: UInt64?

  /// Makes the two holders equal, if either changed since the binding last
  /// set one: the changed one is copied to the other, `theirs` when both
  /// changed (it starts the binding).
  ///
  /// Each copy is a compare-and-set (`replace(with:ifVersion:event:)`): a
  /// holder written since it was read here is not overwritten with the
  /// other's older value; its write is then the newer one and is copied
  /// instead. A write made by another thread while this runs sends its own
  /// change to the binding, which looks again; a write made by the chains
  /// a set here runs is an echo the binding does not receive. The old
  /// binding copied each change's own value, and two crossing writes left
  /// each holder with the other's (BindTests, the soak's `twoWayBinding`).
  func settle<T>(_ myStore: HolderStore<T, T>, _ theirStore: HolderStore<T, T>) {
    var preferMine = false
    while true {
      let (myValue, myVersion) = myStore.readVersioned()
      let (theirValue, theirVersion) = theirStore.readVersioned()
      let mineChanged = myVersion != mine
      if theirVersion != theirs, !(mineChanged && preferMine) {
        guard let set = myStore.replace(with: theirValue, ifVersion: myVersion, event: { $0 }) else {
          preferMine = true  // written since the read: the newer write
          continue
        }
        (mine, theirs) = (set, theirVersion)
      } else if mineChanged {
        guard let set = theirStore.replace(with: myValue, ifVersion: theirVersion, event: { $0 }) else {
          preferMine = false
          continue
        }
        (mine, theirs) = (myVersion, set)
      }
      return
    }
  }
}

/// The changes of a holder, without its value at `sync()`: the side of a
/// two-way binding that does not start it. Holds the holder weakly.
private final class ChangesOf<Value>: Chainable {
  typealias ChainValue = Value

  private weak var holder: ValueHolder<Value>?
  /// Given the holder's version as the chain subscribes, in the same step.
  private let ledger: BindingLedger?

  init(_ holder: ValueHolder<Value>, ledger: BindingLedger? = nil) {
    self.holder = holder
    self.ledger = ledger
  }

  func _subscribe(_ context: _ChainContext, _ handler: @escaping (Value) -> Void) {
    guard let store = holder?.store else { return }
    store.attach(context, handler) { [ledger] _ in
      // Under the holder's lock: every later write is a change the chain
      // receives.
      ledger?.set(written: store.version)
      return nil
    }
  }
}

/// A key path to a property isolated to the main actor, carried to
/// closures that apply it only on the main actor.
private struct MainActorKeyPath<Root, Value>: @unchecked Swift.Sendable {
  // @unchecked: `keyPath` is immutable and applied only inside
  // `MainActor.assumeIsolated` or an `ObservedValue(onMainActor:_:)` read.
  let keyPath: ReferenceWritableKeyPath<Root, Value>

  init(_ keyPath: ReferenceWritableKeyPath<Root, Value>) {
    self.keyPath = keyPath
  }
}
