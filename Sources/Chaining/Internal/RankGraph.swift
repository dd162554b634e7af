// MARK: - RankGraph

/// The order of a wave's end, known when chains are built (#36).
///
/// A wave sends its deferred combines lowest rank first (`flushWave()`),
/// so a combine must rank above every combine whose values can reach it:
/// sent before them, it would send a pair with one side's old value, then
/// again. Ranks come from three places:
/// - the building thread's counter (`WaveFlush.takeRank()`), which ranks a
///   combine above those built inside its sides;
/// - this graph, which links what the library can see of a chain when it
///   is built: each source and each `combine` or `flatMapLatest` of the
///   chain to what its values reach next in that chain (a `sendTo` target,
///   the next `combine` or `flatMapLatest`). A link raises what it reaches
///   to its own level: a sender core (a holder, a notifier) takes the
///   highest level of what writes it, a combine ranks one above what feeds
///   it. A raise walks on through the links of what it raised, so a chain
///   built before the chains that feed it is ranked by them, in any order
///   of building;
/// - the wave itself, for what no build shows (a handler that writes a
///   holder by hand): a combine that a combine's send reaches learns a
///   rank above it (`WaveFlush.changed(in:)`).
///
/// Ranks and levels only rise. Every change of the graph is made under
/// `lock`, by building threads only; a wave reads a combine's rank with a
/// relaxed load (see `WaveFlush.rank`), and a stale rank costs at worst
/// one more send, never a wrong value. A loop of links (a combine that
/// writes one of its own sources) raises each node of the loop once per
/// walk: a walk does not go through a node it is already walking from.
///
/// A link joins two nodes' places (`RankLinks`), never the nodes: a node
/// ends its place when it is freed, and a link to an ended place is
/// swept when the list that holds it has doubled. A link outlives the
/// chain that made it while both nodes live (a `sendTo` from one holder
/// to another, invalidated): it may rank a combine higher than needed,
/// which only orders it later. Links are kept once per pair, so building
/// and ending the same chain again and again adds none.
///
/// What a build costs: a link, and the walk of what it raised. A graph
/// built from its sources on raises only each new node; one built from
/// its end back raises, when a combine is put in front, every node after
/// it once (Performance.md, "Order known when chains are built").
///
/// Checked by `GlitchFreePropertyTests` (graphs built in any order, each
/// link first used by a write: fails when links are not made) and
/// `RankGraphTests` (loops, churn, freed nodes, several building threads
/// under the thread sanitizer).
@usableFromInline
enum RankGraph {
  /// Guards every node's `rankLinks` and the levels of sender cores; its
  /// state is the buffers of a walk, kept from walk to walk.
  static let lock = Protected(Walk())

  /// What a walk of `raise(_:to:in:)` needs: the nodes it is walking
  /// from, and its stack. Kept under `lock` and reused, so that a build
  /// that raises allocates them once; emptied after each walk, and let go
  /// when a walk made them large.
  struct Walk {
    var walking: Set<ObjectIdentifier> = []
    var stack: [(node: RankLinks, index: Int)] = []

    /// Empties the buffers, keeping up to this many entries' room.
    static var keptCapacity: Int { 64 }

    mutating func reset() {
      walking.removeAll(keepingCapacity: walking.capacity <= Self.keptCapacity)
      stack.removeAll(keepingCapacity: stack.capacity <= Self.keptCapacity)
    }
  }

  /// Starts the build of the part of a chain whose values reach `node`
  /// next: a `sendTo` target's core, or a `combine`'s or `flatMapLatest`'s
  /// flush. The sources that `context` subscribes until the matching
  /// `endBuilding(in:)`, and the joins built meanwhile, are linked to it.
  static func beginBuilding(_ node: any Ranked, in context: _ChainContext) {
    let state = DeliveryContext.current.state
    state.pointee.buildFrames.append(
      BuildFrame(node: node, observer: context, start: Int(context.subscriptionCount))
    )
  }

