// A stub of the C library calls the package makes on Apple platforms, for
// `.ci/apple/check`: their names and types as Apple's SDK declares them,
// nothing more. Not built, only type-checked against.
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

typedef long ssize_t;
typedef struct { long __sig; char __opaque[56]; } pthread_mutex_t;
typedef struct { long __sig; char __opaque[8]; } pthread_mutexattr_t;
typedef struct { long __sig; char __opaque[40]; } pthread_cond_t;
typedef struct { long __sig; char __opaque[8]; } pthread_condattr_t;
typedef unsigned long pthread_key_t;
typedef struct _opaque_pthread_t *pthread_t;

int pthread_mutex_init(pthread_mutex_t *_Nonnull, const pthread_mutexattr_t *_Nullable);
int pthread_mutex_lock(pthread_mutex_t *_Nonnull);
int pthread_mutex_unlock(pthread_mutex_t *_Nonnull);
int pthread_mutex_destroy(pthread_mutex_t *_Nonnull);
int pthread_cond_init(pthread_cond_t *_Nonnull, const pthread_condattr_t *_Nullable);
int pthread_cond_wait(pthread_cond_t *_Nonnull, pthread_mutex_t *_Nonnull);
int pthread_cond_signal(pthread_cond_t *_Nonnull);
int pthread_cond_broadcast(pthread_cond_t *_Nonnull);
int pthread_cond_destroy(pthread_cond_t *_Nonnull);
int pthread_key_create(pthread_key_t *_Nonnull, void (*_Nullable)(void *_Nonnull));
int pthread_setspecific(pthread_key_t, const void *_Nullable);
void *_Nullable pthread_getspecific(pthread_key_t);
pthread_t _Nonnull pthread_self(void);
int pthread_main_np(void);
int pthread_threadid_np(pthread_t _Nullable, uint64_t *_Nullable);
int sched_yield(void);
ssize_t write(int, const void *_Nullable, size_t);
int usleep(unsigned int);
void exit(int) __attribute__((noreturn));
void *_Nullable dlsym(void *_Nullable handle, const char *_Nonnull symbol);
#define RTLD_DEFAULT ((void *)-2)


#define EINTR 4

typedef struct os_unfair_lock_s { uint32_t _os_unfair_lock_opaque; } os_unfair_lock;
typedef os_unfair_lock *os_unfair_lock_t;
void os_unfair_lock_lock(os_unfair_lock_t _Nonnull);
bool os_unfair_lock_trylock(os_unfair_lock_t _Nonnull);
void os_unfair_lock_unlock(os_unfair_lock_t _Nonnull);
void os_unfair_lock_assert_owner(const os_unfair_lock *_Nonnull);
void os_unfair_lock_assert_not_owner(const os_unfair_lock *_Nonnull);
