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
 * - read under the lock: a read outside every evaluation that could not
 *   take the word sets `observed` and, the node being clean, publishes
 *   (`ComputedBox.read(owner:in:)`), so that the next mark tells
 *   Observation and the reads after it take the word; a read inside an
 *   evaluation that could not take it publishes, the node being clean,
 *   whether or not other computed values read it yet
 *   (`publishIfClean(read: true)`), so that the evaluation's reads of it
 *   again take the word.
 * The stamp is the version plus one, times two, plus `observed` (the
 * low bit): a mark stores 0 before it clears `observed`, and a publish
 * sets the bit only when `observed` is set.
 * The value is the version (each change makes a new one), so the bits a
 * read takes must equal its stamp's version.
 *
 * Readers: inside an evaluation (`Computed.value` through
 * `readPublished()`), any stamp but 0 will do; outside one
 * (`readObservedPublished()`), only a stamp with the low bit. Each
 * reader here is either, chosen at each read.
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
 *   (`taken == stamp / 2 - 1`);
 * - a stamp that is not 0 belongs to a clean node (so a read never takes
 *   a value that a mark made before it has made stale);
 * - a stamp with the low bit belongs to an observed node: a read outside
 *   an evaluation that takes the word leaves the next mark telling
 *   Observation, as one under the lock does.
 *
 * HOLDER: the writer is a holder's writes instead (`HolderStore`, "Reads
 * inside evaluations without the lock"): the same three stores in one
 * hold of the holder's lock, every write a change, read inside
 * evaluations only. Checked then: a read whose two stamps agree took the
 * bits of that version, and a published stamp is never older than a
 * write already done (in place of the two checks of a node's marks,
 * which a holder has not). MUTANT_BITS_LATE and MUTANT_NO_UNPUBLISH
 * apply to its writes too, and spin catches both.
 *
 * Configurations: READERS (1 or 2), ROUNDS (the writer's marks), HOLDER.
 * Mutants:
 * - MUTANT_NO_SECOND_LOAD: the reader does not load the stamp again: it
 *   takes bits published after its first load, for a later version.
 * - MUTANT_BITS_LATE: the bits are stored after the stamp (at the
 *   publish, not the commit): a reader takes the old bits with the new
 *   stamp.
 * - MUTANT_NO_UNPUBLISH: a mark leaves the stamp: a reader takes the old
 *   value of a node already marked, and the new bits with the old stamp.
 * - MUTANT_BIT_WITHOUT_OBSERVED: a publish sets the low bit whether or
 *   not the node is observed: a read outside an evaluation takes the word
 *   of a node the next mark does not tell Observation of.
 * - MUTANT_OBSERVED_CLEARED_FIRST: a mark clears `observed` before it
 *   stores 0: in between, the low bit stands for a node no longer
 *   observed.
 * - MUTANT_READ_PUBLISHES_MARKED: a read inside an evaluation publishes
 *   whether or not the node is clean: a reader takes the value of a node
 *   already marked.
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
bool observed = false; /* under the lock: read outside an evaluation since the last mark */
byte stamp = 2;     /* published: (version + 1) * 2 + observed, or 0 */
byte bits = 0;      /* published: the value's bits, stored by each commit */
bool published = true; /* under the lock: whether the stamp is not 0 */

/* The stamp `publishIfClean()` stores, given whether other computed
   values read the node (`dependents`): 0 when not published. */
#ifdef MUTANT_BIT_WITHOUT_OBSERVED
#define OBSERVED_BIT 1
#else
#define OBSERVED_BIT (observed -> 1 : 0)
#endif

inline storeStamp() {
  stamp = (version + 1) * 2 + OBSERVED_BIT;
  published = true
}

inline publish() {
  if
  :: observed -> storeStamp()
  :: true -> storeStamp()  /* dependents */
  :: !observed -> skip     /* neither */
  fi;
#ifdef MUTANT_BITS_LATE
  bits = value
#else
  skip
#endif
}

/* A read inside an evaluation under the lock (`ComputedBox.read(owner:
   in:)`), once its update is done: publishes if the node is clean,
   whether or not other computed values read it yet. Or no such read. */
inline readInEvaluation() {
  if
#ifdef MUTANT_READ_PUBLISHES_MARKED
  :: true ->
#else
  :: mark == CLEAN ->
#endif
     storeStamp();
#ifdef MUTANT_BITS_LATE
     bits = value
#else
     skip
#endif
  :: skip
  fi
}

#ifdef HOLDER
/* A holder's writes (`HolderStore.replace` and the others, then
   `takeObservers(changes:)` and `publishLocked()`, under the holder's
   lock): each changes the state and counts the version, then stores 0,
   the bits and the new stamp, a step each; then, the lock given back,
   the write is done (`completed`) and marks the computed values that
   read the holder. Between writes, the holder may lose its last
   dependent (0) and gain one again (the same three stores, no change:
   `setHasDependents(_:)`). Read only inside evaluations, so never with
   the low bit. */
byte completed = 0;

active proctype Writer() {
  byte round = 0;
  do
  :: round < ROUNDS ->
    if
    :: stamp = 0; published = false;
       stamp = 0; bits = value; storeStamp()
    :: skip
    fi;
    value = value + 1;
    version = version + 1;
#ifndef MUTANT_NO_UNPUBLISH
    stamp = 0;
    published = false;
#endif
#ifndef MUTANT_BITS_LATE
    bits = value;
#endif
    storeStamp();
#ifdef MUTANT_BITS_LATE
    bits = value;
#endif
    completed = version;
    round++
  :: else -> break
  od
}
#else
active proctype Writer() {
  byte round = 0;
  do
  :: round < ROUNDS ->
    /* a read outside every evaluation, under the lock; one inside an
       evaluation, under the lock; or none */
    if
    :: observed = true;
       if
       :: mark == CLEAN -> publish()
       :: else -> skip
       fi
    :: readInEvaluation()
    fi;
    /* mark */
#ifdef MUTANT_OBSERVED_CLEARED_FIRST
    observed = false;
#endif
#ifndef MUTANT_NO_UNPUBLISH
    if
    :: mark == CLEAN && published -> stamp = 0; published = false
    :: else -> skip
    fi;
#endif
    observed = false;
    mark = MARKED;
    /* a read inside an evaluation whose update left the node marked (a
       mark came meanwhile) */
    readInEvaluation();
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
    /* publish, when another computed value reads it or it is observed */
    publish();
    round++
  :: else -> break
  od
}
#endif

active [READERS] proctype Reader() {
  byte first, taken, second;
  bool outside;
  byte tries = 0;
  do
  :: tries < ROUNDS + 1 ->
    /* inside an evaluation, or outside one */
    if
    :: outside = false
#ifndef HOLDER
    :: outside = true
#endif
    fi;
    atomic {
      first = stamp;
#ifdef HOLDER
      /* a published stamp is never older than a write done (whose marks
         may have gone out): a read after them takes that write or a
         later one, or the lock */
      assert(first == 0 || first / 2 - 1 >= completed)
#else
      /* a published stamp belongs to a clean node, and its low bit to
         an observed one */
      assert(first == 0 || mark == CLEAN);
      assert(first % 2 == 0 || observed)
#endif
    }
    if
    :: first != 0 && (!outside || first % 2 == 1) ->
      taken = bits;
#ifdef MUTANT_NO_SECOND_LOAD
      second = first;
#else
      atomic {
        second = stamp;
        assert(second % 2 == 0 || observed)
      }
#endif
      if
      :: second == first -> assert(taken == first / 2 - 1)
      :: else -> skip   /* the lock's path */
      fi
    :: else -> skip     /* the lock's path */
    fi;
    tries++
  :: else -> break
  od
}
