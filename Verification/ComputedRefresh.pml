/*
 * The refresh of a computed value's chains at a wave's end, and the
 * question that skips its gate: `DeliveryContext.flushWave()` in
 * Sources/Chaining/Internal/Wave.swift, `ComputedNode.isSent(runner:)`
 * in Sources/Chaining/Internal/ComputedNode.swift and
 * `ComputedBox.refresh()` in Sources/Chaining/Holders/Computed.swift
 * (#37).
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * Each writer thread writes what the value reads, which marks it
 * (`ComputedGraph.changed`), and then, at its wave's end, refreshes the
 * value's chains, unless the value was marked already (its refresh is
 * waiting on the thread that marked it):
 * - the refresh (`ComputedBox.refresh()`), under the flush's gate (a
 *   refresh deferred with causes) or without it (one deferred by the
 *   marking walk, `DeliveryContext.refresh(_:pinned:)`), several at once:
 *   in one hold of the graph's lock, brings the value up to date, reads
 *   it and its version, and, if the version is not the one last sent
 *   (`sentVersion`), records it as sent and claims the broadcast on the
 *   chains' core, or queues it behind the thread delivering
 *   (`_SenderCore.claimBroadcast(_:)`); then, after unlocking, a thread
 *   that claimed delivers its value, and then what was queued meanwhile,
 *   oldest first, until the queue is empty, when it gives the claim back
 *   (`_SenderCore.run(_:_:)`, `finish(claimed:)`, `finishLocked()`). It
 *   stores the hint `sentNothing` (whether it sent nothing) in the flush.
 * - the question (`isSent(runner:)`), asked before the refresh when the
 *   hint says the last refresh sent nothing: in one hold of the graph's
 *   lock, brings the value up to date and compares the version with
 *   `sentVersion`; equal, the refresh is skipped; not equal, it runs as
 *   above. The hint is read relaxed, so it may be stale: here the
 *   question is asked or not at each refresh whatever the hint (either is
 *   correct), except in the mutant that trusts the hint alone.
 * An update under the lock (here one step; in the code, an evaluation
 * under the node's claim, committed under the lock) turns a marked value
 * into a new version (a change) or keeps its version (an equal result).
 * The value is its version.
 *
 * Checked:
 * - the chain gets versions in rising order, never one twice
 *   (`v > delivered`);
 * - once every writer is done, the chain's last value is the value a
 *   read then finds (`delivered == version`): no change is lost by a
 *   skipped refresh.
 *
 * Mutants (each must fail):
 * - MUTANT_COMPARE_BEFORE_UPDATE: the question compares the version
 *   without bringing the value up to date; a version about to move looks
 *   sent.
 * - MUTANT_SKIP_RECORDS: the question records the version as sent, as
 *   the refresh does; the refresh then finds nothing to send.
 * - MUTANT_HINT_ONLY: a refresh is skipped when the hint says the last
 *   one sent nothing, without the question.
 * - MUTANT_CLAIM_AFTER_UNLOCK: the broadcast is claimed after the hold
 *   that read the value, as a plain `broadcast(_:)` would: two refreshes
 *   claim out of version order, and the chain gets an older value last.
 *
 * With LATE_CHAIN, a second chain subscribes with `sync()` while the
 * writers run (`ComputedBox.subscribe`), and its values must never go
 * back (`x >= lateLast`: the synced value may come once more) and end
 * with the value's (`lateLast == version`).
 * - MUTANT_FETCH_APART: the value `sync()` sends is read in a hold of
 *   its own after the chain joins the list, as `fetchedValue()` would: a
 *   refresh claimed between the two sends an older value after it.
 */

#ifndef WRITERS
#define WRITERS 2
#endif
#ifndef WRITES
#define WRITES 2
#endif

byte version = 0;        /* the value's version */
bool marked = false;     /* marked since the last update */
byte sentVersion = 0;    /* a chain subscribed at version 0 and got it */
bool sentNothing = false;/* the flush's hint */
byte delivered = 0;      /* the chain's last value */
bool gate = false;       /* the flush's gate */
bool delivering = false; /* the core is claimed */
/* Broadcasts queued on the core: room for every write, as the code's
 * queue (an array) never fills, and a writer goes on once its value is
 * queued. */
chan pending = [WRITERS * WRITES] of { byte, bool };
/* With LATE_CHAIN, a second chain subscribes while the writers run
 * (`ComputedBox.subscribe`, for `sync()`): whether it is in the core's
 * list, the value it synced, what its gate queued for it before and after
 * its start, and its last value. */
