/* SPDX-License-Identifier: MIT */
/*
 * test_queue_limit_change: a limit set while deliveries wait holds for the next one.
 *
 * Users rely on (qtbus_queue_set_limit, "any time"): the capacity counts every delivery
 * waiting on the queue, whenever it was queued -- before the queue had a limit, before
 * the limit was lowered, or already taken by the queue's thread to run next.  So a
 * queue found flooded takes no new delivery beyond the capacity: BLOCK waits (or drops
 * at its timeout), DROP_NEWEST drops the new one, DROP_OLDEST and LATEST drop the
 * oldest waiting one, the earlier-queued ones included; the ones already waiting are
 * kept otherwise.  The same on the main queue.  And the counts stay consistent at
 * every instant: high_water >= pending; under a rule set before the flood, high_water
 * never passes the capacity (two producers included); once idle, delivered + dropped
 * is every delivery dispatched.
 */
#include "test_util.h"

/* ---- what the recording handler saw, in order ---- */
#define MAX_SEEN 64
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

static int send(qtbus_bus *bus, const char *subtype, int value)
{
    qtbus_event_desc d = tu_event("E", subtype);
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
    CHECK(s.high_water >= s.pending);
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

/* ---- DROP records: which rule dropped which subscription's delivery ---- */
static atomic_int drops;
static char drop_function[64];
static void on_trace(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind != QTBUS_TRACE_DROP) return;
    snprintf(drop_function, sizeof drop_function, "%s", r->function);
    atomic_fetch_add(&drops, 1);
}

/* An unbounded queue whose thread is held by a gate handler, with `waiting`
 * deliveries of "E" (values 0, 1, ...) queued behind it: the flood a limit is set on. */
typedef struct fixture {
    qtbus_bus *bus;
    qtbus_queue *queue;
    tu_gate gate;
    qtbus_token sub;
    qtbus_queue_stats last; /* the counts once idle */
} fixture;

static void fixture_open(fixture *f, int waiting)
{
    f->bus = qtbus_bus_create();
    f->queue = qtbus_queue_create("flooded");
    CHECK(f->bus && f->queue);
    atomic_init(&f->gate.open, 0);
    atomic_init(&f->gate.entered, 0);
    tu_sub_on_queue(f->bus, f->queue, "Gate", tu_gate_handler, &f->gate);
    f->sub = tu_sub_on_queue(f->bus, f->queue, "E", record_handler, NULL);
    atomic_store(&seen_count, 0);
    atomic_store(&released, 0);
    atomic_store(&drops, 0);
    CHECK_EQ_INT(qtbus_trace_set(f->bus, QTBUS_TRACE_DROP, on_trace, NULL, NULL), QTBUS_OK);
    qtbus_event_desc d = tu_event("Gate", NULL);
    CHECK_EQ_INT(qtbus_dispatch(f->bus, &d), 1);
    CHECK_WAIT(atomic_load(&f->gate.entered) == 1, TU_WAIT_MS);
    for (int i = 0; i < waiting; i++)
        CHECK_EQ_INT(send(f->bus, NULL, i), 1);
    CHECK_EQ_U64(stats_of(f->queue).pending, (uint64_t)waiting);
}

static void fixture_close(fixture *f)
{
    atomic_store(&f->gate.open, 1);
    CHECK_IDLE(f->bus);
    f->last = stats_of(f->queue);
    CHECK_EQ_U64(f->last.pending, 0);
    CHECK_EQ_INT(qtbus_bus_destroy(f->bus), QTBUS_OK);
    qtbus_queue_release(f->queue);
}

/* ---- DROP_NEWEST: five wait, the limit is 2: the sixth is dropped ---- */
static void test_drop_newest(void)
{
    fixture f;
    fixture_open(&f, 5);
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 2, QTBUS_OVERFLOW_DROP_NEWEST, -1), QTBUS_OK);
    CHECK_EQ_INT(send(f.bus, NULL, 5), 0);
    qtbus_queue_stats s = stats_of(f.queue);
    CHECK_EQ_U64(s.pending, 5); /* the five already waiting are kept */
    CHECK_EQ_U64(s.high_water, 5);
    CHECK_EQ_U64(s.dropped, 1);
    CHECK_EQ_INT(atomic_load(&released), 1);
    CHECK_EQ_INT(atomic_load(&drops), 1);
    CHECK_EQ_STR(drop_function, "QTBUS_OVERFLOW_DROP_NEWEST");
    fixture_close(&f);
    CHECK_SEEN(0, 1, 2, 3, 4);
    CHECK_EQ_U64(f.last.delivered, 1 + 5);
    CHECK_EQ_INT(atomic_load(&released), 6);
}

/* ---- BLOCK: waits for room (or drops at its timeout) while the old ones wait ---- */
typedef struct blocked_send {
    fixture *f;
    atomic_int returned;
    int result;
} blocked_send;

