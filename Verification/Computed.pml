/*
 * A computed value's dirty marks and evaluation: `ComputedNode` in
 * Sources/Chaining/Holders/Computed.swift (`notify`, `updateLocked`,
 * `resubscribe`), with a holder it reads (`HolderObservation`'s
 * dependents and version, in Sources/Chaining/Internal/HolderStore.swift)
 * (#37).
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * The code, as modeled:
 * - The holder: a write increments its version under the holder's lock,
 *   then, after the lock, notifies the computed value if it is a
 *   dependent then (`hasDependents`, a relaxed load).
 * - `notify(.dirty)`, under the node's state lock: counts a
 *   notification and marks the node dirty.
 * - A reader updates the value under the evaluation lock (one reader at
 *   a time): it reads the mark and the notification count under the state
 *   lock; when not clean it evaluates (reads the holder's version, under
 *   the holder's lock), becomes a dependent if it was not, then, under the
 *   state lock: marks the node clean only if no notification came since it
 *   looked, and then marks it `check` again if the holder's version moved
 *   since the evaluation read it (a write before the node was a dependent
 *   told no one).
 * - The value is clean only when it was evaluated from the holder's
 *   latest version: checked at the end, when every thread is done.
 *
 * Configurations: WRITES (writes by the writer), READERS (1 or 2 reading
 * threads, each reading twice). Mutants:
 * - MUTANT_NO_CHECKS: the update marks the node clean whatever came
 *   meanwhile, and looks at no version: a write during the evaluation is
 *   lost.
 * - MUTANT_NO_LATE_CHECK: no check of the version after becoming a
 *   dependent: a write between the evaluation's read and the subscription
 *   is lost.
 *
 * What the model shows besides: the check of the version alone covers a
 * write during the evaluation too (with MUTANT_CLEAN_ALWAYS, clean
 * whatever came meanwhile but with the version check, spin finds no
 * error). The count of notifications is kept for a computed dependency,
 * whose `check` mark this model leaves out.
 */

#ifndef WRITES
#define WRITES 2
#endif
#ifndef READERS
#define READERS 1
#endif

#define CLEAN 0
#define DIRTY 2

byte hversion = 0;     /* the holder's version */
bit dependent = 0;     /* the node is in the holder's dependents */
byte mark = DIRTY;     /* never evaluated */
byte notifications = 0;
byte evaluated = 255;  /* the holder version the cached value came from */
bit stateLock = 0;
bit evalLock = 0;
bit holderLock = 0;
byte done = 0;

inline lock(l) { atomic { l == 0 -> l = 1 } }
inline unlock(l) { l = 0 }

active proctype Writer() {
  byte n = 0;
  do
  :: n < WRITES ->
     lock(holderLock);
     hversion++;
     unlock(holderLock);
     if
     :: dependent ->
        lock(stateLock);
        notifications++;
        mark = DIRTY;
        unlock(stateLock)
     :: else -> skip
     fi;
     n++
  :: else -> break
  od;
  done++
}

active [READERS] proctype Reader() {
  byte reads = 0;
  byte seenMark, seen, read;
  do
  :: reads < 2 ->
     lock(evalLock);
     lock(stateLock);
     seenMark = mark;
     seen = notifications;
     unlock(stateLock);
     if
     :: seenMark != CLEAN ->
        lock(holderLock);
        read = hversion;
        unlock(holderLock);
        evaluated = read;
        dependent = 1;
        lock(stateLock);
#if defined(MUTANT_CLEAN_ALWAYS) || defined(MUTANT_NO_CHECKS)
        mark = CLEAN;
#else
        if
        :: notifications == seen -> mark = CLEAN
        :: else -> skip
        fi;
#endif
#if !defined(MUTANT_NO_LATE_CHECK) && !defined(MUTANT_NO_CHECKS)
        if
        :: mark == CLEAN ->
           lock(holderLock);
           if
           :: hversion != read -> mark = 1  /* check */
           :: else -> skip
           fi;
           unlock(holderLock)
        :: else -> skip
        fi;
#endif
        unlock(stateLock)
     :: else -> skip
     fi;
     unlock(evalLock);
     reads++
  :: else -> break
  od;
  done++
}

active proctype Monitor() {
  done == READERS + 1 ->
  assert(mark != CLEAN || evaluated == hversion)
}
