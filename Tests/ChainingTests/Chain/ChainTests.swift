import Chaining
import Testing

@Suite struct ChainTests {
  @Test func stepsComposeIntoOnePipelineInOrder() {
    let holder = ValueHolder(1)
    let received = Recorder<String>()
    let observer = holder.chain()
      .do { received.append("do \($0)") }
      .map { $0 * 10 }
      .do { received.append("after map \($0)") }
      .map { "v\($0)" }
      .do { received.append($0) }
      .sync()
    holder.value = 2
    #expect(
      received.history == [
        "do 1", "after map 10", "v10",
        "do 2", "after map 20", "v20",
      ]
    )
    withExtendedLifetime(observer) {}
  }
}

@Suite(.serialized) struct ChainTypingTests {
  @Test func wellTypedClientCodeCompiles() throws {
    // The control for the two checks below: the same setup, well typed.
    let result = try CompileCheck.typecheck(
      """
      final class Label: Receivable {
        func receive(value: String) {}
      }
      let holder = ValueHolder(1)
      let observer = holder.chain().map { "\\($0)" }.sendTo(Label()).sync()
      let notifierObserver = Notifier<Int>().chain().map { "\\($0)" }.sendTo(Label()).end()
      """
    )
    #expect(result.succeeded, "\(result.diagnostics)")
  }

  @Test func sendToAReceiverOfAnotherTypeDoesNotCompile() throws {
    let result = try CompileCheck.typecheck(
      """
      final class Label: Receivable {
        func receive(value: String) {}
      }
      let holder = ValueHolder(1)
      let observer = holder.chain().sendTo(Label()).sync()
      """
    )
    #expect(!result.succeeded)
    #expect(result.diagnostics.contains("error:"), "\(result.diagnostics)")
    #expect(result.diagnostics.contains("String"), "\(result.diagnostics)")
  }

  @Test func usingAChainAgainAfterAStepEndOrSyncDoesNotCompile() throws {
    // The control compiles through the same checks: each chain used once.
    let control = try CompileCheck.checkOwnership(
      """
      func once() {
        let chain = ValueHolder(1).chain()
        let observer = chain.map { $0 + 1 }.sync()
        withExtendedLifetime(observer) {}
      }
      """
    )
    #expect(control.succeeded, "\(control.diagnostics)")
    let result = try CompileCheck.checkOwnership(
      """
      func stepTwice() {
        let chain = Notifier<Int>().chain()
        _ = chain.map { $0 + 1 }
        _ = chain.do { _ in }
      }
      func endTwice() {
        let chain = Notifier<Int>().chain().do { _ in }
        let first = chain.end()
        let second = chain.end()
        _ = (first, second)
      }
      func stepAfterSync() {
        let chain = ValueHolder(1).chain()
        let observer = chain.sync()
        _ = chain.map { $0 }
        withExtendedLifetime(observer) {}
      }
      """
    )
    #expect(!result.succeeded)
    let reuses = result.diagnostics.components(separatedBy: ": error: 'chain' consumed more than once").count - 1
    #expect(reuses == 3, "\(result.diagnostics)")
  }

  @Test func syncOnASourceThatIsNotFetchableDoesNotCompile() throws {
    let result = try CompileCheck.typecheck(
      """
      let observer = Notifier<Int>().chain().do { _ in }.sync()
      """
    )
    #expect(!result.succeeded)
    #expect(result.diagnostics.contains("Fetchable"), "\(result.diagnostics)")
  }
}
