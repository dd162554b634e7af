// A stub of the Foundation API the package uses, for `.ci/apple/check`: the
// declarations and their types as Apple's SDK has them, with empty bodies.
@_exported import Darwin
@_exported import Dispatch
public protocol NSObjectProtocol: AnyObject {}
open class NSObject: NSObjectProtocol { public init() {} }
public struct Notification: @unchecked Sendable {
  public struct Name: RawRepresentable, Hashable, Sendable { public let rawValue: String; public init(rawValue: String) { self.rawValue = rawValue }; public init(_ rawValue: String) { self.rawValue = rawValue } }
  public var name: Name; public var object: Any?; public var userInfo: [AnyHashable: Any]?
}
public final class OperationQueue: @unchecked Sendable {}
open class NotificationCenter: NSObject, @unchecked Sendable {
  public static let `default` = NotificationCenter()
  open func addObserver(forName name: Notification.Name?, object obj: Any?, queue: OperationQueue?, using block: @escaping @Sendable (Notification) -> Void) -> any NSObjectProtocol { NSObject() }
  open func removeObserver(_ observer: Any) {}
  open func post(name aName: Notification.Name, object anObject: Any?, userInfo aUserInfo: [AnyHashable: Any]? = nil) {}
}
open class Thread: NSObject, @unchecked Sendable { public class var isMainThread: Bool { true } }
public protocol NSLocking { func lock(); func unlock() }
extension NSLocking { public func withLock<R>(_ body: () throws -> R) rethrows -> R { try body() } }
open class NSLock: NSObject, NSLocking, @unchecked Sendable { open func lock() {}; open func unlock() {}; open func `try`() -> Bool { true } }
open class NSCondition: NSObject, NSLocking, @unchecked Sendable { open func lock() {}; open func unlock() {}; open func wait() {}; open func signal() {}; open func broadcast() {} }
public struct URL: Hashable, Sendable {
  public init(fileURLWithPath path: String) { self.path = path }
  public var path: String
  public func appendingPathComponent(_ component: String) -> URL { self }
  public func deletingLastPathComponent() -> URL { self }
  public var lastPathComponent: String { path }
}
public struct UUID: Hashable, Sendable { public init() {}; public var uuidString: String { "" } }
public struct Data: Sendable { public init() {} }
extension String {
  public init(contentsOf url: URL, encoding: String.Encoding) throws { self = "" }
  public init(contentsOfFile path: String, encoding: String.Encoding) throws { self = "" }
  public func write(to url: URL, atomically: Bool, encoding: String.Encoding) throws {}
  public func components(separatedBy separator: String) -> [String] { [] }

  public init?(data: Data, encoding: String.Encoding) { return nil }
  public struct Encoding: Sendable { public static let utf8 = Encoding() }
}
public struct CharacterSet: Sendable { public static let whitespacesAndNewlines = CharacterSet() }
open class FileManager: NSObject, @unchecked Sendable {
  public static let `default` = FileManager()
  open var temporaryDirectory: URL { URL(fileURLWithPath: "/tmp") }
  open func createDirectory(at url: URL, withIntermediateDirectories: Bool, attributes: [String: Any]? = nil) throws {}
  open func removeItem(at url: URL) throws {}
  open func fileExists(atPath path: String) -> Bool { false }
  open func destinationOfSymbolicLink(atPath path: String) throws -> String { "" }
  open func createSymbolicLink(at url: URL, withDestinationURL destURL: URL) throws {}
  open func contentsOfDirectory(atPath path: String) throws -> [String] { [] }
  open func contentsOfDirectory(at url: URL, includingPropertiesForKeys keys: [String]?) throws -> [URL] { [] }
}
open class FileHandle: NSObject, @unchecked Sendable {
  open func readDataToEndOfFile() -> Data { Data() }
}
open class Pipe: NSObject, @unchecked Sendable {
  open var fileHandleForReading: FileHandle { FileHandle() }
}
open class Process: NSObject, @unchecked Sendable {
  open var executableURL: URL?
  open var arguments: [String]?
  open var currentDirectoryURL: URL?
  open var standardOutput: Any?
  open var standardError: Any?
  open var environment: [String: String]?
  open var terminationStatus: Int32 { 0 }
  open func run() throws {}
  open func waitUntilExit() {}
}
open class ProcessInfo: NSObject, @unchecked Sendable {
  public static let processInfo = ProcessInfo()
  open var environment: [String: String] { [:] }
  open var activeProcessorCount: Int { 1 }
}
extension Thread {
  public convenience init(block: @escaping @Sendable () -> Void) { self.init() }
  public class var current: Thread { Thread() }
  public func start() {}
  public var name: String? { get { nil } set {} }
  public var stackSize: Int { get { 0 } set {} }
  public class func detachNewThread(_ block: @escaping @Sendable () -> Void) {}
  public class func sleep(forTimeInterval: Double) {}
}
// Foundation's string methods, which also make `contains` of a string
// available before macOS 13 wherever Foundation is imported.
extension StringProtocol {
  public func contains<T: StringProtocol>(_ other: T) -> Bool { false }
  public func replacingOccurrences<Target: StringProtocol, Replacement: StringProtocol>(
    of target: Target, with replacement: Replacement
  ) -> String { "" }
}
extension StringProtocol {
  public func trimmingCharacters(in set: CharacterSet) -> String { "" }
}
extension CharacterSet { public static let whitespaces = CharacterSet() }
public struct CocoaError: Error, Sendable {
  public enum Code: Int, Sendable { case fileNoSuchFile = 4 }
  public init(_ code: Code, userInfo: [String: Any] = [:]) {}
}
public let NSFilePathErrorKey = "NSFilePath"
extension URL { public func resolvingSymlinksInPath() -> URL { self } }
extension Data: Collection {
  public var startIndex: Int { 0 }
  public var endIndex: Int { 0 }
  public subscript(position: Int) -> UInt8 { 0 }
  public func index(after i: Int) -> Int { i + 1 }
}
