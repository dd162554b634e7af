/*
 * A model of a sender core's atomic word and observer lists
 * (`_SenderCore`, in Sources/Chaining/Internal/SenderCore.swift and its
 * extensions, SenderCore+Queue.swift, SenderCore+Subscribing.swift and
 * SenderCore+Lifecycle.swift; the word's flags and transitions are
 * `SenderWord`, in SenderWord.swift, with this model's names): the lock-free
 * claim of a broadcast, the claims and queueing under the lock, the stop
 * (`finish(claimed:)`, `finishLocked()`), subscribe and unsubscribe made
 * while a thread delivers (from another thread or from a handler), the
 * retired lists and the spare one, and the one wait there is:
 * `awaitRunAlone(of:)`, which parks on the core's ParkingLot stripe until the
 * delivering thread stops running a chain without claiming its gate.
 *
 * Checked exhaustively by spin: `Verification/check` builds it once per
 * configuration below and fails when spin finds an error, or when a mutant
 * passes. See Documentation/Reliability.md.
 *
 * Threads (`Thread(me, role)`, ids 1..3) and configurations (-D flags):
 *   R1, R2, R3   the role of thread 1, 2, 3 (0: not run):
 *                BCAST    broadcasts NB values (ids first .. first+NB-1);
 *                SUBUNSUB subscribes B, then unsubscribes it;
 *                SUB      subscribes B, and keeps it;
 *                CHURN    unsubscribes A, subscribes and unsubscribes B,
 *                         then subscribes and unsubscribes C;
 *                INVAL    invalidates A's observer from outside any
 *                         delivery: closes its gate, then
 *                         `unsubscribe(_:awaitingAlone: true)`, which waits.
 *   NB1, NB2     how many values threads 1 and 2 broadcast.
 *   HANDLER      what A's handler does the first time it runs, in this
 *                order: H_UNSUB invalidates A itself (from inside a
 *                delivery: it must not wait), H_SUB subscribes C, H_SEND
 *                broadcasts one more value (id HV) to this core.
 *   ALONE        A's gate is `alone`: a delivery from a list that has A
 *                alone runs A's handler without claiming the gate
 *                (`DeliveryGate.deliverAlone`), which `awaitRunAlone` waits for.
 *   HOLDER       a holder's core (`claimsUnderLock`): every claim is made
 *                under the lock, an idle core's with a plain store.
 * The core starts with one observer, A, in list 1.
 *
 * Mutants (spin must find each):
 *   MUTANT_FREE_REPLACED   `change` releases the list it replaced at once
 *                          instead of retiring it until the delivery ends.
 *   MUTANT_FINISH_LOAD_STORE
 *                          `finish(claimed:)` loads the word and, seeing no
 *                          flag but `delivering`, stores the idle word:
 *                          a load and a store instead of one compare-and-swap.
 *   MUTANT_ALONE_CURRENT   `deliversAlone` looks at the current list even
 *                          when it replaced the claimed one (`unshared`).
 *   MUTANT_AWAIT_NO_QUEUED `awaitRunAlone` records that it waits but does
 *                          not set `queued`: the delivering thread's
 *                          lock-free stop succeeds and wakes nobody.
 *   MUTANT_CHANGE_IN_PLACE `change` ignores `unshared` and changes the
 *                          current list in place while a thread delivers
 *                          from it.
 *   MUTANT_SPARE_OVERWRITE `changeInPlace` overwrites a spare list already
 *                          there (the code before the fix below).
 *
 * A defect this model found (issue #20), fixed: `changeInPlace` stored a
 * list that lost its last observer as the spare one without looking at
 * the spare already there, which then leaked. A spare is there while the
 * word has no list and is taken by the next in-place change; but a change
 * made while a delivery runs from no list (`finishLocked` delivering a
 * queued batch after every observer left) makes a copy from nothing
 * instead, so the word gets a list while the spare is still kept. When
 * that list lost its last observer in turn, it overwrote the spare. The
 * fix releases the spare already there first; MUTANT_SPARE_OVERWRITE puts
 * the old code back, and Verification/check requires spin to find it.
 *
 * Properties. Assertions: a list is read only while allocated, released
 * only when no thread reads it unlocked, and changed in place only while
 * no thread reads it unlocked; never two threads deliver at once; each
 * broadcast reaches a subscription at most once, and in the order the
 * broadcasts were claimed or queued; a broadcast that started after
 * `unsubscribe` returned does not reach that subscription; one that
 * returned before `subscribe` started does not reach it (a queued value
 * goes only to the subscriptions made before it: `Pending.limit`); no run
 * of A without a claim after A's waiting `invalidate()` returned; at the
 * end, every broadcast that started after `subscribe` returned reached it,
 * unless an `unsubscribe` began before that broadcast was delivered; the
 * word is idle, the queue empty, the list holds exactly the subscriptions
 * in place, and every list is released or owned (the word's or the spare).
 * Spin also reports any state where a thread waits forever.
 * LTL (`ltl` blocks, checked with `pan -a`): `woken`, a thread parked in
 * `awaitRunAlone` is eventually woken; `drained`, queued broadcasts are
 * eventually delivered.
 *
 * `Op(me, kind, X)` is a call the model keeps out of line so that spin
 * compiles it once (subscribe, unsubscribe, an invalidate, a handler): the
 * calling thread waits for it to return, and it acts as that thread (`me`).
 *
 * What the model leaves out, and where that is covered:
 * - Memory order. Spin interleaves whole statements under sequential
 *   consistency, so every write is seen by every later read. The Swift
 *   code relies instead on these orderings, each argued in the comment
 *   that each step below quotes:
 *   - a list's slots are written before the word points at it, by the
 *     releasing store or exchange in `change`, and read after the claim,
 *     whose sequentially consistent compare-and-swap acquires it;
 *   - a delivery's handlers happen before the next delivery's: the stop is
 *     a releasing compare-and-swap (`finish`) or store (`finishLocked`),
 *     and the next claim acquires (`claim(_:in:)`: "Acquiring, not
 *     relaxed");
 *   - the claim and `deliversAlone`'s load are sequentially consistent, as
 *     are the gate's change in `close()` and its load in `deliverAlone`:
 *     either the delivering thread sees the gate closed or the closer sees
 *     the claim (`deliversAlone(to:in:)`'s comment). Spin's interleaving
 *     is that total order;
 *   - `awaitRunAlone`'s `word.update` loads with acquiring order, so that a
 *     waiter that finds the delivery stopped sees its handler's writes
 *     (`AtomicReference.update`, Atomics.swift);
 *   - the relaxed loads and stores made under the lock (`change`,
 *     `remove`, `finishLocked`, a holder's claim) are ordered by the lock,
 *     and the relaxed first load in `broadcast` is only a guess that the
 *     compare-and-swap checks;
 *   - a subscription's `serial`, read unlocked by the delivering thread,
 *     is written before the entry is published with the list.
 *   The thread sanitizer tests exercise these.
 * - The gates: a delivery to a subscription is where the core calls
 *   `deliver` or `deliverAlone` on its gate (Verification/DeliveryGate.pml
 *   models what the gate does then). Here A's gate only says whether it is
 *   closed.
 * - `claim(contentsOf:)` (several values claimed at once), `compact()`
 *   (only past 32 empty slots), a list's growth (a new buffer, never while
 *   the list is read unlocked), the end watchers and `waitForObservers`,
 *   which only take the lock.
 */

