/*
 * The hand-over of a sender core's delivery to a broadcasting thread
 * waiting for its turn: `_SenderCore.finishLocked()` and `awaitTurn()` in
 * Sources/Chaining/Internal/SenderCore+Queue.swift, with the queueing and
 * waiter registration of `claimShared(_:in:)` (SenderCore.swift) and the
 * lock-free stop `finish(claimed:)`. A core's counterpart of
 * Verification/HandOver.pml, which models the gate's.
 *
 * Checked exhaustively by spin: `Verification/check` builds it once per
 * configuration below and fails when spin finds an error, or when a mutant
 * passes.
 *
 * Threads: H delivers from the start (its own broadcast), with K values of
 * another thread (one that returned) queued behind it; P1 and P2 each
 * broadcast NV values from outside any delivery. The core is a holder's
 * (every claim under the lock). The limit (`DeliveryGate.handOffLimit`) is
 * 1. A waiter may time out at any time when TIMEOUT is 1.
 *
 * Properties. Assertions: never two threads deliver at once (the delivery
 * passes from the thread that hands it over to the one that takes it);
 * each thread's broadcasts are delivered once each, in order; at the end,
 * nothing is queued or carried, nobody delivers, no waiter is counted and
 * the limit is cleared. Spin also reports any state where a thread waits
 * for ever. LTL (`turns`, under weak fairness, with no time-out): a thread
 * waiting for its turn eventually stops waiting.
 *
 * Mutants (spin must find each):
 *   MUTANT_HANDOVER_NO_WAITER  the delivering thread hands over without
 *                              looking for a waiter: nobody takes it.
 *   MUTANT_TIMEOUT_FIRST       a waiter that timed out leaves before it
 *                              looks for a hand-over: nobody takes it.
 *   MUTANT_HANDOVER_STOPS      the hand-over clears `delivering`: another
 *                              thread claims while the taker delivers.
 *   MUTANT_KEEPS_LIMIT         the stop leaves `overLimit` set: spin
 *                              finds it left set at the end (a later
 *                              waiter with no time-out would wait for
 *                              ever, which `turns` says must not happen).
 *
 * What the model leaves out: the list and its observers (one observer;
 * Verification/SenderCore.pml checks the lists), `Pending.limit`, echoes,
 * waves, and `aloneWaiting` (SenderCore.pml's `awaitRunAlone`).
 */

#ifndef NV
#define NV 1
#endif
#ifndef K
#define K 1
#endif
#ifndef TIMEOUT
#define TIMEOUT 1
#endif

#define H 1
#define OLD 4              /* the sender of the K values queued at the start */
#define NS 5
#define CAP (K + 2 * NV + 1)
#define LIMIT 1

/* A value: its sender (`Pending.sender`) and its number among the sender's */
#define VALUE(s, n) (((s) << 4) | (n))
#define SENDER(x) ((x) >> 4)
#define SEQ(x) ((x) & 15)

/* The word's flags (SenderWord): D (delivering) and Q (queued) */
bit D = 1;
bit Q = (K > 0);
/* _SenderCore.State, under the lock (each section one atomic step) */
byte pending[CAP];
byte npend = 0;
byte carried[CAP];
byte ncarried = 0;
bit handedOver = 0;
bit overLimit = 0;
byte waiters = 0;

/* What the properties watch */
byte deliverer = H;        /* the thread that holds the delivery, 0 none */
byte nextSeq[NS];          /* per sender: the number of the next delivery */
byte done = 0;
byte awaiting = 0;         /* threads in awaitTurn() */

/* One delivery to the core's one observer, by the thread holding it */
inline deliverValue(me, x) {
  atomic {
    assert(deliverer == me);
    assert(SEQ(x) == nextSeq[SENDER(x)]);
    nextSeq[SENDER(x)]++
  }
}

/* _SenderCore.finishLocked(): delivers the queued batches, handing the
 * delivery over past the limit of other threads' values when a waiter is
 * counted; stops (clears the word's flags) once nothing is queued. */
