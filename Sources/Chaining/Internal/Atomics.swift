import _ChainingThreadContext

// MARK: - AtomicReference

/// An atomic word stored inline in an object of the library, reached
/// through its address.
///
/// The operations are C11 atomics (`ChainingAtomics.h`), the same on every
/// platform, so Linux CI runs the code Apple devices run; Swift's own
/// `Synchronization.Atomic` would need iOS 18 and macOS 15. Names and
/// orderings follow `Synchronization.Atomic`, so the memory-order comments
/// beside each use read the same either way.
///
/// ### Where the word lives
/// An object keeps its atomic words in its first stored property, declared
/// as a plain `var` (a `Bool`, `UInt32`, `Int`, `UInt` or `SenderWord`, or
/// a tuple of them) that Swift code never reads or writes after `init`:
/// every access goes through a reference made by ``init(in:offset:)``,
/// which finds the property from the object's address with the standard
/// library's `_getUnsafePointerToStoredProperties`. That relies on two
/// facts of Swift's class layout: a root class's stored properties follow
/// the object header in the order they are declared, and the first starts
/// at the first pointer-aligned offset. `AtomicsLayoutTests` checks, for
/// each class that stores one, that the address found is the property's
/// own. The property is a `var`, never a `let`, so that the compiler
/// assumes nothing about its value. No extra allocation or pointer chase
/// per object: the word is in the object, as an `Atomic` stored property
/// was.
///
/// A reference is valid while its object lives; the objects make them on
/// the fly in their own methods, where `self` keeps them alive.
@usableFromInline @frozen
struct AtomicReference<Value: AtomicWord>: @unchecked Swift.Sendable {
  // @unchecked: a reference is shared between threads by design; every
  // access through it is atomic.

  @usableFromInline let pointer: UnsafeMutablePointer<Value>

  /// The word `offset` bytes into `object`'s stored properties: offset 0
  /// is its first stored property (see "Where the word lives").
  @inlinable @inline(__always)
  init(in object: AnyObject, offset: Int = 0) {
    pointer = (_getUnsafePointerToStoredProperties(object) + offset).assumingMemoryBound(to: Value.self)
  }

  /// The word at `pointer`, which its owner keeps allocated.
  @inline(__always)
  init(at pointer: UnsafeMutablePointer<Value>) {
    self.pointer = pointer
  }

  /// A word in an allocation of its own, never freed: for a global.
  init(allocatedWith initial: Value) {
    pointer = .allocate(capacity: 1)
    pointer.initialize(to: initial)
  }

  @inlinable @inline(__always)
  func load(ordering: AtomicOrdering) -> Value {
    Value.atomicLoad(pointer, ordering.rawValue)
  }

  @inlinable @inline(__always)
  func store(_ value: Value, ordering: AtomicOrdering) {
    Value.atomicStore(pointer, value, ordering.rawValue)
  }

  /// Stores `value` and returns the value it replaced.
  @inlinable @inline(__always)
  func exchange(_ value: Value, ordering: AtomicOrdering) -> Value {
    Value.atomicExchange(pointer, value, ordering.rawValue)
  }

  /// Stores `desired` if the value is `expected` (strong: never fails
  /// spuriously). Returns whether it did, and the value found. A failed
  /// exchange orders its load as `Synchronization.Atomic`'s does: relaxed
  /// for `.relaxed` and `.releasing`, acquiring for the acquiring
  /// orderings, sequentially consistent for `.sequentiallyConsistent`.
  @inlinable @inline(__always)
  func compareExchange(
    expected: Value,
    desired: Value,
    ordering: AtomicOrdering
  ) -> (exchanged: Bool, original: Value) {
    let original = Value.atomicCompareExchange(
      pointer,
      expected,
      desired,
      ordering.rawValue,
      ordering.failureOrdering.rawValue
    )
    return (original == expected, original)
  }

