/* SPDX-License-Identifier: MIT */
/*
 * test_queue_limit: bounded queues (qtbus_queue_set_limit) and their overflow rules.
 *
 * Users rely on, for each rule: what qtbus_dispatch() returns, which deliveries the
 * handler sees and in what order (FIFO among those kept; LATEST keeping the replaced
 * one's place, per subscription, type and subtype), object_release exactly once per
 * event, a dropped request delivery completing the request, the counts (pending +
 * delivered + dropped = accepted), a DROP trace record per drop naming the rule;
 * BLOCK holding the dispatcher until there is room, in order, dropping at its timeout,
 * never waiting on the queue's own thread, and woken by qtbus_bus_destroy() and
 * qtbus_queue_release(); GROW with capacity 0 making the queue unbounded again; the
 * main queue bounded too; bad input refused with QTBUS_EINVAL and nothing changed.
 */
#include "test_util.h"

/* ---- what a handler saw, in order ---- */
#define MAX_SEEN 4096
static atomic_int seen_count;
static int seen[MAX_SEEN];

static void record_handler(const qtbus_event *ev, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    const int *value = qtbus_event_data(ev, &size);
    CHECK_EQ_INT(size, sizeof(int));
    int i = atomic_fetch_add(&seen_count, 1);
    CHECK(i < MAX_SEEN);
    seen[i] = *value;
}

static atomic_int released;
static void count_release(void *object)
{
    (void)object;
    atomic_fetch_add(&released, 1);
}

static void reset(void)
{
    atomic_store(&seen_count, 0);
    atomic_store(&released, 0);
}

/* Dispatches `value` as an event of `type`/`subtype` with an object to release. */
static int send(qtbus_bus *bus, const char *type, const char *subtype, int value)
{
    qtbus_event_desc d = tu_event(type, subtype);
    d.data = &value;
    d.size = sizeof value;
    d.object = &released;
    d.object_release = count_release;
    return qtbus_dispatch(bus, &d);
}

static qtbus_queue_stats stats_of(qtbus_queue *q)
{
    qtbus_queue_stats s;
    CHECK_EQ_INT(qtbus_queue_stats_get(q, &s), QTBUS_OK);
    return s;
}

#define CHECK_SEEN(...)                                                                                                \
    do {                                                                                                               \
        int want_[] = {__VA_ARGS__};                                                                                   \
        int n_ = (int)(sizeof want_ / sizeof want_[0]);                                                                \
        CHECK_EQ_INT(atomic_load(&seen_count), n_);                                                                    \
        for (int i_ = 0; i_ < n_; i_++)                                                                                \
            CHECK_EQ_INT(seen[i_], want_[i_]);                                                                         \
    } while (0)

/* A queue with a gate subscription (type "Gate") and a recording one (type "E"),
 * the gate's handler running: nothing of "E" can start until the gate opens. */
typedef struct fixture {
    qtbus_bus *bus;
    qtbus_queue *queue;
    tu_gate gate;
    qtbus_token gate_sub, sub;
    qtbus_queue_stats last; /* the queue's counts when it was closed */
} fixture;

static void fixture_open(fixture *f, size_t capacity, uint32_t rule, int timeout_ms)
{
    f->bus = qtbus_bus_create();
    f->queue = qtbus_queue_create("limit");
    CHECK(f->bus && f->queue);
    CHECK_EQ_INT(qtbus_queue_set_limit(f->queue, capacity, rule, timeout_ms), QTBUS_OK);
    atomic_init(&f->gate.open, 0);
    atomic_init(&f->gate.entered, 0);
    f->gate_sub = tu_sub_on_queue(f->bus, f->queue, "Gate", tu_gate_handler, &f->gate);
    f->sub = tu_sub_on_queue(f->bus, f->queue, "E", record_handler, NULL);
    reset();
    qtbus_event_desc d = tu_event("Gate", NULL);
    CHECK_EQ_INT(qtbus_dispatch(f->bus, &d), 1);
    CHECK_WAIT(atomic_load(&f->gate.entered) == 1, TU_WAIT_MS);
}

static void fixture_close(fixture *f)
{
    atomic_store(&f->gate.open, 1);
    CHECK_IDLE(f->bus);
    f->last = stats_of(f->queue);
    CHECK_EQ_INT(qtbus_bus_destroy(f->bus), QTBUS_OK);
    qtbus_queue_release(f->queue);
}