  /// Ends the build begun by the last `beginBuilding(_:in:)`: links to
  /// its node the sources subscribed since (but those of a join built
  /// inside, which are linked to that join) and the joins built inside,
  /// then tells the build it is inside, if any, of the same chain.
  static func endBuilding(in context: _ChainContext) {
    let state = DeliveryContext.current.state
    let frame = state.pointee.buildFrames.removeLast()
    let end = Int(context.subscriptionCount)
    if frame.start < end || !frame.nodes.isEmpty {
      lock.withLock { walk in
        for node in frame.nodes { link(node, to: frame.node, in: &walk) }
        var index = frame.start
        var consumed = frame.consumed.makeIterator()
        var next = consumed.next()
        while index < end {
          if let range = next, range.lowerBound <= index {
            index = Swift.max(index, range.upperBound)
            next = consumed.next()
            continue
          }
          link(context.subscriptionOwner(at: index), to: frame.node, in: &walk)
          index += 1
        }
      }
    }
    guard let parent = state.pointee.buildFrames.indices.last,
      state.pointee.buildFrames[parent].observer === context
    else { return }
    if frame.node.joinsWave {
      // A join's values are its own: what follows sees the join, not its
      // sources.
      state.pointee.buildFrames[parent].nodes.append(frame.node)
      state.pointee.buildFrames[parent].consumed.append(frame.start..<end)
    } else {
      // A `sendTo` passes its values on: what follows sees what it saw.
      state.pointee.buildFrames[parent].nodes.append(contentsOf: frame.nodes)
      state.pointee.buildFrames[parent].consumed.append(contentsOf: frame.consumed)
    }
  }

  /// Runs `build`, the build of the part of a chain before a `sendTo`
  /// step, as a part whose values reach `receiver` next, when `receiver`
  /// is a node of the graph (see `node(of:)`).
  @usableFromInline
  static func building(into receiver: AnyObject, in context: _ChainContext, _ build: () -> Void) {
    guard let node = node(of: receiver) else { return build() }
    building(part: node, in: context, build)
  }

  /// Like `building(into:in:_:)`, for a value holder's core: no cast.
  /// (Not an overload of it: the one that takes `AnyObject`, not
  /// generic, would be chosen.)
  @usableFromInline
  static func building<Value>(intoCore core: _SenderCore<Value>, in context: _ChainContext, _ build: () -> Void) {
    building(part: core, in: context, build)
  }

  private static func building(part node: any Ranked, in context: _ChainContext, _ build: () -> Void) {
    beginBuilding(node, in: context)
    build()
    endBuilding(in: context)
  }

  /// The node a `sendTo` step writes: the sender core of a receiver that
  /// is also one of this library's senders (a holder), created if needed;
  /// nil for other receivers, whose writes no chain can see.
  static func node(of receiver: AnyObject) -> (any Ranked)? {
    guard let sender = receiver as? any Sendable else { return nil }
    return core(of: sender)
  }

  private static func core<Sender: Sendable>(of sender: Sender) -> (any Ranked)? {
    sender._senderCore(creating: true)
  }

  /// Links `source` to `node`, under the lock: for links no build frame
  /// makes (a computed value's dependencies, found by evaluating it).
  static func link(_ source: any Ranked, to node: any Ranked) {
    lock.withLock { walk in link(source, to: node, in: &walk) }
  }

  /// Links `first` and `second` to each other: two holders bound to each
  /// other (`bind(to:)`), each of which writes the other by hand.
  static func linkBothWays(_ first: any Ranked, _ second: any Ranked) {
    lock.withLock { walk in
      link(first, to: second, in: &walk)
      link(second, to: first, in: &walk)
    }
  }

  /// Links `source` to `node` and raises `node`, and what it reaches, to
  /// `source`'s level. Under `lock`.
  static func link(_ source: any Ranked, to node: any Ranked, in walk: inout Walk) {
    link(place: source.links, to: node.links, in: &walk)
  }

  /// `link(_:to:in:)`, given the two nodes' places. Under `lock`, with
  /// both nodes alive (their callers hold them).
  static func link(place source: RankLinks, to target: RankLinks, in walk: inout Walk) {
    source.add(target)
    raise(target, to: target.level(after: source.level), in: &walk)
  }

