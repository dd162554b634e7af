#include "ChainingThreadContext.h"

_Thread_local void *_Nullable _chaining_thread_context = 0;
