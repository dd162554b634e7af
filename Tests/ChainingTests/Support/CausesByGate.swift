@testable import Chaining

// The causes' types speak of gates' ids and keys; the tests make gates and
// ask about them. These say the same in gates, as the library's own calls
// (`DeliveryGate.id`, `CauseSet.key(_:)`) would.

extension CauseSet {
  /// Adds one occurrence of `gate`'s key.
  mutating func insert(_ gate: DeliveryGate) {
    insert(key: Self.key(gate))
  }

  /// Removes one occurrence of `gate`'s key, which must be there.
  mutating func remove(_ gate: DeliveryGate) {
    remove(key: Self.key(gate))
  }

  func contains(_ gate: DeliveryGate) -> Bool {
    contains(key: Self.key(gate))
  }
}

extension CauseNode {
  /// A node of `gates`' ids.
  convenience init(parent: CauseNode?, gates: [DeliveryGate], end: Int) {
    self.init(parent: parent, ids: gates.map(\.id), end: end)
  }

  /// Whether `gate` is one of the causes.
  func contains(_ gate: DeliveryGate) -> Bool {
    contains(id: gate.id)
  }
}

extension Causes {
  /// The causes `gates`, outermost first.
  init(gates: [DeliveryGate]) {
    self.init(ids: gates.map(\.id))
  }
}

extension CausePath {
  /// Adds `gates`' ids.
  func append(_ gates: [DeliveryGate]) {
    append(gates.map(\.id))
  }
}
