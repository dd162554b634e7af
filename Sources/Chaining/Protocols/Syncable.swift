// MARK: - Syncable

/// An object that both hands out its current value and pushes changes.
///
/// This is the protocol for anything that holds a value: ``Chain/sync()``
/// first sends the current value, then every broadcast follows.
///
/// ```swift
/// final class IntHolder: Syncable, Receivable {
///   typealias ChainValue = Int
///   typealias ReceiveValue = Int
///   var value: Int { didSet { if value != oldValue { self.broadcast(value: value) } } }
///   init(_ initial: Int) { self.value = initial }
///   func fetchedValue() -> Int { self.value }
///   func receive(value: Int) { self.value = value }
/// }
///
/// let sender = IntHolder(0), receiver = IntHolder(1)
/// let observer = sender.chain().sendTo(receiver).sync()  // receiver.value == 0
/// sender.value = 2                                        // receiver.value == 2
/// ```
///
/// `Syncable` is a typealias and takes no argument: to ask for a syncable
/// source of a given value type, write `some Fetchable<T> & Sendable<T>`, or
/// `any Fetchable<T> & Sendable` for an existential (Swift 6.3 crashes
/// compiling `any Fetchable<T> & Sendable<T>`). See <doc:ViewsAndPatterns>.
public typealias Syncable = Fetchable & Sendable
