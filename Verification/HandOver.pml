/*
 * The hand-over of a chain's gate to a writer waiting for its turn
 * (issue #34), in Sources/Chaining/Internal/DeliveryGate+Queue.swift:
 * `runPending` (past `handOffLimit`: `overLimit`, `waiters`, the value put
 * back at the head of `pending`; one count per call), `drain`,
 * `handOver(leaving:)`, `reclaim(from:in:)` (the generation in `word`),
 * `endCount`, `runRequested`, `queue` (a writer registers as a waiter in
 * the critical section of its append) and `awaitTurn(in:waits:)`.
 * Verification/JoinedChain.pml checks the same protocol with a combine's
 * wave flush, and the mutants of the count per call, the generation and
 * `overLimit` kept past the count.
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes. See
 * Documentation/Reliability.md.
 *
 * Threads:
 *   H (1)       starts holding the gate, with K values queued by a thread
 *               that has returned (sender 4), as a thread does that is
 *               running the queue in `drain`; it drains, then returns
 *               (`hReturned`) and ends.
 *   P1, P2 (2, 3)
 *               producers: each writes NV values through the gate
 *               (`deliver`: claim and run, or `runRequested`, or queue;
 *               queued while `overLimit`: register as a waiter and
 *               `awaitTurn`). NV=0: without end, each writing its next
 *               value once its last one has run (this bounds the queue).
 *
 * Properties:
 *   assertions  never two runners (in the handler); each sender's values
 *               run in the order written, each once; at the end of a
 *               bounded run, when every thread has ended: every value
 *               ran, the gate is idle, the queue empty, QUEUED and
 *               `overLimit` clear, `waiters` 0. No thread ends waiting
 *               (spin's end states).
 *   released    (LTL, `pan -a -f`: weak fairness, producers without end)
 *               a thread holding the gate eventually releases it: no
 *               thread is held by other threads' endless writes.
 *   returns     (LTL, `pan -a -f`: weak fairness, else a waiter
 *               spinning in `awaitTurn` while H sits in its handler is a
 *               cycle) H eventually returns. Two trails broke it, both closed by the
 *               generation: H claims again after its own release only if
 *               nobody claimed the gate since (`reclaim`), else the thread
 *               that did runs the queue. The trail of 2ce3009: H hands
 *               over; the waiter claims, runs the queue and releases
 *               before H looks at `waiters`; H takes the 0 for "the waiter
 *               left" and claims again, for ever. And: H, past the limit,
 *               releases and sees `queued` (P1 wrote while H held the
 *               gate); P1 claims and runs it before H claims again, and
 *               writes its next value just as H holds the gate again: H
 *               could keep claiming, finding the queue emptied, for ever.
 *               MUTANT_NO_GEN brings both back. See
 *               Documentation/Reliability.md.
 *
 * Configurations (-D flags):
 *   NV=n        values per producer (0: without end)
 *   K=n         values queued before H starts (by a thread that returned)
 *   HANDOFF=n   DeliveryGate.handOffLimit (64 in Swift; 1 by default)
 *   TIMEOUT=0|1 whether a waiter may give up (its 1 ms `turnWait`) at any
 *               iteration of `awaitTurn`'s loop; 0 for the LTL searches,
 *               where a waiter timing out before each check of the holder
 *               would be a cycle of timing, not of the protocol
 *   MUTANT_NO_BOUND
 *               the code before issue #34: runPending runs until the
 *               queue is empty
 *   MUTANT_HANDOVER_NO_RECHECK
 *               handOver releases the gate and returns true without
 *               looking at `waiters` again
 *   MUTANT_WAITER_LEAVES_WITHOUT_DRAIN
 *               a waiter that gives up takes itself out and returns
 *               without trying to claim the gate
 *   MUTANT_NO_GEN
 *               a thread claims again after its own release whoever
 *               claimed meanwhile (no generation in `word`)
 *   POSTPONE    each write is delivered at once or postponed
 *               (`postponedDeliver`: claimed now, run later), either way
 *   MUTANT_POSTPONE_AHEAD
 *               a postponed value runs first even when the claim found
 *               values queued before it (the soak's deep chain saw a
 *               writer's later value run ahead of its earlier ones)
 *
 * What the model leaves out:
 * - close() and closeBusy, `deliverAlone`, `alone`, echoes and causes:
 *   Verification/DeliveryGate.pml checks those.
 * - A thread's own values (a handler writing to its own chain; not
 *   counted against the limit) and writers inside a delivery deferring
 *   their turn to the end of their wave (`deferTurn`): every writer here
 *   is outside any delivery.
 * - The sender core's `handedOver` protocol.
 * - Batches: runPending takes one value at a time from the head of the
 *   queue, under the lock, and makes the limit's check in that same
 *   critical section. The Swift code takes the whole queue and puts the
 *   rest back at the head; nothing in between reads the queue but the
 *   runner, and a writer that appends meanwhile sees the same flags.
 * - Memory order: spin interleaves whole statements under sequential
 *   consistency (see DeliveryGate.pml). The claim is one compare-and-swap.
 */

