/*
 * The bias of the graph's lock: `GraphLock` in
 * Sources/Chaining/Internal/GraphLock.swift (#37), on Linux with
 * `membarrier`, "Biased to the thread that takes it". The lock's word is
 * taken with a compare-and-swap (GraphLock.pml models its release and
 * parking; here a thread that finds it taken waits until it is free).
 * A thread the lock is biased to holds it without the word: it stores 1
 * in its own hold word, runs the light fence, and reads `bias` again.
 * Another thread takes the word, then, finding the lock biased, stores 0
 * in `bias`, runs the heavy fence, and waits until the biased thread's
 * hold word is 0.
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * Memory order, modeled: every plain store (the hold words, `bias`, the
 * word's release) waits in its thread's store buffer, first in, first
 * out, and reaches memory at any later step (the `memory` process), as
 * on x86 (TSO); a thread's load sees its own latest buffered store to
 * the location, else memory. The compare-and-swap is a locked
 * instruction: it empties its thread's buffer first, then acts on
 * memory at once. The light fence is only a compiler barrier (nothing
 * here); the heavy fence (`membarrier`) makes every thread pass a full
 * barrier: it empties every buffer.
 *
 * The code, as modeled (thread `me`, `bias` holding a thread plus one,
 * or 0):
 * - lock(): if `bias` is me, store 1 in my hold word, read `bias` again:
 *   still me, I hold the lock; else store 0 in my hold word. Otherwise
 *   (or then), the compare-and-swap of the word from free to taken
 *   (waiting while it is taken); then, `bias` not 0, store 0 there, the
 *   heavy fence, and wait until that thread's hold word reads 0; `bias`
 *   0, the code biases the lock to me when I have taken the word enough
 *   times in a row: here, at any take (a choice), which covers every
 *   count.
 * - unlock(): held through the bias, store 0 in my hold word; else store
 *   free in the word.
 * - Checked: one thread at a time holds the lock (an assertion).
 *
 * Configurations: THREADS (2 or 3), ROUNDS (lock and unlock, per thread).
 * Mutants, each of which spin must catch:
 * - MUTANT_NO_HEAVY_FENCE: the store of 0 in `bias` still waits in the
 *   taking thread's buffer when the biased thread reads `bias` again,
 *   while the biased thread's store of 1 waits in its buffer when the
 *   taking thread reads the hold word: both hold the lock.
 * - MUTANT_NO_RECHECK: the biased thread does not read `bias` again
 *   after storing 1.
 * - MUTANT_NO_WAIT: the taking thread does not wait for the hold word.
 * - MUTANT_SHARED_HOLD_WORD: one hold word for every thread, as a first
 *   version had: a thread whose bias was taken away stores 0 in it (its
 *   second read found `bias` changed) after another thread, biased now,
 *   stored 1 there and holds the lock; a third take of the word then
 *   reads 0 and enters. `GraphLockTests` lost increments with it.
 */

#ifndef THREADS
#define THREADS 2
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif

#define FREE 0
#define TAKEN 1

/* Locations: the word, `bias`, and the hold words. */
#define WORD 0
#define BIAS 1
#ifdef MUTANT_SHARED_HOLD_WORD
#define HOLD(t) 2
#else
#define HOLD(t) (2 + (t))
#endif
#define LOCATIONS (2 + THREADS)

/* Store buffers: up to BUFFER stores per thread, oldest at `head`. */
#define BUFFER 4

byte memory_[LOCATIONS];
byte bufferWhere[THREADS * BUFFER];
byte bufferValue[THREADS * BUFFER];
byte bufferHead[THREADS];
byte bufferCount[THREADS];

byte holders = 0;   /* threads inside the lock */
byte finished = 0;

/* The oldest store of thread t reaches memory. */
inline flushOne(t) {
  memory_[bufferWhere[t * BUFFER + bufferHead[t]]] = bufferValue[t * BUFFER + bufferHead[t]];
  bufferHead[t] = (bufferHead[t] + 1) % BUFFER;
  bufferCount[t]--
}

