/*
 * A computed value's dirty marks, claim and evaluation: `ComputedNode` in
 * Sources/Chaining/Internal/ComputedNode.swift (`notify`,
 * `updateLocked`, `updateLoop`, `waitForUpdate`), with a holder it reads
 * (`HolderObservation`'s dependents and version, in
 * Sources/Chaining/Internal/HolderStore.swift) (#37).
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * The code, as modeled:
 * - The holder: a write increments its version and takes whether the
 *   computed value is a dependent (`hasDependents`) under the holder's
 *   lock, then, after the lock, if it was, marks it under the graph's
 *   lock: counts a notification and marks the node dirty.
 * - A reader, under the graph's lock: a clean value is read at once. A
 *   value another thread has claimed is waited for (below), then looked
 *   at again. Otherwise the reader claims it, notes the notification
 *   count, and unlocks; evaluates (reads the holder's version, under the
 *   holder's lock); then, under the graph's lock again: becomes a
 *   dependent if it was not (setting the holder's flag under the
 *   holder's lock), marks the node clean only if no
 *   notification came since it claimed it, and then `check` again if
 *   the holder's version moved since the evaluation read it (a write
 *   before the node was a dependent told no one); gives the claim back
 *   and takes the waiters flag; after unlocking, wakes the waiters if
 *   the flag was set.
 * - A waiter, under its stripe's lock (`ParkingLot`): checks the claim
 *   under the graph's lock, sets the waiters flag if it is still held,
 *   and sleeps, giving back the stripe's lock in the same step
 *   (`pthread_cond_wait`). A wake takes the stripe's lock and wakes
 *   every sleeper.
 * - Checked: one evaluation at a time (an assertion inside it); every
 *   reader ends (no wake is lost: spin reports a reader asleep forever
 *   as an invalid end state); and, at the end, the value is clean only
 *   when it was evaluated from the holder's latest version.
 *
 * Configurations: WRITES (writes by the writer), READERS (1 or 2 reading
 * threads, each reading twice). Mutants:
 * - MUTANT_NO_CHECKS: the update marks the node clean whatever came
 *   meanwhile, and looks at no version: a write during the evaluation is
 *   lost.
 * - MUTANT_NO_LATE_CHECK: no check of the version after becoming a
 *   dependent: a write between the evaluation's read and the subscription
 *   is lost.
 * - MUTANT_NO_CLAIM: a reader evaluates without looking at the claim:
 *   two evaluations at once.
 * - MUTANT_CHECK_OUTSIDE_STRIPE: the waiter checks the claim before
 *   taking its stripe's lock: the claim given back and the wake can both
 *   fall between the check and the sleep, and the waiter sleeps forever.
 *
 * What the model shows besides: the check of the version alone covers a
 * write during the evaluation too (with MUTANT_CLEAN_ALWAYS, clean
 * whatever came meanwhile but with the version check, spin finds no
 * error). The count of notifications is kept for a computed dependency,
 * whose `check` mark this model leaves out: a `check` asks its
 * dependencies for their versions with the graph's lock held (bringing a
 * computed one up to date the same way) and gives the lock back only to
 * evaluate, as this model's reader does.
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
byte claim = 0;        /* the claiming reader's _pid, or 0 */
bit waiters = 0;
bit evaluating = 0;
bit graphLock = 0;
bit holderLock = 0;
bit stripeLock = 0;
bit sleeping[READERS + 2];
byte done = 0;

inline lock(l) { atomic { l == 0 -> l = 1 } }
inline unlock(l) { l = 0 }

/* `ParkingLot.wait(for:until:)` with `waitForUpdate()`'s check. */
inline waitForUpdate() {
#ifdef MUTANT_CHECK_OUTSIDE_STRIPE
  lock(graphLock);
  if
  :: claim != 0 -> waiters = 1; unlock(graphLock);
     lock(stripeLock);
     atomic { sleeping[_pid] = 1; unlock(stripeLock) };
     sleeping[_pid] == 0
  :: else -> unlock(graphLock)
  fi
#else
  lock(stripeLock);
  do
  :: lock(graphLock);
     if
     :: claim == 0 -> unlock(graphLock); break
     :: else -> waiters = 1; unlock(graphLock)
     fi;
     atomic { sleeping[_pid] = 1; unlock(stripeLock) };
     sleeping[_pid] == 0;
     lock(stripeLock)
  od;
  unlock(stripeLock)
#endif
}

/* `wakeWaiters()`: every sleeper, under the stripe's lock. */
inline wakeWaiters() {
  lock(stripeLock);
  i = 0;
  do
  :: i < READERS + 2 -> sleeping[i] = 0; i++
  :: else -> break
  od;
  unlock(stripeLock)
}

active proctype Writer() {
  byte n = 0;
  bit marks;
  do
  :: n < WRITES ->
     lock(holderLock);
     hversion++;
     marks = dependent;
     unlock(holderLock);
     if
     :: marks ->
        lock(graphLock);
        notifications++;
        mark = DIRTY;
        unlock(graphLock)
     :: else -> skip
     fi;
     n++
  :: else -> break
  od;
  done++
}

active [READERS] proctype Reader() {
  byte reads = 0;
  byte seen, read, i;
  bit wakes;
  do
  :: reads < 2 ->
     lock(graphLock);
     do
     :: mark == CLEAN -> break
     :: mark != CLEAN && claim != 0 && claim != _pid ->
#ifdef MUTANT_NO_CLAIM
        goto evaluate;
#endif
        waiters = 1;
        unlock(graphLock);
        waitForUpdate();
        lock(graphLock)
     :: mark != CLEAN && claim == 0 ->
#ifdef MUTANT_NO_CLAIM
evaluate:
#endif
        claim = _pid;
        seen = notifications;
        unlock(graphLock);
        assert(evaluating == 0);
        evaluating = 1;
        lock(holderLock);
        read = hversion;
        unlock(holderLock);
        evaluated = read;
        evaluating = 0;
        lock(graphLock);
        /* `addDependent`: the holder's flag, under its lock. */
        lock(holderLock);
        dependent = 1;
        unlock(holderLock);
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
        claim = 0;
        wakes = waiters;
        waiters = 0;
        break
     od;
     unlock(graphLock);
     if
     :: wakes -> wakes = 0; wakeWaiters()
     :: else -> skip
     fi;
     reads++
  :: else -> break
  od;
  done++
}

active proctype Monitor() {
  done == READERS + 1 ->
  assert(mark != CLEAN || evaluated == hversion)
}
