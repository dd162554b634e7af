// Not API: the two sides of the Chaining library's asymmetric memory fence.
//
// A delivery gate's runner releases the gate with a plain store and then
// reads the flags other threads set: the common path. A thread that sets a
// flag (a value queued, a close that waits) then reads whether the gate is
// still running: the rare path. Each side needs a full fence between its
// write and its read, or both could miss the other's write. The light side
// runs on every delivery; the heavy side only when threads meet.
//
// Where the kernel offers `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`
// (Linux 4.14 and later), the heavy side makes every running thread of the
// process pass a full barrier, and the light side needs only to keep the
// compiler from reordering. Elsewhere both sides are full fences.

#ifndef CHAINING_FENCES_H
#define CHAINING_FENCES_H

#include <stdatomic.h>

/// Nonzero when the heavy fence is the process-wide barrier. Set once,
/// before `main`, by a constructor; never changed afterwards.
extern int _chaining_fences_asymmetric;

/// `_chaining_fences_asymmetric`, read from Swift.
static inline __attribute__((always_inline)) int _chaining_fences_are_asymmetric(void) {
  return _chaining_fences_asymmetric;
}

/// The light side where the heavy side is known to be process-wide: a
/// compiler barrier, without the test of `_chaining_fences_asymmetric`.
static inline __attribute__((always_inline)) void _chaining_light_fence_asymmetric(void) {
  atomic_signal_fence(memory_order_seq_cst);
}

/// The heavy side: a process-wide barrier, or a full fence of the calling
/// thread when the kernel has none.
void _chaining_heavy_fence(void);

/// The light side: a compiler barrier when the heavy side is process-wide,
/// a full fence otherwise.
static inline __attribute__((always_inline)) void _chaining_light_fence(void) {
  if (_chaining_fences_asymmetric) {
    atomic_signal_fence(memory_order_seq_cst);
  } else {
    atomic_thread_fence(memory_order_seq_cst);
  }
}

#endif