/* A locked instruction of thread t, or a full barrier: its buffer empties. */
inline drain(t) {
  do
  :: bufferCount[t] > 0 -> flushOne(t)
  :: else -> break
  od
}

/* A plain store of thread t: it waits in the buffer. */
inline store(t, where, value) {
  atomic {
    bufferCount[t] < BUFFER;
    bufferWhere[t * BUFFER + (bufferHead[t] + bufferCount[t]) % BUFFER] = where;
    bufferValue[t * BUFFER + (bufferHead[t] + bufferCount[t]) % BUFFER] = value;
    bufferCount[t]++
  }
}

/* A load of thread t: its own latest buffered store there, else memory. */
inline load(t, where, result) {
  atomic {
    result = memory_[where];
    k = 0;
    do
    :: k < bufferCount[t] ->
      if
      :: bufferWhere[t * BUFFER + (bufferHead[t] + k) % BUFFER] == where ->
        result = bufferValue[t * BUFFER + (bufferHead[t] + k) % BUFFER]
      :: else -> skip
      fi;
      k++
    :: else -> break
    od
  }
}

/* membarrier: every thread passes a full barrier. */
inline heavyFence() {
  atomic {
    u = 0;
    do
    :: u < THREADS -> drain(u); u++
    :: else -> break
    od
  }
}

proctype Thread(byte me) {
  byte round = 0;
  byte k;
  byte u;
  byte seen;
  byte biased;
  bool fast;
  do
  :: round < ROUNDS ->
    /* lock(): through the bias, if it is mine. */
    fast = false;
    load(me, BIAS, seen);
    if
    :: seen == me + 1 ->
      store(me, HOLD(me), 1);
      /* The light fence: a compiler barrier. */
#ifndef MUTANT_NO_RECHECK
      load(me, BIAS, seen);
      if
      :: seen == me + 1 -> fast = true
      :: else -> store(me, HOLD(me), 0)
      fi
#else
      fast = true
#endif
    :: else -> skip
    fi;
    if
    :: !fast ->
      /* The compare-and-swap, once the word is free. */
      atomic { drain(me); memory_[WORD] == FREE -> memory_[WORD] = TAKEN };
      load(me, BIAS, biased);
      if
      :: biased != 0 ->
        /* The bias taken away. */
        store(me, BIAS, 0);
#ifndef MUTANT_NO_HEAVY_FENCE
        heavyFence();
#endif
#ifndef MUTANT_NO_WAIT
        do
        :: load(me, HOLD(biased - 1), seen);
           if
           :: seen == 0 -> break
           :: else -> skip
           fi
        od
#endif
      :: else ->
        /* At the threshold (any take, here), the lock biased to me. */
        if
        :: store(me, BIAS, me + 1)
        :: skip
        fi
      fi
    :: else -> skip
    fi;
    holders++;
    assert(holders == 1);
    holders--;
    /* unlock() */
    if
    :: fast -> store(me, HOLD(me), 0)
    :: else -> store(me, WORD, FREE)
    fi;
    round++
  :: else -> break
  od;
  finished++
}

/* The buffers reach memory at any step, oldest first; the model ends
 * when every thread has and the buffers are empty. */
#define FLUSH(t) :: atomic { bufferCount[t] > 0 -> flushOne(t) }
#if THREADS > 2
#define EMPTY (bufferCount[0] == 0 && bufferCount[1] == 0 && bufferCount[2] == 0)
#else
#define EMPTY (bufferCount[0] == 0 && bufferCount[1] == 0)
#endif
active proctype memory() {
  do
  FLUSH(0)
  FLUSH(1)
#if THREADS > 2
  FLUSH(2)
#endif
  :: finished == THREADS && EMPTY -> break
  od
}

init {
  byte t = 0;
  atomic {
    do
    :: t < THREADS -> run Thread(t); t++
    :: else -> break
    od
  }
}
