import Chaining

// MARK: - Building chains

extension Run {
  /// Builds the chain `spec` describes with the library, and the same chain
  /// in the model, into `slot`. Skipped when a holder it needs is released.
  func makeChain(_ spec: ChainSpec, in slot: Int) {
    guard Self.holders(of: spec).allSatisfy({ holders[$0] != nil }) else { return }
    if case .arrayMirror = spec, model.chains.values.contains(where: { $0.isAlive && $0.spec == .arrayMirror }) {
      // Two mirrors would apply each change twice, to indices meant once.
      return
    }
    let record = Record()
    let token = Token()
    let observer = build(spec, record: record, token: token)
    let chain = model.finish(spec)
    slots[slot] = Slot(observer: observer, chain: chain, record: record, token: token)
  }

  static func holders(of spec: ChainSpec) -> [Int] {
    switch spec {
    case .sendTo(let source, let target, _, _), .writeFromHandler(let source, let target, _): [source, target]
    case .arrayCount(let target): [target]
    default: Model.inputs(of: spec).filter { $0 < Script.holderCount }
    }
  }

  private func build(_ spec: ChainSpec, record: Record, token: Token) -> Observer {
    let note: (Int) -> Void = { value in
      withExtendedLifetime(token) {}
      record.note([value])
    }
    switch spec {
    case .map(let source, let transform):
      return holders[source]!.chain().map { transform($0) }.do(note).sync()
    case .filter(let source):
      return holders[source]!.chain().filter { $0 % 2 == 0 }.do(note).sync()
    case .combine(let first, let second):
      return holders[first]!.chain().combine(holders[second]!.chain())
        .do {
          withExtendedLifetime(token) {}
          record.note([$0, $1])
        }.sync()
    case .combineNotifier(let source):
      return holders[source]!.chain().combine(notifier.chain())
        .do {
          withExtendedLifetime(token) {}
          record.note([$0, $1])
        }.sync()
    case .merge(let first, let second):
      return holders[first]!.chain().merge(holders[second]!.chain()).do(note).sync()
    case .mergeNotifier(let source):
      return holders[source]!.chain().merge(notifier.chain()).do(note).sync()
    case .suspended(let source):
      return holders[source]!.chain().suspend(suspender).do(note).sync()
    case .notifier(let transform):
      return notifier.chain().map { transform($0) }.do(note).end()
    case .sendTo(let source, let target, let transform, let syncs):
      let chain = holders[source]!.chain().do(note).map { transform($0) }.sendTo(holders[target]!)
      return syncs ? chain.sync() : chain.end()
    case .writeFromHandler(let source, let target, let transform):
      return holders[source]!.chain().do { [weak target = holders[target]] value in
        note(value)
        if value & 1 == 1 { target?.value = transform(value) }
      }.sync()
    case .arrayReplay(let index):
      return arrays[index].chain().do { event in
        withExtendedLifetime(token) {}
        record.count += 1
        Self.replay(event, onto: record)
      }.sync()
    case .arrayMirror:
      return arrays[0].chain().do { _ in
        withExtendedLifetime(token) {}
        record.count += 1
      }.map(\.action).sendTo(arrays[1]).sync()
    case .arrayCount(let target):
      return arrays[0].chain().do { [weak target = holders[target], weak array = arrays[0]] _ in
        withExtendedLifetime(token) {}
        record.count += 1
        if let target, let array { target.value = array.count }
      }.sync()
    case .dictionaryReplay:
      return dictionary.chain().do { event in
        withExtendedLifetime(token) {}
        record.count += 1
        Self.replay(event, onto: record)
      }.sync()
    }
  }

  /// Applies an array holder's event to the copy in `record`, noting there
  /// an event that does not fit the copy.
  private static func replay(_ event: ArrayHolder<Int>.Event, onto record: Record) {
    switch event {
    case .fetched(let elements), .set(let elements):
      record.array = elements
    case .inserted(let index, let element):
      guard index <= record.array.count else { return record.reject("\(event) out of range") }
      record.array.insert(element, at: index)
    case .removed(let index, let element):
      guard index < record.array.count, record.array[index] == element else {
        return record.reject("\(event) does not match \(record.array)")
      }
      record.array.remove(at: index)
    case .replaced(let index, let element):
      guard index < record.array.count else { return record.reject("\(event) out of range") }
      record.array[index] = element
    case .moved(let from, let to, let element):
      guard from < record.array.count, to < record.array.count, record.array[from] == element else {
        return record.reject("\(event) does not match \(record.array)")
      }
      record.array.insert(record.array.remove(at: from), at: to)
    }
  }

  /// Applies a dictionary holder's event to the copy in `record`, noting
  /// there an event that does not fit the copy.
  private static func replay(_ event: DictionaryHolder<Int, Int>.Event, onto record: Record) {
    switch event {
    case .fetched(let entries), .set(let entries):
      record.dictionary = entries
    case .inserted(let key, let value):
      guard record.dictionary[key] == nil else { return record.reject("\(event): the key is present") }
      record.dictionary[key] = value
    case .removed(let key, let value):
      guard record.dictionary[key] == value else { return record.reject("\(event) does not match") }
      record.dictionary[key] = nil
    case .replaced(let key, let value):
      guard record.dictionary[key] != nil else { return record.reject("\(event): the key is missing") }
      record.dictionary[key] = value
    }
  }
}
