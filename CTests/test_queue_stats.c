/* SPDX-License-Identifier: MIT */
/*
 * test_queue_stats: qtbus_queue_stats_get counts a queue's deliveries.
 *
 * Users rely on: `pending` counting the deliveries waiting (from the dispatch until
 * the handler starts: the one running is not waiting), `high_water` the most ever
 * waiting at once, `delivered` the handler calls made, `dropped` 0 (queues are
 * unbounded in this version); the counts exact once the queue is still, for a created
 * queue and for the main queue, with several dispatching threads; deliveries dropped
 * because their subscription was disposed leaving the wait without counting as
 * delivered; QTBUS_EINVAL for NULL; a caller's struct larger than this library's
 * getting zeros beyond the known fields, 0.2.0's entry point writing its 32 bytes only,
 * and a size smaller than the struct ever was refused.
 */
#include "test_util.h"

static qtbus_bus *bus;

static atomic_int calls;
static void count_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    atomic_fetch_add(&calls, 1);
}

static qtbus_queue_stats stats_of(qtbus_queue *q)
{
    qtbus_queue_stats s;
    memset(&s, 0xAB, sizeof s);
    CHECK_EQ_INT(qtbus_queue_stats_get(q, &s), QTBUS_OK);
    return s;
}

#define CHECK_STATS(q, p, hw, d)                                                                                       \
    do {                                                                                                               \
        qtbus_queue_stats s_ = stats_of(q);                                                                            \
        CHECK_EQ_U64(s_.pending, (p));                                                                                 \
        CHECK_EQ_U64(s_.high_water, (hw));                                                                             \
        CHECK_EQ_U64(s_.delivered, (d));                                                                               \
        CHECK_EQ_U64(s_.dropped, 0);                                                                                   \
    } while (0)

static void dispatch_n(const char *type, int n, int reached)
{
    for (int i = 0; i < n; i++) {
        qtbus_event_desc d = tu_event(type, NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), reached);
    }
}

/* ---- a gated queue: pending, high water and delivered, exactly ---- */
static void test_exact(void)
{
    qtbus_queue *q = qtbus_queue_create("stats");
    CHECK_STATS(q, 0, 0, 0);
    tu_gate g;
    atomic_init(&g.open, 0);
    atomic_init(&g.entered, 0);
    qtbus_token gate = tu_sub_on_queue(bus, q, "Gate", tu_gate_handler, &g);
    atomic_store(&calls, 0);
    qtbus_token a = tu_sub_on_queue(bus, q, "A", count_handler, NULL);
    dispatch_n("Gate", 1, 1);
    CHECK_WAIT(atomic_load(&g.entered) == 1, TU_WAIT_MS);
    /* The gate's delivery runs: it is not waiting, and its call is made. */
    CHECK_STATS(q, 0, 1, 1);
    dispatch_n("A", 10, 1);
    CHECK_STATS(q, 10, 10, 1);
    atomic_store(&g.open, 1);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, TU_WAIT_MS), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&calls), 10);
    CHECK_STATS(q, 0, 10, 11);
    /* Fewer waiting later: the high water stays. */
    atomic_store(&g.open, 0);
    atomic_store(&g.entered, 0);
    dispatch_n("Gate", 1, 1);
    CHECK_WAIT(atomic_load(&g.entered) == 1, TU_WAIT_MS);
    dispatch_n("A", 3, 1);
    CHECK_STATS(q, 3, 10, 12);
    /* Disposed with deliveries waiting: they leave the wait, no call (rule 2). */
    CHECK_EQ_INT(qtbus_token_dispose(a), QTBUS_OK);
    atomic_store(&g.open, 1);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, TU_WAIT_MS), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&calls), 10);
    CHECK_STATS(q, 0, 10, 12);
    CHECK_EQ_INT(qtbus_token_dispose(gate), QTBUS_OK);
    qtbus_queue_release(q);
}

/* ---- the main queue (its counts are the process's: compared as differences) ---- */
static void test_main_queue(void)
{
    qtbus_main_drain();
    qtbus_queue *m = qtbus_queue_main();
    qtbus_queue_stats before = stats_of(m);
    CHECK_EQ_U64(before.pending, 0);
    atomic_store(&calls, 0);
    qtbus_token t = tu_sub_on_queue(bus, m, "Main", count_handler, NULL);
    dispatch_n("Main", 7, 1);
    qtbus_queue_stats mid = stats_of(m);
    CHECK_EQ_U64(mid.pending, 7);
    CHECK(mid.high_water >= 7);
    CHECK_EQ_U64(mid.delivered, before.delivered);
    CHECK_EQ_INT(qtbus_main_drain(), 7);
    qtbus_queue_stats after = stats_of(m);
    CHECK_EQ_U64(after.pending, 0);
    CHECK_EQ_U64(after.delivered, before.delivered + 7);
    CHECK_EQ_U64(after.dropped, 0);
    CHECK_EQ_INT(atomic_load(&calls), 7);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    qtbus_main_drain();
}