bool lateJoined = false;
#ifdef LATE_CHAIN
byte lateFetched = 0;
byte lateLast = 0;
bool lateDone = false;
chan lateGate = [WRITERS * WRITES] of { byte };
#endif
byte done = 0;

/* An update under the graph's lock. */
inline update() {
  if
  :: marked ->
     marked = false;
     if
     :: version++       /* a change */
     :: skip            /* an equal result */
     fi
  :: else -> skip
  fi
}

/* The chains' core claimed by this refresh for its changed value, or
 * the value queued behind the thread delivering. */
inline claim() {
  if
  :: changed && !delivering -> delivering = true; mine = true; mineToLate = lateJoined
  :: changed && delivering -> pending!v,lateJoined
  :: else -> skip
  fi
}

/* A delivery to the chain, and to the late one when the list it was
 * claimed or queued for had it. */
inline deliver(x, toLate) {
  assert(x > delivered);
  delivered = x;
#ifdef LATE_CHAIN
  if
  :: toLate -> lateGate!x
  :: else -> skip
  fi
#endif
}

proctype Writer() {
  byte n = 0;
  byte v;
  bool skipped;
  bool changed;
  bool wasMarked;
  bool gated;
  bool mine;
  bool mineToLate;
  byte queued;
  bool queuedToLate;
  do
  :: n < WRITES ->
     n++;
     /* The write marks the value, under the lock; only a mark that
      * takes it out of clean defers a refresh (`ComputedNode.notify`):
      * a value marked already has one waiting, whose update comes after
      * this mark. */
     atomic { wasMarked = marked; marked = true };
     if
     :: wasMarked -> goto next
     :: else -> skip
     fi;
     /* The wave's end. */
#ifdef MUTANT_HINT_ONLY
     skipped = sentNothing;
#else
     if
     :: true ->
        /* The question (asked when the hint, maybe stale, is set). */
        atomic {
#ifndef MUTANT_COMPARE_BEFORE_UPDATE
          update();
#endif
          skipped = (sentVersion == version);
#ifdef MUTANT_SKIP_RECORDS
          sentVersion = version;
#endif
        }
     :: true -> skipped = false
     fi;
#endif
     if
     :: skipped -> skip
     :: else ->
        /* Under the flush's gate, or not: the gate serializes only the
         * refreshes that take it. */
        if
        :: atomic { !gate -> gate = true; gated = true }
        :: gated = false
        fi;
        mine = false;
        atomic {
          update();
          v = version;
          changed = (sentVersion != v);
          sentVersion = v;
          sentNothing = !changed;
#ifndef MUTANT_CLAIM_AFTER_UNLOCK
          claim()
#endif
        };
#ifdef MUTANT_CLAIM_AFTER_UNLOCK
        atomic { claim() };
#endif
        /* The delivery, after unlocking, by the thread that claimed. */
        if
        :: mine ->
           deliver(v, mineToLate);
           do
           :: atomic { nempty(pending) -> pending?queued,queuedToLate };
              deliver(queued, queuedToLate)
           :: atomic { empty(pending) -> delivering = false };
              break
           od
        :: else -> skip
        fi;
        if
        :: gated -> gate = false
        :: else -> skip
        fi
     fi;
next: skip
  :: else -> break
  od;
  done++
}

#ifdef LATE_CHAIN
/* A chain subscribed with `sync()` while the writers run: it joins the
 * core's list in the hold of the graph's lock in which it brings the
 * value up to date and reads the value `sync()` sends; then its gate
 * opens, with that value first and then what came meanwhile, in order. */
proctype Late() {
  byte x;
  atomic {
    update();
#ifndef MUTANT_FETCH_APART
    lateFetched = version;
#endif
    lateJoined = true
  };
#ifdef MUTANT_FETCH_APART
  atomic { update(); lateFetched = version };
#endif
  lateLast = lateFetched;
  do
  :: atomic { nempty(lateGate) -> lateGate?x };
     assert(x >= lateLast);
     lateLast = x
  :: atomic { done == WRITERS && empty(lateGate) -> lateDone = true };
     break
  od
}
#endif

init {
  byte i;
  atomic {
    for (i : 1 .. WRITERS) { run Writer() }
#ifdef LATE_CHAIN
    run Late()
#endif
  }
  done == WRITERS;
#ifdef LATE_CHAIN
  lateDone;
#endif
  /* A read once every writer is done. */
  update();
  assert(delivered == version)
#ifdef LATE_CHAIN
  ;
  assert(lateLast == version)
#endif
}
