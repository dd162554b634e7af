/*
 * Computed values that read each other, read on several threads at once:
 * the stop of threads that would wait for each other's claims forever.
 * `ComputedNode` in Sources/Chaining/Internal/ComputedNode.swift
 * (`updateLocked`, `waitForUpdate`, `stopIfWaitingForItself`), with each
 * thread's `DeliveryContext.State.waitingFor` (#37).
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * The code, as modeled (`Computed.pml` models the claim's wait and wake
 * themselves, and the marks' versions; here a wait is a sleep until the
 * claim is given back):
 * - THREADS values in a row, each reading the next; with CYCLE, the last
 *   reads the first. Reader i reads value i: under the graph's lock, a
 *   clean value is read at once; a value this thread claimed is a cycle
 *   on one thread (`cycle()`, a stop); a value that another thread
 *   claimed is waited for; otherwise the reader claims it, notes the
 *   notification count, gives the lock back and reads the next value
 *   (its evaluation). Once the last value it reads is done, it finishes
 *   its claims innermost first, each under the lock: clean if no
 *   notification came since the claim, and the claim given back.
 * - Before a wait, under the lock: the walk. From the value waited for,
 *   it follows each claiming thread's `waitingFor` to the value that
 *   thread waits for, and stops when it comes to a claim of its own
 *   thread (a stop: the process ends, modeled by `stopped`, after which
 *   every thread ends), to a value nobody claims, or to a thread that
 *   does not wait. Then, in the same hold of the lock, the thread notes
 *   the value in its `waitingFor`; it clears it under the lock after the
 *   wait.
 * - A writer (WRITES) marks every value dirty under the lock: a value
 *   claimed then is claimed again by a later read, so threads wait for
 *   claims that come and go. With ROUNDS 2, each reader then reads again,
 *   from the value before its first (reader 0 from the last): a thread
 *   that waited for a value in its first read may hold a later one in
 *   its second while another thread holds the first.
 * - With HOPS, an update may move to a new thread
 *   (`updateOnNewStack`), once per thread, at any value it would claim
 *   (a new thread not at its first): the thread notes the value as a
 *   wait, in the same hold of the lock, gives the lock back, and waits
 *   for the new thread, which updates that value (claiming it, reading
 *   on, perhaps moving again) and ends; then it clears its note under
 *   the lock and goes on as if the value were clean.
 * - A check of dependencies known from the last evaluation
 *   (`ComputedNode.updateLoop(from:to:runner:state:)`, a loop rather than a
 *   recursion) claims, waits and finishes as this descent and ascent do,
 *   from the value it starts at; it moves only where it starts, which the
 *   moves above, allowed at any value, cover.
 * - Checked: no thread waits forever (spin reports it as an invalid end
 *   state); with CYCLE, every run stops (an assertion at the end), and
 *   without it, none does (an assertion at each stop): the walk never
 *   stops a wait that would end.
 *
 * Mutants:
 * - MUTANT_NO_WALK: no walk before a wait: threads of a cycle wait for
 *   each other forever.
 * - MUTANT_NOTE_OUTSIDE_LOCK: the wait noted after the lock is given
 *   back: two threads each walk before the other has noted its wait, and
 *   both wait forever.
 * - MUTANT_MOVE_UNNOTED: a thread that moves its update to a new thread
 *   notes no wait: a cycle through the new thread comes back to the
 *   moving thread's claim, and each waits for the other forever.
 * - MUTANT_NO_CLEAR: the wait left noted after it ends: a walk follows a
 *   thread's old wait to a value the walking thread holds now, and stops
 *   a read that has no cycle (3 threads, 2 rounds).
 */

#ifndef THREADS
#define THREADS 2
#endif
#ifndef CYCLE
#define CYCLE 1
#endif
#ifndef WRITES
#define WRITES 0
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif
#ifndef HOPS
#define HOPS 0
#endif
#define PIDS 16

#define NONE 255
#define CLEAN 0
#define DIRTY 1

byte mark[THREADS];
byte claim[THREADS];          /* the claiming reader's _pid, or 0 */
byte notifications[THREADS];
byte waitingFor[PIDS];        /* by _pid: the value waited for, or NONE */
bit helperDone[PIDS];         /* by the _pid of the thread that made it */
bit graphLock = 0;
bit stopped = 0;
byte finished = 0;

inline lock(l) { atomic { l == 0 -> l = 1 } }
inline unlock(l) { l = 0 }

