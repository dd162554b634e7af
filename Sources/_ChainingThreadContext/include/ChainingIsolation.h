// Not API: asks the Swift concurrency runtime whether the calling code runs
// on an actor's executor, without trapping when it does not.
//
// Swift's public checks (`assumeIsolated`, `preconditionIsolated`) trap
// when the answer is no; the one that returns an answer is the runtime's
// `swift_task_isCurrentExecutorWithFlags`, which `Task.immediate` and
// `GlobalActor`'s own check call with no flags (and so no trap). The
// standard library declares it internal, and a Swift declaration of it
// clashes with that one, so it is declared and called from C.

#ifndef CHAINING_ISOLATION_H
#define CHAINING_ISOLATION_H

#include <stdbool.h>

/// Whether the calling code runs on the serial executor made of `identity`
/// and `implementation` (the two words of an `UnownedSerialExecutor`).
/// Returns false, never traps, when it does not, and on a runtime that has
/// no such check (Apple platforms before Swift 6.2's runtime). The check is
/// looked up by name (`dlsym`) when first needed, not linked: a runtime
/// linked statically, whose symbols the lookup cannot see, also answers
/// false, so values hop to the actor rather than run inline.
bool _chaining_is_current_executor(const void *_Nullable identity, const void *_Nullable implementation);

/// Whether the calling thread is the process's main thread: 1 if it is, 0 if
/// it is not, -1 when this cannot be told cheaply (then ask Foundation).
/// `pthread_main_np` on Apple platforms; elsewhere, a comparison with the
/// thread that loaded the library, recorded only when that thread is the
/// main one (its thread id is the process id).
int _chaining_is_main_thread(void);

#endif