#ifndef NV
#define NV 2
#endif
#ifndef NV2
#define NV2 NV
#endif
#ifndef K
#define K 1
#endif
#ifndef HANDOFF
#define HANDOFF 1
#endif
#ifndef TIMEOUT
#define TIMEOUT 1
#endif
#ifdef MUTANT_NO_BOUND
#define HANDSOFF 0
#else
#define HANDSOFF 1
#endif

#define QUEUED 1
#define H 1
#define OLD 4            /* the sender of the K values queued at the start */
#define NS 5
#if NV > 0
#define CAP (K + 2 * NV)
#else
#define CAP (K + 1 + NV2)
#endif

/* A value: its sender (`Queued.sender`) and its number among the sender's */
#define VALUE(s, n) (((s) << 4) | (n))
#define SENDER(x) ((x) >> 4)
#define SEQ(x) ((x) & 15)
#if NV > 0
#define NEXT(n) (((n) + 1) % 16)
#else
#define NEXT(n) (1 - (n))   /* one value in flight per producer */
#endif

/* DeliveryGate */
byte runner = 0;         /* `word`: the running thread's id, 0 idle */
byte requests = 0;       /* `requests`: QUEUED only (no close here) */
byte pending[CAP];       /* `pending`, guarded by the stripe's lock */
byte npending = 0;
bit overLimit = 0;       /* guarded by the stripe's lock */
byte waiters = 0;        /* guarded by the stripe's lock */
/* The generation in `word`: Swift stores the next generation at each
 * release and a re-claim expects the word released to (it wraps at 32);
 * the model keeps, per thread, whether another thread claimed since its
 * last release (bit `me`), which cannot wrap */
byte claimedSince = 0;

/* What the properties watch */
byte inHandler = 0;
byte nextSeq[NS];        /* per sender: the number of the next value to run */
bit hReturned = 0;

/* A critical section under the stripe's lock, as one atomic step: none
 * blocks inside, and a lock variable would let spin, under weak fairness,
 * keep a thread from a lock that another takes and releases again and
 * again (a real lock serves its waiters) */
#define lock(l) atomic { skip
#define unlock(l) }

/* The chain's handler: never two at once; each sender's values once each,
 * in order */
inline handler(x) {
  atomic {
    assert(inHandler == 0);
    assert(SEQ(x) == nextSeq[SENDER(x)]);
    nextSeq[SENDER(x)] = NEXT(nextSeq[SENDER(x)]);
    inHandler = 1
  };
  inHandler = 0
}

/* A claim: one compare-and-swap of `word` from idle (every claim changes
 * the generation another thread's re-claim expects) */
inline claim(me) {
  atomic {
    if
    :: runner == 0 -> runner = me; claimed = 1; claimedSince = claimedSince | (14 & ~(1 << me))
    :: else -> claimed = 0
    fi
  }
}

/* DeliveryGate.reclaim(from:in:): a claim after this thread's own release,
 * from the word it stored then: fails when another thread claimed since */
inline reclaim(me) {
#ifdef MUTANT_NO_GEN
  claim(me)
#else
  atomic {
    if
    :: runner == 0 && (claimedSince & (1 << me)) == 0 ->
       runner = me; claimed = 1; claimedSince = claimedSince | (14 & ~(1 << me))
    :: else -> claimed = 0
    fi
  }
#endif
}

