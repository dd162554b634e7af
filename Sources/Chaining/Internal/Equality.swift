// MARK: - Equality at run time

/// Whether `lhs == rhs`, when `T` is `Equatable` at run time; `false` otherwise.
///
/// The holders skip equal values with it whatever initializer made them,
/// so generic code that does not know `T` still skips them. In code
/// specialized for a concrete `T`, the cast and the comparison fold into a
/// plain `==`, with no stored closure to retain and call.
@inlinable @inline(__always)
func areEqual<T>(_ lhs: T, _ rhs: T) -> Bool {
  guard let equatable = T.self as? any Equatable.Type else { return false }
  func compare<E: Equatable>(_: E.Type) -> Bool {
    (lhs as! E) == (rhs as! E)
  }
  return compare(equatable)
}

/// `areEqual(_:_:)` for a caller that holds the lock at `lock` (its
/// `calloutAddress`): the comparison, user code when `T` is `Equatable`,
/// runs marked as `call` (see `Protected.callingOut(_:_:)`), so that an
/// `==` that calls back into the object stops with a message naming it.
@inlinable @inline(__always)
func areEqual<T>(_ lhs: T, _ rhs: T, under lock: UInt, _ call: Callout) -> Bool {
  // The standard library's own `==` runs no code of the user's: no mark.
  if hasLibraryEquality(T.self) { return areEqual(lhs, rhs) }
  guard let equatable = T.self as? any Equatable.Type else { return false }
  func compare<E: Equatable>(_: E.Type) -> Bool {
    let (context, enclosing) = call.begin(under: lock)
    let equal = (lhs as! E) == (rhs as! E)
    context.pointee.callout = enclosing
    return equal
  }
  return compare(equatable)
}

/// Whether `T` is one of the common types whose `==` is the standard
/// library's (`Int`, `Bool`, `Double`, `String`), which calls no code of
/// the user's and so cannot call back into a holder: its comparison under
/// a lock needs no callout mark (a thread-local load and two stores per
/// write). A constant in code specialized for `T`.
@inlinable @inline(__always)
func hasLibraryEquality<T>(_: T.Type) -> Bool {
  T.self == Int.self || T.self == Bool.self || T.self == Double.self || T.self == String.self
}
