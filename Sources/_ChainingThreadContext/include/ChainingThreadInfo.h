// Not API: which thread and which dispatch queue run the calling code, for
// the lines `Chain.log(_:to:)` writes.
//
// Swift cannot ask either on Linux: Glibc does not declare `gettid`, and the
// Dispatch overlay marks `dispatch_queue_get_label` unavailable.

#ifndef CHAINING_THREAD_INFO_H
#define CHAINING_THREAD_INFO_H

#include <stddef.h>
#include <stdint.h>

/// A number naming the calling thread while it runs: the kernel's thread id
/// on Linux (`gettid`, which `ps -L`, `top -H` and gdb show), the system-wide
/// thread id of `pthread_threadid_np` on Apple platforms (lldb's `tid`).
/// 0 where neither is available.
uint64_t _chaining_thread_id(void);

/// The label of the dispatch queue the calling code runs on, as
/// `dispatch_queue_get_label(DISPATCH_CURRENT_QUEUE_LABEL)` returns it: ""
/// for a queue made without a label, the label of a global (root) queue for
/// a thread that runs no queue of its own. NULL where there is no Dispatch.
const char *_Nullable _chaining_current_queue_label(void);

/// The lowest address of the calling thread's stack, which grows down (on
/// every platform Swift runs on), or 0 when it cannot be told. Asked once
/// per thread, when its delivery context is made.
uintptr_t _chaining_stack_low(void);

/// An address in the caller's frame: how far down its stack the calling
/// thread is. Inlined, it is the frame address of the Swift function that
/// calls it.
static inline __attribute__((always_inline)) uintptr_t _chaining_stack_address(void) {
  return (uintptr_t)__builtin_frame_address(0);
}

/// Runs `body(context)` on a new thread whose stack is `stackSize` bytes,
/// and returns once it has run: 0, or the error that kept the thread from
/// being made (then `body` did not run; ENOTSUP where there are no POSIX
/// threads). For a computed value's update that would go deeper than the
/// calling thread's stack allows (`ComputedNode.updateOnNewStack`).
int _chaining_run_on_new_thread(size_t stackSize, void (*_Nonnull body)(void *_Nullable),
                                void *_Nullable context);

#endif
