/* SPDX-License-Identifier: MIT */
/*
 * test_sticky_replay: QTBUS_EVENT_STICKY, QTBUS_SUB_REPLAY, qtbus_sticky_clear.
 *
 * Users rely on: the bus keeping the last sticky event per type+subtype (a newer one
 * replacing it, a plain event not); a REPLAY subscriber getting the kept event(s) that
 * match it before qtbus_subscribe returns (or first on its queue), a whole-type one
 * getting every subtype's in the order they were dispatched; sticky_clear dropping and
 * counting; ONCE|REPLAY firing once; a sticky event's object living until it is
 * replaced or cleared; and "replay then live" having no gap, no duplicate and no
 * reordering while another thread keeps dispatching.
 */
#include "test_util.h"

static qtbus_bus *bus;

/* ---------------------------------------------------------------------------------
 * A subscription's log of received payloads (strings), in arrival order.
 * ------------------------------------------------------------------------------- */
#define RLOG_MAX 32
typedef struct rlog {
    char item[RLOG_MAX][16];
    char subtype[RLOG_MAX][16];
    void *object[RLOG_MAX];
    atomic_int n;
    atomic_int releases;
    pthread_t last_thread;
} rlog;

static void rlog_init(rlog *l)
{
    memset(l, 0, sizeof *l);
    atomic_init(&l->n, 0);
    atomic_init(&l->releases, 0);
}

static void rlog_handler(const qtbus_event *ev, void *userdata)
{
    rlog *l = (rlog *)userdata;
    int i = atomic_load(&l->n);
    CHECK(i < RLOG_MAX);
    size_t size = 0;
    const char *data = (const char *)qtbus_event_data(ev, &size);
    CHECK(size < sizeof l->item[i]);
    if (size) memcpy(l->item[i], data, size);
    l->item[i][size] = '\0';
    const char *st = qtbus_event_subtype(ev);
    snprintf(l->subtype[i], sizeof l->subtype[i], "%s", st ? st : "");
    l->object[i] = qtbus_event_object(ev);
    l->last_thread = pthread_self();
    atomic_store(&l->n, i + 1);
}

static void rlog_release(void *userdata) { atomic_fetch_add(&((rlog *)userdata)->releases, 1); }

#define CHECK_RLOG(l, ...)                                                                                             \
    do {                                                                                                               \
        const char *expect_[] = {__VA_ARGS__};                                                                         \
        int n_ = (int)(sizeof expect_ / sizeof expect_[0]);                                                            \
        int got_ = atomic_load(&(l)->n);                                                                               \
        int ok_ = got_ == n_;                                                                                          \
        for (int i_ = 0; ok_ && i_ < n_; i_++)                                                                         \
            ok_ = strcmp((l)->item[i_], expect_[i_]) == 0;                                                             \
        if (!ok_) {                                                                                                    \
            fprintf(stderr, "%s received:", #l);                                                                       \
            for (int i_ = 0; i_ < got_; i_++)                                                                          \
                fprintf(stderr, " %s", (l)->item[i_]);                                                                 \
            fprintf(stderr, "\nexpected:");                                                                            \
            for (int i_ = 0; i_ < n_; i_++)                                                                            \
                fprintf(stderr, " %s", expect_[i_]);                                                                   \
            fprintf(stderr, "\n");                                                                                     \
        }                                                                                                              \
        CHECK(ok_);                                                                                                    \
    } while (0)
#define CHECK_RLOG_EMPTY(l) CHECK_EQ_INT(atomic_load(&(l)->n), 0)

static void sticky(const char *type, const char *subtype, const char *text, int expect_rc)
{
    qtbus_event_desc d = tu_event(type, subtype);
    d.data = text;
    d.size = strlen(text);
    d.flags = QTBUS_EVENT_STICKY;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), expect_rc);
}

static qtbus_token replay_sub(const char *type, const char *const *subtypes, size_t count, uint32_t flags,
                              qtbus_queue *queue, rlog *l)
{
    qtbus_sub_options o = tu_options();
    o.subtypes = subtypes;
    o.subtype_count = count;
    o.flags = flags;
    o.queue = queue;
    qtbus_token t = {0};
    CHECK_EQ_INT(qtbus_subscribe(bus, type, &o, rlog_handler, l, rlog_release, &t), QTBUS_OK);
    return t;
}