#ifndef R1
#define R1 BCAST
#endif
#ifndef R2
#define R2 SUBUNSUB
#endif
#ifndef R3
#define R3 0
#endif
#ifndef NB1
#define NB1 2
#endif
#ifndef NB2
#define NB2 0
#endif
#ifndef HANDLER
#define HANDLER 0
#endif
#ifndef ALONE
#define ALONE 0
#endif
#ifndef HOLDER
#define HOLDER 0
#endif

#define BCAST    1
#define SUBUNSUB 2
#define SUB      3
#define CHURN    4
#define INVAL    5

/* What an `Op` runs */
#define SUBSCRIBE         1
#define UNSUBSCRIBE       2
#define INVALIDATE        3
#define INVALIDATE_INSIDE 4
#define HANDLER_RUN       5

#define H_UNSUB 1
#define H_SUB   2
#define H_SEND  4

/* The word: a list id (0: none) times 16, plus the flags. */
#define D 1             /* delivering */
#define C 2             /* changing */
#define Q 4             /* queued */
#define U 8             /* unshared */
#define FLAGS 15
#define PTR(w) ((w) / 16)

#define NL 5            /* list ids 1..NL; a released id is reused */
#define CAP 3           /* slots per list */
#define NS 3            /* subscriptions: 0 is A, 1 is B, 2 is C */
#define NIL 255         /* `SubscriptionBase.index` of -1 */
#define NP 4            /* room in the queue of broadcasts */
#define NT 4            /* thread ids 1..3 */
#define HV (NB1 + NB2)  /* the id of the value A's handler broadcasts */
#define NV (HV + 1)

/* _SenderCore.word */
byte word = 16;

