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
    _ = observer
  }

  @Test func reusingAConsumedChainForAStepStopsWithAMessage() async {
    await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let chain = Notifier<Int>().chain()
      _ = chain.map { $0 + 1 }
      _ = chain.do { _ in }
    }
  }

  @Test func reusingAConsumedChainForEndStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let chain = Notifier<Int>().chain().do { _ in }
      let first = chain.end()
      let second = chain.end()
      _ = (first, second)
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Chain.end(): this chain was already used"))
  }

  @Test func reusingAChainAfterSyncStopsWithAMessage() async {
    let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
      let chain = ValueHolder(1).chain()
      let observer = chain.sync()
      _ = chain.map { $0 }
      _ = observer
    }
    let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    #expect(message.contains("Chain.map(_:): this chain was already used"))
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
