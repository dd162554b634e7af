/*
 * The lock of the graph of computed values: `GraphLock` in
 * Sources/Chaining/Internal/GraphLock.swift (#37), on Linux. Taken with a
 * compare-and-swap; given back with a plain store, the light fence and a
 * read of how many threads park, where `Protected` gives its lock back
 * with an exchange (an atomic read-modify-write, a full barrier on x86).
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * Memory order, modeled: the one store that is not atomic-read-modify-
 * write, the release's, waits in its thread's store buffer (`pending`)
 * and reaches memory at any later step (the `memory` process), as on x86
 * (TSO) and on weaker machines. The thread's read of `parked` after it
 * may run while the store still waits: the light fence is only a
 * compiler barrier when the heavy fence is `membarrier`. Every other
 * operation is a compare-and-swap or an atomic add, which reaches memory
 * at once and empties its own thread's buffer first (a locked
 * instruction). The heavy fence (`membarrier`) makes every thread pass a
 * full barrier: it empties every buffer.
 *
 * The code, as modeled:
 * - lock(): a compare-and-swap from free to taken. When it fails (after
 *   spinning, left out here: a spin is a failed compare-and-swap), the
 *   thread counts itself in `parked`, runs the heavy fence, then waits
 *   on its stripe (`ParkingLot.locks`): under the stripe's lock it tries
 *   the compare-and-swap again, and sleeps, giving back the stripe's lock
 *   in the same step (`pthread_cond_wait`), until it takes the lock; then
 *   it counts itself out.
 * - unlock(): the store of free (buffered), the light fence (nothing),
 *   the read of `parked`; when it is not 0, the stripe's lock and a wake
 *   of every sleeper.
 * - Checked: one thread at a time holds the lock (an assertion); every
 *   thread ends (no wake is lost: spin reports a thread asleep forever as
 *   an invalid end state).
 *
 * Configurations: THREADS (2 or 3), ROUNDS (lock and unlock, per thread).
 * Mutants:
 * - MUTANT_NO_HEAVY_FENCE: the parking thread does not run the heavy
 *   fence: it reads the lock taken while the release's store still waits
 *   in the other thread's buffer, after that thread read `parked` as 0,
 *   and sleeps forever.
 * - MUTANT_NO_PARKED_READ: the release wakes no one.
 */

#ifndef THREADS
#define THREADS 2
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif

#define FREE 0
#define TAKEN 1

byte word = FREE;      /* the lock's word in memory */
byte parked = 0;       /* threads counted in to park */
bool pending[THREADS]; /* a release's store of FREE, waiting in the buffer */
bool sleeping[THREADS];
byte holders = 0;      /* threads inside the lock */
byte finished = 0;

/* A locked instruction of thread t: its buffer is emptied first. */
inline drain(t) {
  if
  :: pending[t] -> word = FREE; pending[t] = false
  :: else -> skip
  fi
}

/* membarrier: every thread passes a full barrier. */
inline heavyFence() {
  atomic {
    i = 0;
    do
    :: i < THREADS -> drain(i); i++
    :: else -> break
    od
  }
}

proctype Thread(byte me) {
  byte round = 0;
  byte i;
  bool got;
  do
  :: round < ROUNDS ->
    /* lock(): the compare-and-swap. */
    got = false;
    atomic {
      drain(me);
      if
      :: word == FREE -> word = TAKEN; got = true
      :: else -> skip
      fi
    }
    if
    :: !got ->
      /* lockContended(): counted in, the heavy fence, the stripe. */
      atomic { drain(me); parked++ }
#ifndef MUTANT_NO_HEAVY_FENCE
      heavyFence();
#endif
      do
      :: atomic {
           /* Under the stripe's lock: try, or sleep. */
           drain(me);
           if
           :: word == FREE -> word = TAKEN; got = true
           :: else -> sleeping[me] = true
           fi
         }
         if
         :: got -> break
         :: else -> !sleeping[me]   /* woken */
         fi
      od;
      atomic { drain(me); parked-- }
    :: else -> skip
    fi;
    holders++;
    assert(holders == 1);
    holders--;
    /* unlock(): the store waits in the buffer; the light fence is a
     * compiler barrier; the read of `parked` may pass the store. */
    pending[me] = true;
    if
    :: parked != 0 ->
#ifndef MUTANT_NO_PARKED_READ
      atomic {
        /* The stripe's lock (a locked instruction: the buffer is emptied
         * first), and a wake of every sleeper. */
        drain(me);
        i = 0;
        do
        :: i < THREADS -> sleeping[i] = false; i++
        :: else -> break
        od
      }
#else
      skip
#endif
    :: else -> skip
    fi;
    round++
  :: else -> break
  od;
  finished++
}

/* The buffers reach memory at any step, in any order; the model ends when
 * every thread has and the buffers are empty. */
#define FLUSH(t) :: atomic { pending[t] -> word = FREE; pending[t] = false }
#if THREADS > 2
#define EMPTY (!pending[0] && !pending[1] && !pending[2])
#else
#define EMPTY (!pending[0] && !pending[1])
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
