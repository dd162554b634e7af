/*
 * The graph of ranks' places and a combine's rank: `RankLinks` and
 * `WaveFlush.raise(to:)` in Sources/Chaining/Internal/RankGraph.swift and
 * Sources/Chaining/Internal/WaveFlush.swift (#36).
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * The code, as modeled:
 * - A link holds the place of a combine's flush, never the flush; the
 *   place refers to the flush unowned. A building thread (B) walks the
 *   graph under the graph's lock: it reads the flush through the place
 *   only while the place is live, and raises its rank to 2.
 * - The flush is freed on the thread that drops its last reference (F):
 *   its `deinit` ends the place under the graph's lock (`isLive = false`),
 *   then the memory is returned (`freed`). Before that, F's wave raises
 *   the rank to 3 without the lock (`changed(in:)`): the entry of its
 *   list holds the flush, so that raise comes before the last release.
 * - Both raises are compare-and-swap loops that keep the highest rank.
 *
 * Properties:
 * - `freed` is never set while B reads the flush (an assertion in B).
 * - At the end the rank is 3, the highest raise: no raise undoes another.
 *
 * Configurations: WALKS (how many walks B makes, each in one holding of
 * the lock). Mutants:
 * - MUTANT_END_UNLOCKED: `deinit` ends the place without the lock: B can
 *   find the place live, then read the flush after it was freed.
 * - MUTANT_NO_END: `deinit` leaves the place live.
 * - MUTANT_PLAIN_RAISE: a raise is a load, then a store (the code before
 *   #36's build-time ranks): a raise to 2 can land after one to 3.
 */

#ifndef WALKS
#define WALKS 2
#endif

bit lock = 0;    /* RankGraph.lock */
bit isLive = 1;  /* RankLinks.isLive */
bit freed = 0;   /* the flush's memory returned */
byte rank = 0;   /* WaveFlush.rank */
byte finished = 0;

inline acquire() { atomic { lock == 0 -> lock = 1 } }
inline unlock() { lock = 0 }

/* WaveFlush.raise(to:): keeps the highest rank. */
inline raiseTo(level, seen) {
#ifdef MUTANT_PLAIN_RAISE
  seen = rank;
  if
  :: seen < level -> rank = level
  :: else -> skip
  fi
#else
  seen = rank;
  do
  :: seen >= level -> break
  :: else ->
     atomic {
       if
       :: rank == seen -> rank = level; seen = level
       :: else -> seen = rank
       fi
     }
  od
#endif
}

active proctype Builder() {
  byte walk = 0;
  byte seen;
  do
  :: walk < WALKS ->
     acquire();
     if
     :: isLive ->
        /* The walk reads the flush through the place. */
        assert(!freed);
        raiseTo(2, seen);
        assert(!freed)
     :: else -> skip
     fi;
     unlock();
     walk++
  :: else -> break
  od;
  finished++
}

active proctype Freer() {
  byte seen;
  /* The wave's raise, holding the flush. */
  raiseTo(3, seen);
  /* The last release: deinit. */
#ifdef MUTANT_END_UNLOCKED
  isLive = 0;
#elif defined(MUTANT_NO_END)
  skip;
#else
  acquire();
  isLive = 0;
  unlock();
#endif
  freed = 1;
  finished++
}

active proctype Monitor() {
  finished == 2 -> assert(rank == 3)
}
