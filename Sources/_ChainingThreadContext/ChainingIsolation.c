#include "ChainingIsolation.h"

#include <pthread.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

// The runtime's own declaration (swift/Runtime/Concurrency.h): the executor
// is passed as its two words, in the Swift calling convention. Flags 0 means
// "report, do not assert". Added in the Swift 6.2 runtime: weakly imported
// on Apple platforms, whose older systems ship older runtimes; Linux links
// the toolchain's own runtime, which has it.
__attribute__((swiftcall)) extern bool swift_task_isCurrentExecutorWithFlags(
    const void *_Nullable identity, const void *_Nullable implementation, uint64_t flags)
#if defined(__APPLE__)
    __attribute__((weak_import))
#endif
    ;

bool _chaining_is_current_executor(const void *_Nullable identity, const void *_Nullable implementation) {
#if defined(__APPLE__)
  // Without the check, the answer is "not isolated": the caller then hops,
  // which is always safe, only later than it could have been.
  if (&swift_task_isCurrentExecutorWithFlags == NULL) return false;
#endif
  return swift_task_isCurrentExecutorWithFlags(identity, implementation, 0);
}

#if defined(__APPLE__)
int _chaining_is_main_thread(void) { return pthread_main_np() ? 1 : 0; }
#elif defined(__linux__) && defined(SYS_gettid)
static pthread_t _chaining_main_thread;
static int _chaining_main_thread_known = 0;

// Runs when the library is loaded: before `main`, on the main thread, for a
// program linked with it. Loaded later by another thread (`dlopen`), it
// records nothing, and the answer is "cannot tell".
__attribute__((constructor)) static void _chaining_record_main_thread(void) {
  if ((pid_t)syscall(SYS_gettid) != getpid()) return;
  _chaining_main_thread = pthread_self();
  _chaining_main_thread_known = 1;
}

int _chaining_is_main_thread(void) {
  if (!_chaining_main_thread_known) return -1;
  return pthread_equal(pthread_self(), _chaining_main_thread) ? 1 : 0;
}
#else
int _chaining_is_main_thread(void) { return -1; }
#endif
