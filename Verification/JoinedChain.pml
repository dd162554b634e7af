/*
 * Two producer threads writing into one chain joined from two sources
 * (`left.chain().combine(right.chain())`), issue #34: the chain's gate
 * and its hand-over to a writer waiting for its turn
 * (Sources/Chaining/Internal/DeliveryGate+Queue.swift: `queue`, `runPending`,
 * `overLimit`, `waiters`, `awaitTurn(in:waits:)`, `drain`,
 * `handOver(leaving:)`, `runRequested`), the combine's wave flush
 * (`DeliveryContext.flushWave`, `deferTurn`,
 * Sources/Chaining/Internal/Wave.swift), and, when a side hops, the
 * join's own gate (Sources/Chaining/Chain/JoinSides.swift). The gate's
 * protocol is in Verification/JoinedChainGate.inc, included once per gate.
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * and fails when spin finds an error, or when a mutant passes. See
 * Documentation/Reliability.md.
 *
 * Threads:
 *   L (1), R (2)  the producers. Each write is a wave: the value goes
 *                 through the chain's gate G (run at once when G is idle,
 *                 queued otherwise; queued while `overLimit` is set: the
 *                 writer registers as a waiter and waits for its turn); at
 *                 the wave's end the thread sends the combine's pair if a
 *                 side changed on it meanwhile, again for as long as one
 *                 did, then takes the turns it deferred.
 *   H (5)         JOIN=1: the left side is `left.chain().receive(on:)`.
 *                 L's values, run under G, go to the hop's queue; H, the
 *                 queue's thread, runs each as a wave of its own into the
 *                 join gate J, inside the hop gate's delivery. R's values,
 *                 run under G, go into J from the thread running G (J's
 *                 delivery nested in G's run). The pair is sent through J.
 *                 A writer inside a delivery whose value J queued while
 *                 `overLimit` was set defers its turn to the end of its
 *                 wave (`deferTurn`). (The hop's own gate is left out:
 *                 only H delivers into it, so it never queues.)
 *
 * A side's value, run under the gate its sides run under (G, or J when
 * JOIN=1), stores the new value (`fresh`) and puts the combine in the
 * running thread's wave list unless that thread's pair is still to be
 * sent (`WaveFlush.deferredBy`: `inList`). The pair (FL), sent at the end
 * of the wave through the same gate, run at once or queued like any
 * value, takes the combine out of that thread's list and reaches the steps
 * after the join (`fresh` cleared).
 *
 * Properties: assertions (one runner per gate; at the end of a bounded
 * run, when nothing can move: every value ran its side once, every change
 * reached a pair, the gates are idle, their queues empty, nobody waits),
 * and three LTL properties at the end of this file:
 *   returns   L, if it claims a gate or runs another thread's value
 *             without end, also returns from its writes without end: no
 *             thread is held by another thread's writes (WATCH_RETURNS);
 *   ran       each value written eventually runs its side;
 *   reaches   a side's stored value is eventually sent in a pair, to the
 *             steps after the join (WATCH_REACHES).
 * With a producer that writes without end, `ran` and `reaches` are
 * checked under weak fairness (`pan -a -f`). `returns` needs none: a
 * cycle in which L claims or runs R's values without end has both
 * producers moving without end (R must write for L to run its values or
 * to find `queued`), and init has ended, so every such cycle is fair.
 *
 * The code (CODE): the assertions and all three properties hold. Each of
 * its changes has a mutant spin catches:
 *   MUTANT_COUNT_PER_CLAIM  (`reaches`) each runPending counts from 0:
 *                 drain's loop (L runs R's value, empties the queue,
 *                 releases, sees `queued` because R wrote again, claims
 *                 again) never reaches the limit; L's wave never ends, so
 *                 the combine never sends its pair.
 *   MUTANT_CLEARS_ON_EMPTY  (`reaches`) emptying the queue clears
 *                 `overLimit` whatever the count: R, writing right then,
 *                 does not wait, and the same loop goes on.
 *   MUTANT_NO_GEN  (`ran`, `returns`) FIX_GEN undone: a thread claims
 *                 again after its own release (drain's loop after a
 *                 release that saw `queued`; handOver's re-claim when no
 *                 writer waits) whoever claimed meanwhile. With FIX_GEN
 *                 the release stores a new generation in `word` and the
 *                 re-claim expects that word (`reclaim(from:in:)`);
 *                 another claim meanwhile means that thread sees `queued`
 *                 when it releases. Without it, `ran`: L hands over;
 *                 before it looks, R, the waiter, claims, takes itself
 *                 out, runs the queue and releases; L finds `waiters` 0,
 *                 claims again and runs R's next values, and so on; with
 *                 L in `runRequested`, whose own value is queued only once
 *                 that drain returns, L's value never runs. (`turnsTaken`,
 *                 FIX_TURNS, closed this one alone before the generation
 *                 replaced it.) And `returns`: L can be kept claiming and
 *                 running R's values one at a time for ever.
 *   MUTANT_SHARED_WAVE  (`returns`) FIX_OWN_WAVES undone: another
 *                 thread's value, run by the holder, joins the holder's
 *                 wave, whose flush then sends again after each value of
 *                 the other side it ran. With FIX_OWN_WAVES it is a wave
 *                 of its own (`DeliveryContext.runAsOwnWave`): its pair is
 *                 queued behind it as the holder's own value.
 * Without CODE: the code before them (2ce3009), which fails `ran` and
 * `reaches` by the trails of MUTANT_NO_GEN and the two count mutants.
 *
 * Variants evaluated on the way (Documentation/Reliability.md tells the
 * trails), all failing `returns`: the code without FIX_GEN and
 * FIX_OWN_WAVES (until issue #34's last change); BUDGET=2 (a wave's pair
 * sends share one count, a turn gets a fresh one); FIX_OWNED_MARK (one
 * mark per thread past its count, taken out when its count ends) instead
 * of FIX_KEEP_OVERLIMIT, without FIX_OWN_WAVES.
 *
 * Configurations (-D flags):
 *   JOIN=0|1     without or with the hop on the left side (and so J)
 *   NL=n, NR=n   how many values L and R write; 0: without end
 *   HANDOFF=n    DeliveryGate.handOffLimit (64 in Swift; 1 by default)
 *   TIMEOUT=0|1  whether a waiter may give up (its 1 ms `turnWait`) at
 *                any iteration of `awaitTurn`'s loop; 0 (the default) for
 *                the LTL searches, where a waiter timing out before each
 *                check of the holder would be a cycle of timing, not of
 *                the protocol
 *   WATCH_RETURNS, WATCH_REACHES
 *                record what `returns` and `reaches` read; without them
 *                those variables stay 0, which keeps the other searches
 *                small
 *   CODE         the code: BUDGET=1, FIX_KEEP_OVERLIMIT,
 *                FIX_END_CLEARS (`overLimit` cleared when a call past its
 *                count releases the gate with nothing queued), FIX_GEN
 *                and FIX_OWN_WAVES, each undone by its mutant above
 *   BUDGET=0|1|2, FIX_GEN, FIX_KEEP_OVERLIMIT, FIX_OWN_WAVES, FIX_TURNS,
 *   FIX_OWNED_MARK
 *                the changes above one by one, for the variants: BUDGET 0
 *                counts per runPending (2ce3009), 1 per call, 2 per call but
 *                one count for a wave's pairs and a fresh one per turn
 *   MUTANT_UNBOUNDED_DRAIN
 *                the code before issue #34: runPending runs until the
 *                queue is empty, nobody waits
 *   MUTANT_NO_WAITER
 *                a writer queued while `overLimit` is set does not
 *                register as a waiter (nor wait)
 *   MUTANT_HANDOVER_NO_RECHECK
 *                handOver releases the gate and returns true without
 *                looking at `waiters` again
 *
 * What the model leaves out:
 * - Flow control: a producer writes its next value once its previous one
 *   has run its side (one value in flight per producer), which bounds the
 *   queues. The hostage needs no longer queue.
 * - Batches: runPending takes one value at a time from the head of the
 *   queue, under the lock, and makes the limit's check in that same
 *   critical section (as HandOver.pml).
 * - Scale: handOffLimit is 1 (the count, not its size, is the protocol),
 *   a writer without end meets one that writes once.
 * - close(), invalidate(), `deliverAlone`, echoes and causes, a handler
 *   writing to its own chain: Verification/DeliveryGate.pml checks those.
 * - The combine's ranks, several combines, nested waves on one thread;
 *   waves that end inside a delivery (`awaitTurn(waits: false)`).
 * - FIX_OWN_WAVES applies to the values run under the sides' gate. With
 *   JOIN=1, R's value run under G by another thread enters J as a value
 *   of that thread (the sender J sees), so the change it makes joins
 *   that thread's wave, as without the change; the Swift change would
 *   make it a wave of its own already at G, whose pair, sent from inside
 *   G's run, goes through J like any value of that thread.
 * - Memory order: spin interleaves whole statements under sequential
 *   consistency (see DeliveryGate.pml).
 */

