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

const char *_Nullable _chaining_current_queue_label(void) {
  return dispatch_queue_get_label(DISPATCH_CURRENT_QUEUE_LABEL);
}

#elif defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>

// libdispatch's header is not on this target's include path on Linux; the
// Chaining module links libdispatch through `import Dispatch`. The queue
// argument is a `dispatch_queue_t`, NULL for the current queue.
extern const char *dispatch_queue_get_label(void *_Nullable queue);

uint64_t _chaining_thread_id(void) { return (uint64_t)syscall(SYS_gettid); }

const char *_Nullable _chaining_current_queue_label(void) { return dispatch_queue_get_label(NULL); }

#else
uint64_t _chaining_thread_id(void) { return 0; }

const char *_Nullable _chaining_current_queue_label(void) { return NULL; }
#endif
