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
