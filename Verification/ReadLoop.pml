/*
 * ObservedValue's read loop: `ReadLoop` in
 * Sources/Chaining/Observation/ObservedValue.swift (`firstRead`,
 * `trackedRead`, `scheduleRead`, `readAndSend`, `start(sendingTo:)`), the
 * first read of `ObservedValue.init`, and the `HolderStore` it sends to
 * (`replace`, and `attach` for a chain's `sync()`).
 *
 * Checked by spin: `Verification/check` builds it once per configuration
 * below and fails when spin finds an error, or when a mutant passes.
 *
 * Observation, as modeled (withObservationTracking, ObservationRegistrar):
 * - One model property, `m`. The k-th write stores k, so the values grow
 *   in the order of the writes and the last value written is the number
 *   of writes.
 * - `withObservationTracking(apply, onChange)` reads `m` in one step, and
 *   only in a later step installs its tracking (`ntrack++`). A write in
 *   between reaches no tracking: Observation's window.
 * - A write's `willSet` takes every tracking installed (one step: each
 *   fires at most once) and calls each one's `onChange` on the writer's
 *   thread, before the new value is stored. One property: every tracking
 *   installed is on it.
 *
 * The code, as modeled:
 * - `firstRead()` (in `ObservedValue.init`, on the creating thread C):
 *   on the loop's queue Q (or Q is the main queue and C the main actor),
 *   it reads there; else, if Q is not the main queue, inside `Q.sync {}`,
 *   so that the read is one block of Q; else (Q is the main queue, C off
 *   the main thread) it reads on C and sets `readAgain`. In each case the
 *   read is two tracked reads in a row, as in `readAndSend` (the value is
 *   the second's): a write off the queue landing between the first read
 *   and its install is seen by the second read, and one landing later
 *   calls the first tracking's onChange.
 * - `start(sendingTo:)`: under the lock, sets `target`; if `missed` (a
 *   read ran before `target` was set) or `readAgain`, it schedules a read
 *   as `scheduleRead` does (`first = !scheduled; scheduled = true`, then
 *   `Q.async(readAndSend)` if first). The model takes the lock twice
 *   there (set `target` and look at `missed`; then schedule), which
 *   allows every interleaving of the one critical section too.
 *
 * Threads:
 *   C (init)    makes the source: the first read (FIRST, below; the store
 *               holds its value), then `start(sendingTo:)`; at the end,
 *               once every other thread has ended, checks property 1.
 *   Queue       the loop's serial queue: runs the reads (`readAndSend`),
 *               C's block for FIRST=SYNC and FIRST=HERE_ON_Q and, for
 *               writers on the queue, the writes, one at a time.
 *   Writer 1, 2 write N and N2 times, at any time (from the start, during
 *               the first read too); how depends on WRITER (below).
 *   Chain       calls `sync()` at any point once the source is made: it
 *               subscribes to the store and takes its value in one step,
 *               then gets each value the store sends (`got`).
 *
 * Properties:
 *   1 (assertion at the end) the store holds the last value written, and
 *     so does the chain's last value.
 *   2 (assertion in `replace`) the store never goes back to an older
 *     value, and the chain never gets an older value after a newer one.
 *   3 (assertion at each queued read) at most one read is queued and not
 *     started.
 *
 * Configurations (-D flags):
 *   N=n, N2=n   writes of writer 1, of writer 2 (0: no writer 2)
 *   FIRST=SYNC (default) C off the queue, Q not the main queue: the first
 *               read runs inside `Q.sync {}`, a block of Q queued behind
 *               what Q already holds; `start` runs after the block, on C.
 *   FIRST=HERE_ON_Q
 *               C is on Q (or the main actor, Q the main queue): the
 *               first read and `start` run inside one block of Q.
 *   FIRST=MAIN_OFF
 *               Q is the main queue, C off the main thread: the first
 *               read runs on C, beside Q, and `readAgain` is set.
 *   WRITER=QUEUE (default) the writer rule: each write is `Q.async` of a
 *               model write; the queue runs it (willSet, then store)
 *   WRITER=LOCK a model write from another thread, under a lock that the
 *               closure's reads take too (the rule for other threads)
 *   WRITER=HOLDER
 *               a Chaining holder written from any thread: it stores, then
 *               tells Observation (`notifyObservation`), so its `onChange`
 *               runs after the store
 *
 * Mutants (spin must find each):
 *   MUTANT_OLD_FIRST
 *               the code before this change: C reads once, on C, off the
 *               queue (FIRST is ignored), and `start` queues a read only
 *               if `missed`, without looking at `scheduled`. A write
 *               landing between that read and the install of its tracking
 *               (any WRITER; with writes on the queue, when the source is
 *               made off the queue while the queue writes) calls no
 *               onChange; no read ran, so `missed` is not set, and
 *               `start` queues nothing: the store, and every chain that
 *               syncs, keep the old value for good if no later write
 *               comes (property 1).
 *   MUTANT_ONE_FIRST_READ
 *               `firstRead` reads once. With FIRST=SYNC or HERE_ON_Q, a
 *               LOCK or HOLDER write landing between the read and its
 *               install is lost (property 1). Writes on the queue cannot
 *               run during a block of Q, and with FIRST=MAIN_OFF the read
 *               of `readAgain` sees the write: one read holds there.
 *   MUTANT_NO_READ_AGAIN
 *               FIRST=MAIN_OFF without the read `start` queues for
 *               `readAgain`. With writes on the queue, C's reads can run
 *               between a write's willSet (before C's trackings were
 *               installed: it calls no onChange) and its store, and read
 *               the old value: the queue keeps the writer rule, and C is
 *               not on it (property 1). LOCK and HOLDER writers keep it
 *               for C too, and the two reads are enough there.
 *   MUTANT_ONE_READ
 *               `readAndSend` reads once. A write landing between the read
 *               and the install of its tracking is lost (property 1). This
 *               needs a write that can run while the queue reads: a
 *               LOCK or HOLDER writer. With writes on the queue (QUEUE),
 *               no write runs during a read on the queue, and one read
 *               is enough: the second read is for the other writers.
 *   MUTANT_CLEAR_AFTER_READ
 *               `scheduled = false` after the reads, not before: a write
 *               during the reads schedules nothing (property 1), and the
 *               late clear can wipe the flag of a newer onChange, whose
 *               read is queued, so that the next onChange queues a second
 *               one (property 3). Also with writes on the queue (FIRST=
 *               SYNC or MAIN_OFF): a read that found no target still holds
 *               `scheduled` when `start` schedules for `missed` or
 *               `readAgain`, and queues nothing, so the clear must stay in
 *               the critical section that looks at `target`. (HERE_ON_Q:
 *               no read runs before `start`, in the same block of Q.)
 *   MUTANT_WRITER_OFF_QUEUE
 *               writer 1 makes a model write from its own thread, with no
 *               lock: its willSet queues a read, which may run before the
 *               store and read the old value (property 1). Why the writer
 *               rule exists (issue #35). Only with N2=0.
 *
 * What the model leaves out:
 * - The model going away (`isAlive`, a read returning nil).
 * - How `firstRead` decides where it is (`DispatchQueue.getSpecific`,
 *   `Thread.isMainThread`): FIRST picks the case.
 * - The delivery of the store's values: `replace` stores and hands the
 *   value to the synced chain in one step, and `sync` subscribes and
 *   fetches in one step (the store's lock; DeliveryGate.pml and
 *   SenderCore.pml check that the values then reach the chain in order).
 * - `Equatable`: values here are numbers, equal ones send nothing.
 * - Memory order: spin interleaves whole statements under sequential
 *   consistency. Each `state.withLock` is one atomic step.
 */

