import Chaining

/// The array a chain's user rebuilds from `events`: a copy made from the
/// leading `.fetched`, then every later event applied in order. `nil` when
/// the events do not start with `.fetched` or one of them does not fit (an
/// index out of range, or a removed or moved element that is not there).
func replay<Element: Equatable>(_ events: [ArrayHolder<Element>.Event]) -> [Element]? {
  guard case .fetched(let initial)? = events.first else { return nil }
  return replay(events.dropFirst(), onto: initial)
}

/// `copy` with every one of `events` applied in order: a replay carried
/// on from where an earlier one stopped. `nil` when `copy` is, or when an
/// event does not fit.
func replay<Element: Equatable>(
  _ events: some Sequence<ArrayHolder<Element>.Event>,
  onto copy: [Element]?
) -> [Element]? {
  var copy = copy
  for event in events { copy = copy.flatMap { apply(event, to: $0) } }
  return copy
}

/// `copy` with `event` applied, or `nil` when the event does not fit it.
func apply<Element: Equatable>(_ event: ArrayHolder<Element>.Event, to copy: [Element]) -> [Element]? {
  var copy = copy
  switch event {
  case .fetched(let elements), .set(let elements):
    copy = elements
  case .inserted(let index, let element):
    guard (0...copy.count).contains(index) else { return nil }
    copy.insert(element, at: index)
  case .removed(let index, let element):
    guard copy.indices.contains(index), copy[index] == element else { return nil }
    copy.remove(at: index)
  case .replaced(let index, let element):
    guard copy.indices.contains(index) else { return nil }
    copy[index] = element
  case .moved(let from, let to, let element):
    guard copy.indices.contains(from), copy.indices.contains(to), copy[from] == element else { return nil }
    copy.insert(copy.remove(at: from), at: to)
  }
  return copy
}