/* A release: a store of `word`, in the next generation */
inline releaseGate(me) {
  atomic { runner = 0; claimedSince = claimedSince & ~(1 << me) }
}

/* DeliveryGate.runPending: res 1 when it emptied the queue, 0 when it
 * stopped for a waiter (the value it would run left at the head) */
inline runPending(me) {
  /* the critical section: take the head, or stop for a waiter, or clear
   * QUEUED and overLimit on an empty queue */
  /* `othersRun`: the caller's count, for its whole call */
  do
  :: atomic {
       if
       :: npending == 0 ->
          requests = requests & ~QUEUED;
          /* past the count, left set until the call ends (`endCount`) */
          if :: othersRun < HANDOFF -> overLimit = 0 :: else -> skip fi;
          res = 1; x = 0; stop = 1
       :: else ->
          x = pending[0];
          if
          :: HANDSOFF && SENDER(x) != me && othersRun >= HANDOFF ->
             overLimit = 1; stop = (waiters > 0)
          :: else -> stop = 0
          fi;
          if
          :: stop -> res = 0; x = 0
          :: else ->
             i = 0;
             do
             :: i + 1 < npending -> pending[i] = pending[i + 1]; i++
             :: else -> break
             od;
             npending--; pending[npending] = 0; i = 0
          fi
       fi
     };
     if
     :: stop -> stop = 0; break
     :: else ->
        if :: SENDER(x) != me && othersRun < HANDOFF -> othersRun++ :: else -> skip fi;
        handler(x);
        x = 0
     fi
  od
}

/* DeliveryGate.handOver(leaving:): release (store idle, read requests;
 * nobody waits in close() here), then whether a waiter is still there */
inline handOver(me) {
  releaseGate(me);
  /* (the read of `requests` only wakes a close(): none here) */
#ifdef MUTANT_HANDOVER_NO_RECHECK
  w = 1
#else
  lock(gstripe); w = (waiters > 0); unlock(gstripe)
#endif
}

/* DeliveryGate.endCount: a call past the limit that released the gate
 * with nothing queued clears the `overLimit` it left set */
inline endCount() {
  if :: othersRun >= HANDOFF -> lock(gstripe); overLimit = 0; unlock(gstripe) :: else -> skip fi
}

/* DeliveryGate.drain(in:claimed:reclaiming:): `claimed` set when already
 * claimed; `again` when the caller released the gate itself (a re-claim,
 * as after each of drain's own releases) */
inline drain(me) {
  do
  :: if
     :: !claimed && again -> reclaim(me)
     :: !claimed && !again -> claim(me)
     :: else -> skip
     fi;
     again = 0;
     if
     :: !claimed -> break
     :: else ->
        claimed = 0;
        runPending(me);
        if
        :: res ->
           releaseGate(me);
           /* the read of `requests`, tested at once */
           if :: (requests & QUEUED) == 0 -> endCount(); break :: else -> again = 1 fi
        :: else ->
           handOver(me);
           if :: w -> break :: else -> again = 1 fi
        fi
     fi
  od
}

/* DeliveryGate.awaitTurn(in:waits: true) */
inline awaitTurn(me) {
  do
  :: claim(me);
     if
     :: claimed ->
        lock(gstripe); waiters--; unlock(gstripe);
        othersRun = 0;   /* a count of its own */
        drain(me);
        took = 1;
        break
     :: else ->
        lock(gstripe); goesOn = overLimit; unlock(gstripe);
        if
        :: !goesOn -> break
        :: TIMEOUT -> break
        :: goesOn -> skip   /* sched_yield, then again */
        fi
     fi
  od;
  if
  :: took -> took = 0   /* returned from the drain above */
  :: else ->
     lock(gstripe); waiters--; unlock(gstripe);
#ifndef MUTANT_WAITER_LEAVES_WITHOUT_DRAIN
     othersRun = 0; drain(me)
#else
     skip
#endif
  fi
}

/* DeliveryGate.queue, for a writer outside any delivery (never the runner) */
inline queue(me, v) {
  lock(gstripe);
  pending[npending] = v;
  npending++;
  waits = (HANDSOFF && overLimit);
  if :: waits -> waiters++ :: else -> skip fi;
  if
  :: (requests & QUEUED) != 0 -> flagged = 0
  :: else -> requests = requests | QUEUED; flagged = 1
  fi;
  unlock(gstripe);
  if
  :: waits -> awaitTurn(me)
  :: !waits && flagged -> claimed = 0; othersRun = 0; drain(me)
  :: else -> skip
  fi
}

