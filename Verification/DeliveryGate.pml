/*
 * A model of a chain's delivery gate (Sources/Chaining/Internal/DeliveryGate.swift,
 * and DeliveryGate+Close.swift for `close()`)
 * and of the sender core's path that runs a chain without claiming its gate
 * (`_SenderCore.deliver(_:to:)` -> `DeliveryGate.deliverAlone`, and the waits
 * of `Observer.invalidate()` in Sources/Chaining/Observers/Observer.swift).
 *
 * Checked exhaustively by spin: `Verification/check` builds it once per
 * configuration below and fails when spin finds an error, or when a mutant
 * passes. See Documentation/Reliability.md. The properties are the
 * assertions (in the handler, at an invalidate()'s return, at the end),
 * the end states (no thread waits forever), and two LTL properties at the
 * end of the file, checked with `pan -a`: `woken` (a parked close() or
 * awaitRunAlone is eventually woken) and `emptied` (the queue is
 * eventually emptied).
 *
 * Configurations (-D flags):
 *   ALONE=1      the chain is its sender's only observer: thread S broadcasts
 *                NV values through the core, which runs the gate with
 *                `deliverAlone`; threads I1 and I2 invalidate the observer.
 *   ALONE=0      two threads D1 and D2 deliver through the gate's claim
 *                (`deliver`), as two sources of a merged chain do; I1 may close.
 *   INSIDE=1     I2 calls invalidate() from inside another chain's handler
 *                (`DeliveryContext.depth > 0`): it must not wait.
 *   CLOSERS=n    how many invalidating threads run (0, 1 or 2).
 *   MUTANT_D1    invalidate() as it was before issue 26: a call that finds
 *                the gate already closed returns at once (spin must find D1).
 *   MUTANT_SETTLE_INSIDE
 *                the call that closed the gate records it settled even from
 *                inside a delivery that did not wait for a run in progress:
 *                a later call then skips its wait (spin must find the
 *                handler still running).
 *   MUTANT_NO_REQUESTS_READ
 *                the release does not read `requests` after its store (spin
 *                must find a lost value or a lost wake-up).
 *
 * What the model leaves out, and where that is covered:
 * - Memory order. Spin interleaves whole statements under sequential
 *   consistency. The Swift code's fences and orderings are argued in the
 *   comments beside each atomic operation (the light and heavy fence pair in
 *   `releaseReadingRequests`/`queue`/`closeBusy`, the acquiring load in
 *   `deliverAlone`), and exercised by the thread-sanitizer tests.
 * - The values' causes (echo dropping) and nested deliveries on one thread.
 * - The core's own queue of broadcasts: one thread broadcasts here.
 */

#ifndef ALONE
#define ALONE 1
#endif
#ifndef INSIDE
#define INSIDE 0
#endif
#ifndef CLOSERS
#define CLOSERS 2
#endif
#ifndef NV
#define NV 2
#endif

#define QUEUED  1
#define WAITING 2
#define CLOSED  4
#define NT 5            /* thread ids 1..4 */

/* DeliveryGate */
byte runner = 0;        /* `word` without `alone`: the running thread's id, 0 idle */
byte requests = 0;      /* `requests`: QUEUED | WAITING | CLOSED */
bit settled = 0;        /* DeliveryGate.settled, a bit of `requests` set after CLOSED */
byte pending[4];        /* `pending`: values queued, guarded by gstripe */
byte npending = 0;
bit gstripe = 0;        /* the gate's ParkingLot stripe lock */
bit gsleep[NT];         /* threads parked on the gate's stripe */

/* _SenderCore (ALONE only) */
bit subInList = 1;      /* the subscription is in the core's current list */
bit coreDelivering = 0; /* `delivering` in the core's word */
bit coreQueued = 0;     /* `queued` in the core's word */
bit claimedSub = 0;     /* the list the delivering thread claimed holds the subscription */
bit aloneWaiting = 0;   /* State.aloneWaiting */
bit coreLock = 0;       /* the core's Protected lock */
bit cstripe = 0;        /* the core's ParkingLot stripe lock */
bit csleep[NT];

/* What the properties watch */
byte inHandler = 0;     /* threads running the chain's handler */
byte ran[4];            /* times each value ran */
bit waitedReturned = 0; /* an invalidate() from outside any delivery returned */

inline lock(l)   { atomic { l == 0 -> l = 1 } }
inline unlock(l) { l = 0 }

/* The chain's handler. Never two at once; none after an invalidate() from
 * outside a delivery returned; a value at most once. */
inline handler(v) {
  atomic {
    assert(inHandler == 0);
    assert(!waitedReturned);
    assert(ran[v] == 0);
    inHandler = 1;
    ran[v]++
  };
  inHandler = 0
}