/* The value that value `v`'s evaluation reads, or NONE. */
inline nextOf(v, result) {
  if
  :: v + 1 < THREADS -> result = v + 1
  :: else -> result = (CYCLE -> 0 : NONE)
  fi
}

/* `stopIfWaitingForItself`, under the graph's lock. */
inline walk(v) {
  w = v;
  hops = 0;
  do
  :: claim[w] == 0 -> break
  :: claim[w] == _pid -> assert(CYCLE); stopped = 1; break
  :: claim[w] != 0 && claim[w] != _pid ->
     if
     :: hops >= PIDS || waitingFor[claim[w]] == NONE -> break
     :: else -> w = waitingFor[claim[w]]; hops++
     fi
  od
}

/* A reader, or (`parent` not 0) the new thread a thread's update moved
 * to, which updates `start` and ends. */
proctype Reader(byte start; byte parent) {
  byte v = start;
  bit moved = 0;
  byte depth = 0;
  byte path[THREADS];
  byte seen[THREADS];
  byte w, hops, next;
  byte round = 1;
  assert(_pid < PIDS);

descend:
  lock(graphLock);
  do
  :: stopped -> unlock(graphLock); goto done
  :: !stopped && mark[v] == CLEAN -> unlock(graphLock); goto ascend
  :: !stopped && mark[v] != CLEAN && claim[v] == _pid ->
     /* `cycle()`: a cycle on this thread. */
     assert(CYCLE); stopped = 1; unlock(graphLock); goto done
  :: !stopped && mark[v] != CLEAN && claim[v] != 0 && claim[v] != _pid ->
#ifndef MUTANT_NO_WALK
     walk(v);
     if
     :: stopped -> unlock(graphLock); goto done
     :: else -> skip
     fi;
#endif
#ifdef MUTANT_NOTE_OUTSIDE_LOCK
     unlock(graphLock);
     waitingFor[_pid] = v;
#else
     waitingFor[_pid] = v;
     unlock(graphLock);
#endif
     (claim[v] == 0 || stopped);
     lock(graphLock);
#ifndef MUTANT_NO_CLEAR
     waitingFor[_pid] = NONE
#else
     skip
#endif
  :: HOPS && !moved && (parent == 0 || v != start) && !stopped && mark[v] != CLEAN && claim[v] == 0 ->
     /* `updateOnNewStack`: the stack runs short here. */
     moved = 1;
#ifndef MUTANT_MOVE_UNNOTED
     waitingFor[_pid] = v;
#endif
     unlock(graphLock);
     helperDone[_pid] = 0;
     run Reader(v, _pid);
     (helperDone[_pid] || stopped);
     lock(graphLock);
     waitingFor[_pid] = NONE;
     unlock(graphLock);
     goto ascend
  :: !stopped && mark[v] != CLEAN && claim[v] == 0 ->
     claim[v] = _pid;
     seen[depth] = notifications[v];
     path[depth] = v;
     depth++;
     unlock(graphLock);
     nextOf(v, next);
     if
     :: next == NONE -> goto ascend
     :: else -> v = next; goto descend
     fi
  od;

ascend:
  do
  :: depth > 0 ->
     depth--;
     lock(graphLock);
     if
     :: notifications[path[depth]] == seen[depth] -> mark[path[depth]] = CLEAN
     :: else -> skip
     fi;
     claim[path[depth]] = 0;
     unlock(graphLock)
  :: else -> break
  od;
  if
  :: parent == 0 && round < ROUNDS -> round++; v = (start + THREADS - 1) % THREADS; goto descend
  :: else -> skip
  fi;

done:
  if
  :: parent == 0 -> finished++
  :: else -> helperDone[parent] = 1
  fi
}

proctype Writer() {
  byte writes = 0;
  byte i;
  do
  :: writes < WRITES ->
     lock(graphLock);
     i = 0;
     do
     :: i < THREADS -> notifications[i]++; mark[i] = DIRTY; i++
     :: else -> break
     od;
     unlock(graphLock);
     writes++
  :: else -> break
  od
}

init {
  byte i = 0;
  do
  :: i < PIDS -> waitingFor[i] = NONE; i++
  :: else -> break
  od;
  i = 0;
  do
  :: i < THREADS -> mark[i] = DIRTY; i++
  :: else -> break
  od;
  atomic {
    i = 0;
    do
    :: i < THREADS -> run Reader(i, 0); i++
    :: else -> break
    od;
    run Writer()
  };
  finished == THREADS;
  /* A cycle always stops: a read of it never ends otherwise. */
  assert(!CYCLE || stopped)
}
