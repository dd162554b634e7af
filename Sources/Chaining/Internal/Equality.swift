// MARK: - Equality at run time

/// Returns `==` for `T` when `T` is `Equatable` at run time, `nil` otherwise.
///
/// Used by unconstrained initializers, which generic code reaches even when
/// the concrete type is `Equatable`.
func dynamicEquality<T>(_: T.Type) -> ((T, T) -> Bool)? {
  guard let equatable = T.self as? any Equatable.Type else { return nil }
  func equality<E: Equatable>(_: E.Type) -> (T, T) -> Bool {
    { lhs, rhs in (lhs as! E) == (rhs as! E) }
  }
  return equality(equatable)
}