  /// Replaces the value with `next(current)`, by compare-and-swap, retrying
  /// with the new value when another thread changed it meanwhile; `next`
  /// returning `nil` leaves the value as it is. Returns the value `next` was
  /// last given: the one replaced, or the one left.
  ///
  /// The gates and the sender cores change their flag words (an `Int` and
  /// a `SenderWord`) this way under their locks, where only a lock-free
  /// fast path can race with them. The exchange acquires and releases, and is
  /// sequentially consistent when `sequentiallyConsistent` is true.
  @inlinable @inline(__always)
  func update(sequentiallyConsistent: Bool = false, _ next: (Value) -> Value?) -> Value {
    // Acquiring, not relaxed: when `next` returns nil at once no exchange
    // orders the value read, and callers act on it (`awaitRunAlone(of:)`
    // returns when it finds the delivery stopped, and must see what that
    // delivery's handler wrote, which the stop's releasing exchange
    // publishes).
    var current = load(ordering: .acquiring)
    while let desired = next(current) {
      let (exchanged, original) = compareExchange(
        expected: current,
        desired: desired,
        ordering: sequentiallyConsistent ? .sequentiallyConsistent : .acquiringAndReleasing
      )
      if exchanged { return current }
      current = original
    }
    return current
  }
}

extension AtomicReference where Value: AtomicInteger {
  /// Adds `operand`, wrapping on overflow; returns the values before and after.
  @inlinable @inline(__always)
  func wrappingAdd(_ operand: Value, ordering: AtomicOrdering) -> (oldValue: Value, newValue: Value) {
    let old = Value.atomicFetchAdd(pointer, operand, ordering.rawValue)
    return (old, old &+ operand)
  }

  /// Subtracts `operand`, wrapping on overflow; returns the values before and after.
  @inlinable @inline(__always)
  func wrappingSubtract(_ operand: Value, ordering: AtomicOrdering) -> (oldValue: Value, newValue: Value) {
    let old = Value.atomicFetchAdd(pointer, 0 &- operand, ordering.rawValue)
    return (old, old &- operand)
  }

  /// Sets the bits of `operand`; returns the values before and after.
  @inlinable @inline(__always) @discardableResult
  func bitwiseOr(_ operand: Value, ordering: AtomicOrdering) -> (oldValue: Value, newValue: Value) {
    let old = Value.atomicFetchOr(pointer, operand, ordering.rawValue)
    return (old, old | operand)
  }

  /// Keeps only the bits of `operand`; returns the values before and after.
  @inlinable @inline(__always) @discardableResult
  func bitwiseAnd(_ operand: Value, ordering: AtomicOrdering) -> (oldValue: Value, newValue: Value) {
    let old = Value.atomicFetchAnd(pointer, operand, ordering.rawValue)
    return (old, old & operand)
  }
}

// MARK: - Orderings

/// The memory ordering of an atomic operation: `Synchronization`'s names,
/// with the values of C's `__ATOMIC_*` constants.
@usableFromInline
enum AtomicOrdering: Int32 {
  case relaxed = 0
  case acquiring = 2
  case releasing = 3
  case acquiringAndReleasing = 4
  case sequentiallyConsistent = 5

  /// The ordering of a failed compare-and-exchange's load: C forbids a
  /// releasing one.
  @inlinable
  var failureOrdering: AtomicOrdering {
    switch self {
    case .relaxed, .releasing: .relaxed
    case .acquiring, .acquiringAndReleasing: .acquiring
    case .sequentiallyConsistent: .sequentiallyConsistent
    }
  }
}

// MARK: - Word types

/// A type an ``AtomicReference`` can hold: `Bool`, `UInt32`, `Int`, `UInt`
/// or `SenderWord`. Each operation calls the C function for the type's size, with
/// the value's bits: the `switch` folds away once the call is specialized.
@usableFromInline
protocol AtomicWord: Equatable, BitwiseCopyable {}

/// An integer ``AtomicWord``, with the read-modify-writes.
@usableFromInline
protocol AtomicInteger: AtomicWord, FixedWidthInteger {}

extension Bool: AtomicWord {}
extension UInt32: AtomicInteger {}
extension Int: AtomicInteger {}
extension UInt: AtomicInteger {}

extension AtomicWord {
  @inlinable @inline(__always)
  static func atomicLoad(_ pointer: UnsafeMutablePointer<Self>, _ order: Int32) -> Self {
    switch MemoryLayout<Self>.size {
    case 1: bits(_chaining_atomic_load_u8(pointer.asUInt8, order))
    case 4: bits(_chaining_atomic_load_u32(pointer.asUInt32, order))
    default: bits(_chaining_atomic_load_word(pointer.asUInt, order))
    }
  }