/* ---- bad input: EINVAL, and the queue stays as it was ---- */
static void test_bad_input(void)
{
    qtbus_queue *q = qtbus_queue_create("bad");
    CHECK_EQ_INT(qtbus_queue_set_limit(NULL, 10, QTBUS_OVERFLOW_DROP_NEWEST, -1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_queue_set_limit(q, 10, 5, -1), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "overflow") != NULL);
    CHECK_EQ_INT(qtbus_queue_set_limit(q, 10, UINT32_MAX, -1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_queue_set_limit(q, 0, QTBUS_OVERFLOW_BLOCK, -1), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "capacity of 0") != NULL);
    CHECK_EQ_INT(qtbus_queue_set_limit(q, 0, QTBUS_OVERFLOW_DROP_OLDEST, -1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_queue_set_limit(q, 0, QTBUS_OVERFLOW_LATEST, -1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_queue_set_limit(q, (size_t)-1, QTBUS_OVERFLOW_DROP_NEWEST, -1), QTBUS_EINVAL);
    /* Nothing changed: still unbounded, a gated flood of 200 is all kept. */
    fixture f;
    f.bus = qtbus_bus_create();
    f.queue = q;
    atomic_init(&f.gate.open, 0);
    atomic_init(&f.gate.entered, 0);
    f.gate_sub = tu_sub_on_queue(f.bus, q, "Gate", tu_gate_handler, &f.gate);
    f.sub = tu_sub_on_queue(f.bus, q, "E", record_handler, NULL);
    reset();
    qtbus_event_desc d = tu_event("Gate", NULL);
    CHECK_EQ_INT(qtbus_dispatch(f.bus, &d), 1);
    CHECK_WAIT(atomic_load(&f.gate.entered) == 1, TU_WAIT_MS);
    for (int i = 0; i < 200; i++)
        CHECK_EQ_INT(send(f.bus, "E", NULL, i), 1);
    CHECK_EQ_U64(stats_of(q).pending, 200);
    CHECK_EQ_U64(stats_of(q).dropped, 0);
    fixture_close(&f);
    CHECK_EQ_INT(atomic_load(&seen_count), 200);
    /* GROW with 0 is the one capacity-0 call that is right. */
    q = qtbus_queue_create("grow");
    CHECK_EQ_INT(qtbus_queue_set_limit(q, 0, QTBUS_OVERFLOW_GROW, -1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_queue_set_limit(qtbus_queue_main(), 0, QTBUS_OVERFLOW_GROW, -1), QTBUS_OK);
    qtbus_queue_release(q);
}

/* ---- DROP_NEWEST: the one that does not fit is dropped and not counted ---- */
static void test_drop_newest(void)
{
    fixture f;
    fixture_open(&f, 3, QTBUS_OVERFLOW_DROP_NEWEST, -1);
    for (int i = 0; i < 6; i++)
        CHECK_EQ_INT(send(f.bus, "E", NULL, i), i < 3 ? 1 : 0);
    qtbus_queue_stats s = stats_of(f.queue);
    CHECK_EQ_U64(s.pending, 3);
    CHECK_EQ_U64(s.dropped, 3);
    CHECK_EQ_U64(s.high_water, 3);
    /* The dropped ones' objects are released at once. */
    CHECK_EQ_INT(atomic_load(&released), 3);
    fixture_close(&f);
    CHECK_SEEN(0, 1, 2);
    CHECK_EQ_INT(atomic_load(&released), 6);
    s = f.last;
    CHECK_EQ_U64(s.pending, 0);
    CHECK_EQ_U64(s.delivered, 1 + 3); /* the gate's and the three kept */
}

/* ---- DROP_OLDEST: the oldest waiting one makes room; the new one counts ---- */
static void test_drop_oldest(void)
{
    fixture f;
    fixture_open(&f, 3, QTBUS_OVERFLOW_DROP_OLDEST, -1);
    for (int i = 0; i < 7; i++)
        CHECK_EQ_INT(send(f.bus, "E", NULL, i), 1);
    qtbus_queue_stats s = stats_of(f.queue);
    CHECK_EQ_U64(s.pending, 3);
    CHECK_EQ_U64(s.dropped, 4);
    CHECK_EQ_INT(atomic_load(&released), 4);
    fixture_close(&f);
    CHECK_SEEN(4, 5, 6);
    CHECK_EQ_INT(atomic_load(&released), 7);
    s = f.last;
    CHECK_EQ_U64(s.delivered + s.dropped + s.pending, 1 + 7);
}

/* ---- LATEST: per subscription, type and subtype; the place is kept ---- */
static void test_latest(void)
{
    fixture f;
    fixture_open(&f, 3, QTBUS_OVERFLOW_LATEST, -1);
    /* A second subscription of "E" on the same queue: its deliveries are its own key. */
    qtbus_token other = tu_sub_on_queue(f.bus, f.queue, "E", record_handler, NULL);
    /* s: f.sub's delivery, o: other's.  Capacity 3. */
    CHECK_EQ_INT(send(f.bus, "E", "a", 1), 2); /* [a1s a1o] */
    CHECK_EQ_INT(send(f.bus, "E", "b", 2), 2); /* b2o finds it full: [a1o b2s b2o] */
    CHECK_EQ_INT(qtbus_token_dispose(other), QTBUS_OK);
    /* other's deliveries still wait (lifetime rule 2 drops them when they come up,
     * without a handler call) and still count against the capacity. */
    CHECK_EQ_INT(send(f.bus, "E", "a", 3), 1);  /* full: [b2s b2o a3s] */
    CHECK_EQ_INT(send(f.bus, "E", "c", 4), 1);  /* full: [b2o a3s c4s] */
    CHECK_EQ_INT(send(f.bus, "E", "a", 5), 1);  /* replaces a3 in place: [b2o a5s c4s] */
    CHECK_EQ_INT(send(f.bus, "E", NULL, 6), 1); /* full: [a5s c4s 6s] */
    CHECK_EQ_INT(send(f.bus, "E", "c", 7), 1);  /* replaces c4 in place */
    CHECK_EQ_INT(send(f.bus, "E", NULL, 8), 1); /* replaces 6 (no subtype is a key too) */
    qtbus_queue_stats s = stats_of(f.queue);
    CHECK_EQ_U64(s.pending, 3);
    CHECK_EQ_U64(s.dropped, 7);
    fixture_close(&f);
    CHECK_SEEN(5, 7, 8);
    CHECK_EQ_INT(atomic_load(&released), 8);
    /* Not full: a new delivery replaces a waiting one all the same. */
    fixture_open(&f, 100, QTBUS_OVERFLOW_LATEST, -1);
    for (int i = 0; i < 50; i++)
        CHECK_EQ_INT(send(f.bus, "E", (i % 2) ? "odd" : "even", i), 1);
    CHECK_EQ_U64(stats_of(f.queue).pending, 2);
    fixture_close(&f);
    CHECK_SEEN(48, 49);
}

/* ---- BLOCK: the dispatcher waits for room, in order ---- */
typedef struct producer {
    qtbus_bus *bus;
    int first, count;
    atomic_int done;
    int results[64];
} producer;

static void *produce(void *p)
{
    producer *pr = p;
    for (int i = 0; i < pr->count; i++) {
        pr->results[i] = send(pr->bus, "E", NULL, pr->first + i);
        atomic_fetch_add(&pr->done, 1);
    }
    return NULL;
}

static void start_producer(producer *pr, pthread_t *t, qtbus_bus *bus, int first, int count)
{
    pr->bus = bus;
    pr->first = first;
    pr->count = count;
    atomic_init(&pr->done, 0);
    CHECK(pthread_create(t, NULL, produce, pr) == 0);
}

static void test_block(void)
{
    fixture f;
    fixture_open(&f, 2, QTBUS_OVERFLOW_BLOCK, -1);
    producer pr;
    pthread_t t;
    start_producer(&pr, &t, f.bus, 0, 10);
    CHECK_WAIT(atomic_load(&pr.done) == 2, TU_WAIT_MS);
    tu_sleep_ms(50);
    /* Two wait; the third dispatch waits for room. */
    CHECK_EQ_INT(atomic_load(&pr.done), 2);
    CHECK_EQ_U64(stats_of(f.queue).pending, 2);
    atomic_store(&f.gate.open, 1);
    pthread_join(t, NULL);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(pr.results[i], 1);
    CHECK_IDLE(f.bus);
    CHECK_SEEN(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    CHECK_EQ_U64(stats_of(f.queue).high_water, 2);
    CHECK_EQ_U64(stats_of(f.queue).dropped, 0);
    fixture_close(&f);
}

/* Several blocked dispatchers are let in as room appears, none lost, each FIFO. */
static void test_block_many(void)
{
    fixture f;
    fixture_open(&f, 4, QTBUS_OVERFLOW_BLOCK, -1);
    producer pr[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        start_producer(&pr[i], &t[i], f.bus, i * 1000, 50);
    CHECK_WAIT(stats_of(f.queue).pending == 4, TU_WAIT_MS);
    atomic_store(&f.gate.open, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    CHECK_IDLE(f.bus);
    CHECK_EQ_INT(atomic_load(&seen_count), 200);
    int next[4] = {0, 1000, 2000, 3000};
    for (int i = 0; i < 200; i++) {
        int p = seen[i] / 1000;
        CHECK_EQ_INT(seen[i], next[p]);
        next[p]++;
    }
    CHECK(stats_of(f.queue).high_water <= 4);
    fixture_close(&f);
}

/* The timeout drops the delivery; 0 never waits. */
static void test_block_timeout(void)
{
    fixture f;
    fixture_open(&f, 1, QTBUS_OVERFLOW_BLOCK, 30);
    CHECK_EQ_INT(send(f.bus, "E", NULL, 0), 1);
    int64_t start = tu_now_ms();
    CHECK_EQ_INT(send(f.bus, "E", NULL, 1), 0);
    CHECK(tu_now_ms() - start >= 29);
    CHECK_EQ_U64(stats_of(f.queue).dropped, 1);
    CHECK_EQ_INT(atomic_load(&released), 1);
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 1, QTBUS_OVERFLOW_BLOCK, 0), QTBUS_OK);
    CHECK_EQ_INT(send(f.bus, "E", NULL, 2), 0);
    CHECK_EQ_U64(stats_of(f.queue).dropped, 2);
    fixture_close(&f);
    CHECK_SEEN(0);
    CHECK_EQ_INT(atomic_load(&released), 3);
}

/* A handler on the queue dispatching into its own full queue is accepted at once. */
static qtbus_bus *own_bus;
static atomic_int own_results;
static void own_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    for (int i = 0; i < 5; i++)
        atomic_fetch_add(&own_results, send(own_bus, "E", NULL, 100 + i));
}

static void test_block_own_thread(void)
{
    fixture f;
    fixture_open(&f, 1, QTBUS_OVERFLOW_BLOCK, -1);
    own_bus = f.bus;
    atomic_store(&own_results, 0);
    qtbus_token t = tu_sub_on_queue(f.bus, f.queue, "Own", own_handler, NULL);
    qtbus_event_desc d = tu_event("Own", NULL);
    CHECK_EQ_INT(qtbus_dispatch(f.bus, &d), 1);
    atomic_store(&f.gate.open, 1);
    CHECK_IDLE(f.bus);
    CHECK_EQ_INT(atomic_load(&own_results), 5);
    CHECK_EQ_U64(stats_of(f.queue).high_water, 5);
    CHECK_SEEN(100, 101, 102, 103, 104);
    (void)t;
    fixture_close(&f);
}

/* qtbus_bus_destroy and qtbus_queue_release wake the blocked; their deliveries drop. */
static void test_block_woken(void)
{
    for (int how = 0; how < 2; how++) {
        fixture f;
        fixture_open(&f, 1, QTBUS_OVERFLOW_BLOCK, -1);
        CHECK_EQ_INT(send(f.bus, "E", NULL, 0), 1);
        producer pr;
        pthread_t t;
        start_producer(&pr, &t, f.bus, 1, 1);
        tu_sleep_ms(30);
        CHECK_EQ_INT(atomic_load(&pr.done), 0);
        qtbus_queue *q = f.queue;
        qtbus_queue_stats s;
        if (how == 0) {
            CHECK_EQ_INT(qtbus_bus_destroy(f.bus), QTBUS_OK);
            pthread_join(t, NULL);
            CHECK_EQ_INT(pr.results[0], 0);
            s = stats_of(q);
            atomic_store(&f.gate.open, 1);
            /* The gate lives on this stack: wait for its handler to return, through
             * another bus's delivery behind it on the serial queue. */
            qtbus_bus *other = qtbus_bus_create();
            tu_sub_on_queue(other, q, "Mark", tu_gate_handler, &f.gate);
            qtbus_event_desc mark = tu_event("Mark", NULL);
            CHECK_EQ_INT(qtbus_dispatch(other, &mark), 1);
            CHECK_IDLE(other);
            CHECK_EQ_INT(qtbus_bus_destroy(other), QTBUS_OK);
            qtbus_queue_release(q);
        } else {
            qtbus_queue *keep = q; /* the subscriptions still hold the queue */
            qtbus_queue_release(q);
            pthread_join(t, NULL);
            CHECK_EQ_INT(pr.results[0], 0);
            s = stats_of(keep);
            /* Released: no dispatcher waits any more. */
            CHECK_EQ_INT(send(f.bus, "E", NULL, 2), 0);
            atomic_store(&f.gate.open, 1);
            CHECK_IDLE(f.bus);
            CHECK_EQ_INT(qtbus_bus_destroy(f.bus), QTBUS_OK);
        }
        CHECK_EQ_U64(s.dropped, 1);
    }
}

/* ---- requests: a dropped delivery completes its part ---- */
static atomic_int completed;
static void on_complete(void *userdata)
{
    (void)userdata;
    atomic_fetch_add(&completed, 1);
}

static void test_request(void)
{
    fixture f;
    fixture_open(&f, 1, QTBUS_OVERFLOW_DROP_NEWEST, -1);
    atomic_store(&completed, 0);
    int value = 1;
    qtbus_event_desc d = tu_event("E", NULL);
    d.data = &value;
    d.size = sizeof value;
    CHECK_EQ_INT(qtbus_request(f.bus, &d, NULL, NULL, on_complete), 1);
    CHECK_EQ_INT(qtbus_request(f.bus, &d, NULL, NULL, on_complete), 0);
    /* The dropped one completed at once; the kept one waits for its handler. */
    CHECK_EQ_INT(atomic_load(&completed), 1);
    fixture_close(&f);
    CHECK_EQ_INT(atomic_load(&completed), 2);
}

/* ---- tracing: one DROP record per drop ---- */
static atomic_int drops;
static char drop_function[64], drop_subtype[16];
static uint64_t drop_token;
static void on_trace(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(r->kind, QTBUS_TRACE_DROP);
    CHECK_EQ_STR(r->type, "E");
    snprintf(drop_function, sizeof drop_function, "%s", r->function);
    snprintf(drop_subtype, sizeof drop_subtype, "%s", r->subtype ? r->subtype : "");
    drop_token = r->token.id;
    atomic_fetch_add(&drops, 1);
}

static void test_trace(void)
{
    static const struct {
        uint32_t rule;
        const char *name;
    } rules[] = {
        {QTBUS_OVERFLOW_DROP_NEWEST, "QTBUS_OVERFLOW_DROP_NEWEST"},
        {QTBUS_OVERFLOW_DROP_OLDEST, "QTBUS_OVERFLOW_DROP_OLDEST"},
        {QTBUS_OVERFLOW_LATEST, "QTBUS_OVERFLOW_LATEST"},
        {QTBUS_OVERFLOW_BLOCK, "QTBUS_OVERFLOW_BLOCK"},
    };
    CHECK_EQ_INT(QTBUS_TRACE_ALL & QTBUS_TRACE_DROP, QTBUS_TRACE_DROP);
    for (size_t i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        fixture f;
        fixture_open(&f, 1, rules[i].rule, 0);
        atomic_store(&drops, 0);
        CHECK_EQ_INT(qtbus_trace_set(f.bus, QTBUS_TRACE_DROP, on_trace, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(send(f.bus, "E", "x", 0), 1);
        send(f.bus, "E", "x", 1);
        CHECK_EQ_INT(atomic_load(&drops), 1);
        CHECK_EQ_STR(drop_function, rules[i].name);
        CHECK_EQ_STR(drop_subtype, "x");
        CHECK_EQ_U64(drop_token, f.sub.id);
        fixture_close(&f);
    }
}

/* ---- GROW with 0 makes a bounded queue unbounded again ---- */
static void test_unbound_again(void)
{
    fixture f;
    fixture_open(&f, 2, QTBUS_OVERFLOW_DROP_NEWEST, -1);
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 0, QTBUS_OVERFLOW_GROW, -1), QTBUS_OK);
    for (int i = 0; i < 100; i++)
        CHECK_EQ_INT(send(f.bus, "E", NULL, i), 1);
    CHECK_EQ_U64(stats_of(f.queue).pending, 100);
    /* Lowered below what waits: nothing already waiting is dropped. */
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 10, QTBUS_OVERFLOW_DROP_NEWEST, -1), QTBUS_OK);
    CHECK_EQ_U64(stats_of(f.queue).pending, 100);
    CHECK_EQ_INT(send(f.bus, "E", NULL, 100), 0);
    fixture_close(&f);
    CHECK_EQ_INT(atomic_load(&seen_count), 100);
    for (int i = 0; i < 100; i++)
        CHECK_EQ_INT(seen[i], i);
}

/* ---- the main queue ---- */
static void test_main_queue(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *main_q = qtbus_queue_main();
    CHECK_EQ_INT(qtbus_queue_set_limit(main_q, 2, QTBUS_OVERFLOW_DROP_OLDEST, -1), QTBUS_OK);
    qtbus_token t = tu_sub_on_queue(bus, main_q, "E", record_handler, NULL);
    reset();
    uint64_t dropped_before = stats_of(main_q).dropped;
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(send(bus, "E", NULL, i), 1);
    CHECK_EQ_U64(stats_of(main_q).dropped - dropped_before, 3);
    CHECK_IDLE(bus); /* on the main thread it drains */
    CHECK_SEEN(3, 4);
    /* BLOCK on the main thread never waits for the main queue. */
    CHECK_EQ_INT(qtbus_queue_set_limit(main_q, 1, QTBUS_OVERFLOW_BLOCK, -1), QTBUS_OK);
    reset();
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(send(bus, "E", NULL, i), 1);
    CHECK_IDLE(bus);
    CHECK_SEEN(0, 1, 2);
    CHECK_EQ_INT(qtbus_queue_set_limit(main_q, 0, QTBUS_OVERFLOW_GROW, -1), QTBUS_OK);
    (void)t;
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
}

/* ---- a disposed subscription's waiting deliveries, dropped by another's dispatch ---- */
static void test_drop_after_dispose(void)
{
    /* Gated first: the order is certain. */
    fixture f;
    fixture_open(&f, 4, QTBUS_OVERFLOW_DROP_OLDEST, -1);
    tu_rec x;
    tu_rec_init(&x);
    qtbus_sub_options o = tu_options();
    o.queue = f.queue;
    qtbus_token xt;
    CHECK_EQ_INT(qtbus_subscribe(f.bus, "X", &o, tu_rec_handler, &x, tu_rec_release, &xt), QTBUS_OK);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(send(f.bus, "X", NULL, i), 1);
    CHECK_EQ_INT(qtbus_token_dispose(xt), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&x.releases), 0); /* its deliveries are still queued */
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(send(f.bus, "E", NULL, i), 1);
    fixture_close(&f);
    CHECK_EQ_INT(atomic_load(&x.calls), 0);
    CHECK_EQ_INT(atomic_load(&x.releases), 1);
    CHECK_EQ_INT(atomic_load(&released), 14);
    CHECK_SEEN(6, 7, 8, 9);

    /* And racing: the queue runs while one thread disposes and another floods. */
    for (int round = 0; round < 200; round++) {
        qtbus_bus *bus = qtbus_bus_create();
        qtbus_queue *q = qtbus_queue_create("race");
        CHECK_EQ_INT(qtbus_queue_set_limit(q, 2, round % 2 ? QTBUS_OVERFLOW_LATEST : QTBUS_OVERFLOW_DROP_OLDEST, -1),
                     QTBUS_OK);
        tu_rec r;
        tu_rec_init(&r);
        qtbus_sub_options qo = tu_options();
        qo.queue = q;
        qtbus_token rt, et;
        CHECK_EQ_INT(qtbus_subscribe(bus, "X", &qo, tu_rec_handler, &r, tu_rec_release, &rt), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus, "E", &qo, tu_rec_handler, &r, NULL, &et), QTBUS_OK);
        reset();
        for (int i = 0; i < 8; i++)
            send(bus, "X", NULL, i);
        CHECK_EQ_INT(qtbus_token_dispose(rt), QTBUS_OK);
        for (int i = 0; i < 8; i++)
            send(bus, "E", NULL, i);
        CHECK_IDLE(bus);
        /* The release runs on the queue after the deliveries: not waited for by idle. */
        CHECK_WAIT(atomic_load(&r.releases) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(atomic_load(&released), 16);
        CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
        qtbus_queue_release(q);
    }
}

