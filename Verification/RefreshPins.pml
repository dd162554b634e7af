/*
 * The pins that keep a computed value's refresh flush alive in threads'
 * wave lists without a retain: `DeliveryContext.deferRefresh(_:)`,
 * `unpinSent(in:)`, `unpinRefreshes()`, `send(_:through:pinned:)` and
 * `flushWave()` in Sources/Chaining/Internal/Wave.swift, the pins of
 * `WaveFlush` (`pin()`, `unpin()`, `removePin()`, `orphan()`) in
 * Sources/Chaining/Internal/WaveFlush.swift, `ComputedNode.isSent` in
 * Sources/Chaining/Internal/ComputedNode.swift, and `ComputedBox.refresh()`
 * and `detachFlush()` in Sources/Chaining/Holders/Computed.swift (#37).
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * The flush is an object with a count of strong references (`refs`): the
 * value's own (`ComputedBox.flush`), and a queued send's. It is freed when
 * the count reaches 0. Everything about pins (`pins`, `orphaned`) is under
 * the graph's lock: each step that holds it is one atomic block here.
 *
 * Each wave thread marks the value ENTRIES times (the marking walk, under
 * the lock: a pin and an entry each time the value still has its flush),
 * then its wave's end takes its entries one by one. An entry reads the
 * flush (rank, hint, gate) with no lock, then either:
 * - is skipped: the question's hold of the lock (`isSent`) removes the
 *   pins the thread's earlier sends left (`unpinSent(in:)`) and the
 *   entry's own (`WaveFlush.unpin()`), unless it is the last pin of an
 *   orphan, or threads wait to be woken (the wake after unlocking touches
 *   the value): then it is left for later;
 * - or is run on the idle gate: the refresh's hold removes the pins the
 *   earlier sends left, but not the entry's own, as the run goes on
 *   (the broadcast, then the gate's release: the gate belongs to the
 *   flush); after the run, the entry's pin is left for later;
 * - or is queued on a busy gate: the queued send retains the flush, runs
 *   later (another process here) and releases it; the entry's pin is left
 *   for later.
 * A hold removes every pin left but an orphan's last. The wave's end then
 * removes the pins still left, in one hold of the lock, and releases the
 * flush when it removed an orphan's last pin.
 *
 * Another thread lets the value go (`detachFlush()`): under the lock, it
 * takes the flush from the value; with pins, the flush becomes an orphan
 * whose reference the pins take over; without, it releases it after
 * unlocking.
 *
 * Checked:
 * - every read of the flush finds it alive (`refs > 0`);
 * - once everything is done, no pin is left and the flush is freed
 *   (`refs == 0`): nothing leaks.
 *
 * Mutants (each must fail):
 * - MUTANT_RELEASE_PINNED: the value releases its flush even while pinned;
 *   a wave's end reads a freed flush.
 * - MUTANT_ORPHAN_LEAK: the wave's end removes an orphan's last pin but
 *   does not release it; the flush is never freed.
 * - MUTANT_UNPIN_IN_RUN: the refresh's hold removes the running entry's
 *   own pin; the value let go meanwhile frees the flush, and the gate's
 *   release after the run touches it.
 * - MUTANT_UNPIN_WHEN_WAKING: the question removes the entry's pin even
 *   when threads wait; the wake after unlocking touches a freed value.
 */

#ifndef WAVES
#define WAVES 2
#endif
#ifndef ENTRIES
#define ENTRIES 2
#endif

byte refs = 1;           /* the value's reference */
bool attached = true;    /* the value still holds the flush */
byte pins = 0;
bool orphaned = false;
byte queuedRuns = 0;     /* queued sends waiting to run */
byte done = 0;

inline alive() {
  assert(refs > 0)
}

/* Releases one reference; the flush is freed at 0. */
inline release() {
  d_step { assert(refs > 0); refs-- }
}

/* A hold's removal of the pins left (`unpinSent(in:)`): all but an
 * orphan's last. */
inline unpinLeft() {
  do
  :: left > 0 && !(pins == 1 && orphaned) -> left--; pins--
  :: else -> break
  od
}

proctype Wave() {
  byte entries = 0;
  byte n = 0;
  byte left = 0;         /* pins left for later (`waves.unpins`) */
  bool wakes;
  bool last;
  /* The marking walk: a pin per mark while the value holds its flush. */
  do
  :: n < ENTRIES ->
     n++;
     atomic {
       if
       :: attached -> pins++; entries++
       :: else -> skip
       fi
     }
  :: else -> break
  od;
  /* The wave's end, entry by entry. */
  do
  :: entries > 0 ->
     entries--;
     /* Rank, hint and gate, read with no lock. */
     alive();
     if
     :: true ->
        /* Skipped: the question's hold. */
        atomic {
          alive();
          unpinLeft();
          if
          :: wakes = true
          :: wakes = false
          fi;
#ifdef MUTANT_UNPIN_WHEN_WAKING
          if
          :: pins == 1 && orphaned -> left++
          :: else -> pins--
          fi
#else
          if
          :: wakes || (pins == 1 && orphaned) -> left++
          :: else -> pins--
          fi
#endif
        };
        /* The wake after unlocking touches the value the flush holds. */
        if
        :: wakes -> alive()
        :: else -> skip
        fi
     :: true ->
        /* Run on the idle gate: the refresh's hold. */
        atomic {
          alive();
          unpinLeft();
#ifdef MUTANT_UNPIN_IN_RUN
          if
          :: pins == 1 && orphaned -> left++
          :: else -> pins--
          fi
#else
          left++
#endif
        };
        /* The broadcast, then the gate's release. */
        alive()
     :: true ->
        /* Queued on a busy gate: the queued send retains the flush. */
        d_step { assert(refs > 0); refs++; queuedRuns++ };
        left++
     fi
  :: else -> break
  od;
  /* `unpinRefreshes()`: the pins still left, in one hold of the lock. */
  last = false;
  atomic {
    do
    :: left > 0 ->
       left--;
       pins--;
       if
       :: pins == 0 && orphaned -> last = true
       :: else -> skip
       fi
    :: else -> break
    od
  };
  if
  :: last ->
#ifndef MUTANT_ORPHAN_LEAK
     release()
#else
     skip
#endif
  :: else -> skip
  fi;
  done++
}

/* The queued sends, run by the gate's thread later. */
proctype QueuedRunner() {
  do
  :: atomic { queuedRuns > 0 -> queuedRuns-- };
     alive();
     release()
  :: atomic { done == WAVES + 1 && queuedRuns == 0 -> break }
  od;
  done++
}

/* `detachFlush()`: the value lets its flush go. */
proctype Detacher() {
  bool releases;
  atomic {
    attached = false;
#ifdef MUTANT_RELEASE_PINNED
    releases = true
#else
    if
    :: pins != 0 -> orphaned = true; releases = false
    :: else -> releases = true
    fi
#endif
  };
  if
  :: releases -> release()
  :: else -> skip
  fi;
  done++
}

init {
  byte i;
  atomic {
    for (i : 1 .. WAVES) { run Wave() }
    run Detacher();
    run QueuedRunner()
  }
  done == WAVES + 2;
  assert(pins == 0);
  assert(refs == 0)
}