/* ---------------------------------------------------------------------------------
 * Replay then live, concurrently.
 * ------------------------------------------------------------------------------- */
#define SEQ_N 4000
#define SEQ_SUBS 80

typedef struct seqrec {
    atomic_uint last;
    atomic_uint first;
    atomic_int count;
    atomic_int not_increasing; /* duplicates or reordering */
    atomic_int gaps;           /* a number skipped between two received ones */
    atomic_int releases;
} seqrec;

static void seq_handler(const qtbus_event *ev, void *userdata)
{
    seqrec *r = (seqrec *)userdata;
    size_t size = 0;
    const uint32_t *p = (const uint32_t *)qtbus_event_data(ev, &size);
    CHECK_EQ_INT(size, sizeof(uint32_t));
    uint32_t v = *p;
    unsigned prev = atomic_exchange(&r->last, v);
    if (prev == 0)
        atomic_store(&r->first, v);
    else if (v <= prev)
        atomic_fetch_add(&r->not_increasing, 1);
    else if (v != prev + 1)
        atomic_fetch_add(&r->gaps, 1);
    atomic_fetch_add(&r->count, 1);
}
static void seq_release(void *userdata) { atomic_fetch_add(&((seqrec *)userdata)->releases, 1); }

static atomic_uint seq_progress; /* last number whose dispatch returned */

static void seq_dispatcher(int index, void *ctx)
{
    (void)index;
    (void)ctx;
    for (uint32_t i = 1; i <= SEQ_N; i++) {
        qtbus_event_desc d = tu_event("Seq", "s");
        d.data = &i;
        d.size = sizeof i;
        d.flags = QTBUS_EVENT_STICKY;
        int rc = qtbus_dispatch(bus, &d);
        CHECK(rc >= 0);
        atomic_store(&seq_progress, i);
    }
}

static void test_replay_concurrent(void)
{
    static seqrec rec[SEQ_SUBS];
    static qtbus_token tok[SEQ_SUBS];
    static const char *s_only[] = {"s"};
    memset(rec, 0, sizeof rec);
    atomic_store(&seq_progress, 0);

    tu_threads th;
    tu_threads_start(&th, 1, seq_dispatcher, NULL);
    for (int k = 0; k < SEQ_SUBS; k++) {
        /* Spread the subscriptions over the dispatcher's run (the last ones after it). */
        unsigned target = (unsigned)((uint64_t)SEQ_N * (unsigned)k / (SEQ_SUBS - 8));
        if (target > SEQ_N) target = SEQ_N;
        int64_t deadline = tu_now_ms() + TU_WAIT_MS * 3;
        while (atomic_load(&seq_progress) < target) {
            CHECK(tu_now_ms() < deadline);
            sched_yield();
        }
        qtbus_sub_options o = tu_options();
        o.flags = QTBUS_SUB_REPLAY;
        if (k % 2) {
            o.subtypes = s_only;
            o.subtype_count = 1;
        }
        CHECK_EQ_INT(qtbus_subscribe(bus, "Seq", &o, seq_handler, &rec[k], seq_release, &tok[k]), QTBUS_OK);
        /* Whatever was kept when subscribe returned has been replayed already. */
        if (atomic_load(&seq_progress) > 0) CHECK(atomic_load(&rec[k].count) > 0);
    }
    tu_threads_join(&th);

    int total = 0;
    for (int k = 0; k < SEQ_SUBS; k++) {
        seqrec *r = &rec[k];
        CHECK_MSG(atomic_load(&r->not_increasing) == 0, "subscription %d: %d duplicate/out-of-order events", k,
                  atomic_load(&r->not_increasing));
        CHECK_MSG(atomic_load(&r->gaps) == 0, "subscription %d: %d gaps (first %u, count %d)", k, atomic_load(&r->gaps),
                  atomic_load(&r->first), atomic_load(&r->count));
        CHECK_MSG(atomic_load(&r->last) == SEQ_N, "subscription %d: last seen %u, not %d", k, atomic_load(&r->last),
                  SEQ_N);
        CHECK_EQ_INT(atomic_load(&r->count), SEQ_N - (int)atomic_load(&r->first) + 1);
        total += atomic_load(&r->count);
        CHECK_EQ_INT(qtbus_token_dispose(tok[k]), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r->releases), 1);
    }
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "Seq", NULL), 1);
    printf("replay+live: %d subscriptions, %d deliveries, no gap/duplicate\n", SEQ_SUBS, total);
}

