import Dispatch
import Testing

@testable import Chaining

/// The graph of ranks a build makes (#36): links kept once, links to freed
/// nodes swept, walks that survive loops and any depth, and builds on
/// several threads at once. Its effect on the order of a wave is tested
/// by `GlitchFreeTests` and `GlitchFreePropertyTests`.
@Suite struct RankGraphTests {
  /// How many links `holder`'s core keeps, dead ones included.
  func linkCount<Value>(_ holder: ValueHolder<Value>) -> Int {
    RankGraph.lock.withLock { _ in holder.store.core.rankLinks?.count ?? 0 }
  }

  /// The level of `holder`'s core.
  func level<Value>(_ holder: ValueHolder<Value>) -> Int {
    RankGraph.lock.withLock { _ in holder.store.core.rankLevel }
  }

  @Test func buildingTheSameChainsAgainAddsNoLink() {
    let source = ValueHolder(0)
    let near = ValueHolder(0)
    // More targets than are found by a scan, so that both ways are used.
    let targets = (0..<20).map { _ in ValueHolder(0) }
    for _ in 0..<100 {
      source.chain().sendTo(near).end().invalidate()
    }
    #expect(linkCount(source) == 1)
    for _ in 0..<50 {
      for target in targets { source.chain().sendTo(target).end().invalidate() }
    }
    #expect(linkCount(source) == 21)
    withExtendedLifetime((near, targets)) {}
  }

  @Test func linksToFreedNodesAreSwept() {
    let source = ValueHolder(0)
    let other = ValueHolder(0)
    var most = 0
    for _ in 0..<1_000 {
      // A holder written once and freed, and a combine ended and freed.
      let target = ValueHolder(0)
      source.chain().sendTo(target).end().invalidate()
      source.chain().combine(other.chain()).end().invalidate()
      most = max(most, linkCount(source))
    }
    // The first link is kept inline, and taken again once its node is
    // freed; the others are swept each time they reach 8: never more than
    // 9 links are kept.
    #expect(most == 9)
  }

  @Test func theGraphOfFreedNodesIsFreedEvenWhenTheyLinkBothWays() {
    // Two holders bound to each other link both ways: their places in
    // the graph refer to each other, and are let go with the holders.
    weak var firstPlace: RankLinks?
    weak var secondPlace: RankLinks?
    do {
      let first = ValueHolder(1)
      let second = ValueHolder(2)
      let binding = first.bind(to: second)
      RankGraph.lock.withLock { _ in
        firstPlace = first.store.core.rankLinks
        secondPlace = second.store.core.rankLinks
      }
      let linked = firstPlace != nil && secondPlace != nil
      #expect(linked)
      binding.invalidate()
    }
    // Compared here, not in `#expect`, which would describe a place whose
    // node was freed.
    let freed = firstPlace == nil && secondPlace == nil
    #expect(freed)
  }

  @Test func aLoopOfLinksRaisesEachNodeOnce() {
    // a -> combine -> b -> combine -> a: the second build walks the loop
    // once and ends.
    let a = ValueHolder(1)
    let b = ValueHolder(2)
    let other = ValueHolder(3)
    let forth = a.chain().combine(other.chain()).map { $0 + $1 }.sendTo(b).sync()
    let levelOfB = level(b)
    let back = b.chain().combine(other.chain()).map { $0 - $1 }.sendTo(a).sync()
    // The walk from `a` raised the first combine and `b` above the second
    // combine, and stopped at the second combine, where it started.
    #expect(level(a) > levelOfB)
    #expect(level(b) == level(a) + 1)
    #expect(a.value == 1)
    #expect(b.value == 4)
    withExtendedLifetime((forth, back)) {}
  }

  @Test func aWalkThroughAChainBuiltFromTheEndBackNeedsNoStack() {
    // 20,000 holders linked by `sendTo`, read at the end by a combine,
    // built from the end back; then a combine writes the first holder,
    // and its rank walks the whole chain. On a 512 KB stack a recursive
    // walk would overflow; the first write then sends the reader once.
    let length = 20_000
    let results = Recorder<[Int]>()
    spawn(stackSize: 512 * 1024) {
      let source = ValueHolder(1)
      let holders = (0...length).map { _ in ValueHolder(2) }
      let received = Recorder<(Int, Int)>()
      let reader = holders[length].chain().combine(source.chain()).do { received.append($0) }.sync()
      let links = (0..<length).reversed().map { index in holders[index].chain().sendTo(holders[index + 1]).sync() }
      let writer = source.chain().combine(source.chain()).map { $0 + $1 }.sendTo(holders[0]).sync()
      source.value = 3
      results.append(received.history.flatMap { [$0.0, $0.1] })
      results.append([self.level(holders[length]) > self.level(source) ? 1 : 0])
      withExtendedLifetime((reader, links, writer)) {}
    }.wait()
    #expect(results.history == [[2, 1, 6, 3], [1]])
  }

  @Test func buildsOnSeveralThreadsWhileWavesRun() {
    // Four threads build and end chains into the same holders while a
    // fifth writes: the graph's lock and the ranks' compare-and-swap keep
    // it consistent (the thread sanitizer checks the ranks), and the
    // reader built first still sends once per write, untorn.
    let source = ValueHolder(0)
    let sum = ValueHolder(0)
    let received = Recorder<(Int, Int)>()
    let reader = source.chain().combine(sum.chain()).do { received.append($0) }.sync()
    let writer = source.chain().combine(source.chain()).map { $0 + $1 }.sendTo(sum).sync()
    race(threads: 5) { index in
      if index == 4 {
        for value in 1...200 { source.value = value }
        return
      }
      let target = ValueHolder(0)
      for _ in 0..<200 {
        let observers = [
          source.chain().combine(sum.chain()).map { $0 + $1 }.sendTo(target).sync(),
          target.chain().combine(source.chain()).end(),
        ]
        for observer in observers { observer.invalidate() }
      }
    }
    let pairs = received.history.map { [$0.0, $0.1] }
    #expect(pairs == [[0, 0]] + (1...200).map { [$0, $0 * 2] })
    withExtendedLifetime((reader, writer)) {}
  }
}