/* The lists (SlotList): allocated, how many threads read each unlocked,
 * `count`, and the slots (a subscription's id + 1, or 0 for nil). */
bit lalive[NL + 1];
byte lreaders[NL + 1];
byte lcount[NL + 1];
byte lslot[(NL + 1) * CAP];

/* _SenderCore.State, guarded by `coreLock` */
bit coreLock = 0;
byte live = 1;
byte nextSerial = 1;
byte pendV[NP];         /* `pending`: the values ... */
byte pendLim[NP];       /* ... and their `limit` */
byte npend = 0;
byte retired[2];
byte nret = 0;
byte spare = 0;
bit finishing = 0;
bit aloneWaiting = 0;
/* SubscriptionBase.serial and .index */
byte serial[NS];
byte index[NS];

/* The core's ParkingLot stripe */
bit cstripe = 0;
bit csleep[NT];

/* A's gate, as `deliverAlone` and `awaitRunAlone` see it */
bit gateClosed = 0;

/* What the properties watch */
byte deliverer = 0;     /* the thread that holds the delivery */
byte tick = 0;          /* the order of claims and queueings */
byte tk[NV];            /* each broadcast's place in that order */
byte lastTk[NS];        /* the last place each subscription received */
byte got[NV];           /* bit X: subscription X received the broadcast */
byte must[NV];          /* subscribed (returned) when the broadcast started */
byte forbid[NV];        /* unsubscribed (returned) when it started */
byte early[NS];         /* broadcasts returned before subscribe started */
byte excused[NS];       /* broadcasts not delivered when unsubscribe started */
byte subState[NS];      /* 0 never, 1 subscribing, 2 in, 3 leaving, 4 out */
byte startedM = 0, doneM = 0, returnedM = 0;
bit aloneRunning = 0;   /* A's handler runs without a claim */
bit waitedReturned = 0; /* A's waiting invalidate() returned */
bit hunsub = 0, hsub = 0, hsent = 0;

inline lock(l)   { atomic { l == 0 -> l = 1 } }
inline unlock(l) { l = 0 }

/* SlotList(capacity:): a fresh list, at the lowest released id. */
inline allocate(l) {
  atomic {
    l = 1;
    do
    :: l <= NL && lalive[l] -> l++
    :: else -> break
    od;
    assert(l <= NL);    /* NL is large enough for the model */
    lalive[l] = 1;
    lcount[l] = 0;
    lslot[l * CAP] = 0; lslot[l * CAP + 1] = 0; lslot[l * CAP + 2] = 0
  }
}

/* The release of a list's last reference: nobody may read it. */
inline freeList(l) {
  atomic { assert(lalive[l]); assert(lreaders[l] == 0); lalive[l] = 0 }
}

inline readCount(l, n)   { atomic { assert(lalive[l]); n = lcount[l] } }
inline readSlot(l, i, s) { atomic { assert(lalive[l]); s = lslot[l * CAP + i] } }

/* The ghost steps of a broadcast: started, claimed or queued, delivered,
 * returned. */
inline started(v) {
  atomic {
    startedM = startedM | (1 << v);
    must[v] = (subState[0] == 2) | (subState[1] == 2) << 1 | (subState[2] == 2) << 2;
    forbid[v] = (subState[0] == 4) | (subState[1] == 4) << 1 | (subState[2] == 4) << 2
  }
}
inline ordered(v) { tick++; tk[v] = tick }
inline claimed(v, l) { assert(deliverer == 0); deliverer = me; ordered(v); lreaders[l]++ }
inline delivered(v) { doneM = doneM | (1 << v) }

/* The core calls subscription X's gate with value v. */
inline receipt(v, X) {
  atomic {
    assert(deliverer == me);
    assert((got[v] & (1 << X)) == 0);
    assert((forbid[v] & (1 << X)) == 0);
    assert((early[X] & (1 << v)) == 0);
    assert(tk[v] > lastTk[X]);
    got[v] = got[v] | (1 << X);
    lastTk[X] = tk[v]
  }
}

/* _SenderCore.changeInPlace(_:_:_:): `body` on the list `cur` points at, or
 * on the spare one, or a new one; `ptr` is the word's new list id. */
