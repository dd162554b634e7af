// MARK: - Model

/// What the library must do, recomputed from its documented rules with
/// plain values and no concurrency: the oracle the fuzzer checks against.
///
/// The rules it encodes (see `Sendable.broadcast(value:)`, `ValueHolder`,
/// Behaviour.md):
/// - a write delivers at once, to the source's chains in the order they
///   were finished, unless the source is delivering already: then the value
///   is queued and runs after the current one has reached every chain;
/// - a value holder's write of an equal value sends nothing; `resend()`
///   sends the value anyway;
/// - a value that a chain's own delivery caused never reaches that chain
///   again (an echo);
/// - `sync()` fetches every fetchable source, then sends what it fetched;
/// - a write and everything its delivery causes form one wave, as a
///   `sync()` does: a `combine` whose sides changed in it sends once, when
///   the wave ends, from both sides' final values (glitch-free propagation);
/// - an invalidated chain, or a chain of a released source, gets nothing.
final class Model {
  /// What a source sends.
  enum Event {
    case value(Int)
    case array(ArrayEvent)
    case dictionary(DictionaryEvent)
    case suspended(Bool)
  }

  enum ArrayEvent {
    case fetched([Int])
    case set([Int])
    case inserted(Int, Int)
    case removed(Int)
    case replaced(Int, Int)
    case moved(Int, Int)
  }

  enum DictionaryEvent {
    case fetched, set, inserted, removed, replaced
  }

  /// A sender: its chains, and the values queued while it delivers.
  struct Source {
    var subscribers: [(chain: Int, side: Int)] = []
    var isDelivering = false
    var queue: [(event: Event, causes: Set<Int>)] = []
  }

  /// The sources, by index: the holders, then these.
  static let notifierSource = Script.holderCount
  static let suspenderSource = notifierSource + 1
  static let arraySources = [suspenderSource + 1, suspenderSource + 2]
  static let dictionarySource = suspenderSource + 3

  final class Chain {
    let spec: ChainSpec
    /// The holders' generations the chain refers to, by holder index.
    let generations: [Int]
    var isAlive = true
    /// What the recording step saw last, and how many values it saw.
    var last: [Int] = []
    var count = 0
    /// `combine`'s latest value of each side.
    var sides: [Int?] = [nil, nil]
    /// `suspend`'s value held back.
    var held: Int?

    init(spec: ChainSpec, generations: [Int]) {
      self.spec = spec
      self.generations = generations
    }
  }

  var values = Array(repeating: 0, count: Script.holderCount)
  /// A holder's generation counts its replacements; `nil` while released.
  var generations: [Int?] = Array(repeating: 0, count: Script.holderCount)
  var nextGeneration = 1
  var arrays: [[Int]] = [[], []]
  var dictionary: [Int: Int] = [:]
  var isSuspended = false
  var sources = Array(repeating: Source(), count: dictionarySource + 1)
  var chains: [Int: Chain] = [:]
  var nextChain = 0
  /// How many waves the current operation is inside.
  var waveDepth = 0
  /// The combines that changed in the current wave, in the order they
  /// first changed; sent when the outermost wave ends.
  var deferred: [Int] = []

  // MARK: Writes

  func write(holder: Int, _ value: Int, causes: Set<Int> = []) {
    guard generations[holder] != nil, values[holder] != value else { return }
    values[holder] = value
    broadcast([.value(value)], from: holder, causes: causes)
  }

  func resend(holder: Int) {
    guard generations[holder] != nil else { return }
    broadcast([.value(values[holder])], from: holder, causes: [])
  }

  func notify(_ value: Int) {
    broadcast([.value(value)], from: Self.notifierSource, causes: [])
  }

  func setSuspended(_ suspended: Bool) {
    guard isSuspended != suspended else { return }
    isSuspended = suspended
    broadcast([.suspended(suspended)], from: Self.suspenderSource, causes: [])
  }

  /// Applies `write` to `arrays[index]` and sends its events.
  func write(array index: Int, _ write: ArrayWrite, causes: Set<Int> = []) {
    var array = arrays[index]
    let events = Self.apply(write, to: &array)
    arrays[index] = array
    broadcast(events.map { .array($0) }, from: Self.arraySources[index], causes: causes)
  }

