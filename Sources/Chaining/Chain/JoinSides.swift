// MARK: - JoinSides

/// The gate a join's two sides (`merge`, `tuple`, `combine`) run through
/// when either of them crosses a hop.
///
/// Without hops, both sides run under the chain's gate, one value at a
/// time, so what follows the join needs no lock. A hop (`receive(on:)`, a
/// step written on an actor, a time step, `flatMapLatest`) delivers the
/// values after it under a gate of its own, on its queue or actor: a side
/// with a hop would run at the same time as the other side. So the join
/// counts the chain's hop gates before and after building its sides, and
/// when the sides added any, both sides run through one more gate, which
/// closes with the chain's other hop gates. A side's value then runs at
/// once when that gate is idle, or after the value it is running. Checked
/// by `JoinSidesTests` under the thread sanitizer, which reported the
/// races this removes.
@usableFromInline
final class JoinSides: @unchecked Swift.Sendable {
  // @unchecked: `gate` is set once, by the thread building the chain,
  // before the chain's gate opens; every delivery that reads it comes
  // after that opening (the chain gate's release, or a hop's hand-over
  // through a lock, orders them).
  @usableFromInline @exclusivity(unchecked) var gate: DeliveryGate?

  @usableFromInline
  init() {}

  /// Builds a join's two sides into `context`: `first` receives the values
  /// of `build`'s chain, `second` those of `otherBuild`'s, one value at a
  /// time even when a side crosses a hop.
  @inlinable @inline(__always)
  static func build<First, Second>(
    _ build: (_ downstream: ((First) -> Void)?, _ context: _ChainContext) -> Void,
    _ otherBuild: (_ downstream: ((Second) -> Void)?, _ context: _ChainContext) -> Void,
    first: @escaping (First) -> Void,
    second: @escaping (Second) -> Void,
    in context: _ChainContext
  ) {
    let sides = JoinSides()
    let hopGatesBefore = context.hopGateCount
    build(sides.side(first), context)
    otherBuild(sides.side(second), context)
    sides.finish(in: context, hopGatesBefore: hopGatesBefore)
  }

  /// `body` as a side of the join: run directly, or through `gate` once
  /// the build has made one.
  @inlinable @inline(__always)
  func side<Value>(_ body: @escaping (Value) -> Void) -> (Value) -> Void {
    { value in
      if let gate = self.gate {
        gate.deliver(value, to: body, in: DeliveryContext.current)
      } else {
        body(value)
      }
    }
  }

  /// Called once both sides are built, with the chain's hop gate count
  /// from before they were: makes the gate when they added hops.
  @usableFromInline
  func finish(in context: _ChainContext, hopGatesBefore: Int) {
    guard context.hopGateCount != hopGatesBefore else { return }
    let created = DeliveryGate(held: false)
    context.addHopGate(created)
    gate = created
  }
}

extension JoinSides {
  /// Builds the sides of a join of any number of chains into `context`:
  /// `receive(index, value)` receives the values of `builds[index]`'s
  /// chain, one value at a time even when a side crosses a hop.
  @inlinable
  static func build<Value>(
    _ builds: [(_ downstream: ((Value) -> Void)?, _ context: _ChainContext) -> Void],
    receive: @escaping (Int, Value) -> Void,
    in context: _ChainContext
  ) {
    let sides = JoinSides()
    let hopGatesBefore = context.hopGateCount
    for (index, build) in builds.enumerated() {
      build(sides.side { receive(index, $0) }, context)
    }
    sides.finish(in: context, hopGatesBefore: hopGatesBefore)
  }
}