inline changeInPlace(cur, ptr) {
  cl = PTR(cur);
  if
  :: cl == 0 && spare != 0 -> cl = spare; spare = 0      /* state.spare.take() */
  :: cl == 0 && spare == 0 -> allocate(cl)               /* SlotList(capacity: 0) */
  :: else -> skip
  fi;
  body(cl, 1);
  if
  :: live > 0 -> ptr = cl
  :: else ->
     /* `removeAll()`, then `state.spare = list` */
     atomic {
       assert(lreaders[cl] == 0);
       lcount[cl] = 0;
       lslot[cl * CAP] = 0; lslot[cl * CAP + 1] = 0; lslot[cl * CAP + 2] = 0
     };
#ifndef MUTANT_SPARE_OVERWRITE
     /* `state.spare.take()?.release()`: a spare list may be there already
      * (the copy `change` makes while the word has no list does not take
      * it); release it, empty, rather than lose it. */
     if :: spare != 0 -> freeList(spare) :: else -> skip fi;
#endif
     /* `state.spare = list` */
     spare = cl;
     ptr = 0
  fi
}

/* The closures `insert` and `remove` pass to `change`: `op` 1 appends
 * `osub`, `op` 2 clears slot `oidx`. In place (`inplace`), the list must
 * not be read unlocked. */
inline body(l, inplace) {
  atomic {
    assert(lalive[l]);
    assert(!inplace || lreaders[l] == 0);
    if
    :: op == 1 ->
       assert(lcount[l] < CAP);
       index[osub] = lcount[l];                 /* subscription.index = Int32(list.count) */
       lslot[l * CAP + lcount[l]] = osub + 1;   /* list.append(subscription) */
       lcount[l]++
    :: else ->
       lslot[l * CAP + oidx] = 0;               /* list[index] = nil */
       index[osub] = NIL                        /* subscription.index = -1 */
    fi
  }
}

/* Whether the delivering thread reads the current list: not `unshared`. */
#ifndef MUTANT_CHANGE_IN_PLACE
#define READ_UNLOCKED(w) (((w) & U) == 0)
#else
#define READ_UNLOCKED(w) 0
#endif

/* _SenderCore.change(_:_:), under the lock. */
inline change() {
  /* `var current = word.load(ordering: .relaxed)`: "Relaxed: under the
   * lock. The pointer changes only under it; the flags may change ..." */
  ccur = word;
  do
  :: (ccur & D) == 0 ->
     /* Idle: the compare-and-swap that sets `changing` ("Idle: keep the
      * lock-free claim out while changing in place"), acquiring. */
     atomic {
       if
       :: word == ccur -> word = ccur | C; ok = 1
       :: else -> ccur = word; ok = 0
       fi
     };
     if
     :: ok ->
        /* No flag is set on an idle word, under the lock. */
        assert((ccur & FLAGS) == 0);
        changeInPlace(ccur, cptr);
        /* `word.store(changeInPlace(...), ordering: .releasing)`: publishes
         * the list's slots to the next claim, whose compare-and-swap
         * (sequentially consistent, so acquiring) reads this store. */
        word = cptr * 16;
        break
     :: else -> skip
     fi
  :: (ccur & D) != 0 && !READ_UNLOCKED(ccur) ->
     /* "Nobody reads the list unlocked, and the word cannot change
      * meanwhile: the delivering thread stops under this lock." */
     changeInPlace(ccur, cptr);
     atomic { assert(word == ccur); word = cptr * 16 + (ccur & FLAGS) };
     break
  :: (ccur & D) != 0 && READ_UNLOCKED(ccur) ->
     /* "The delivering thread reads the current list: change a copy." */
     cold = PTR(ccur);
     allocate(ccopy);
     if
     :: cold != 0 ->
        /* SlotList(copying:) */
        readCount(cold, cn);
        ci = 0;
        do
        :: ci < cn -> readSlot(cold, ci, cs); lslot[ccopy * CAP + ci] = cs; ci++
        :: else -> break
        od;
        lcount[ccopy] = cn
     :: else -> skip
     fi;
     body(ccopy, 0);
     cptr = (live > 0 -> ccopy : 0);
     /* The compare-and-swap that installs the copy with `unshared`,
      * acquiring and releasing: it fails only when the delivery stopped
      * meanwhile ("The delivery ended meanwhile: start over"). */
     atomic {
       if
       :: word == ccur -> word = cptr * 16 + (ccur & FLAGS) + U; ok = 1
       :: else -> ccur = word; ok = 0
       fi
     };
     if
     :: !ok -> freeList(ccopy)          /* the copy is thrown away */
     :: ok ->
        if :: cptr == 0 -> freeList(ccopy) :: else -> skip fi;
        if
        :: cold != 0 ->
#ifndef MUTANT_FREE_REPLACED
           /* `state.retired.append(old.takeRetainedValue())` */
           assert(nret == 0);   /* one replaced list at most per run: see deliversAlone */
           retired[nret] = cold;
           nret++
#else
           freeList(cold)
#endif
        :: else -> skip
        fi;
        break
     fi
  od
}

