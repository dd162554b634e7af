// MARK: - Equality at run time

/// Returns `==` for `T` when `T` is `Equatable` at run time, `nil` otherwise.
///
/// Used by unconstrained initializers, which generic code reaches even when
/// the concrete type is `Equatable`. Code specialized for `T` is better
/// served by `areEqual(_:_:)`.
func dynamicEquality<T>(_: T.Type) -> ((T, T) -> Bool)? {
  guard let equatable = T.self as? any Equatable.Type else { return nil }
  func equality<E: Equatable>(_: E.Type) -> (T, T) -> Bool {
    { lhs, rhs in (lhs as! E) == (rhs as! E) }
  }
  return equality(equatable)
}

/// Whether `lhs == rhs`, when `T` is `Equatable` at run time; `false` otherwise.
///
/// For code that is specialized for `T`: the cast and the comparison then
/// fold into a plain `==`, with no stored closure to retain and call.
@inlinable @inline(__always)
func areEqual<T>(_ lhs: T, _ rhs: T) -> Bool {
  guard let equatable = T.self as? any Equatable.Type else { return false }
  func compare<E: Equatable>(_: E.Type) -> Bool {
    (lhs as! E) == (rhs as! E)
  }
  return compare(equatable)
}