#ifndef JOIN
#define JOIN 0
#endif
#ifndef NL
#define NL 0
#endif
#ifndef NR
#define NR 0
#endif
#define BOUNDED (NL > 0 && NR > 0)
#ifndef HANDOFF
#define HANDOFF 1
#endif
#ifndef TIMEOUT
#define TIMEOUT 0
#endif
/* CODE: the hand-over as Sources/Chaining/Internal/DeliveryGate+Queue.swift has
 * it: one count per call (BUDGET 1), `overLimit`
 * kept set past the count until the call releases the gate with nothing
 * queued (FIX_KEEP_OVERLIMIT, FIX_END_CLEARS), the generation in `word`
 * (FIX_GEN) and another thread's value run as a wave of its own
 * (FIX_OWN_WAVES); each undone by a mutant. Without CODE: the code before
 * them, 2ce3009 */
#ifdef CODE
#ifndef MUTANT_COUNT_PER_CLAIM
#define BUDGET 1
#endif
#ifndef MUTANT_CLEARS_ON_EMPTY
#define FIX_KEEP_OVERLIMIT
#define FIX_END_CLEARS
#endif
#ifndef MUTANT_NO_GEN
#define FIX_GEN
#endif
#ifndef MUTANT_SHARED_WAVE
#define FIX_OWN_WAVES
#endif
#endif
#ifndef BUDGET
#define BUDGET 0
#endif