/* _SenderCore.insert(_:in:), under the lock. */
inline insert(X) {
  serial[X] = nextSerial;
  nextSerial++;
  live++;
  op = 1; osub = X;
  change()
}

/* _SenderCore.remove(_:in:), under the lock. */
inline remove(X) {
  ri = index[X];
  /* `word.load(ordering: .relaxed)`: "Relaxed: under the lock, and the
   * pointer changes only under it." */
  rl = PTR(word);
  rs = 0;
  if
  :: rl != 0 && ri != NIL ->
     readCount(rl, rn);
     if :: ri < rn -> readSlot(rl, ri, rs) :: else -> skip fi
  :: else -> skip
  fi;
  if
  :: rs == X + 1 ->
     live--;
     op = 2; osub = X; oidx = ri;
     change()
  :: else -> skip
  fi
}

/* _SenderCore.subscribe(gate:dropsEchoes:handler:) */
inline subscribe(X) {
  atomic { subState[X] = 1; early[X] = returnedM };
  lock(coreLock);
  insert(X);
  unlock(coreLock);
  subState[X] = 2
}

/* _SenderCore.deliversAlone(to:in:), under the lock: `res` is whether a
 * thread delivers from a list that has X alone and may run it unclaimed. */
inline deliversAlone(X, res) {
  /* `word.load(ordering: .sequentiallyConsistent)`: the claim and this
   * check pair up (this function's comment): under sequential consistency
   * the delivering thread sees the gate closed, or this sees the claim. */
  dacur = word;
  res = 0;
  if
  :: (dacur & D) == 0 || finishing -> skip
  :: else ->
#ifndef MUTANT_ALONE_CURRENT
     if
     :: (dacur & U) != 0 -> dal = (nret > 0 -> retired[0] : 0)  /* state.retired.first */
     :: else -> dal = PTR(dacur)
     fi;
#else
     dal = PTR(dacur);
#endif
     if
     :: dal != 0 ->
        readCount(dal, dan);
        if
        :: dan == 1 -> readSlot(dal, 0, das); res = (das == X + 1)
        :: else -> skip
        fi
     :: else -> skip
     fi
  fi
}

/* _SenderCore.awaitRunAlone(of:): ParkingLot.shared.wait(for: self) */
inline awaitRunAlone(X) {
  lock(cstripe);
  do
  :: lock(coreLock);
     deliversAlone(X, ares);
     if
     :: !ares -> adone = 1
     :: else ->
        /* `word.update { $0.isDelivering ? $0.queuedBehind : nil }`: one
         * read-modify-write, retried until it applies. Acquiring when it
         * finds the delivery stopped (`AtomicReference.update` in
         * Atomics.swift: "Acquiring, not relaxed"), so that the handler's
         * writes happen before this returns. */
        atomic {
          aorig = word;
#ifndef MUTANT_AWAIT_NO_QUEUED
          if :: (aorig & D) != 0 -> word = aorig | Q :: else -> skip fi
#else
          skip
#endif
        };
        if
        :: (aorig & D) == 0 -> adone = 1
        :: else -> aloneWaiting = 1; adone = 0
        fi
     fi;
     unlock(coreLock);
     if
     :: adone -> break
     :: else ->
        /* pthread_cond_wait: sleeps and unlocks in one step */
        atomic { csleep[me] = 1; cstripe = 0 };
        (csleep[me] == 0);
        lock(cstripe)
     fi
  od;
  unlock(cstripe)
}

/* _SenderCore.unsubscribe(_:awaitingAlone:), through
 * SubscriptionBase.detach(awaitingAlone:). `inside`: DeliveryContext.depth > 0. */
inline unsubscribe(X, awaiting, inside) {
  atomic { subState[X] = 3; excused[X] = startedM & ~doneM };
  lock(coreLock);
  ures = 0;
  if :: awaiting -> deliversAlone(X, ures) :: else -> skip fi;
  if
  :: ures ->
     /* `if removed { return true }`, else wait (from outside a delivery),
      * then `state.withLock { remove(subscription, in: &$0) }` */
     unlock(coreLock);
     if :: !inside -> awaitRunAlone(X) :: else -> skip fi;
     lock(coreLock)
  :: else -> skip
  fi;
  remove(X);
  unlock(coreLock);
  subState[X] = 4
}

/* _SenderCore.claimShared(_:in:) (and, for a holder, claim(_:in:)), under
 * the lock; `k` is what to do: 0 nothing, 1 deliver, 2 queued. */
