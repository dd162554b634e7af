// `pthread_getattr_np` is a GNU extension of glibc (and of Musl and
// Bionic, which declare it anyway).
#define _GNU_SOURCE
#include "ChainingThreadInfo.h"

#include <stddef.h>

#if defined(__APPLE__)
#include <dispatch/dispatch.h>
#include <pthread.h>

uint64_t _chaining_thread_id(void) {
  uint64_t id = 0;
  pthread_threadid_np(NULL, &id);
  return id;
}

uintptr_t _chaining_stack_low(void) {
  // The highest address, and the size below it.
  pthread_t self = pthread_self();
  return (uintptr_t)pthread_get_stackaddr_np(self) - pthread_get_stacksize_np(self);
}

const char *_Nullable _chaining_current_queue_label(void) {
  return dispatch_queue_get_label(DISPATCH_CURRENT_QUEUE_LABEL);
}

#elif defined(__linux__)
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

// libdispatch's header is not on this target's include path on Linux; the
// Chaining module links libdispatch through `import Dispatch`. The queue
// argument is a `dispatch_queue_t`, NULL for the current queue.
extern const char *dispatch_queue_get_label(void *_Nullable queue);

uint64_t _chaining_thread_id(void) { return (uint64_t)syscall(SYS_gettid); }

uintptr_t _chaining_stack_low(void) {
  pthread_attr_t attributes;
  if (pthread_getattr_np(pthread_self(), &attributes) != 0) return 0;
  void *low = NULL;
  size_t size = 0;
  int status = pthread_attr_getstack(&attributes, &low, &size);
  pthread_attr_destroy(&attributes);
  return status == 0 ? (uintptr_t)low : 0;
}

const char *_Nullable _chaining_current_queue_label(void) { return dispatch_queue_get_label(NULL); }

#else
uint64_t _chaining_thread_id(void) { return 0; }

uintptr_t _chaining_stack_low(void) { return 0; }

const char *_Nullable _chaining_current_queue_label(void) { return NULL; }
#endif
