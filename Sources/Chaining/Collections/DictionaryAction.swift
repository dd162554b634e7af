// MARK: - DictionaryAction

/// A write to a dictionary holder, as a value: what a ``DictionaryHolder`` receives.
///
/// Each case mirrors a method of ``DictionaryHolder``; turn one holder's
/// events into actions with ``DictionaryHolder/Event/action`` so that one
/// holder mirrors another:
///
/// ```swift
/// let source = DictionaryHolder(["a": 1])
/// let mirror = DictionaryHolder<String, Int>()
/// let observer = source.chain().map(\.action).sendTo(mirror).sync()
/// source["b"] = 2
/// print(mirror.raw == ["a": 1, "b": 2])
/// // Prints "true"
/// ```
public enum DictionaryAction<Key: Hashable, Value> {
  /// Replaces every entry: ``DictionaryHolder/set(_:)``.
  case set([Key: Value])
  /// Inserts or replaces the value for a key: ``DictionaryHolder/subscript(_:)``.
  case update(key: Key, value: Value)
  /// Removes the value for a key: ``DictionaryHolder/removeValue(forKey:)``.
  case remove(key: Key)
  /// Removes every entry: ``DictionaryHolder/removeAll()``.
  case removeAll
}

extension DictionaryAction: Swift.Sendable where Key: Swift.Sendable, Value: Swift.Sendable {}
extension DictionaryAction: Equatable where Value: Equatable {}
