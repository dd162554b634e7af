/*
 * A holder bound both ways to a property of a model that lives on a
 * serial queue: `ValueHolder.bind(to:_:on:)`, in
 * Sources/Chaining/Observation/ValueHolder+Bind.swift, as being rewritten
 * (versions instead of values sent as they are), and the defect it fixes:
 * a field bound to a model showing `v198, v199, v198`.
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * Parts, and the Swift they stand for:
 *   H           the holder: `hv` its value, `hver` its version, both
 *               changed only under its lock.
 *   M, Q        the model's property `mv`, and its serial queue Q: the
 *               channel `q`, run by one process (Queue) a block at a time.
 *   Observation a write to M on Q schedules a read unless one is
 *               scheduled and not yet started (`scheduled`): the model of
 *               `withObservationTracking`'s onChange in ObservedValue.
 *   gate        the binding's chain gate: the channel `gate`, run by one
 *               handler (Handler) a value at a time. An H-event is a
 *               change of H; an S-event is a read of M (its value and
 *               `done` when read).
 *   binding     `written` (the H version last written to M or taken from
 *               M) and `queued` (model writes queued so far), touched by
 *               the handler only; `done` (binding writes stored in M),
 *               touched on Q only.
 *
 * Threads:
 *   HolderWriter (1 or 2)
 *               writes NW increasing values to H: 1..NW (the second
 *               11..10+NW). Each write, under H's lock, stores the value,
 *               bumps `hver` and queues an H-event.
 *   ForeignWriter (FOREIGN=1)
 *               another writer of the model: one write of 100, on Q.
 *   Handler     the binding's handler. H-event: reads H (the newest
 *               value, not the event's); if its version is not
 *               `written`, queues WRITE(hv) on Q. S-event: dropped if the
 *               read did not see every write the binding queued (a later
 *               read will come), or, under H's lock, if H has a change not
 *               yet written to M (it will be); else sets H to M's value,
 *               as an echo (no H-event).
 *   Queue       Q: WRITE (the binding's: store, `done`, schedule a read),
 *               FWRITE (the foreign writer's: store, schedule a read) and
 *               READ (the read of ObservedValue: an S-event to the gate).
 *   init        binds (the initial read of M as an S-event with d = 0;
 *               `written` = H's version; RACE=0: H set at once), then
 *               waits until nothing can move and checks the end.
 *
 * Properties (assertions):
 *   1 maxHeld   H never steps back: when the handler sets H to M's value
 *               and that is a holder writer's value, or M's value at the
 *               bind (older than every holder write), it is not older, in
 *               H's lock order (`seqOf`), than the newest holder write H
 *               has held. The foreign writer's value is not ordered.
 *   2 maxInM    M never gets an older holder value: a binding WRITE of a
 *               holder writer's value is not older than the newest one M
 *               has held.
 *   3 settles   once nothing can move (`timeout`): the queues are empty,
 *               no read is scheduled, hv == mv, and without the foreign
 *               writer both are the newest holder write (`lastVal`).
 *   Handler and Queue end blocked on their channels (valid end states).
 *
 * Configurations (-D flags):
 *   NW=n        values per holder writer (2 by default)
 *   HW2=0|1     a second holder writer, writing 11..10+NW
 *   FOREIGN=0|1 the foreign model writer (one write)
 *   RACE=0|1    1 (default): the holder writers start with the bind, so
 *               a write may come before the binding has taken M's value
 *               (the initial read waits in the gate); 0: the bind took
 *               it first, as when the writes come after bind returned.
 *               RACE=0's runs are among RACE=1's; it serves the mutants,
 *               to make spin find the step back to a holder value.
 *   MUTANT_TODAY
 *               today's code: the H-event handler queues the event's own
 *               value (in event order, no version), the S-event handler
 *               sets H to M's value whatever `d` and H's version. Fails 1
 *               (RACE=0): H is 1, then 2; WRITE(1) and its read run
 *               before WRITE(2) is queued; that read, handled after H's
 *               2, sets H back to 1. With RACE=1, also: H is 1 before the
 *               initial read is handled, which sets H back to M's 50.
 *   MUTANT_NO_DONE
 *               no `d != queued` check. Fails 1: WRITE(1) and a read of 1
 *               run; the binding queues WRITE(2) (H is 2); the read of 1,
 *               handled after that, sets H back to 1.
 *   MUTANT_NO_VERSION
 *               no `hver != written` check. Fails 1: WRITE(1) and a read
 *               of 1 run; H stores 2, its H-event behind that read in the
 *               gate; the read sets H back to 1. With RACE=1, also: the
 *               initial read undoes a holder write made during the bind.
 *
 * What the model leaves out: forward/backward conversions (values are
 * compared as Equatable: a value equal to H's is not set); the model
 * going away; invalidate(); the gate's own protocol (DeliveryGate.pml,
 * HandOver.pml); memory order (whole statements, sequentially
 * consistent; each Q block and each critical section under H's lock is
 * one atomic step).
 */

#ifndef NW
#define NW 2
#endif
#ifndef HW2
#define HW2 0
#endif
#ifndef FOREIGN
#define FOREIGN 0
#endif
#ifndef RACE
#define RACE 1
#endif

