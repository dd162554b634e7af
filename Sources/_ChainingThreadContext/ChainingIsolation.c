#include "ChainingIsolation.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

// The runtime's own check (swift/Runtime/Concurrency.h): the executor is
// passed as its two words, in the Swift calling convention. Flags 0 means
// "report, do not assert". Added in the Swift 6.2 runtime, which older
// Apple systems do not ship: it is looked up when first needed rather than
// linked, so that no SDK or system lacking it can fail the link or the
// load. Linux and Android run the toolchain's own runtime, which has it.
typedef bool (*_chaining_is_current_executor_fn)(
    const void *_Nullable identity, const void *_Nullable implementation, uint64_t flags)
    __attribute__((swiftcall));

// 0 before the lookup, 1 when the symbol is missing, else its address.
// Each thread that finds 0 looks up (the same answer) and stores it: a
// relaxed load and store of one word suffice, as the address stays valid
// for the life of the process and nothing else is published with it.
static uintptr_t _chaining_check = 0;

bool _chaining_is_current_executor(const void *_Nullable identity, const void *_Nullable implementation) {
  uintptr_t check = __atomic_load_n(&_chaining_check, __ATOMIC_RELAXED);
  if (check == 0) {
    void *found = dlsym(RTLD_DEFAULT, "swift_task_isCurrentExecutorWithFlags");
    check = found ? (uintptr_t)found : 1;
    __atomic_store_n(&_chaining_check, check, __ATOMIC_RELAXED);
  }
  // Without the check, the answer is "not isolated": the caller then hops,
  // which is always safe, only later than it could have been.
  if (check == 1) return false;
  return ((_chaining_is_current_executor_fn)check)(identity, implementation, 0);
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