  /// Raises `node` to `level`, then walks on from each node raised,
  /// depth first, without going through a node it is walking from (a
  /// loop). Iterative: a graph may be 100,000 links deep. Under `lock`.
  static func raise(_ node: RankLinks, to level: Int, in walk: inout Walk) {
    guard node.raise(to: level) else { return }
    // A node built last, at the end of the graph, links to nothing yet.
    guard node.hasLinks else { return }
    defer { walk.reset() }
    walk.walking.insert(ObjectIdentifier(node))
    walk.stack.append((node, 0))
    while let (top, index) = walk.stack.last {
      guard let next = top.link(at: index) else {
        walk.walking.remove(ObjectIdentifier(top))
        walk.stack.removeLast()
        continue
      }
      walk.stack[walk.stack.count - 1].index += 1
      let id = ObjectIdentifier(next)
      if walk.walking.contains(id) { continue }
      if next.raise(to: next.level(after: top.level)) {
        walk.walking.insert(id)
        walk.stack.append((next, 0))
      }
    }
  }
}

/// A node of `RankGraph`: a sender core, or a join's flush.
protocol Ranked: AnyObject {
  /// The node's place in the graph, or nil before it is linked. Under
  /// `RankGraph.lock`; the node marks it ended when it is freed (see
  /// `RankLinks.end()`).
  var rankLinks: RankLinks? { get set }
  /// Whether a value that reaches this node waits for the wave's end (a
  /// combine's or `flatMapLatest`'s flush): it then ranks above what
  /// feeds it; a sender core takes the level of what writes it.
  var joinsWave: Bool { get }
  /// The node's level: a flush's rank, a core's highest writer's.
  var rankLevel: Int { get }
  /// Raises the level to `level` if it is lower; returns whether it was.
  /// Under `RankGraph.lock`.
  func raise(to level: Int) -> Bool
}

extension Ranked {
  /// The node's place in the graph, made on first use. Under
  /// `RankGraph.lock`.
  var links: RankLinks {
    if let links = rankLinks { return links }
    let links = RankLinks(owner: self)
    rankLinks = links
    return links
  }

  /// `links`, unretained: the node keeps its place (`rankLinks` is set
  /// once). Under `RankGraph.lock`.
  var unretainedLinks: Unmanaged<RankLinks> {
    if let links = rankLinks { return .passUnretained(links) }
    return .passUnretained(links)
  }
}

/// A node's place in `RankGraph`: its links to the nodes it reaches, and
/// a core's level. Under `RankGraph.lock`.
///
/// The links hold these places, not the nodes: a node is never referred
/// to weakly (a weak reference would move it to Swift's slower reference
/// counting, and a combine's flush is retained and released on every
/// write), and a place outlives its node. The node calls `end()` when it
/// is freed, under the lock, so that a walk never reaches it afterwards;
/// `flush` is read only while `isLive`, under the lock, which `end()`
/// waits for (the node's memory is freed after its `deinit` returns).
/// Modeled in `Verification/RankPlaces.pml` (spin finds the freed flush
/// read when the place is ended without the lock, or never), and checked
/// by `RankGraphTests` under the thread sanitizer.
///
/// Most nodes link to one node (a holder's chain writes one holder, a
/// combine's chain one): the first link is kept inline, the others in
/// `more`, allocated for a second.
final class RankLinks {
  /// The node when it is a flush (nil for a sender core), unretained:
  /// read only while `isLive`, under the lock, through a guaranteed
  /// reference that retains nothing. A retain there (as a call through an
  /// unowned existential makes) could land on a flush whose last release
  /// has begun on another thread, its `deinit` waiting in `end()` for
  /// this lock: the release after it ran that `deinit` again, on this
  /// thread, which then waited for its own lock. The thread sanitizer
  /// suite hung so once (`RankGraphTests.buildsOnSeveralThreadsWhileWavesRun`,
  /// a walk in `endBuilding` raising a combine freed meanwhile).
  let flush: Unmanaged<WaveFlush>?
  /// Whether the node is a flush: see `Ranked.joinsWave`.
  var joinsWave: Bool { flush != nil }
  /// False once the node is freed.
  private(set) var isLive = true
  /// A sender core's level (unused for a flush, whose rank is atomic).
  private var coreLevel = 0
  private var first: RankLinks?
  private var more: [RankLinks] = []
  /// Where each place linked in `more` is, once it has more than
  /// `scanned`, so that a node linked again (the same chain built again)
  /// is found at once; fewer are scanned. Places are held, so an
  /// identifier is never reused while it is a key.
  private var positions: [ObjectIdentifier: Int] = [:]
  /// The count of `more` at which links to freed nodes are swept next.
  private var sweepCount = 8

