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
  /// that came from one side is not sent back to it, and both sides end on
  /// the last value written to either.
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
  ///     change (see ``ObservedValue``); `nil` makes a private one.
  /// - Returns: The observer of both directions; invalidating or releasing
  ///   it ends both. It keeps the holder weakly.
  public func bind<Model: Observable & AnyObject & Swift.Sendable>(
    to model: Model,
    _ keyPath: ReferenceWritableKeyPath<Model, T> & Swift.Sendable,
    on queue: DispatchQueue? = nil
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
  /// let text = ValueHolder("")
  /// let binding = text.bind(
  ///   to: settings, \.volume,
  ///   forward: { String($0) },
  ///   backward: { Int($0) ?? 0 })
  /// // text.value == "3"
  /// text.value = "7"
  /// // settings.volume becomes 7 on the binding's private queue
  /// binding.invalidate()
  /// ```
  ///
  /// - Parameters:
  ///   - model: The model, held weakly.
  ///   - keyPath: The property to bind.
  ///   - queue: As in ``bind(to:_:on:)``.
  ///   - forward: Turns the property's value into the holder's.
  ///   - backward: Turns the holder's value into the property's.
  /// - Returns: The observer of both directions.
  public func bind<Model: Observable & AnyObject & Swift.Sendable, Property>(
    to model: Model,
    _ keyPath: ReferenceWritableKeyPath<Model, Property> & Swift.Sendable,
    on queue: DispatchQueue? = nil,
    forward: @escaping @Sendable (Property) -> T,
    backward: @escaping (T) -> Property
  ) -> Observer where T: Swift.Sendable, Property: Swift.Sendable {
    let queue = queue ?? DispatchQueue(label: "Chaining.bind")
    let source = ObservedValue(of: model, on: queue) { forward($0[keyPath: keyPath]) }
    let write: @Sendable (Property) -> Void = { [weak model] property in
      model?[keyPath: keyPath] = property
    }
    return bindBothWays(from: source) { value in
      // On the model's queue: a write made on another thread could be read
      // by the source before it is stored (Observation reports it in
      // `willSet`), and would then be lost.
      let property = backward(value)
      queue.async { write(property) }
    }
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
  ///   - backward: Turns the holder's value into the property's.
  /// - Returns: The observer of both directions.
  @MainActor
  public func bind<Model: Observable & AnyObject & Swift.Sendable, Property>(
    onMainActor model: Model,
    _ keyPath: ReferenceWritableKeyPath<Model, Property>,
    forward: @escaping @MainActor @Sendable (Property) -> T,
    backward: @escaping @MainActor @Sendable (T) -> Property
  ) -> Observer where T: Swift.Sendable {
    // Not `Swift.Sendable` (its property is isolated to the main actor), so
    // boxed: it crosses to the closures below but is applied on the main
    // actor only, where `assumeIsolated` checks that it runs.
    let path = MainActorKeyPath(keyPath)
    let source = ObservedValue(onMainActor: model) { forward($0[keyPath: path.keyPath]) }
    let write: @Sendable (T) -> Void = { [weak model] value in
      MainActor.assumeIsolated {
        guard let model else { return }
        model[keyPath: path.keyPath] = backward(value)
      }
    }
    return bindBothWays(from: source) { value in
      // Always queued, even from the main thread, so that the holder's
      // writes reach the model in their order.
      DispatchQueue.main.async { write(value) }
    }
  }

  /// Binds this holder and another both ways, starting from the other's
  /// value.
  ///
  /// Both directions run in one chain, so the binding settles for values
  /// of any type: a value that came from one holder is not sent back to it.
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
  /// - Parameter other: The holder whose value wins at the start.
  /// - Returns: The observer of both directions. It keeps both holders
  ///   weakly.
  public func bind(to other: ValueHolder<T>) -> Observer {
    bindBothWays(from: other) { [weak other] value in other?.value = value }
  }

  /// The two directions of a binding as one chain: the values of `source`
  /// are set on this holder, this holder's changes go to `write`.
  ///
  /// One chain has one gate. A value set on this holder by the chain comes
  /// back to the chain as an echo, which it drops; a value `write` gives
  /// the source comes back from it (at once, or later on its queue) and is
  /// set here, where it changes nothing for an `Equatable` value and is
  /// again an echo otherwise. Only the source is fetched by `sync()`.
  private func bindBothWays<Source: Syncable>(
    from source: Source,
    write: @escaping (T) -> Void
  ) -> Observer where Source.ChainValue == T {
    source.retain().chain()
      .map { BindingSide.source($0) }
      .merge(Chain(source: ChangesOf(self), retained: true).map { BindingSide.holder($0) })
      .do { [weak self] side in
        switch side {
        case .source(let value): self?.value = value
        case .holder(let value): write(value)
        }
      }
      .sync()
  }
}

/// Which end of a two-way binding a value comes from.
private enum BindingSide<Value> {
  case source(Value)
  case holder(Value)
}

/// The changes of a holder, without its value at `sync()`: the side of a
/// two-way binding that does not start it. Holds the holder weakly.
private final class ChangesOf<Value>: Chainable {
  typealias ChainValue = Value

  private weak var holder: ValueHolder<Value>?

  init(_ holder: ValueHolder<Value>) {
    self.holder = holder
  }

  func _subscribe(_ context: _ChainContext, _ handler: @escaping (Value) -> Void) {
    guard let core = holder?._senderCore(creating: true) else { return }
    context.add(core.subscribe(gate: context.gate, handler: handler))
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
