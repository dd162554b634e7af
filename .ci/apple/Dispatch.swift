// A stub of the Dispatch API the package uses, for `.ci/apple/check`: the
// declarations and their types as Apple's SDK has them, with empty bodies.
public struct DispatchQoS: Sendable {
  public enum QoSClass: Sendable { case background, utility, `default`, userInitiated, userInteractive, unspecified }
  public static let background = DispatchQoS(), utility = DispatchQoS(), `default` = DispatchQoS()
  public static let userInitiated = DispatchQoS(), userInteractive = DispatchQoS(), unspecified = DispatchQoS()
}
public struct DispatchTime: Sendable, Comparable {
  public let uptimeNanoseconds: UInt64
  public static func now() -> DispatchTime { DispatchTime(uptimeNanoseconds: 0) }
  public init(uptimeNanoseconds: UInt64) { self.uptimeNanoseconds = uptimeNanoseconds }
  public static func < (a: DispatchTime, b: DispatchTime) -> Bool { a.uptimeNanoseconds < b.uptimeNanoseconds }
  public static func + (a: DispatchTime, b: Double) -> DispatchTime { a }
}
public final class DispatchSpecificKey<T>: @unchecked Sendable { public init() {} }
public enum DispatchPredicate { case onQueue(DispatchQueue), notOnQueue(DispatchQueue), onQueueAsBarrier(DispatchQueue) }
public func dispatchPrecondition(condition: @autoclosure () -> DispatchPredicate) {}
open class DispatchObject: @unchecked Sendable { public init() {} }
public final class DispatchQueue: DispatchObject, @unchecked Sendable {
  public struct Attributes: OptionSet, Sendable { public let rawValue: UInt64; public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static let concurrent = Attributes(rawValue: 1) }
  public init(label: String, qos: DispatchQoS = .unspecified, attributes: Attributes = [], target: DispatchQueue? = nil) { self.label = label; super.init() }
  public static let main = DispatchQueue(label: "main")
  public class func global(qos: DispatchQoS.QoSClass = .default) -> DispatchQueue { main }
  public let label: String
  public func asyncAfter(deadline: DispatchTime, execute work: @escaping @Sendable @convention(block) () -> Void) {}
  public func sync<T>(execute work: () throws -> T) rethrows -> T { try work() }
  public func setSpecific<T>(key: DispatchSpecificKey<T>, value: T?) {}
  public func getSpecific<T>(key: DispatchSpecificKey<T>) -> T? { nil }
  public class func getSpecific<T>(key: DispatchSpecificKey<T>) -> T? { nil }
}
public enum DispatchTimeInterval: Sendable, Equatable {
  case seconds(Int), milliseconds(Int), microseconds(Int), nanoseconds(Int), never
}
extension DispatchTime {
  public static func + (a: DispatchTime, b: DispatchTimeInterval) -> DispatchTime { a }
  public static let distantFuture = DispatchTime(uptimeNanoseconds: .max)
}
public enum DispatchTimeoutResult: Sendable { case success, timedOut }
public final class DispatchSemaphore: DispatchObject, @unchecked Sendable {
  public init(value: Int) {}
  public func wait() {}
  public func wait(timeout: DispatchTime) -> DispatchTimeoutResult { .success }
  @discardableResult public func signal() -> Int { 0 }
}
public final class DispatchGroup: DispatchObject, @unchecked Sendable {
  public override init() {}
  public func enter() {}
  public func leave() {}
  public func wait() {}
  public func wait(timeout: DispatchTime) -> DispatchTimeoutResult { .success }
  public func notify(queue: DispatchQueue, execute work: @escaping @Sendable @convention(block) () -> Void) {}
}
extension DispatchQueue {
  public func async(group: DispatchGroup? = nil, qos: DispatchQoS = .unspecified, execute work: @escaping @Sendable @convention(block) () -> Void) {}
  public class func concurrentPerform(iterations: Int, execute work: (Int) -> Void) {}
}
