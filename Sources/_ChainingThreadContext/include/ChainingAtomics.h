// Not API: the atomic operations of the Chaining library, on words stored
// inline in its objects.
//
// Swift's own atomics (`Synchronization.Atomic`) need iOS 18 and macOS 15;
// these are the compiler's `__atomic` builtins, which clang lowers to the
// same instructions on every platform and the thread sanitizer intercepts.
// They act on plain integers, so that a Swift object can store its atomic
// words among its stored properties and pass their address here (see
// `AtomicReference` in Sources/Chaining/Internal/Atomics.swift).
//
// Every function is inlined into its Swift caller. `order` is one of the
// `__ATOMIC_*` constants; the Swift wrapper always passes a literal, so
// after inlining clang's switch over the orders folds to one instruction.

#ifndef CHAINING_ATOMICS_H
#define CHAINING_ATOMICS_H

#include <stdbool.h>
#include <stdint.h>

#define CHAINING_ATOMIC_FUNCTIONS(NAME, TYPE)                                                             \
  static inline __attribute__((always_inline)) TYPE _chaining_atomic_load_##NAME(TYPE *_Nonnull p,        \
                                                                                int order) {            \
    return __atomic_load_n(p, order);                                                                     \
  }                                                                                                       \
  static inline __attribute__((always_inline)) void _chaining_atomic_store_##NAME(TYPE *_Nonnull p,       \
                                                                                 TYPE value,            \
                                                                                 int order) {           \
    __atomic_store_n(p, value, order);                                                                    \
  }                                                                                                       \
  static inline __attribute__((always_inline)) TYPE _chaining_atomic_exchange_##NAME(TYPE *_Nonnull p,    \
                                                                                    TYPE value,         \
                                                                                    int order) {        \
    return __atomic_exchange_n(p, value, order);                                                          \
  }                                                                                                       \
  /* Strong: fails only when the value differs. Returns the value found: */                               \
  /* it stored `desired` if that is `expected`. (Returning the value, not */                               \
  /* writing it through a pointer to the caller's `expected`, keeps Swift */                               \
  /* from guarding the caller's frame with a stack protector.) */                                          \
  static inline __attribute__((always_inline)) TYPE _chaining_atomic_compare_exchange_##NAME(            \
      TYPE *_Nonnull p, TYPE expected, TYPE desired, int success, int failure) {                         \
    __atomic_compare_exchange_n(p, &expected, desired, false, success, failure);                         \
    return expected;                                                                                      \
  }

#define CHAINING_ATOMIC_INTEGER_FUNCTIONS(NAME, TYPE)                                                     \
  CHAINING_ATOMIC_FUNCTIONS(NAME, TYPE)                                                                   \
  /* The read-modify-writes return the value they replaced. */                                            \
  static inline __attribute__((always_inline)) TYPE _chaining_atomic_fetch_add_##NAME(TYPE *_Nonnull p,   \
                                                                                     TYPE value,        \
                                                                                     int order) {       \
    return __atomic_fetch_add(p, value, order);                                                           \
  }                                                                                                       \
  static inline __attribute__((always_inline)) TYPE _chaining_atomic_fetch_or_##NAME(TYPE *_Nonnull p,    \
                                                                                    TYPE value,         \
                                                                                    int order) {        \
    return __atomic_fetch_or(p, value, order);                                                            \
  }                                                                                                       \
  static inline __attribute__((always_inline)) TYPE _chaining_atomic_fetch_and_##NAME(TYPE *_Nonnull p,   \
                                                                                     TYPE value,        \
                                                                                     int order) {       \
    return __atomic_fetch_and(p, value, order);                                                           \
  }

// One set per size: the Swift wrapper passes a `Bool` as a byte and an
// `Int` as a `uintptr_t`, bit for bit.
CHAINING_ATOMIC_FUNCTIONS(u8, uint8_t)
CHAINING_ATOMIC_INTEGER_FUNCTIONS(u32, uint32_t)
CHAINING_ATOMIC_INTEGER_FUNCTIONS(word, uintptr_t)

#undef CHAINING_ATOMIC_INTEGER_FUNCTIONS
#undef CHAINING_ATOMIC_FUNCTIONS

// The Swift runtime's conditional retain, for a reference that must not
// keep its object alive (see `StoreLink` in Chain+SendTo.swift).
//
// A weak reference gives its object a side table, and from then on every
// retain and release of the object takes the runtime's slow path through
// it. An unowned reference keeps only the object's memory, in its inline
// count, and this function then asks the object itself whether it is
// still alive. It is the runtime's own (`SWIFT_RUNTIME_EXPORT` in the
// runtime's HeapObject.h, with the C calling convention, exported by
// libswiftCore on every platform), and what loading a weak reference
// does on the side table.

/// Retains the native Swift object `object` and returns it; returns null,
/// retaining nothing, once the object's deinit has begun (its strong count
/// reached zero). `object`'s memory must still be allocated: an unowned
/// reference keeps it.
void *_Nullable swift_tryRetain(void *_Nonnull object);

/// `swift_tryRetain`, under a name of this library's.
static inline __attribute__((always_inline)) void *_Nullable _chaining_try_retain(void *_Nonnull object) {
  return swift_tryRetain(object);
}

#endif