/* DeliveryGate.release(to:in:) after a run: serve a queue */
inline release(me) {
  releaseGate(me);
  if :: (requests & QUEUED) != 0 -> claimed = 0; again = 1; drain(me) :: else -> skip fi
}

/* DeliveryGate.deliver: runIfIdle (with runRequested), else queue */
inline deliver(me, v) {
  othersRun = 0;
  claim(me);
  if
  :: claimed ->
     claimed = 0;
     if
     :: requests == 0 -> handler(v); release(me)   /* a fresh count */
     :: else ->
        /* runRequested */
        runPending(me);
        if
        :: res ->
           handler(v);
           /* the release, the count carried on to the drain */
           releaseGate(me);
           if :: (requests & QUEUED) != 0 -> claimed = 0; again = 1; drain(me) :: else -> endCount() fi
        :: else ->
           handOver(me);
           if :: !w -> claimed = 0; again = 1; drain(me) :: else -> skip fi;
           queue(me, v)
        fi
     fi
  :: else -> queue(me, v)
  fi
}

/* DeliveryGate.postpone (issue #36): a delivery past the nesting limit
 * claims the gate now and runs later, from its write's outermost frame:
 * here, the same thread's later steps, with anything interleaved. A claim
 * that finds values queued (the gate released with its queue, for a
 * writer waiting its turn) puts this value behind them and runs the
 * queue as a turn does; otherwise the value runs first, then the values
 * queued since the claim. */
inline postponedDeliver(me, v) {
  othersRun = 0;
  claim(me);
  if
  :: claimed ->
     claimed = 0;
#ifndef MUTANT_POSTPONE_AHEAD
     if
     :: (requests & QUEUED) != 0 ->
        lock(gstripe); pending[npending] = v; npending++; unlock(gstripe);
        /* ... the postponed run, later: */
        claimed = 1; drain(me)
     :: else ->
#endif
        /* ... the postponed run, later: */
        handler(v); release(me)
#ifndef MUTANT_POSTPONE_AHEAD
     fi
#endif
  :: else -> queue(me, v)
  fi
}

/* A write: delivered at once, or, with POSTPONE, either way */
inline write(me, v) {
#ifdef POSTPONE
  if
  :: deliver(me, v)
  :: postponedDeliver(me, v)
  fi
#else
  deliver(me, v)
#endif
}

proctype Holder() {
  byte x, i, othersRun;
  bit claimed, res, stop, w, again;
  claimed = 1;
  drain(H);
  hReturned = 1
}

proctype Producer(byte me) {
  byte n = 0, x, i, othersRun;
  bit claimed, res, stop, w, waits, flagged, goesOn, took, again;
#if NV > 0
  do
  :: n < NV -> write(me, VALUE(me, n)); n++
  :: else -> break
  od
#else
  if
  :: me == 3 ->   /* P2 writes NV2 values, then ends */
     do
     :: n < NV2 -> write(me, VALUE(me, n)); n++
     :: else -> break
     od
  :: else ->      /* P1 writes without end */
     do
     :: write(me, VALUE(me, n));
        n = NEXT(n);
        nextSeq[me] == n   /* flow control: the next once this one has run */
     od
  fi
#endif
}

init {
  byte i = 0;
  atomic {
    do
    :: i < K -> pending[i] = VALUE(OLD, i); i++
    :: else -> break
    od;
    npending = K;
    if :: K > 0 -> requests = QUEUED :: else -> skip fi;
    runner = H;
    run Holder();
    run Producer(2);
    run Producer(3)
  };
#if NV > 0
  _nr_pr == 1;
  assert(nextSeq[OLD] == K && nextSeq[2] == NV && nextSeq[3] == NV);
  assert(runner == 0 && npending == 0 && requests == 0);
  assert(waiters == 0 && overLimit == 0)
#endif
}

/* No thread holds the gate for ever (checked with weak fairness) */
ltl released { [] (runner != 0 -> <> (runner == 0)) }
/* H eventually returns (see above) */
ltl returns { <> hReturned }