  /// The events `ArrayHolder` sends for `write`; indices already in range.
  static func apply(_ write: ArrayWrite, to array: inout [Int]) -> [ArrayEvent] {
    switch write {
    case .set(let elements):
      array = elements
      return [.set(elements)]
    case .append(let element):
      array.append(element)
      return [.inserted(array.count - 1, element)]
    case .appendContentsOf(let elements):
      let start = array.count
      array += elements
      return elements.indices.map { .inserted(start + $0, elements[$0]) }
    case .insert(let element, let index):
      array.insert(element, at: index)
      return [.inserted(index, element)]
    case .remove(let index):
      array.remove(at: index)
      return [.removed(index)]
    case .removeAll:
      if array.isEmpty { return [] }
      array = []
      return [.set([])]
    case .replace(let element, let index):
      array[index] = element
      return [.replaced(index, element)]
    case .move(let from, let to):
      if from == to { return [] }
      array.insert(array.remove(at: from), at: to)
      return [.moved(from, to)]
    }
  }

  func write(dictionary write: DictionaryWrite) {
    let events: [DictionaryEvent]
    switch write {
    case .update(let key, let value), .insert(let key, let value), .replace(let key, let value):
      events = [dictionary.updateValue(value, forKey: key) == nil ? .inserted : .replaced]
    case .remove(let key):
      events = dictionary.removeValue(forKey: key) == nil ? [] : [.removed]
    case .set(let entries):
      dictionary = entries
      events = [.set]
    case .removeAll:
      events = dictionary.isEmpty ? [] : [.set]
      dictionary = [:]
    }
    broadcast(events.map { .dictionary($0) }, from: Self.dictionarySource, causes: [])
  }

  // MARK: Lifetimes

  func releaseHolder(_ holder: Int) {
    generations[holder] = nil
    sources[holder] = Source()
  }

  func makeHolder(_ holder: Int) {
    generations[holder] = nextGeneration
    nextGeneration += 1
    values[holder] = 0
  }

  /// Ends chain `id`: what `invalidate()` and releasing the observer do.
  func end(chain id: Int) {
    guard let chain = chains[id], chain.isAlive else { return }
    chain.isAlive = false
    for index in sources.indices {
      sources[index].subscribers.removeAll { $0.chain == id }
    }
  }

  // MARK: Chains

  /// Finishes a chain: subscribes it to its sources in order, then, when it
  /// syncs, sends it what was fetched. Returns its identifier.
  func finish(_ spec: ChainSpec) -> Int {
    let id = nextChain
    nextChain += 1
    let chain = Chain(spec: spec, generations: generations.map { $0 ?? -1 })
    chains[id] = chain
    let inputs = Self.inputs(of: spec)
    var fetched: [(side: Int, event: Event)] = []
    for (side, source) in inputs.enumerated() {
      if source < Script.holderCount, generations[source] == nil { continue }
      sources[source].subscribers.append((id, side))
      if let event = fetchedEvent(of: source) { fetched.append((side, event)) }
    }
    if Self.syncs(spec) {
      beginWave()
      for (side, event) in fetched { deliver(event, to: id, side: side, causes: []) }
      endWave()
    }
    return id
  }

  /// The sources of a chain, in the order it subscribes to them.
  static func inputs(of spec: ChainSpec) -> [Int] {
    switch spec {
    case .map(let source, _), .filter(let source), .sendTo(let source, _, _, _),
      .writeFromHandler(let source, _, _):
      [source]
    case .combine(let first, let second), .merge(let first, let second): [first, second]
    case .combineNotifier(let source), .mergeNotifier(let source): [source, notifierSource]
    case .suspended(let source): [source, suspenderSource]
    case .notifier: [notifierSource]
    case .arrayReplay(let index): [arraySources[index]]
    case .arrayMirror, .arrayCount: [arraySources[0]]
    case .dictionaryReplay: [dictionarySource]
    }
  }

  static func syncs(_ spec: ChainSpec) -> Bool {
    switch spec {
    case .notifier: false
    case .sendTo(_, _, _, let syncs): syncs
    default: true
    }
  }