inline claimLocked(v, cur, k) {
  lock(coreLock);
  k = 3;
  if
  :: HOLDER ->
     /* claim(_:in:) with claimsUnderLock. "Acquiring, not relaxed: the
      * delivery before stopped with a releasing compare-and-swap outside
      * the lock, and its handlers must happen before this delivery's." */
     cur = word;
     if
     :: PTR(cur) == 0 -> k = 0; delivered(v)
     :: PTR(cur) != 0 && (cur & D) == 0 ->
        /* `word.store(current | delivering, ordering: .relaxed)`: "Idle,
         * nothing can change the word before this store". */
        atomic { assert(word == cur); word = cur | D; claimed(v, PTR(cur)) };
        k = 1
     :: PTR(cur) != 0 && (cur & D) != 0 -> skip
     fi
  :: else -> skip
  fi;
  if
  :: k == 3 ->
     /* `word.update(sequentiallyConsistent: true)`: one read-modify-write,
      * retried until it applies ("Sequentially consistent, as every claim:
      * see deliversAlone(to:in:)"). */
     atomic {
       cur = word;
       if
       :: PTR(cur) == 0 -> k = 0; delivered(v)
       :: PTR(cur) != 0 && (cur & D) == 0 -> word = cur | D; claimed(v, PTR(cur)); k = 1
       :: PTR(cur) != 0 && (cur & D) != 0 -> word = cur | Q; ordered(v); k = 2
       fi
     };
     if
     :: k == 2 ->
        /* state.pending.append(Pending(..., limit: state.nextSerial)) */
        assert(npend < NP);
        pendV[npend] = v;
        pendLim[npend] = nextSerial;
        npend++
     :: else -> skip
     fi
  :: else -> skip
  fi;
  unlock(coreLock)
}

/* What a handler does, the first time A's runs (HANDLER). Its broadcast
 * finds this thread delivering, so `broadcast(_:)` takes the locked path
 * and queues it. */
inline handlerActions() {
  if
  :: (HANDLER & H_UNSUB) && !hunsub -> hunsub = 1; call(INVALIDATE_INSIDE, 0)
  :: else -> skip
  fi;
  if
  :: (HANDLER & H_SUB) && !hsub -> hsub = 1; call(SUBSCRIBE, 2)
  :: else -> skip
  fi;
  if
  :: (HANDLER & H_SEND) && !hsent ->
     hsent = 1;
     started(HV);
     nbcur = word;
     assert((nbcur & D) != 0);
     claimLocked(HV, nbcur, nbk);
     assert(nbk != 1);   /* queued, or no observer left */
     returnedM = returnedM | (1 << HV)
  :: else -> skip
  fi
}

/* A's handler, the first time it runs, when it does anything. */
#define HANDLES(X) (X == 0 && ((HANDLER & H_UNSUB) && !hunsub || (HANDLER & H_SUB) && !hsub || (HANDLER & H_SEND) && !hsent))

/* DeliveryGate.deliver: the gate is claimed, so `close()` waits for it;
 * the handler runs unless the gate is closed. */
inline runClaimed(X) {
  if
  :: HANDLES(X) && !gateClosed -> call(HANDLER_RUN, X)
  :: else -> skip
  fi
}

/* DeliveryGate.deliverAlone on A's gate: unclaimed when the gate is `alone`
 * and not closed (its sequentially consistent load of `requests`). */
inline runAlone(X) {
  if
  :: X == 0 && ALONE ->
     atomic { if :: !gateClosed -> aloneRunning = 1; hrun = 1 :: else -> hrun = 0 fi };
     if
     :: hrun ->
        assert(!waitedReturned);
        if :: HANDLES(X) -> call(HANDLER_RUN, X) :: else -> skip fi;
        aloneRunning = 0
     :: else -> skip
     fi
  :: else -> runClaimed(X)
  fi
}

/* _SenderCore.deliver(_:to:): the list this thread claimed, read unlocked. */
inline deliverClaimed(v, l) {
  readCount(l, dn);
  if
  :: dn == 1 ->
     readSlot(l, 0, ds);
     if :: ds != 0 -> receipt(v, ds - 1); runAlone(ds - 1) :: else -> skip fi
  :: else ->
     di = 0;
     do
     :: di < dn ->
        readSlot(l, di, ds);
        if :: ds != 0 -> receipt(v, ds - 1); runClaimed(ds - 1) :: else -> skip fi;
        di++
     :: else -> break
     od
  fi
}

/* _SenderCore.deliver(_:to:below:in:): a queued value, to the
 * subscriptions made before it. `serial` is read unlocked: "set under the
 * core's lock before the entry is visible, then constant". */
