// `pthread_getattr_np` is a GNU extension of glibc (and of Musl and
// Bionic, which declare it anyway).
#define _GNU_SOURCE
#include "ChainingThreadInfo.h"

#include <stddef.h>

#if defined(__APPLE__) || defined(__linux__)
#include <pthread.h>

/// What the new thread of `_chaining_run_on_new_thread` runs.
struct chaining_new_thread_body {
  void (*body)(void *);
  void *context;
};

static void *chaining_run_new_thread_body(void *argument) {
  struct chaining_new_thread_body *run = argument;
  run->body(run->context);
  return NULL;
}

int _chaining_run_on_new_thread(size_t stackSize, void (*body)(void *), void *context) {
  pthread_attr_t attributes;
  int status = pthread_attr_init(&attributes);
  if (status != 0) return status;
  status = pthread_attr_setstacksize(&attributes, stackSize);
  if (status == 0) {
    // On the caller's stack: the caller waits for the thread to end.
    struct chaining_new_thread_body run = {body, context};
    pthread_t thread;
    status = pthread_create(&thread, &attributes, chaining_run_new_thread_body, &run);
    // Once the thread is made, `body` runs: 0 whatever the join says (it
    // fails only for a thread that is not joinable, or for a join of
    // itself).
    if (status == 0) pthread_join(thread, NULL);
  }
  pthread_attr_destroy(&attributes);
  return status;
}
#else
#include <errno.h>

int _chaining_run_on_new_thread(size_t stackSize, void (*body)(void *), void *context) { return ENOTSUP; }
#endif

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
