// A stub of the Darwin module for `.ci/apple/check`: the C calls the
// package makes on Apple platforms (DarwinC), and the overlay's `errno`.
@_exported import DarwinC

public var errno: Int32 {
  get { 0 }
  set {}
}