static void *send_blocked(void *p)
{
    blocked_send *b = p;
    b->result = send(b->f->bus, NULL, 99);
    atomic_store(&b->returned, 1);
    return NULL;
}

static void test_block(void)
{
    fixture f;
    fixture_open(&f, 5);
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 2, QTBUS_OVERFLOW_BLOCK, 0), QTBUS_OK);
    CHECK_EQ_INT(send(f.bus, NULL, 5), 0);
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 2, QTBUS_OVERFLOW_BLOCK, 30), QTBUS_OK);
    int64_t before = tu_now_ms();
    CHECK_EQ_INT(send(f.bus, NULL, 6), 0);
    CHECK(tu_now_ms() - before >= 25);
    CHECK_EQ_U64(stats_of(f.queue).dropped, 2);
    CHECK_EQ_STR(drop_function, "QTBUS_OVERFLOW_BLOCK");

    /* No timeout: the dispatcher waits until the queue is below the capacity. */
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 2, QTBUS_OVERFLOW_BLOCK, -1), QTBUS_OK);
    blocked_send b = {.f = &f, .result = -100};
    atomic_init(&b.returned, 0);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, send_blocked, &b) == 0);
    tu_sleep_ms(50);
    CHECK_EQ_INT(atomic_load(&b.returned), 0); /* five wait: no room for it */
    CHECK_EQ_U64(stats_of(f.queue).pending, 5);
    atomic_store(&f.gate.open, 1);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK_EQ_INT(b.result, 1);
    fixture_close(&f);
    CHECK_SEEN(0, 1, 2, 3, 4, 99);
    CHECK_EQ_U64(f.last.dropped, 2);
    CHECK_EQ_U64(f.last.high_water, 5);
}

/* ---- DROP_OLDEST: each new one pushes out the oldest waiting, old ones first ---- */
static void test_drop_oldest(void)
{
    fixture f;
    fixture_open(&f, 5);
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 2, QTBUS_OVERFLOW_DROP_OLDEST, -1), QTBUS_OK);
    /* Seven more: the five from before the limit go first, then the oldest of the new. */
    for (int i = 5; i < 12; i++)
        CHECK_EQ_INT(send(f.bus, NULL, i), 1);
    qtbus_queue_stats s = stats_of(f.queue);
    CHECK_EQ_U64(s.pending, 5); /* never more than waited when the limit was set */
    CHECK_EQ_U64(s.high_water, 5);
    CHECK_EQ_U64(s.dropped, 7);
    fixture_close(&f);
    CHECK_SEEN(7, 8, 9, 10, 11);
    CHECK_EQ_INT(atomic_load(&drops), 7);
    CHECK_EQ_STR(drop_function, "QTBUS_OVERFLOW_DROP_OLDEST");
    CHECK_EQ_INT(atomic_load(&released), 12); /* each object once */
    CHECK_EQ_U64(f.last.delivered + f.last.dropped, 1 + 12);
}

/* ---- LATEST: replaces in place what it can reach, else drops the oldest ---- */
static void test_latest(void)
{
    fixture f;
    fixture_open(&f, 5);
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 2, QTBUS_OVERFLOW_LATEST, -1), QTBUS_OK);
    CHECK_EQ_INT(send(f.bus, NULL, 5), 1); /* full, nothing to replace: 0 is dropped */
    CHECK_EQ_INT(send(f.bus, NULL, 6), 1); /* replaces 5 */
    CHECK_EQ_INT(send(f.bus, "x", 7), 1);  /* full, nothing to replace: 1 is dropped */
    qtbus_queue_stats s = stats_of(f.queue);
    CHECK_EQ_U64(s.pending, 5);
    CHECK_EQ_U64(s.high_water, 5);
    CHECK_EQ_U64(s.dropped, 3);
    fixture_close(&f);
    CHECK_SEEN(2, 3, 4, 6, 7);
    CHECK_EQ_STR(drop_function, "QTBUS_OVERFLOW_LATEST");
    CHECK_EQ_INT(atomic_load(&released), 8);
}

/* ---- raised, then GROW: the capacity still counts the old ones, then nothing ---- */
static void test_raised_then_grow(void)
{
    fixture f;
    fixture_open(&f, 5);
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 7, QTBUS_OVERFLOW_DROP_NEWEST, -1), QTBUS_OK);
    CHECK_EQ_INT(send(f.bus, NULL, 5), 1);
    CHECK_EQ_INT(send(f.bus, NULL, 6), 1);
    CHECK_EQ_INT(send(f.bus, NULL, 7), 0); /* 5 + 2 = 7: full */
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 8, QTBUS_OVERFLOW_DROP_NEWEST, -1), QTBUS_OK);
    CHECK_EQ_INT(send(f.bus, NULL, 8), 1);
    CHECK_EQ_INT(send(f.bus, NULL, 9), 0);
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 0, QTBUS_OVERFLOW_GROW, -1), QTBUS_OK);
    for (int i = 10; i < 13; i++)
        CHECK_EQ_INT(send(f.bus, NULL, i), 1);
    qtbus_queue_stats s = stats_of(f.queue);
    CHECK_EQ_U64(s.pending, 11);
    CHECK_EQ_U64(s.high_water, 11);
    CHECK_EQ_U64(s.dropped, 2);
    fixture_close(&f);
    CHECK_SEEN(0, 1, 2, 3, 4, 5, 6, 8, 10, 11, 12);
}