/* ParkingLot.wakeAll under the stripe's lock */
inline wakeGate() {
  lock(gstripe);
  gsleep[1] = 0; gsleep[2] = 0; gsleep[3] = 0; gsleep[4] = 0;
  unlock(gstripe)
}

/* DeliveryGate.releaseReadingRequests: a store, the light fence, a read */
inline releaseReading(me, r) {
  runner = 0;
#ifdef MUTANT_NO_REQUESTS_READ
  r = 0
#else
  r = requests
#endif
}

/* DeliveryGate.runPending: batch after batch until the queue is empty */
inline runPending(me) {
  do
  :: lock(gstripe);
     if
     :: npending == 0 ->
        requests = requests & ~QUEUED;
        unlock(gstripe);
        break
     :: else ->
        nb = npending;
        b0 = pending[0]; b1 = pending[1]; b2 = pending[2]; b3 = pending[3];
        npending = 0;
        unlock(gstripe);
        /* `for queued in batch where !isClosed` */
        if :: nb > 0 && (requests & CLOSED) == 0 -> handler(b0) :: else -> skip fi;
        if :: nb > 1 && (requests & CLOSED) == 0 -> handler(b1) :: else -> skip fi;
        if :: nb > 2 && (requests & CLOSED) == 0 -> handler(b2) :: else -> skip fi;
        if :: nb > 3 && (requests & CLOSED) == 0 -> handler(b3) :: else -> skip fi
     fi
  od
}

/* DeliveryGate.drain: run the queue while the gate can be claimed */
inline drain(me) {
  do
  :: atomic { if :: runner == 0 -> runner = me; claimed = 1 :: else -> claimed = 0 fi };
     if
     :: !claimed -> break
     :: else ->
        runPending(me);
        releaseReading(me, r);
        if :: (r & WAITING) != 0 -> wakeGate() :: else -> skip fi;
        if :: (r & QUEUED) == 0 -> break :: else -> skip fi
     fi
  od
}

/* DeliveryGate.release: serve what was requested meanwhile */
inline release(me) {
  releaseReading(me, r);
  if
  :: r != 0 ->
     if :: (r & WAITING) != 0 -> wakeGate() :: else -> skip fi;
     if :: (r & QUEUED) != 0 -> drain(me) :: else -> skip fi
  :: else -> skip
  fi
}

/* DeliveryGate.queue */
inline queue(v, me) {
  lock(gstripe);
  if
  :: (requests & CLOSED) != 0 -> flagged = 0
  :: else ->
     pending[npending] = v; npending++;
     if
     :: (requests & QUEUED) != 0 -> flagged = 0
     :: else -> requests = requests | QUEUED; flagged = 1
     fi
  fi;
  unlock(gstripe);
  /* (The runner being this thread further up its stack is not modelled.)
   * The heavy fence, then the drain. */
  if :: flagged -> drain(me) :: else -> skip fi
}

/* DeliveryGate.deliver */
inline deliver(v, me) {
  atomic { if :: runner == 0 -> runner = me; claimed = 1 :: else -> claimed = 0 fi };
  if
  :: claimed ->
     if
     :: requests == 0 -> handler(v); release(me)
     :: else ->
        /* runRequested */
        if :: (requests & CLOSED) == 0 -> runPending(me) :: else -> skip fi;
        if
        :: (requests & CLOSED) != 0 -> release(me)
        :: else -> handler(v); release(me)
        fi
     fi
  :: else -> queue(v, me)
  fi
}

/* DeliveryGate.deliverAlone: two loads, then the handler without a claim */
inline deliverAlone(v, me) {
  rq = requests;
  w = runner;
  if
  :: rq == 0 && w == 0 -> handler(v)
  :: else -> deliver(v, me)
  fi
}

/* DeliveryGate.close, with closeBusy; `inside` is DeliveryContext.depth > 0 */
inline close(me, inside, closedHere) {
  atomic { orig = requests; requests = requests | CLOSED };
  w = runner;
  if
  :: w != 0 || (orig & QUEUED) != 0 ->
     lock(gstripe);
     requests = requests & ~QUEUED;
     npending = 0;
     unlock(gstripe);
     if
     :: w != 0 && !inside ->
        requests = requests | WAITING;
        /* the heavy fence; ParkingLot.wait until the gate is idle */
        lock(gstripe);
        do
        :: runner == 0 -> break
        :: else -> gsleep[me] = 1; unlock(gstripe); (gsleep[me] == 0); lock(gstripe)
        od;
        unlock(gstripe)
     :: else -> skip
     fi
  :: else -> skip
  fi;
  closedHere = ((orig & CLOSED) == 0)
}