inline deliverBelow(v, lim, l) {
  readCount(l, dn);
  di = 0;
  do
  :: di < dn ->
     readSlot(l, di, ds);
     if
     :: ds != 0 && serial[ds - 1] < lim -> receipt(v, ds - 1); runClaimed(ds - 1)
     :: else -> skip
     fi;
     di++
  :: else -> break
  od
}

/* _SenderCore.finishLocked() */
inline finishLocked() {
  do
  :: lock(coreLock);
     /* "This thread no longer reads the lists it delivered from, nor runs
      * a chain without claiming its gate." */
     fr = (nret > 0 -> retired[0] : 0);
     nret = 0;
     fw = aloneWaiting;
     aloneWaiting = 0;
     /* `word.load(ordering: .relaxed)`: "Relaxed: under the lock. This
      * thread delivers, so no lock-free claim can change the word, and
      * every other change holds the lock." */
     fcur = word;
     if
     :: npend == 0 ->
        finishing = 0;
        /* `word.store(pointer, ordering: .releasing)`: the stop */
        atomic { word = PTR(fcur) * 16; deliverer = 0 };
        fl = 0; fn = 0
     :: else ->
        finishing = 1;
        /* "Still delivering, from the current list: it is shared again." */
        word = PTR(fcur) * 16 + D;
        fl = PTR(fcur);
        if :: fl != 0 -> lreaders[fl]++ :: else -> skip fi;
        fn = npend;
        fb = 0;
        do
        :: fb < npend -> fv[fb] = pendV[fb]; fm[fb] = pendLim[fb]; fb++
        :: else -> break
        od;
        npend = 0
     fi;
     unlock(coreLock);
     /* `_ = consume retired`: released outside the lock */
     if :: fr != 0 -> freeList(fr) :: else -> skip fi;
     if
     :: fw ->
        /* ParkingLot.shared.withLock(self) { wakeAll(self) } */
        lock(cstripe);
        csleep[1] = 0; csleep[2] = 0; csleep[3] = 0;
        unlock(cstripe)
     :: else -> skip
     fi;
     if
     :: fn == 0 -> break                                /* batch.isEmpty */
     :: fn != 0 && fl == 0 ->                           /* no observer left */
        fb = 0;
        do
        :: fb < fn -> delivered(fv[fb]); fb++
        :: else -> break
        od
     :: fn != 0 && fl != 0 ->
        fb = 0;
        do
        :: fb < fn -> deliverBelow(fv[fb], fm[fb], fl); delivered(fv[fb]); fb++
        :: else -> break
        od;
        lreaders[fl]--
     fi
  od
}

/* _SenderCore.finish(claimed:) */
inline finish(cl0) {
#ifndef MUTANT_FINISH_LOAD_STORE
  /* compareExchange(expected: claimed | delivering, desired: claimed,
   * ordering: .releasing): publishes this delivery's handlers to the next
   * claim (claim(_:in:): "stopped with a releasing compare-and-swap"). */
  atomic {
    if
    :: word == cl0 + D -> word = cl0; deliverer = 0; fok = 1
    :: else -> fok = 0
    fi
  };
#else
  fcur = word;
  if
  :: fcur == cl0 + D -> atomic { word = cl0; deliverer = 0 }; fok = 1
  :: else -> fok = 0
  fi;
#endif
  if :: !fok -> finishLocked() :: else -> skip fi
}

/* _SenderCore.broadcast(_:) */
inline broadcast(v) {
  started(v);
  /* `word.load(ordering: .relaxed)`: "it only decides whether to try". */
  bcur = word;
  if
  :: bcur == 0 -> delivered(v)                          /* no observer */
  :: else ->
     bk = 0;
     if
     :: (bcur & FLAGS) == 0 && !HOLDER ->
        /* The lock-free claim: compareExchange(expected: current, desired:
         * current | delivering, ordering: .sequentiallyConsistent). */
        atomic {
          if
          :: word == bcur -> word = bcur | D; claimed(v, PTR(bcur)); bk = 1
          :: else -> skip
          fi
        }
     :: else -> skip
     fi;
     if
     :: bk == 0 -> claimLocked(v, bcur, bk)             /* broadcastLocked */
     :: else -> skip
     fi;
     if
     :: bk == 1 ->
        /* run(_:_:), or the fast path: deliver, then finish */
        bclaimed = bcur;
        deliverClaimed(v, PTR(bclaimed));
        lreaders[PTR(bclaimed)]--;
        delivered(v);
        finish(bclaimed)
     :: else -> skip
     fi
  fi;
  returnedM = returnedM | (1 << v)
}