/* ---- threads: every delivery counted once ---- */
enum { THREADS = 4, PER_THREAD = 250 };
static void producer(int index, void *ctx)
{
    (void)index;
    (void)ctx;
    dispatch_n("T", PER_THREAD, 2);
}

static void *reader(void *arg)
{
    /* Reads while the counts move: never more waiting than were sent. */
    qtbus_queue *q = (qtbus_queue *)arg;
    for (int i = 0; i < 2000; i++) {
        qtbus_queue_stats s = stats_of(q);
        CHECK(s.pending <= 2 * THREADS * PER_THREAD);
        CHECK(s.delivered <= 2 * THREADS * PER_THREAD);
        CHECK(s.high_water <= 2 * THREADS * PER_THREAD);
    }
    return NULL;
}

static void test_threads(void)
{
    qtbus_queue *q = qtbus_queue_create("threads");
    atomic_store(&calls, 0);
    qtbus_token a = tu_sub_on_queue(bus, q, "T", count_handler, NULL);
    qtbus_token b = tu_sub_on_queue(bus, q, "T", count_handler, NULL);
    pthread_t r;
    CHECK(pthread_create(&r, NULL, reader, q) == 0);
    tu_run_threads(THREADS, producer, NULL);
    pthread_join(r, NULL);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, TU_WAIT_MS), QTBUS_OK);
    qtbus_queue_stats s = stats_of(q);
    CHECK_EQ_U64(s.pending, 0);
    CHECK_EQ_U64(s.delivered, 2 * THREADS * PER_THREAD);
    CHECK(s.high_water >= 1 && s.high_water <= 2 * THREADS * PER_THREAD);
    CHECK_EQ_INT(atomic_load(&calls), 2 * THREADS * PER_THREAD);
    CHECK_EQ_INT(qtbus_token_dispose(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(b), QTBUS_OK);
    qtbus_queue_release(q);
}

/* ---- the struct can grow (qtbus.h, STRUCTS THAT GROW) ---- */
static void test_sizes(void)
{
    qtbus_queue *q = qtbus_queue_create("sizes");
    qtbus_token t = tu_sub_on_queue(bus, q, "E", count_handler, NULL);
    qtbus_event_desc d = tu_event("E", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_IDLE(bus);
    /* A caller whose header has fields this library does not know: they read zero. */
    struct {
        qtbus_queue_stats known;
        uint64_t later[3];
    } newer;
    memset(&newer, 0xAB, sizeof newer);
    CHECK_EQ_INT(qtbus_queue_stats_get_sized(q, &newer.known, sizeof newer), QTBUS_OK);
    CHECK_EQ_U64(newer.known.delivered, 1);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_U64(newer.later[i], 0);
    /* A program built against 0.2.0 calls the plain-name function: 32 bytes, no more. */
    memset(&newer, 0xAB, sizeof newer);
    CHECK_EQ_INT((qtbus_queue_stats_get)(q, &newer.known), QTBUS_OK);
    CHECK_EQ_U64(newer.known.delivered, 1);
    CHECK_EQ_U64(newer.later[0], 0xABABABABABABABABull);
    /* Smaller than the struct ever was: refused, nothing written. */
    qtbus_queue_stats s;
    memset(&s, 0xAB, sizeof s);
    CHECK_EQ_INT(qtbus_queue_stats_get_sized(q, &s, 31), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "qtbus_queue_stats_get") != NULL);
    CHECK(strstr(qtbus_errmsg(), "size") != NULL);
    CHECK_EQ_U64(s.pending, 0xABABABABABABABABull);
    CHECK_EQ_INT(qtbus_queue_stats_get_sized(q, &s, (size_t)-1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    qtbus_queue_release(q);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    qtbus_queue_stats s;
    qtbus_queue *q = qtbus_queue_create("bad");
    CHECK_EQ_INT(qtbus_queue_stats_get(NULL, &s), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_queue_stats_get(q, NULL), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "qtbus_queue_stats_get") != NULL);
    qtbus_queue_release(q);
    test_exact();
    test_main_queue();
    test_threads();
    test_sizes();
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_queue_stats: ok\n");
    return 0;
}
