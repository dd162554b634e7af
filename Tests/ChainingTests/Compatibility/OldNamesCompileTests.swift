import Testing

/// Code written against SwiftChaining 0.5.36's public API compiles here,
/// with deprecation warnings only: the renamed names forward, with fix-its.
@Suite struct OldNamesCompileTests {
  static let oldCode = """
    import Foundation
    final class Label: Receivable { var text = ""; func receive(value: String) { text = value } }
    final class Count: Receivable { func receive(value: Int?) {} }
    let suspender = Suspender(true)
    suspender.isSuspend = false
    let holder = ValueHolder("a")
    let label = Label()
    let pairs = Notifier<(String?, Int)>()
    let observers = [
      holder.chain().sendTo(label).sync(),
      pairs.chain().send0To(label).send1To(Count()).end(),
      pairs.chain().send0To(label.retain()).end(),
      Notifier<String>().chain().merge(holder.chain()).suspend(suspender).sendTo(label).sync(),
    ]
    let first: ValueHolder<String>.FirstChain = holder.chain()
    print(holder.raw, EventableValueHolder(1).rawValue, first.end().isInvalidated, observers.count)
    let adapter = NotificationAdapter(Notification.Name("N"), object: nil, notificationCenter: .default)
    adapter.invalidate()
    let scores = DictionaryHolder<String, Int>()
    scores.reserveCapacity(4)
    scores.insert(key: "a", value: 1)
    scores.replace(key: "a", value: 2)
    scores.removeAll(keepingCapacity: true)
    print(scores.capacity, ValueHolder(1) == ValueHolder(1))
    let doChain: ValueHolder<[Int]>.FirstChain.DoChain = ValueHolder([1]).chain()
    let each: Chain<[Int], ValueHolder<[Int]>>.EachChain = doChain.each()
    let mapped: Chain<Int, ValueHolder<[Int]>>.MapChain<String> = each.map { "\\($0)" }
    print(mapped.end().isInvalidated)
    """

  @Test func oldCodeCompilesWithDeprecationWarningsOnly() throws {
    let result = try CompileCheck.typecheck(Self.oldCode, warningsAsErrors: false)
    #expect(result.succeeded, "\(result.diagnostics)")
    let warnings = result.diagnostics.split(separator: "\n").filter { $0.contains("warning:") }
    #expect(warnings.count >= 7, "\(result.diagnostics)")
    for warning in warnings {
      #expect(warning.contains("is deprecated"), "\(warning)")
    }
    // The fix-its point at the new names.
    #expect(result.diagnostics.contains("renamed to 'isSuspended'"))
    #expect(result.diagnostics.contains("use sendTo(_:from: \\.0)"))
  }
}