#ifndef N
#define N 2
#endif
#ifndef N2
#define N2 0
#endif

#define QUEUE 0
#define LOCK 1
#define HOLDER 2
#ifndef WRITER
#define WRITER QUEUE
#endif

#define SYNC 0
#define HERE_ON_Q 1
#define MAIN_OFF 2
#ifndef FIRST
#define FIRST SYNC
#endif
#ifdef MUTANT_OLD_FIRST
#define ON_Q 0
#elif FIRST == SYNC || FIRST == HERE_ON_Q
#define ON_Q 1
#else
#define ON_Q 0
#endif

#ifdef MUTANT_WRITER_OFF_QUEUE
#define OFFQ 1
#else
#define OFFQ 0
#endif

#define READ 1
#define WRITE 2
#define BLOCK 3          /* C's block of Q: FIRST=SYNC or HERE_ON_Q */
#define QCAP (N + N2 + 3)

/* The @Observable model */
byte m = 0;              /* the property: how many writes were stored */
byte ntrack = 0;         /* trackings installed on it, not yet fired */
bit mlock = 0;           /* WRITER=LOCK: the lock around writes and reads */

/* ReadLoop.State, under `state`'s lock */
bit scheduled = 0;
bit target = 0;          /* `target != nil`: set by `start` */
bit missed = 0;

/* The queue: READ is `readAndSend`, WRITE a model write, BLOCK C's block */
chan q = [QCAP] of { byte };
byte nq = 0;             /* reads queued and not started */
bit inBlock = 0;         /* C's block is running on the queue */

/* HolderStore and the chain */
byte stored = 0;         /* the store's value */
bit created = 0;         /* `ObservedValue.init` has returned */
bit synced = 0;          /* the chain has called sync() */
byte got = 0;            /* the last value the chain got */

byte writing = 0;        /* writers not yet done */

/* Q.async(readAndSend): property 3 */
inline enqueueRead() {
  atomic { q!READ; nq++; assert(nq <= 1) }
}