inline finishLocked(me) {
  others = 0;
  hands = 0;
  do
  :: atomic {
       if
       :: npend == 0 && ncarried == 0 ->
#ifndef MUTANT_KEEPS_LIMIT
          overLimit = 0;
#endif
          D = 0; Q = 0; assert(deliverer == me); deliverer = 0;
          nb = 0; stopped = 1
       :: else ->
          D = 1; Q = 0;
          if
          :: ncarried > 0 ->
             i = 0;
             do
             :: i < ncarried -> batch[i] = carried[i]; i++
             :: else -> break
             od;
             nb = ncarried; ncarried = 0
          :: else ->
             i = 0;
             do
             :: i < npend -> batch[i] = pending[i]; i++
             :: else -> break
             od;
             nb = npend; npend = 0
          fi;
          stopped = 0
       fi
     };
     if
     :: stopped -> break
     :: else -> skip
     fi;
     i = 0;
     do
     :: i < nb ->
        if
        :: SENDER(batch[i]) != me && others >= LIMIT ->
           atomic {
             overLimit = 1;
#ifdef MUTANT_HANDOVER_NO_WAITER
             if
             :: true ->
#else
             if
             :: waiters > 0 ->
#endif
                j = i; ncarried = 0;
                do
                :: j < nb -> carried[ncarried] = batch[j]; ncarried++; j++
                :: else -> break
                od;
                handedOver = 1;
                assert(deliverer == me); deliverer = 0;
#ifdef MUTANT_HANDOVER_STOPS
                D = 0;
#endif
                hands = 1
             :: else -> hands = 0
             fi
           };
           if
           :: hands -> break
           :: else -> skip
           fi
        :: else -> skip
        fi;
        if
        :: SENDER(batch[i]) != me -> others++
        :: else -> skip
        fi;
        deliverValue(me, batch[i]);
        i++
     :: else -> break
     od;
     if
     :: hands -> break
     :: else -> skip
     fi
  od
}

/* _SenderCore.awaitTurn(): waits until the delivering thread hands over
 * (then goes on with finishLocked()), the limit is cleared, or it times
 * out. */
inline awaitTurn(me) {
  timedOut = 0;
  awaiting++;
  do
  :: atomic {
#ifdef MUTANT_TIMEOUT_FIRST
       if
       :: !overLimit || timedOut -> waiters--; step = 2
       :: else ->
          if
          :: handedOver ->
             handedOver = 0; waiters--; assert(deliverer == 0); deliverer = me; step = 1
          :: else -> step = 0
          fi
       fi
#else
       if
       :: handedOver ->
          handedOver = 0; waiters--; assert(deliverer == 0); deliverer = me; step = 1
       :: !handedOver && (!overLimit || timedOut) -> waiters--; step = 2
       :: else -> step = 0
       fi
#endif
     };
     if
     :: step == 1 -> awaiting--; finishLocked(me); break
     :: step == 2 -> awaiting--; break
     :: else ->
        if
        :: TIMEOUT -> timedOut = 1
        :: true -> skip
        fi
     fi
  od
}

/* A broadcast from outside any delivery (`broadcast`, `claim(_:in:)` and
 * `claimShared` under the lock, then `run`). */
inline broadcast(me, x) {
  atomic {
    if
    :: D == 0 ->
       D = 1; assert(deliverer == 0); deliverer = me; claim = 1
    :: else ->
       Q = 1; pending[npend] = x; npend++;
       if
       :: overLimit -> waiters++; claim = 2
       :: else -> claim = 0
       fi
    fi
  };
  if
  :: claim == 1 ->
     deliverValue(me, x);
     /* finish(claimed:): a compare-and-swap that stops unless a flag
      * besides `delivering` is set */
     atomic {
       if
       :: D == 1 && Q == 0 -> D = 0; assert(deliverer == me); deliverer = 0; stopped = 1
       :: else -> stopped = 0
       fi
     };
     if
     :: !stopped -> finishLocked(me)
     :: else -> skip
     fi
  :: claim == 2 -> awaitTurn(me)
  :: else -> skip
  fi
}

proctype Delivering() {
  byte batch[CAP];
  byte nb, i, j, others;
  bit stopped, hands;
  byte me = H;
  /* Its own value, claimed and delivered; the queue built up meanwhile */
  deliverValue(me, VALUE(H, 0));
  finishLocked(me);
  atomic { done++ }
}

proctype Producer(byte me) {
  byte batch[CAP];
  byte nb, i, j, others, step, claim, n;
  bit stopped, hands, timedOut;
  n = 0;
  do
  :: n < NV -> broadcast(me, VALUE(me, n)); n++
  :: else -> break
  od;
  atomic { done++ }
}

init {
  byte k = 0;
  atomic {
    do
    :: k < K -> pending[k] = VALUE(OLD, k); k++
    :: else -> break
    od;
    npend = K;
    run Delivering();
    run Producer(2);
    run Producer(3)
  };
  done == 3;
  assert(npend == 0 && ncarried == 0);
  assert(D == 0 && Q == 0 && deliverer == 0);
  assert(waiters == 0 && !handedOver && !overLimit);
  assert(nextSeq[OLD] == K && nextSeq[2] == NV && nextSeq[3] == NV && nextSeq[H] == 1)
}

/* A thread waiting for its turn eventually stops waiting: it takes the
 * delivery, or the limit is cleared (with no time-out to leave by). */
ltl turns { [] (awaiting > 0 -> <> (awaiting == 0)) }