  @inlinable @inline(__always)
  static func atomicStore(_ pointer: UnsafeMutablePointer<Self>, _ value: Self, _ order: Int32) {
    switch MemoryLayout<Self>.size {
    case 1: _chaining_atomic_store_u8(pointer.asUInt8, bits(value), order)
    case 4: _chaining_atomic_store_u32(pointer.asUInt32, bits(value), order)
    default: _chaining_atomic_store_word(pointer.asUInt, bits(value), order)
    }
  }

  @inlinable @inline(__always)
  static func atomicExchange(_ pointer: UnsafeMutablePointer<Self>, _ value: Self, _ order: Int32) -> Self {
    switch MemoryLayout<Self>.size {
    case 1: bits(_chaining_atomic_exchange_u8(pointer.asUInt8, bits(value), order))
    case 4: bits(_chaining_atomic_exchange_u32(pointer.asUInt32, bits(value), order))
    default: bits(_chaining_atomic_exchange_word(pointer.asUInt, bits(value), order))
    }
  }

  /// Returns the value found; it stored `desired` if that is `expected`.
  @inlinable @inline(__always)
  static func atomicCompareExchange(
    _ pointer: UnsafeMutablePointer<Self>,
    _ expected: Self,
    _ desired: Self,
    _ success: Int32,
    _ failure: Int32
  ) -> Self {
    switch MemoryLayout<Self>.size {
    case 1:
      bits(_chaining_atomic_compare_exchange_u8(pointer.asUInt8, bits(expected), bits(desired), success, failure))
    case 4:
      bits(_chaining_atomic_compare_exchange_u32(pointer.asUInt32, bits(expected), bits(desired), success, failure))
    default:
      bits(_chaining_atomic_compare_exchange_word(pointer.asUInt, bits(expected), bits(desired), success, failure))
    }
  }

  /// The same bits as another type of the same size.
  @inlinable @inline(__always)
  static func bits<Other: BitwiseCopyable, Result: BitwiseCopyable>(_ value: Other) -> Result {
    unsafeBitCast(value, to: Result.self)
  }
}

extension AtomicInteger {
  /// Adds `value` (wrapping); returns the value replaced.
  @inlinable @inline(__always)
  static func atomicFetchAdd(_ pointer: UnsafeMutablePointer<Self>, _ value: Self, _ order: Int32) -> Self {
    MemoryLayout<Self>.size == 4
      ? bits(_chaining_atomic_fetch_add_u32(pointer.asUInt32, bits(value), order))
      : bits(_chaining_atomic_fetch_add_word(pointer.asUInt, bits(value), order))
  }

  /// Sets the bits of `value`; returns the value replaced.
  @inlinable @inline(__always)
  static func atomicFetchOr(_ pointer: UnsafeMutablePointer<Self>, _ value: Self, _ order: Int32) -> Self {
    MemoryLayout<Self>.size == 4
      ? bits(_chaining_atomic_fetch_or_u32(pointer.asUInt32, bits(value), order))
      : bits(_chaining_atomic_fetch_or_word(pointer.asUInt, bits(value), order))
  }

  /// Keeps only the bits of `value`; returns the value replaced.
  @inlinable @inline(__always)
  static func atomicFetchAnd(_ pointer: UnsafeMutablePointer<Self>, _ value: Self, _ order: Int32) -> Self {
    MemoryLayout<Self>.size == 4
      ? bits(_chaining_atomic_fetch_and_u32(pointer.asUInt32, bits(value), order))
      : bits(_chaining_atomic_fetch_and_word(pointer.asUInt, bits(value), order))
  }
}

extension UnsafeMutablePointer where Pointee: AtomicWord {
  // The word seen as the C function's type of its size. The C functions
  // read and write it with that type; the bits are the Swift value's.
  @inlinable var asUInt8: UnsafeMutablePointer<UInt8> {
    UnsafeMutableRawPointer(self).assumingMemoryBound(to: UInt8.self)
  }
  @inlinable var asUInt32: UnsafeMutablePointer<UInt32> {
    UnsafeMutableRawPointer(self).assumingMemoryBound(to: UInt32.self)
  }
  @inlinable var asUInt: UnsafeMutablePointer<UInt> {
    UnsafeMutableRawPointer(self).assumingMemoryBound(to: UInt.self)
  }
}