#ifdef MUTANT_UNBOUNDED_DRAIN
#define HANDSOFF 0
#else
#define HANDSOFF 1
#endif

#define QUEUED 1
#define NG 2            /* gates: G (the chain's), J (the join's) */
#define GG 0
#define GJ 1
#define CAP 6           /* per gate: at most a value per producer and a pair per thread */
#define NT 8            /* thread ids 1..7 */

/* A value: its kind, and the thread that sent it (`Queued.sender`) */
#define LV 1            /* a value of L's source, then of the left side */
#define RV 2            /* a value of R's source, then of the right side */
#define FL 3            /* the combine's pair, at the end of a wave */
#define SENDER(x) ((x) & 7)
#define KIND(x) ((x) >> 3)
#define VALUE(kind, me) (((kind) << 3) | (me))

/* DeliveryGate, per gate */
byte runner[NG];        /* `word`: the running thread's id, 0 idle */
byte requests[NG];      /* `requests`: QUEUED (nothing closes here) */
byte pend[NG * CAP];    /* `pending`: guarded by the stripe's lock */
byte npend[NG];
bit overLimit[NG];      /* guarded by the stripe's lock */
#ifdef FIX_OWNED_MARK
byte overBy[NG];        /* FIX_OWNED_MARK: a bit per thread past its count, under the lock */
#endif
byte waiters[NG];       /* guarded by the stripe's lock */
#ifdef FIX_GEN
byte since[NG];         /* FIX_GEN: per thread, whether another claimed since its release */
#endif
#ifdef FIX_TURNS
byte turns[NG];         /* FIX_TURNS: the turns waiters took (modulo 4), under the lock */
#endif