/* ---- a replayed handler that dispatches its own sticky type ---- */

static int nested_calls, nested_deepest, nesting;

/* Dispatches its own type (sticky) from inside itself while it is nested fewer than 4
 * deep, as a handler that recurses to a bound does: inside the replay, as inside a live
 * dispatch, the nested dispatch reaches it at once (depth-first), so it stops at 4.
 * (Parked until the replay's current delivery returned, it would never be nested and
 * would never stop.) */
static void nesting_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    nested_calls++;
    CHECK_MSG(nested_calls < 100, "a nested sticky dispatch inside the replay did not terminate");
    nesting++;
    if (nesting > nested_deepest) nested_deepest = nesting;
    if (nesting < 4) {
        qtbus_event_desc d = tu_event("Walk", NULL);
        d.flags = QTBUS_EVENT_STICKY;
        qtbus_dispatch(bus, &d);
    }
    nesting--;
}

static void test_replay_nested_dispatch(void)
{
    qtbus_event_desc d = tu_event("Walk", NULL);
    d.flags = QTBUS_EVENT_STICKY;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
    qtbus_sub_options o = tu_options();
    o.flags = QTBUS_SUB_REPLAY;
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Walk", &o, nesting_handler, NULL, NULL, &t), QTBUS_OK);
    CHECK_EQ_INT(nested_deepest, 4);
    CHECK_EQ_INT(nested_calls, 4);
    /* A live dispatch of the same walk gives the same. */
    nested_calls = nested_deepest = 0;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(nested_deepest, 4);
    CHECK_EQ_INT(nested_calls, 4);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "Walk", NULL), 1);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    static const char *const A[] = {"a"};
    static const char *const B[] = {"b"};
    static const char *const C[] = {"c"};
    static const char *const AB[] = {"a", "b"};
    static const char *const AA[] = {"a", "a"};

    /* Kept: per type+subtype, the newest sticky one; dispatch order b2, a3, n4. */
    sticky("S", "a", "a1", 0);
    sticky("S", "b", "b2", 0);
    sticky("S", "a", "a3", 0);
    sticky("S", NULL, "n4", 0);
    {
        /* A plain (non-sticky) event does not replace the kept one. */
        qtbus_event_desc d = tu_event("S", "a");
        d.data = "x5";
        d.size = 2;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
    }
    /* Sticky events of another type are not mixed in. */
    sticky("Other", "a", "o1", 0);

    rlog la, lb, lab, laa, lc, lw, lplain, lonce;
    rlog_init(&la);
    rlog_init(&lb);
    rlog_init(&lab);
    rlog_init(&laa);
    rlog_init(&lc);
    rlog_init(&lw);
    rlog_init(&lplain);
    rlog_init(&lonce);

    /* Subtype REPLAY: only its own subtype, before subscribe returns, on this thread. */
    qtbus_token ta = replay_sub("S", A, 1, QTBUS_SUB_REPLAY, NULL, &la);
    CHECK_RLOG(&la, "a3");
    CHECK_EQ_STR(la.subtype[0], "a");
    CHECK(pthread_equal(la.last_thread, pthread_self()));
    qtbus_token tb = replay_sub("S", B, 1, QTBUS_SUB_REPLAY, NULL, &lb);
    CHECK_RLOG(&lb, "b2");
    /* Several subtypes: each kept one, in dispatch order; a repeated name: once. */
    qtbus_token tab = replay_sub("S", AB, 2, QTBUS_SUB_REPLAY, NULL, &lab);
    CHECK_RLOG(&lab, "b2", "a3");
    qtbus_token taa = replay_sub("S", AA, 2, QTBUS_SUB_REPLAY, NULL, &laa);
    CHECK_RLOG(&laa, "a3");
    /* Nothing kept for "c". */
    qtbus_token tc = replay_sub("S", C, 1, QTBUS_SUB_REPLAY, NULL, &lc);
    CHECK_RLOG_EMPTY(&lc);
    /* Whole type: every subtype's (and the one without), in dispatch order. */
    qtbus_token tw = replay_sub("S", NULL, 0, QTBUS_SUB_REPLAY, NULL, &lw);
    CHECK_RLOG(&lw, "b2", "a3", "n4");
    CHECK_EQ_STR(lw.subtype[2], "");
    /* Without REPLAY: nothing at subscribe time. */
    qtbus_token tplain = replay_sub("S", NULL, 0, 0, NULL, &lplain);
    CHECK_RLOG_EMPTY(&lplain);
    /* ONCE|REPLAY: exactly one of the kept events, then stale and released. */
    qtbus_token tonce = replay_sub("S", NULL, 0, QTBUS_SUB_ONCE | QTBUS_SUB_REPLAY, NULL, &lonce);
    CHECK_EQ_INT(atomic_load(&lonce.n), 1);
    CHECK_EQ_INT(qtbus_token_is_active(tonce), 0);
    CHECK_EQ_INT(atomic_load(&lonce.releases), 1);

    /* Live events after the replay: each subscription once more. */
    sticky("S", "a", "a6", 5); /* la, lab, laa, lw, lplain */
    CHECK_RLOG(&la, "a3", "a6");
    CHECK_RLOG(&lab, "b2", "a3", "a6");
    CHECK_RLOG(&laa, "a3", "a6");
    CHECK_RLOG(&lw, "b2", "a3", "n4", "a6");
    CHECK_RLOG(&lplain, "a6");
    CHECK_RLOG(&lb, "b2");
    CHECK_RLOG_EMPTY(&lc);
    CHECK_EQ_INT(atomic_load(&lonce.n), 1);

    /* REPLAY on a queue: the kept events come first on that queue (not on this thread),
     * then a live one dispatched right after subscribe returned. */
    {
        qtbus_queue *q = qtbus_queue_create("sticky.replay");
        CHECK(q != NULL);
        rlog lq;
        rlog_init(&lq);
        qtbus_token tq = replay_sub("S", NULL, 0, QTBUS_SUB_REPLAY, q, &lq);
        sticky("S", "b", "b7", 5); /* lb, lab, lw, lplain, lq (queued) */
        CHECK_IDLE(bus);
        CHECK_EQ_INT(atomic_load(&lq.n), 4);
        CHECK_RLOG(&lq, "b2", "n4", "a6", "b7");
        CHECK(!pthread_equal(lq.last_thread, pthread_self()));
        CHECK_EQ_INT(qtbus_token_dispose(tq), QTBUS_OK);
        CHECK_WAIT(atomic_load(&lq.releases) == 1, TU_WAIT_MS);
        qtbus_queue_release(q);
    }
    /* Kept now: n4, a6, b7 (dispatch order). */
    {
        rlog l2;
        rlog_init(&l2);
        qtbus_token t2 = replay_sub("S", NULL, 0, QTBUS_SUB_REPLAY, NULL, &l2);
        CHECK_RLOG(&l2, "n4", "a6", "b7");
        CHECK_EQ_INT(qtbus_token_dispose(t2), QTBUS_OK);
    }

    /* sticky_clear: counts what it dropped. */
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "S", "a"), 1);
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "S", "a"), 0);
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "S", "zzz"), 0);
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "Nothing", NULL), 0);
    {
        rlog l3, l4;
        rlog_init(&l3);
        rlog_init(&l4);
        qtbus_token t3 = replay_sub("S", A, 1, QTBUS_SUB_REPLAY, NULL, &l3);
        CHECK_RLOG_EMPTY(&l3);
        qtbus_token t4 = replay_sub("S", NULL, 0, QTBUS_SUB_REPLAY, NULL, &l4);
        CHECK_RLOG(&l4, "n4", "b7");
        CHECK_EQ_INT(qtbus_token_dispose(t3), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t4), QTBUS_OK);
    }
    /* NULL subtype: every subtype of the type, the one without included. */
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "S", NULL), 2);
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "S", NULL), 0);
    {
        rlog l5;
        rlog_init(&l5);
        qtbus_token t5 = replay_sub("S", NULL, 0, QTBUS_SUB_REPLAY, NULL, &l5);
        CHECK_RLOG_EMPTY(&l5);
        CHECK_EQ_INT(qtbus_token_dispose(t5), QTBUS_OK);
    }
    /* The other type's sticky event was untouched. */
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "Other", "a"), 1);

    /* ONCE|REPLAY with nothing kept: stays live, fires once on the next event. */
    {
        rlog l6;
        rlog_init(&l6);
        qtbus_token t6 = replay_sub("S", NULL, 0, QTBUS_SUB_ONCE | QTBUS_SUB_REPLAY, NULL, &l6);
        CHECK_RLOG_EMPTY(&l6);
        CHECK_EQ_INT(qtbus_token_is_active(t6), 1);
        qtbus_event_desc d = tu_event("S", NULL);
        d.data = "p8";
        d.size = 2;
        CHECK(qtbus_dispatch(bus, &d) >= 1);
        CHECK(qtbus_dispatch(bus, &d) >= 0);
        CHECK_RLOG(&l6, "p8");
        CHECK_EQ_INT(qtbus_token_is_active(t6), 0);
        CHECK_EQ_INT(atomic_load(&l6.releases), 1);
    }

    qtbus_token all[] = {ta, tb, tab, taa, tc, tw, tplain};
    rlog *logs[] = {&la, &lb, &lab, &laa, &lc, &lw, &lplain};
    for (int i = 0; i < 7; i++) {
        CHECK_EQ_INT(qtbus_token_dispose(all[i]), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&logs[i]->releases), 1);
    }

    /* A sticky event's object lives until the event is replaced or cleared (and its
     * replays are done), and is what replays carry. */
    {
        atomic_int c1, c2, c3, c4;
        atomic_init(&c1, 0);
        atomic_init(&c2, 0);
        atomic_init(&c3, 0);
        atomic_init(&c4, 0);
        rlog live;
        rlog_init(&live);
        qtbus_token tl = replay_sub("Obj", NULL, 0, 0, NULL, &live);
        qtbus_event_desc d = tu_event("Obj", "k");
        d.flags = QTBUS_EVENT_STICKY;
        d.object = &c1;
        d.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK(live.object[0] == &c1);
        CHECK_EQ_INT(atomic_load(&c1), 0); /* kept */
        rlog r1;
        rlog_init(&r1);
        qtbus_token t1 = replay_sub("Obj", NULL, 0, QTBUS_SUB_REPLAY, NULL, &r1);
        CHECK_EQ_INT(atomic_load(&r1.n), 1);
        CHECK(r1.object[0] == &c1);
        CHECK_EQ_INT(atomic_load(&c1), 0);
        /* Replaced: the old object is released, the new one kept. */
        d.object = &c2;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
        CHECK_EQ_INT(atomic_load(&c1), 1);
        CHECK_EQ_INT(atomic_load(&c2), 0);
        /* Another subtype is a separate kept event. */
        qtbus_event_desc d3 = tu_event("Obj", "other");
        d3.flags = QTBUS_EVENT_STICKY;
        d3.object = &c3;
        d3.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d3), 2);
        CHECK_EQ_INT(atomic_load(&c2), 0);
        CHECK_EQ_INT(atomic_load(&c3), 0);
        /* Cleared: released. */
        CHECK_EQ_INT(qtbus_sticky_clear(bus, "Obj", "k"), 1);
        CHECK_EQ_INT(atomic_load(&c2), 1);
        CHECK_EQ_INT(atomic_load(&c3), 0);
        CHECK_EQ_INT(qtbus_token_dispose(tl), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t1), QTBUS_OK);
        /* Bus destroy drops the kept events: released once. */
        qtbus_bus *b2 = qtbus_bus_create();
        CHECK(b2 != NULL);
        qtbus_event_desc d4 = tu_event("Obj", NULL);
        d4.flags = QTBUS_EVENT_STICKY;
        d4.object = &c4;
        d4.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_dispatch(b2, &d4), 0);
        CHECK_EQ_INT(atomic_load(&c4), 0);
        CHECK_EQ_INT(qtbus_bus_destroy(b2), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&c4), 1);
        CHECK_EQ_INT(qtbus_sticky_clear(bus, "Obj", NULL), 1);
        CHECK_EQ_INT(atomic_load(&c3), 1);
        CHECK_EQ_INT(atomic_load(&c1), 1);
        CHECK_EQ_INT(atomic_load(&c2), 1);
    }

    test_replay_concurrent();
    test_replay_nested_dispatch();

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_sticky_replay: passed\n");
    return 0;
}
