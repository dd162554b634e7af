/*
 * Reads of a clean computed value without the lock: `ComputedNode`'s
 * "Reads without the lock" and `Computed.value`, in
 * Sources/Chaining/Internal/ComputedNode.swift and
 * Sources/Chaining/Holders/Computed.swift (#37). A value that is trivial
 * and fits in a word (an `Int`, a `Bool`, a `Double`) is published, while
 * the node is clean, in two atomic words: its bits and a stamp, the
 * version plus one (0 while the node is not clean). Inside an evaluation,
 * a read loads the stamp, the bits and the stamp again, and takes the
 * value when the two stamps agree and are not 0; otherwise it takes the
 * graph's lock, as before.
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * The writer is everything done under the graph's lock, as one process:
 * every write to the node's state is under that lock, so writes never
 * interleave with each other, only with the readers, which take no lock.
 * Each store is a step of its own, so a reader may run between any two.
 * - mark: a write to something the value read marks it; a node leaving
 *   `clean` stores 0 in the stamp first if it was published
 *   (`ComputedNode.notify`, `unpublish()`).
 * - update: an evaluation of a marked node commits a new value, its
 *   bits and a new version (`changed`: `ComputedBox.commit()` stores the
 *   bits, releasing), or finds the value equal and keeps all three; then
 *   the node is clean again and publishes, when other computed values
 *   read it (either, here): it stores the stamp (`publishIfClean()`,
 *   releasing).
 * The value is the version (each change makes a new one), so the bits a
 * read takes must equal its stamp minus one.
 *
 * Memory order: sequentially consistent here. The code's orderings are
 * the usual seqlock's under C11 (Boehm, "Can seqlocks get along with
 * programming language memory models?", 2012): the bits and the stamp
 * are stored releasing, the first stamp and the bits loaded acquiring, so
 * the second load of the stamp comes after the load of the bits, and a
 * reader that loads bits stored after a stamp of 0 then loads that 0 or a
 * later stamp.
 *
 * Checked:
 * - a read whose two stamps agree (not 0) took the bits of that version
 *   (`taken == stamp - 1`);
 * - a stamp that is not 0 belongs to a clean node (so a read never takes
 *   a value that a mark made before it has made stale).
 *
 * Configurations: READERS (1 or 2), ROUNDS (the writer's marks).
 * Mutants:
 * - MUTANT_NO_SECOND_LOAD: the reader does not load the stamp again: it
 *   takes bits published after its first load, for a later version.
 * - MUTANT_BITS_LATE: the bits are stored after the stamp (at the
 *   publish, not the commit): a reader takes the old bits with the new
 *   stamp.
 * - MUTANT_NO_UNPUBLISH: a mark leaves the stamp: a reader takes the old
 *   value of a node already marked, and the new bits with the old stamp.
 */

#ifndef READERS
#define READERS 2
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif

#define CLEAN 0
#define MARKED 1

byte mark = CLEAN;
byte version = 0;   /* under the lock */
byte value = 0;     /* under the lock: the cached slot */
byte stamp = 1;     /* published: version + 1, or 0 */
byte bits = 0;      /* published: the value's bits, stored by each commit */
bool published = true; /* under the lock: whether the stamp is not 0 */

active proctype Writer() {
  byte round = 0;
  do
  :: round < ROUNDS ->
    /* mark */
#ifndef MUTANT_NO_UNPUBLISH
    if
    :: mark == CLEAN && published -> stamp = 0; published = false
    :: else -> skip
    fi;
#endif
    mark = MARKED;
    /* update: changed (the commit stores the bits), or equal to the
       last value (nothing stored) */
    if
    :: value = value + 1; version = version + 1;
#ifndef MUTANT_BITS_LATE
       bits = value
#else
       skip
#endif
    :: skip
    fi;
    mark = CLEAN;
    /* publish, when another computed value reads it (either) */
    if
    :: true ->
      stamp = version + 1;
#ifdef MUTANT_BITS_LATE
      bits = value;
#endif
      published = true
    :: true ->
#ifdef MUTANT_BITS_LATE
      bits = value
#else
      skip
#endif
    fi;
    round++
  :: else -> break
  od
}

active [READERS] proctype Reader() {
  byte first, taken, second;
  byte tries = 0;
  do
  :: tries < ROUNDS + 1 ->
    atomic {
      first = stamp;
      /* a published stamp belongs to a clean node */
      assert(first == 0 || mark == CLEAN)
    }
    if
    :: first != 0 ->
      taken = bits;
#ifdef MUTANT_NO_SECOND_LOAD
      second = first;
#else
      second = stamp;
#endif
      if
      :: second == first -> assert(taken == first - 1)
      :: else -> skip   /* the lock's path */
      fi
    :: else -> skip     /* the lock's path */
    fi;
    tries++
  :: else -> break
  od
}