/* One thread's call of a function that this model keeps out of line, so
 * that spin compiles it once: the calling thread waits for it to return,
 * and `me` stays the calling thread's id. */
inline call(kind, X) {
  run Op(me, kind, X, ret);
  ret ? _
}

proctype Op(byte me; byte kind; byte X; chan reply) {
  chan ret = [0] of { bit };
  byte nbcur, nbk;
  byte ccur, cptr, cold, ccopy, cl, cn, ci, cs, op, osub, oidx;
  byte ri, rl, rn, rs, dacur, dal, dan, das, aorig;
  bit ok, ures, ares, adone, awaiting, inside;
  if
  :: kind == SUBSCRIBE -> subscribe(X)
  :: kind == HANDLER_RUN -> handlerActions()
  :: kind == UNSUBSCRIBE || kind == INVALIDATE || kind == INVALIDATE_INSIDE ->
     /* Observer.invalidate() of A's observer closes its gate (sequentially
      * consistent: DeliveryGate.close()), then detaches the subscription,
      * awaiting a run without a claim when the gate is `alone`. */
     if :: kind != UNSUBSCRIBE -> gateClosed = 1 :: else -> skip fi;
     awaiting = (kind != UNSUBSCRIBE && ALONE);
     inside = (kind == INVALIDATE_INSIDE);
     unsubscribe(X, awaiting, inside);
     if
     :: kind == INVALIDATE -> atomic { assert(!aloneRunning); waitedReturned = 1 }
     :: else -> skip
     fi
  fi;
  reply ! 1
}

proctype Thread(byte me; byte role; byte first; byte nb) {
  chan ret = [0] of { bit };
  byte v, bcur, bclaimed, bk;
  byte dn, di, ds;
  byte fr, fcur, fl, fn, fb, fv[NP], fm[NP];
  bit fok, fw, hrun;
  if
  :: role == BCAST ->
     v = first;
     do
     :: v < first + nb -> broadcast(v); v++
     :: else -> break
     od
  :: role == SUBUNSUB -> call(SUBSCRIBE, 1); call(UNSUBSCRIBE, 1)
  :: role == SUB -> call(SUBSCRIBE, 1)
  :: role == CHURN ->
     call(UNSUBSCRIBE, 0);
     call(SUBSCRIBE, 1); call(UNSUBSCRIBE, 1);
     call(SUBSCRIBE, 2); call(UNSUBSCRIBE, 2)
  :: role == INVAL -> call(INVALIDATE, 0)
  fi
}

init {
  byte l, x, n, y;
  atomic {
    /* A subscribed, alone in list 1 */
    lalive[1] = 1; lcount[1] = 1; lslot[CAP] = 1;
    serial[0] = 0; index[0] = 0; subState[0] = 2;
    index[1] = NIL; index[2] = NIL;
#if R1
    run Thread(1, R1, 0, NB1);
#endif
#if R2
    run Thread(2, R2, NB1, NB2);
#endif
#if R3
    run Thread(3, R3, NB1 + NB2, 0);
#endif
  };
  _nr_pr == 1;
  /* Everything ended: the word is idle, nothing is queued or retired. */
  assert((word & FLAGS) == 0 && npend == 0 && nret == 0 && deliverer == 0);
  /* The current list holds exactly the subscriptions in place. */
  l = PTR(word);
  n = 0;
  for (x : 0 .. NS - 1) {
    if
    :: subState[x] == 2 -> n++; assert(l != 0 && lslot[l * CAP + index[x]] == x + 1)
    :: else -> assert(subState[x] == 0 || subState[x] == 4)
    fi
  }
  assert(live == n);
  /* Every list is released, or is the word's or the spare one. */
  for (x : 1 .. NL) {
    assert(lreaders[x] == 0);
    assert(!lalive[x] || x == l || x == spare)
  }
  /* Each broadcast reached every subscription that had returned from
   * subscribe when it started, unless an unsubscribe of it began before
   * the broadcast was delivered. */
  for (y : 0 .. NV - 1) {
    for (x : 0 .. NS - 1) {
      assert((must[y] & (1 << x)) == 0 || (excused[x] & (1 << y)) != 0 || (got[y] & (1 << x)) != 0)
    }
  }
}

/* A thread parked in awaitRunAlone is eventually woken. */
ltl woken { [] ((csleep[1] || csleep[2] || csleep[3]) -> <> !(csleep[1] || csleep[2] || csleep[3])) }
/* Queued broadcasts are eventually delivered. */
ltl drained { [] (npend > 0 -> <> (npend == 0)) }
