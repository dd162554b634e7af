// Not API: the thread-local slot of the Chaining library's delivery context.
//
// Swift has no thread-local variables of its own; `pthread_getspecific`
// costs a call and a lookup of its key on every delivery. A C11
// `_Thread_local` read through an inline function is one load. The library
// still registers a `pthread_key_t` for each context, only so that the
// context is freed when its thread ends.

#ifndef CHAINING_THREAD_CONTEXT_H
#define CHAINING_THREAD_CONTEXT_H

// The atomics, the fences, the isolation check and the thread information, included here
// too, so that a build that had this module before they were added notices
// the change.
#include "ChainingAtomics.h"
#include "ChainingFences.h"
#include "ChainingIsolation.h"
#include "ChainingThreadInfo.h"

/// The calling thread's delivery context, or NULL before its first delivery.
extern _Thread_local void *_Nullable _chaining_thread_context;

/// Returns the calling thread's delivery context, or NULL.
static inline __attribute__((always_inline)) void *_Nullable _chaining_get_thread_context(void) {
  return _chaining_thread_context;
}

/// Sets the calling thread's delivery context.
static inline __attribute__((always_inline)) void _chaining_set_thread_context(void *_Nullable context) {
  _chaining_thread_context = context;
}

#endif