  /// Up to how many links of `more` are found by a scan rather than
  /// `positions`.
  static var scanned: Int { 8 }

  init(owner: any Ranked) {
    // Only a flush joins waves; `owner` is alive here (its caller holds it).
    flush = owner.joinsWave ? Unmanaged.passUnretained(owner as! WaveFlush) : nil
  }

  /// The node's level; a freed node's no longer matters.
  var level: Int {
    guard isLive else { return Int.min }
    return flush?._withUnsafeGuaranteedRef { $0.rankLevel } ?? coreLevel
  }

  /// The level this node needs when a node of level `level` reaches it.
  func level(after level: Int) -> Int {
    joinsWave ? level &+ 1 : level
  }

  /// Raises the node to `level` if it is lower; returns whether it was.
  /// A freed node is not raised.
  func raise(to level: Int) -> Bool {
    guard isLive else { return false }
    if let flush { return flush._withUnsafeGuaranteedRef { $0.raise(to: level) } }
    guard level > coreLevel else { return false }
    coreLevel = level
    return true
  }

  /// Whether this node links to any.
  var hasLinks: Bool { first != nil }

  /// The place of link number `index` (the inline one first), or nil
  /// past the last; possibly of a freed node, which `raise(to:)` skips.
  func link(at index: Int) -> RankLinks? {
    if index == 0 { return first }
    return index <= more.count ? more[index - 1] : nil
  }

  /// How many links are kept, to freed nodes too: for tests.
  var count: Int { (first == nil ? 0 : 1) + more.count }

  /// Links `place`, unless it is already.
  func add(_ place: RankLinks) {
    guard let linked = first, linked.isLive else {
      // None yet, or its node was freed: the inline link is free.
      first = place
      return
    }
    if linked === place { return }
    if more.count <= Self.scanned {
      if more.contains(where: { $0 === place }) { return }
    } else if positions[ObjectIdentifier(place)] != nil {
      return
    }
    if more.count == sweepCount {
      more.removeAll { !$0.isLive }
      sweepCount = Swift.max(8, more.count * 2)
      positions = [:]
      if more.count > Self.scanned { index() }
    }
    more.append(place)
    if more.count > Self.scanned {
      if more.count == Self.scanned + 1 {
        index()
      } else {
        positions[ObjectIdentifier(place)] = more.count - 1
      }
    }
  }

  /// Fills `positions` from `more`.
  private func index() {
    for (position, place) in more.enumerated() { positions[ObjectIdentifier(place)] = position }
  }

  /// Called by the node as it is freed: no walk reaches it any more, and
  /// its links are let go (two holders linked both ways would otherwise
  /// keep each other's places).
  func end() {
    RankGraph.lock.withLock { _ in
      isLive = false
      first = nil
      more = []
      positions = [:]
    }
  }
}

/// A part of a chain being built whose values reach `node` next (see
/// `RankGraph.beginBuilding(_:in:)`), on the building thread's stack.
struct BuildFrame {
  let node: any Ranked
  /// The observer of the chain being built; transient.
  let observer: Observer
  /// The chain's subscription count when the part began: the sources
  /// subscribed from here on are in this part.
  let start: Int
  /// The joins built inside this part, outside any other join.
  var nodes: [any Ranked] = []
  /// The subscriptions made inside those joins, in order: linked to them.
  var consumed: [Range<Int>] = []
}
