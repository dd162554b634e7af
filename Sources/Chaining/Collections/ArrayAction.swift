// MARK: - ArrayAction

/// A write to an array holder, as a value: what an ``ArrayHolder`` receives.
///
/// Each case mirrors a method of ``ArrayHolder``. Send actions through a
/// chain to drive a holder, or turn one holder's events into actions with
/// ``ArrayHolder/Event/action`` so that one holder mirrors another:
///
/// ```swift
/// let source = ArrayHolder(["a"])
/// let mirror = ArrayHolder<String>()
/// let observer = source.chain().map(\.action).sendTo(mirror).sync()
/// source.append("b")
/// print(mirror.raw)
/// // Prints "["a", "b"]"
/// ```
public enum ArrayAction<Element> {
  /// Replaces every element: ``ArrayHolder/set(_:)``.
  case set([Element])
  /// Appends an element: ``ArrayHolder/append(_:)``.
  case append(Element)
  /// Appends elements: ``ArrayHolder/append(contentsOf:)``.
  case appendContentsOf([Element])
  /// Inserts an element: ``ArrayHolder/insert(_:at:)``.
  case insert(Element, at: Int)
  /// Removes an element: ``ArrayHolder/remove(at:)``.
  case remove(at: Int)
  /// Removes every element: ``ArrayHolder/removeAll()``.
  case removeAll
  /// Replaces an element: ``ArrayHolder/replace(_:at:)``.
  case replace(Element, at: Int)
  /// Moves an element: ``ArrayHolder/move(at:to:)``.
  case move(at: Int, to: Int)
}

extension ArrayAction: Swift.Sendable where Element: Swift.Sendable {}
extension ArrayAction: Equatable where Element: Equatable {}