/* The combine */
bit inList[NT];         /* WaveFlush.deferredBy: the thread's pair is still to be sent */
chan hop = [1] of { byte };  /* JOIN=1: the hop's queue */

/* What the properties watch */
bit inflight[3];        /* the producer's value has not run its side yet */
bit back;               /* WATCH_RETURNS: L is in its loop, not in a write */
bit busy;          /* WATCH_RETURNS: flips each time L claims a gate or runs another thread's value */
bit fresh[3];           /* WATCH_REACHES: a side's value stored, not yet sent in a pair */
#if BOUNDED
byte ran[3];            /* the sides run, per producer */
#endif
#if BOUNDED || defined(WATCH_REACHES)
#define FRESH(kind) fresh[kind] = 1
#define SENT fresh[LV] = 0; fresh[RV] = 0
#else
#define FRESH(kind) skip
#define SENT skip
#endif
#ifdef WATCH_RETURNS
#define BUSY(me) if :: me == LV -> busy = !busy :: else -> skip fi
#define BACK(me, b) if :: me == LV -> back = b :: else -> skip fi
#else
#define BUSY(me) skip
#define BACK(me, b) skip
#endif

/* The calling thread's DeliveryContext: its wave list holds the combine
 * (`waveList`), the turns it deferred to the end of its wave (`turn`,
 * per gate: a count, as `turns` is a list, one entry per deferral); then
 * its locals in each gate's calls. */
#ifdef FIX_TURNS
#define SEEN_LOCAL byte seen[NG];
#else
#define SEEN_LOCAL
#endif
#ifdef FIX_GEN
#define GEN_LOCAL bit again[NG];
#else
#define GEN_LOCAL
#endif
#define GATE_LOCALS \
  bit waveList; byte turn[NG]; \
  byte st[NG], cur[NG], oth[NG], k; \
  bit xp[NG], xq[NG], res[NG], nest[NG], wt[NG], fl[NG]; \
  SEEN_LOCAL GEN_LOCAL

/* The gate the sides run under */
#if JOIN
#define SIDES GJ
#else
#define SIDES GG
#endif

/* A side's value, or the pair, run under the gate of the sides */
inline runSide(x, me) {
  d_step {
    if
    :: KIND(x) == FL ->
       /* WaveFlush.send(from:): the pair reaches the steps after the join */
       inList[SENDER(x)] = 0;
       SENT
    :: else ->
       FRESH(KIND(x));
       inflight[KIND(x)] = 0;
#if BOUNDED
       ran[KIND(x)]++;
#endif
       /* WaveFlush.changed(in:) */
       if
       :: inList[me] -> skip
#ifdef FIX_OWN_WAVES
       :: !inList[me] && SENDER(x) != me ->
          /* another thread's value runs as a wave of its own, which ends
           * inside this run: its pair is queued behind it, as a value of
           * this thread (the runner), and runs before the gate is left */
          inList[me] = 1;
          assert(npend[SIDES] < CAP);
          pend[SIDES * CAP + npend[SIDES]] = VALUE(FL, me); npend[SIDES]++;
          requests[SIDES] = requests[SIDES] | QUEUED
       :: !inList[me] && SENDER(x) == me -> inList[me] = 1; waveList = 1
#else
       :: !inList[me] -> inList[me] = 1; waveList = 1
#endif
       fi
    fi
  }
}

#if JOIN
/* The join gate J: the sides and the pair run under it */
#define GI GJ
#define runValue runSide
#define RUNS_AT_ONCE 1
#define runHeld runHeldJ
#define countOthers countOthersJ
#define runPending runPendingJ
#define gate gateJ
#include "JoinedChainGate.inc"
#undef GI
#undef runValue
#undef RUNS_AT_ONCE
#undef runHeld
#undef countOthers
#undef runPending
#undef gate

/* A value of the chain's gate G: L's goes to the hop's queue, R's into
 * the join gate, sent by the thread running G, inside its delivery */