/* ---- taken by the queue's thread to run next: still waiting, still reachable ---- */
static void test_taken_to_run_next(void)
{
    /* Bounded from the start: the queue's thread takes the deliveries behind the
     * first gate together, then holds them behind a second gate. */
    fixture f;
    f.bus = qtbus_bus_create();
    f.queue = qtbus_queue_create("taken");
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 10, QTBUS_OVERFLOW_DROP_OLDEST, -1), QTBUS_OK);
    tu_gate second;
    atomic_init(&f.gate.open, 0);
    atomic_init(&f.gate.entered, 0);
    atomic_init(&second.open, 0);
    atomic_init(&second.entered, 0);
    tu_sub_on_queue(f.bus, f.queue, "Gate", tu_gate_handler, &f.gate);
    tu_sub_on_queue(f.bus, f.queue, "Gate2", tu_gate_handler, &second);
    f.sub = tu_sub_on_queue(f.bus, f.queue, "E", record_handler, NULL);
    atomic_store(&seen_count, 0);
    atomic_store(&released, 0);
    qtbus_event_desc gate = tu_event("Gate", NULL), gate2 = tu_event("Gate2", NULL);
    CHECK_EQ_INT(qtbus_dispatch(f.bus, &gate), 1);
    CHECK_WAIT(atomic_load(&f.gate.entered) == 1, TU_WAIT_MS);
    CHECK_EQ_INT(qtbus_dispatch(f.bus, &gate2), 1);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(send(f.bus, NULL, i), 1);
    atomic_store(&f.gate.open, 1);
    CHECK_WAIT(atomic_load(&second.entered) == 1, TU_WAIT_MS);
    /* 0..4 wait, taken; the limit comes down to exactly what waits. */
    CHECK_EQ_U64(stats_of(f.queue).pending, 5);
    CHECK_EQ_INT(qtbus_queue_set_limit(f.queue, 5, QTBUS_OVERFLOW_DROP_OLDEST, -1), QTBUS_OK);
    CHECK_EQ_INT(send(f.bus, NULL, 5), 1);
    CHECK_EQ_INT(send(f.bus, NULL, 6), 1);
    qtbus_queue_stats s = stats_of(f.queue);
    CHECK_EQ_U64(s.pending, 5);
    CHECK_EQ_U64(s.dropped, 2);
    atomic_store(&second.open, 1);
    CHECK_IDLE(f.bus);
    CHECK_SEEN(2, 3, 4, 5, 6);
    CHECK_EQ_INT(atomic_load(&released), 7);
    CHECK_EQ_INT(qtbus_bus_destroy(f.bus), QTBUS_OK);
    qtbus_queue_release(f.queue);
}

