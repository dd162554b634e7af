#include "ChainingFences.h"

#include <stdlib.h>

// CHAINING_SYMMETRIC_FENCES (`-Xcc -DCHAINING_SYMMETRIC_FENCES`) builds the
// fallback of platforms without the barrier, so that CI runs it on Linux too.
#if defined(__linux__) && !defined(CHAINING_SYMMETRIC_FENCES) && __has_include(<linux/membarrier.h>)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(SYS_membarrier)
#define CHAINING_HAS_MEMBARRIER 1
#endif
#endif

int _chaining_fences_asymmetric = 0;

#ifdef CHAINING_HAS_MEMBARRIER
// Registers the process for the private expedited barrier when the kernel
// has it. Runs before `main` (or when the library is loaded), so that no
// light fence can run before the choice is made.
__attribute__((constructor)) static void _chaining_fences_setup(void) {
  long commands = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (commands < 0 || !(commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return;
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) return;
  _chaining_fences_asymmetric = 1;
}
#endif

void _chaining_heavy_fence(void) {
#ifdef CHAINING_HAS_MEMBARRIER
  if (_chaining_fences_asymmetric) {
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
    // Fails only for a process that is not registered: registers again, for
    // a child of fork() on a kernel that would not carry the registration
    // over. The light side already relies on the barrier, so there is no
    // falling back.
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
      return;
    }
    abort();
  }
#endif
  atomic_thread_fence(memory_order_seq_cst);
}