/* ---- under load: every delivery accounted for, whatever the rule ---- */
typedef struct stress {
    qtbus_bus *bus;
    qtbus_queue *queue;
    atomic_int stop;
} stress;

static void stress_produce(int index, void *p)
{
    stress *st = p;
    char subtype[8];
    for (int i = 0; i < 20000; i++) {
        snprintf(subtype, sizeof subtype, "s%d", (index * 7 + i) % 5);
        send(st->bus, "E", subtype, i);
    }
}

/* Changes the limit while the producers run: blocked dispatchers look again. */
static void *stress_limits(void *p)
{
    stress *st = p;
    static const uint32_t rules[] = {QTBUS_OVERFLOW_BLOCK, QTBUS_OVERFLOW_DROP_OLDEST, QTBUS_OVERFLOW_LATEST,
                                     QTBUS_OVERFLOW_DROP_NEWEST};
    for (unsigned i = 0; !atomic_load(&st->stop); i++) {
        CHECK_EQ_INT(qtbus_queue_set_limit(st->queue, 4 + i % 8, rules[i % 4], 5), QTBUS_OK);
        tu_sleep_ms(1);
    }
    return NULL;
}

static void test_stress(void)
{
    static const uint32_t rules[] = {QTBUS_OVERFLOW_BLOCK, QTBUS_OVERFLOW_DROP_NEWEST, QTBUS_OVERFLOW_DROP_OLDEST,
                                     QTBUS_OVERFLOW_LATEST, 99};
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        stress st;
        st.bus = qtbus_bus_create();
        st.queue = qtbus_queue_create("stress");
        atomic_init(&st.stop, 0);
        pthread_t changer;
        if (rules[r] == 99)
            CHECK(pthread_create(&changer, NULL, stress_limits, &st) == 0);
        else
            CHECK_EQ_INT(qtbus_queue_set_limit(st.queue, 8, rules[r], -1), QTBUS_OK);
        tu_rec calls;
        tu_rec_init(&calls);
        reset();
        qtbus_token t = tu_sub_on_queue(st.bus, st.queue, "E", tu_rec_handler, &calls);
        tu_run_threads(4, stress_produce, &st);
        atomic_store(&st.stop, 1);
        if (rules[r] == 99) pthread_join(changer, NULL);
        CHECK_IDLE(st.bus);
        qtbus_queue_stats s = stats_of(st.queue);
        CHECK_EQ_U64(s.pending, 0);
        CHECK_EQ_U64(s.delivered, (uint64_t)atomic_load(&calls.calls));
        CHECK_EQ_U64(s.delivered + s.dropped, 4 * 20000);
        CHECK_EQ_INT(atomic_load(&released), 4 * 20000);
        CHECK(s.high_water <= 8 || rules[r] == 99);
        if (rules[r] == QTBUS_OVERFLOW_BLOCK) CHECK_EQ_U64(s.dropped, 0);
        (void)t;
        CHECK_EQ_INT(qtbus_bus_destroy(st.bus), QTBUS_OK);
        qtbus_queue_release(st.queue);
    }
}

int main(void)
{
    test_bad_input();
    test_drop_newest();
    test_drop_oldest();
    test_latest();
    test_block();
    test_block_many();
    test_block_timeout();
    test_block_own_thread();
    test_block_woken();
    test_request();
    test_trace();
    test_unbound_again();
    test_main_queue();
    test_drop_after_dispose();
    test_stress();
    printf("test_queue_limit: ok\n");
    return 0;
}
