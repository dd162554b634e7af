import Foundation

/// Under the address sanitizer, lets the allocator hand out again the memory
/// of the objects freed so far; without the sanitizer, does nothing.
///
/// The sanitizer keeps freed memory in a quarantine (256 MB by default), so
/// that a use after free reads poisoned memory; while it is there, a new
/// object cannot take a dead object's address. The tests that check what
/// happens when one does call this between the death and the allocation.
/// It calls the sanitizer's `__sanitizer_purge_allocator`, which moves the
/// whole quarantine to the calling thread's free lists, where its next
/// allocations come from. The rest of the run keeps its quarantine: memory
/// freed after the call waits there as before.
func releaseQuarantinedMemory() {
  #if os(Linux)
  let everyImage = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
  #else
  let everyImage = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
  #endif
  // The sanitizer's runtime exports the symbol; a plain build has none.
  guard let symbol = dlsym(everyImage, "__sanitizer_purge_allocator") else { return }
  unsafeBitCast(symbol, to: (@convention(c) () -> Void).self)()
}
