// MARK: - SweptTable

/// A dictionary of entries that die with objects held weakly, swept of its
/// dead entries whenever it has doubled in size since the last sweep.
///
/// The sender registry and the shared property adapters keep one each,
/// under a lock. Sweeping before an insertion keeps a table that is only
/// ever added to at most twice the size of its live entries, for O(1)
/// amortized work per insertion.
struct SweptTable<Key: Hashable, Entry> {
  var entries: [Key: Entry] = [:]
  private var sweepAt = 64

  /// Sweeps, when the table has doubled since the last sweep, the entries
  /// `isDead` picks, and returns them so that the caller can release them
  /// outside its lock.
  mutating func sweepIfGrown(removing isDead: (Entry) -> Bool) -> [Entry] {
    guard entries.count >= sweepAt else { return [] }
    var dead: [Entry] = []
    entries = entries.filter { _, entry in
      if isDead(entry) {
        dead.append(entry)
        return false
      }
      return true
    }
    sweepAt = max(64, entries.count * 2)
    return dead
  }
}