#ifdef MUTANT_TODAY
#define CHECK_DONE 0
#define CHECK_VERSION 0
#else
#ifdef MUTANT_NO_DONE
#define CHECK_DONE 0
#else
#define CHECK_DONE 1
#endif
#ifdef MUTANT_NO_VERSION
#define CHECK_VERSION 0
#else
#define CHECK_VERSION 1
#endif
#endif

#define NWT (NW * (1 + HW2))   /* holder writes in all */
#define M0 50                  /* M's value when the binding starts */
#define FV 100                 /* the foreign writer's value */
/* The values ordered by H's lock: M's value at the bind (number 0,
 * before every holder write) and the holder writers' (their write's
 * number); not the foreign writer's */
#define ORDERED(v) ((v) >= 1 && (v) <= M0)
#define IDX(v) ((v) == M0 -> 0 : ((v) < 10 -> (v) : (v) - 10 + NW))

/* Room for every event: H-events, the initial read, one read per write
 * to M; on Q every binding write, the foreign one and one read */
#define GCAP (2 * NWT + FOREIGN + 1)
#define QCAP (NWT + FOREIGN + 1)

mtype = { HEV, SEV, WRITE, FWRITE, READ };
chan gate = [GCAP] of { mtype, byte, byte };   /* (HEV, value for TODAY, 0), (SEV, m, d) */
chan q = [QCAP] of { mtype, byte };

byte hv = 0, hver = 0;   /* H, under its lock */
byte mv = M0;            /* M, on Q */
bit scheduled = 0;       /* Observation: a read queued, not yet started */
byte done = 0;           /* on Q */
byte written = 0, queued = 0;   /* the handler's */

/* What the properties watch */
byte maxHeld = 0;        /* holder writes so far: the newest one's number */
byte seqOf[2 * NW + 1];  /* per ordered value (IDX): its write's number */
byte maxInM = 0;         /* the number of the newest holder value M held */
byte lastVal = 0;        /* the newest holder writer's value */

/* A write to M on Q: Observation schedules a read */
inline observe() {
  if :: !scheduled -> scheduled = 1; q!READ(0) :: else -> skip fi
}

proctype HolderWriter(byte base) {
  byte k = 1;
  do
  :: atomic {   /* under H's lock */
       k <= NW ->
       hv = base + k; hver++;
       maxHeld++; seqOf[IDX(hv)] = maxHeld; lastVal = hv;
#ifdef MUTANT_TODAY
       gate!HEV(hv, 0);
#else
       gate!HEV(0, 0);
#endif
       k++
     }
  :: else -> break
  od
}

proctype ForeignWriter() {
  q!FWRITE(FV)
}

proctype Queue() {
  mtype op;
  byte v;
end:
  do
  :: atomic {
       q?op, v ->
       if
       :: op == WRITE ->
          /* 2: not older than the newest holder value M held */
          assert(!ORDERED(v) || seqOf[IDX(v)] >= maxInM);
          if :: ORDERED(v) -> maxInM = seqOf[IDX(v)] :: else -> skip fi;
          mv = v; done++; observe()
       :: op == FWRITE -> mv = v; observe()
       :: op == READ -> scheduled = 0; gate!SEV(mv, done)
       fi;
       op = 0; v = 0
     }
  od
}

/* An event's receive and what the handler then does under H's lock are
 * one step: a holder write in between is the same as one before the
 * receive (its H-event goes behind). An H-event's write to Q is a step of
 * its own (`ev` left at HEV until then). */
proctype Handler() {
  mtype ev;
  byte a, b, nv, nver;
end:
  do
  :: atomic {
       ev == 0 && nempty(gate) ->
       gate?ev, a, b;
       if
       :: ev == HEV ->
#ifdef MUTANT_TODAY
          nv = a   /* the event's own value */
#else
          nv = hv; nver = hver   /* under H's lock: the newest */
#endif
       :: ev == SEV ->
          if
          :: CHECK_DONE && b != queued -> skip   /* a later read will come */
          :: else ->
             /* under H's lock */
             if
             :: CHECK_VERSION && hver != written -> skip   /* to be written */
             :: else ->
                if
                :: hv != a ->
                   /* 1: H never steps back */
                   assert(!ORDERED(a) || seqOf[IDX(a)] >= maxHeld);
                   hv = a; hver++; written = hver   /* an echo: no H-event */
                :: else -> skip
                fi
             fi
          fi;
          ev = 0
       fi;
       a = 0; b = 0
     }
  :: atomic {
       ev == HEV ->
#ifdef MUTANT_TODAY
       q!WRITE(nv);   /* in event order, no version */
#else
       if
       :: nver != written -> q!WRITE(nv); queued++; written = nver
       :: else -> skip
       fi;
#endif
       ev = 0; nv = 0; nver = 0
     }
  od
}

init {
  atomic {
    /* bind: M's value at once; `written` from H's version */
#if RACE
    gate!SEV(mv, 0);
    written = hver;
#else
    hv = mv; hver++; written = hver;   /* as the handler sets it */
#endif
    run Handler();
    run Queue();
    run HolderWriter(0);
    if :: HW2 -> run HolderWriter(10) :: else -> skip fi;
    if :: FOREIGN -> run ForeignWriter() :: else -> skip fi
  };
  timeout;   /* nothing else can move */
  /* 3: settled, and the last write stands */
  assert(len(gate) == 0 && len(q) == 0 && !scheduled);
  assert(hv == mv);
  assert(FOREIGN || (hv == lastVal && mv == lastVal))
}