  private func fetchedEvent(of source: Int) -> Event? {
    switch source {
    case 0..<Script.holderCount: .value(values[source])
    case Self.arraySources[0]: .array(.fetched(arrays[0]))
    case Self.arraySources[1]: .array(.fetched(arrays[1]))
    case Self.dictionarySource: .dictionary(.fetched)
    default: nil
    }
  }

  // MARK: Delivery

  private func broadcast(_ events: [Event], from index: Int, causes: Set<Int>) {
    sources[index].queue += events.map { ($0, causes) }
    if sources[index].isDelivering { return }
    sources[index].isDelivering = true
    beginWave()
    while !sources[index].queue.isEmpty {
      let (event, causes) = sources[index].queue.removeFirst()
      for subscriber in sources[index].subscribers {
        deliver(event, to: subscriber.chain, side: subscriber.side, causes: causes)
      }
    }
    sources[index].isDelivering = false
    endWave()
  }

  private func beginWave() {
    waveDepth += 1
  }

  /// Ends a wave; the outermost one sends each combine that changed in it
  /// once, from both sides' final values. (The model's combines only
  /// record: nothing they send changes another source.)
  private func endWave() {
    waveDepth -= 1
    guard waveDepth == 0 else { return }
    let changed = deferred
    deferred = []
    for id in changed {
      guard let chain = chains[id], chain.isAlive,
        let first = chain.sides[0], let second = chain.sides[1]
      else { continue }
      record(chain, [first, second])
    }
  }

  private func deliver(_ event: Event, to id: Int, side: Int, causes: Set<Int>) {
    guard let chain = chains[id], chain.isAlive else { return }
    // The suspender's changes are commands, never dropped as echoes.
    if case .suspended = event {
    } else if causes.contains(id) {
      return
    }
    let causes = causes.union([id])
    switch (chain.spec, event) {
    case (.map(_, let transform), .value(let value)), (.notifier(let transform), .value(let value)):
      record(chain, [transform(value)])
    case (.filter, .value(let value)):
      if value % 2 == 0 { record(chain, [value]) }
    case (.combine, .value(let value)), (.combineNotifier, .value(let value)):
      // Every delivery is inside a wave (a broadcast or a sync): sent at
      // its end.
      chain.sides[side] = value
      if !deferred.contains(id) { deferred.append(id) }
    case (.merge, .value(let value)), (.mergeNotifier, .value(let value)):
      record(chain, [value])
    case (.suspended, .value(let value)):
      if isSuspended { chain.held = value } else { record(chain, [value]) }
    case (.suspended, .suspended(let suspended)):
      if !suspended, let held = chain.held {
        chain.held = nil
        record(chain, [held])
      }
    case (.sendTo(_, let target, let transform, _), .value(let value)):
      record(chain, [value])
      if generations[target] == chain.generations[target] {
        write(holder: target, transform(value), causes: causes)
      }
    case (.writeFromHandler(_, let target, let transform), .value(let value)):
      record(chain, [value])
      if value & 1 == 1, generations[target] == chain.generations[target] {
        write(holder: target, transform(value), causes: causes)
      }
    case (.arrayReplay, .array), (.dictionaryReplay, .dictionary):
      record(chain, [])
    case (.arrayMirror, .array(let event)):
      record(chain, [])
      write(array: 1, Self.action(of: event), causes: causes)
    case (.arrayCount(let target), .array):
      record(chain, [])
      if generations[target] == chain.generations[target] {
        write(holder: target, arrays[0].count, causes: causes)
      }
    default:
      fatalError("fuzz model: \(chain.spec) cannot receive \(event)")
    }
  }

  private func record(_ chain: Chain, _ values: [Int]) {
    chain.last = values
    chain.count += 1
  }

  /// `ArrayHolder.Event.action`.
  static func action(of event: ArrayEvent) -> ArrayWrite {
    switch event {
    case .fetched(let elements), .set(let elements): .set(elements)
    case .inserted(let index, let element): .insert(element, at: index)
    case .removed(let index): .remove(at: index)
    case .replaced(let index, let element): .replace(element, at: index)
    case .moved(let from, let to): .move(at: from, to: to)
    }
  }
}