/* ---- the main queue: its waiting work is libdispatch's, counted all the same ---- */
static void test_main_queue(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *main_q = qtbus_queue_main();
    tu_sub_on_queue(bus, main_q, "E", record_handler, NULL);
    atomic_store(&seen_count, 0);
    atomic_store(&released, 0);
    qtbus_queue_stats before = stats_of(main_q);
    /* On the main thread, nothing runs until it drains. */
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(send(bus, NULL, i), 1);
    CHECK_EQ_INT(qtbus_queue_set_limit(main_q, 2, QTBUS_OVERFLOW_DROP_NEWEST, -1), QTBUS_OK);
    CHECK_EQ_INT(send(bus, NULL, 5), 0);
    CHECK_EQ_INT(qtbus_queue_set_limit(main_q, 2, QTBUS_OVERFLOW_DROP_OLDEST, -1), QTBUS_OK);
    CHECK_EQ_INT(send(bus, NULL, 6), 1);
    qtbus_queue_stats s = stats_of(main_q);
    CHECK_EQ_U64(s.pending, 5);
    CHECK_EQ_U64(s.dropped - before.dropped, 2);
    CHECK_IDLE(bus); /* on the main thread it drains */
    CHECK_SEEN(1, 2, 3, 4, 6);
    CHECK_EQ_INT(atomic_load(&released), 7);
    CHECK_EQ_INT(qtbus_queue_set_limit(main_q, 0, QTBUS_OVERFLOW_GROW, -1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
}

/* ---- under load: the counts hold at every instant ---- */
/* Per producer: enough for two producers into a capacity of 5 to meet the drain's
 * batch (0.2.0 failed in 3 to 10 runs of 10 with 20,000), few enough for valgrind. */
#define FLOOD_EVENTS 10000
typedef struct flood {
    qtbus_bus *bus;
    qtbus_queue *queue;
    uint64_t capacity; /* 0: the limit is set during the flood */
    atomic_int stop;
} flood;

static void flood_produce(int index, void *p)
{
    flood *fl = p;
    char subtype[8];
    for (int i = 0; i < FLOOD_EVENTS; i++) {
        snprintf(subtype, sizeof subtype, "s%d", (index + i) % 3);
        send(fl->bus, subtype, i);
    }
}

/* Reads the counts while the flood runs: the mark is never below what waits, nor,
 * under a rule set before the flood, above the capacity. */
static void *flood_read(void *p)
{
    flood *fl = p;
    do {
        qtbus_queue_stats s = stats_of(fl->queue);
        if (fl->capacity)
            CHECK_MSG(s.high_water <= fl->capacity, "high_water %llu, capacity %llu", (unsigned long long)s.high_water,
                      (unsigned long long)fl->capacity);
        /* Not a spin: under valgrind, whose threads take turns, one would starve the
         * producers and the queue. */
        sched_yield();
    } while (!atomic_load(&fl->stop));
    return NULL;
}

static void slow_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    atomic_fetch_add((atomic_int *)userdata, 1);
    for (volatile int i = 0; i < 200; i++) {
    }
}

static void test_flood(uint32_t rule, int producers, int set_during)
{
    flood fl;
    fl.bus = qtbus_bus_create();
    fl.queue = qtbus_queue_create("flood");
    fl.capacity = set_during ? 0 : 5;
    atomic_init(&fl.stop, 0);
    atomic_store(&released, 0);
    if (!set_during) CHECK_EQ_INT(qtbus_queue_set_limit(fl.queue, 5, rule, -1), QTBUS_OK);
    atomic_int calls;
    atomic_init(&calls, 0);
    tu_sub_on_queue(fl.bus, fl.queue, "E", slow_handler, &calls);
    pthread_t reader;
    CHECK(pthread_create(&reader, NULL, flood_read, &fl) == 0);
    tu_threads threads;
    tu_threads_start(&threads, producers, flood_produce, &fl);
    uint64_t mark_when_set = 0;
    if (set_during) {
        tu_sleep_ms(2);
        CHECK_EQ_INT(qtbus_queue_set_limit(fl.queue, 5, rule, -1), QTBUS_OK);
        mark_when_set = stats_of(fl.queue).high_water;
    }
    tu_threads_join(&threads);
    CHECK_IDLE(fl.bus);
    atomic_store(&fl.stop, 1);
    CHECK(pthread_join(reader, NULL) == 0);
    qtbus_queue_stats s = stats_of(fl.queue);
    uint64_t sent = (uint64_t)producers * FLOOD_EVENTS;
    CHECK_EQ_U64(s.pending, 0);
    CHECK_EQ_U64(s.delivered, (uint64_t)atomic_load(&calls));
    CHECK_EQ_U64(s.delivered + s.dropped, sent);
    CHECK_EQ_INT(atomic_load(&released), (int)sent);
    if (rule == QTBUS_OVERFLOW_BLOCK) CHECK_EQ_U64(s.dropped, 0);
    /* Beyond the capacity only by what waited when it was set (and the dispatches
     * that looked for the limit just before it was set: one per producer). */
    uint64_t allowed = mark_when_set + (uint64_t)producers > 5 ? mark_when_set + (uint64_t)producers : 5;
    CHECK_MSG(s.high_water <= allowed, "rule %u, %d producers: high_water %llu, allowed %llu", rule, producers,
              (unsigned long long)s.high_water, (unsigned long long)allowed);
    CHECK_EQ_INT(qtbus_bus_destroy(fl.bus), QTBUS_OK);
    qtbus_queue_release(fl.queue);
}

static void test_floods(void)
{
    static const uint32_t rules[] = {QTBUS_OVERFLOW_BLOCK, QTBUS_OVERFLOW_DROP_NEWEST, QTBUS_OVERFLOW_DROP_OLDEST,
                                     QTBUS_OVERFLOW_LATEST};
    for (int round = 0; round < 2; round++) {
        for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
            test_flood(rules[r], 2, 0);
            test_flood(rules[r], 3, 1);
        }
    }
}

int main(void)
{
    test_drop_newest();
    test_block();
    test_drop_oldest();
    test_latest();
    test_raised_then_grow();
    test_taken_to_run_next();
    test_main_queue();
    test_floods();
    printf("test_queue_limit_change: ok\n");
    return 0;
}