inline runSource(x, me) {
  if
  :: KIND(x) == LV -> hop!x
  :: else -> gateJ(VALUE(RV, me), me, S_ENTER, 1)
  fi
}
#define runValue runSource
#define RUNS_AT_ONCE 0
#define PAIRS GJ
#else
#define runValue runSide
#define RUNS_AT_ONCE 1
#define PAIRS GG
#endif

/* The chain's gate G */
#define GI GG
#define runHeld runHeldG
#define countOthers countOthersG
#define runPending runPendingG
#define gate gateG
#include "JoinedChainGate.inc"
#undef GI
#undef runValue
#undef RUNS_AT_ONCE
#undef runHeld
#undef countOthers
#undef runPending
#undef gate

/* The end of the thread's wave (`flushWave`): send the pair, through the
 * gate the sides run under, as long as a side changed on this thread
 * since the last send; then, once no pair is left, the turns deferred to
 * the end of the wave (outside every delivery: `awaitTurn(waits: true)`).
 * Only the join gate's calls are ever nested here. */
inline endWave(me) {
#if BUDGET == 2
  oth[PAIRS] = 0;   /* one count for the wave's pairs */
#ifdef FIX_OWNED_MARK
  atomic { overBy[PAIRS] = overBy[PAIRS] & ~(1 << me) };
#endif
#endif
  do
  :: waveList ->
     waveList = 0;
#if JOIN
     gateJ(VALUE(FL, me), me, S_ENTER, 0)
#else
     gateG(VALUE(FL, me), me, S_ENTER, 0)
#endif
#if JOIN
  :: !waveList && turn[GJ] > 0 ->
     turn[GJ]--;
     gateJ(0, me, S_AWAIT, 0)
#endif
  :: else -> break
  od;
#if BUDGET == 2 && defined(FIX_OWNED_MARK)
  atomic { overBy[PAIRS] = overBy[PAIRS] & ~(1 << me) }
#else
  skip
#endif
}

proctype Producer(byte me; byte writes) {
  GATE_LOCALS;
  byte n = 0;     /* writes so far, when bounded */
  do
  :: writes == 0 || n < writes ->
     /* flow control: the previous value has run its side */
     atomic { inflight[me] == 0 -> BACK(me, 0); inflight[me] = 1 };
     gateG(VALUE(me, me), me, S_ENTER, 0);
     endWave(me);
     atomic { BACK(me, 1); if :: writes > 0 -> n++ :: else -> skip fi }
  :: else -> break
  od
}

#if JOIN
/* QueueHop: each value a wave of its own, into the join gate, inside the
 * hop gate's delivery (the hop's gate is left out: only H runs it) */
proctype Hop(byte me) {
  GATE_LOCALS;
  byte hv;
end:
  do
  :: hop?hv -> hv = 0;
     gateJ(VALUE(LV, me), me, S_ENTER, 1);
     endWave(me)
  od
}
#endif

init {
  atomic {
    run Producer(LV, NL);
    run Producer(RV, NR);
#if JOIN
    run Hop(5);
#endif
  };
#if BOUNDED
  /* Nothing can move any more: every value ran its side once, every
   * change was sent in a pair, the gates are idle and empty, nobody
   * waits. */
  timeout;
  assert(ran[LV] == NL && ran[RV] == NR);
  assert(!fresh[LV] && !fresh[RV]);
  assert(runner[GG] == 0 && requests[GG] == 0 && npend[GG] == 0 && waiters[GG] == 0);
  assert(runner[GJ] == 0 && requests[GJ] == 0 && npend[GJ] == 0 && waiters[GJ] == 0)
#endif
}

/* L, if it claims a gate or runs another thread's value without end
 * (busy flips for ever), returns from its writes without end. With
 * WATCH_RETURNS. */
ltl returns { ([] <> busy && [] <> !busy) -> [] <> back }
/* Each value written eventually runs its side. */
ltl ran { [] (inflight[LV] -> <> !inflight[LV]) && [] (inflight[RV] -> <> !inflight[RV]) }
/* A side's stored value is eventually sent in a pair. With WATCH_REACHES. */
ltl reaches { [] (fresh[LV] -> <> !fresh[LV]) && [] (fresh[RV] -> <> !fresh[RV]) }