/* ReadLoop.trackedRead: the closure's read, then the install */
inline trackedRead(r) {
#if WRITER == LOCK && !OFFQ
  atomic { mlock == 0 -> r = m };
#else
  r = m;
#endif
  ntrack++
}

/* ReadLoop.scheduleRead, a tracking's onChange */
inline scheduleRead() {
  atomic { first = !scheduled; scheduled = 1 };
  if :: first -> enqueueRead() :: else -> skip fi;
  first = 0
}

/* The registrar's willSet: take every tracking, call each onChange */
inline willSet() {
  atomic { k = ntrack; ntrack = 0 };
  do
  :: k > 0 -> scheduleRead(); k--
  :: else -> break
  od
}

/* A write of the @Observable property: willSet, then the store */
inline modelWrite() {
#if WRITER == LOCK && !OFFQ
  atomic { mlock == 0 -> mlock = 1 };
  willSet();
  atomic { m++; mlock = 0 }
#else
  willSet();
  m++
#endif
}

/* A holder's write: the store, then notifyObservation (willSet, didSet) */
inline holderWrite() {
  m++;
  willSet()
}

/* HolderStore.replace: store and send only a different value; property 2 */
inline replace(v) {
  atomic {
    if
    :: v != stored ->
       assert(v > stored);
       stored = v;
       if :: synced -> assert(v > got); got = v :: else -> skip fi
    :: else -> skip
    fi
  }
}

/* ReadLoop.readAndSend, on the queue */
inline readAndSend() {
  atomic {
#ifndef MUTANT_CLEAR_AFTER_READ
    scheduled = 0;
#endif
    if :: !target -> missed = 1 :: else -> skip fi;
    t = target
  };
  if
  :: t ->
     trackedRead(r1);
#ifndef MUTANT_ONE_READ
     trackedRead(r2);
#else
     r2 = r1;
#endif
#ifdef MUTANT_CLEAR_AFTER_READ
     scheduled = 0;
#endif
     replace(r2)
  :: else ->
#ifdef MUTANT_CLEAR_AFTER_READ
     scheduled = 0
#else
     skip
#endif
  fi;
  t = 0; r1 = 0; r2 = 0
}

proctype Queue() {
  byte item, k, r1, r2;
  bit first, t;
  do
  :: atomic { q?item -> if :: item == READ -> nq-- :: else -> skip fi };
     if
     :: item == READ -> readAndSend()
     :: item == WRITE -> modelWrite()
     :: item == BLOCK -> atomic { inBlock = 1; inBlock == 0 }  /* C runs it */
     fi;
     item = 0
  :: atomic { len(q) == 0 && writing == 0 && created -> break }
  od
}

proctype Writer(byte n) {
  byte k;
  bit first;
  do
  :: n > 0 ->
#if OFFQ
     modelWrite();
#elif WRITER == QUEUE
     q!WRITE;
#elif WRITER == LOCK
     modelWrite();
#else
     holderWrite();
#endif
     n--
  :: else -> break
  od;
  writing--
}

/* A chain's sync(): HolderStore.attach, subscribe and fetch in one step */
proctype Chain() {
  created;
  atomic { synced = 1; got = stored }
}

/* C: ObservedValue.init, then the final check */
init {
  byte r1, r2;
  bit first, mis, again;
  atomic {
    writing = 1;
    if :: N2 > 0 -> writing = 2 :: else -> skip fi;
    run Queue();
    run Writer(N);
    if :: N2 > 0 -> run Writer(N2) :: else -> skip fi;
    run Chain()
  };
  /* store = HolderStore(loop.firstRead()) */
#ifdef MUTANT_OLD_FIRST
  trackedRead(r2);
#else
#if ON_Q
  /* Q.sync { ... }, or C already on Q: C's block, queued behind Q's work */
  q!BLOCK;
  inBlock;
#endif
#ifdef MUTANT_ONE_FIRST_READ
  trackedRead(r2);
#else
  trackedRead(r1);
  trackedRead(r2);
#endif
#if FIRST == MAIN_OFF && !defined(MUTANT_NO_READ_AGAIN)
  again = 1;
#endif
#if ON_Q && FIRST == SYNC
  atomic { stored = r2; inBlock = 0 };   /* the end of Q.sync */
#else
  stored = r2;
#endif
#endif
  /* loop.start(sendingTo: store) */
#ifdef MUTANT_OLD_FIRST
  atomic { target = 1; mis = missed };
  if :: mis -> enqueueRead() :: else -> skip fi;
#else
  atomic { target = 1; mis = missed };
  if :: mis || again -> scheduleRead() :: else -> skip fi;
#if ON_Q && FIRST == HERE_ON_Q
  inBlock = 0;                            /* the end of C's block */
#endif
#endif
  created = 1;

  /* the writers are done, the queue is empty, the chain has synced */
  _nr_pr == 1;
  assert(m == N + N2 && nq == 0);
  /* property 1 */
  assert(stored == m);
  assert(got == m)
}