/* _SenderCore.awaitRunAlone(of:) */
inline awaitRunAlone(me) {
  lock(cstripe);
  do
  :: lock(coreLock);
     if
     :: !(coreDelivering && claimedSub) -> done = 1
     :: else ->
        atomic { if :: coreDelivering -> coreQueued = 1; done = 0 :: else -> done = 1 fi };
        if :: !done -> aloneWaiting = 1 :: else -> skip fi
     fi;
     unlock(coreLock);
     if
     :: done -> break
     :: else -> csleep[me] = 1; unlock(cstripe); (csleep[me] == 0); lock(cstripe)
     fi
  od;
  unlock(cstripe)
}

/* _SenderCore.unsubscribe(_:awaitingAlone:); `quiet` is what it returns:
 * whether no run without a claim is in progress any more */
inline unsubscribe(me, inside, quiet) {
  lock(coreLock);
  if
  :: coreDelivering && claimedSub -> removed = 0
  :: else -> subInList = 0; removed = 1
  fi;
  unlock(coreLock);
  if
  :: !removed ->
     if :: !inside -> awaitRunAlone(me) :: else -> skip fi;
     lock(coreLock); subInList = 0; unlock(coreLock);
     quiet = !inside
  :: else -> quiet = 1
  fi
}

/* Observer.invalidate(), and so the release of its last reference */
inline invalidate(me, inside) {
  close(me, inside, closedHere);
  if
  :: closedHere ->
     if
     :: ALONE ->
        unsubscribe(me, inside, quiet);
#ifndef MUTANT_SETTLE_INSIDE
        if :: quiet -> settled = 1 :: else -> skip fi
#else
        settled = 1
#endif
     :: else -> skip
     fi
  :: else ->
#ifndef MUTANT_D1
     if
     :: ALONE && !inside && !settled -> awaitRunAlone(me); settled = 1
     :: else -> skip
     fi
#else
     skip
#endif
  fi;
  if
  :: !inside -> atomic { assert(inHandler == 0); waitedReturned = 1 }
  :: else -> skip
  fi
}

/* _SenderCore.broadcast, its delivery to a list of one, and finish */
proctype Sender(byte me) {
  byte v = 0, r, w, rq, nb, b0, b1, b2, b3;
  bit claimed, flagged, fin;
  do
  :: v < NV ->
     atomic {
       if
       :: subInList -> coreDelivering = 1; claimedSub = 1
       :: else -> claimedSub = 0
       fi
     };
     if
     :: claimedSub ->
        deliverAlone(v, me);
        /* finish(claimed:): a compare-and-swap, else finishLocked() */
        atomic { if :: !coreQueued -> coreDelivering = 0; fin = 1 :: else -> fin = 0 fi };
        if
        :: !fin ->
           lock(coreLock);
           fin = aloneWaiting;
           aloneWaiting = 0;
           coreDelivering = 0;
           coreQueued = 0;
           unlock(coreLock);
           if
           :: fin ->
              lock(cstripe);
              csleep[1] = 0; csleep[2] = 0; csleep[3] = 0; csleep[4] = 0;
              unlock(cstripe)
           :: else -> skip
           fi
        :: else -> skip
        fi
     :: else -> skip
     fi;
     v++
  :: else -> break
  od
}

/* A source of a chain with several: delivers through the gate's claim */
proctype Deliverer(byte me; byte first) {
  byte v = first, r, w, nb, b0, b1, b2, b3;
  bit claimed, flagged;
  do
  :: v < first + NV / 2 -> deliver(v, me); v++
  :: else -> break
  od
}

proctype Invalidator(byte me; bit inside) {
  byte orig, w, r, nb, b0, b1, b2, b3;
  bit closedHere, removed, quiet, done, claimed, flagged;
  invalidate(me, inside)
}

init {
  atomic {
#if ALONE
    run Sender(1);
#else
    run Deliverer(1, 0);
    run Deliverer(2, NV / 2);
#endif
#if CLOSERS > 0
    run Invalidator(3, 0);
#endif
#if CLOSERS > 1
    run Invalidator(4, INSIDE);
#endif
  };
  /* Everything ended: no thread is parked for good (spin reports that as an
   * invalid end state). With nobody closing, every value ran exactly once. */
  _nr_pr == 1;
#if CLOSERS == 0
  byte i = 0;
  do
  :: i < NV -> assert(ran[i] == 1); i++
  :: else -> break
  od
#endif
}

/* Liveness, checked with `pan -a` (see Verification/check). A thread
 * parked in close() or in awaitRunAlone is eventually woken. */
ltl woken {
  [] ((gsleep[3] || gsleep[4] || csleep[3] || csleep[4]) ->
      <> !(gsleep[3] || gsleep[4] || csleep[3] || csleep[4]))
}
/* The queue is eventually emptied: by a runner, which runs what it takes
 * unless the gate is closed, or by close(), which drops it. */
ltl emptied { [] (npending > 0 -> <> (npending == 0)) }
