/* SPDX-License-Identifier: MIT */
/*
 * test_wait_idle: qtbus_bus_wait_idle waits for a bus's queued work.
 *
 * Users rely on: the call returning QTBUS_OK only once every queued delivery of the
 * bus has run (handlers returned, objects released), posted dispatches
 * (qtbus_dispatch_on_bus_queue / _on_main) included; QTBUS_ETIMEDOUT, promptly, while
 * work is still waiting; QTBUS_EINVAL for NULL and from inside a handler; on the main
 * thread, main-queue deliveries being run by the wait itself; several waiters on
 * several threads all woken; a bus destroyed with deliveries still queued staying
 * valid until they ran (AddressSanitizer and valgrind check that part).
 */
#include "test_util.h"

static qtbus_bus *bus;

/* ---- a slow queued handler ---- */
static atomic_int slow_calls;
static void slow_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    tu_sleep_ms(1);
    atomic_fetch_add(&slow_calls, 1);
}

static void close_gate(qtbus_queue *q, tu_gate *g)
{
    atomic_init(&g->open, 0);
    atomic_init(&g->entered, 0);
    qtbus_token t = tu_sub_on_queue(bus, q, "Gate", tu_gate_handler, g);
    qtbus_event_desc d = tu_event("Gate", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_WAIT(atomic_load(&g->entered) == 1, TU_WAIT_MS);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
}

/* ---- N slow deliveries: the wait returns after all of them, objects released ---- */
static void test_waits_for_all(void)
{
    enum { N = 50 };
    qtbus_queue *q = qtbus_queue_create("slow");
    atomic_store(&slow_calls, 0);
    qtbus_token t = tu_sub_on_queue(bus, q, "Slow", slow_handler, NULL);
    atomic_int released = 0;
    for (int i = 0; i < N; i++) {
        qtbus_event_desc d = tu_event("Slow", NULL);
        d.object = &released;
        d.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    }
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, -1), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&slow_calls), N);
    CHECK_EQ_INT(atomic_load(&released), N);
    /* Idle now: a zero timeout only looks, and says so. */
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, 0), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    qtbus_queue_release(q);
}

/* ---- a timeout with work pending: ETIMEDOUT, after about the timeout ---- */
static void test_timeout(void)
{
    qtbus_queue *q = qtbus_queue_create("gated");
    tu_gate g;
    close_gate(q, &g);
    atomic_store(&slow_calls, 0);
    qtbus_token t = tu_sub_on_queue(bus, q, "Slow", slow_handler, NULL);
    for (int i = 0; i < 5; i++) {
        qtbus_event_desc d = tu_event("Slow", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    }
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, 0), QTBUS_ETIMEDOUT);
    int64_t start = tu_now_ms();
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, 30), QTBUS_ETIMEDOUT);
    int64_t took = tu_now_ms() - start;
    CHECK_MSG(took >= 29 && took < 5000, "a 30 ms wait took %lld ms", (long long)took);
    CHECK_EQ_INT(atomic_load(&slow_calls), 0);
    /* A timeout is an answer, not a failure: the last failure's text stays. */
    CHECK_EQ_INT(qtbus_bus_wait_idle(NULL, 0), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, 0), QTBUS_ETIMEDOUT);
    CHECK(strstr(qtbus_errmsg(), "qtbus_bus_wait_idle") != NULL);
    CHECK(strstr(qtbus_errmsg(), "NULL") != NULL);
    atomic_store(&g.open, 1);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, TU_WAIT_MS), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&slow_calls), 5);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    qtbus_queue_release(q);
}

/* ---- from inside a handler: EINVAL at once ---- */
static atomic_int inside_rc[3];
static atomic_int inside_calls;
static void inside_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    int which = (int)(intptr_t)userdata;
    atomic_store(&inside_rc[which], qtbus_bus_wait_idle(bus, -1));
    atomic_fetch_add(&inside_calls, 1);
}

static void test_from_handler(void)
{
    qtbus_queue *q = qtbus_queue_create("inside");
    atomic_store(&inside_calls, 0);
    qtbus_token sync, queued;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Inside", NULL, inside_handler, (void *)(intptr_t)0, NULL, &sync), QTBUS_OK);
    queued = tu_sub_on_queue(bus, q, "InsideQueued", inside_handler, (void *)(intptr_t)1);
    qtbus_event_desc d = tu_event("Inside", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(atomic_load(&inside_rc[0]), QTBUS_EINVAL);
    d = tu_event("InsideQueued", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, TU_WAIT_MS), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&inside_rc[1]), QTBUS_EINVAL);
    /* A posted dispatch's synchronous handler, on the bus's queue. */
    d = tu_event("Inside", NULL);
    atomic_store(&inside_rc[0], 0);
    CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, TU_WAIT_MS), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&inside_rc[0]), QTBUS_EINVAL);
    CHECK_EQ_INT(atomic_load(&inside_calls), 3);
    CHECK_EQ_INT(qtbus_token_dispose(sync), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(queued), QTBUS_OK);
    qtbus_queue_release(q);
}

/* ---- posted dispatches count, with the deliveries they make ---- */
static void test_posted(void)
{
    enum { N = 20 };
    qtbus_queue *q = qtbus_queue_create("posted");
    atomic_store(&slow_calls, 0);
    qtbus_token sync, queued;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Posted", NULL, slow_handler, NULL, NULL, &sync), QTBUS_OK);
    queued = tu_sub_on_queue(bus, q, "Posted", slow_handler, NULL);
    for (int i = 0; i < N; i++) {
        qtbus_event_desc d = tu_event("Posted", NULL);
        CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_OK);
    }
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, -1), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&slow_calls), 2 * N);
    CHECK_EQ_INT(qtbus_token_dispose(sync), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(queued), QTBUS_OK);
    qtbus_queue_release(q);
}

/* ---- the main queue: on the main thread, the wait runs its deliveries ---- */
static atomic_int main_calls;
static void main_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    atomic_fetch_add(&main_calls, 1);
}

static void *main_queue_poster(void *arg)
{
    (void)arg;
    for (int i = 0; i < 10; i++) {
        tu_sleep_ms(1);
        qtbus_event_desc d = tu_event("OnMain", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    }
    return NULL;
}

static void test_main_queue(void)
{
    atomic_store(&main_calls, 0);
    qtbus_token t = tu_sub_on_queue(bus, qtbus_queue_main(), "OnMain", main_handler, NULL);
    for (int i = 0; i < 10; i++) {
        qtbus_event_desc d = tu_event("OnMain", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(qtbus_dispatch_on_main(bus, &d), QTBUS_OK);
    }
    CHECK_EQ_INT(atomic_load(&main_calls), 0);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, TU_WAIT_MS), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&main_calls), 20);
    /* Main-queue work posted by another thread while the main thread waits. */
    pthread_t poster;
    CHECK(pthread_create(&poster, NULL, main_queue_poster, NULL) == 0);
    tu_sleep_ms(3);
    for (int tries = 0; tries < 1000 && atomic_load(&main_calls) < 30; tries++)
        CHECK_EQ_INT(qtbus_bus_wait_idle(bus, TU_WAIT_MS), QTBUS_OK);
    pthread_join(poster, NULL);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, TU_WAIT_MS), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&main_calls), 30);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    qtbus_main_drain();
}

/* ---- another thread waiting for main-queue work nobody drains: the timeout ---- */
static atomic_int other_rc;
static void *wait_other(void *arg)
{
    atomic_store(&other_rc, qtbus_bus_wait_idle(bus, (int)(intptr_t)arg));
    return NULL;
}

static void test_main_queue_other_thread(void)
{
    atomic_store(&main_calls, 0);
    qtbus_token t = tu_sub_on_queue(bus, qtbus_queue_main(), "OnMain", main_handler, NULL);
    qtbus_event_desc d = tu_event("OnMain", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    pthread_t waiter;
    CHECK(pthread_create(&waiter, NULL, wait_other, (void *)(intptr_t)20) == 0);
    pthread_join(waiter, NULL);
    CHECK_EQ_INT(atomic_load(&other_rc), QTBUS_ETIMEDOUT);
    /* Once the main thread drains, the other thread's wait ends. */
    CHECK(pthread_create(&waiter, NULL, wait_other, (void *)(intptr_t)-1) == 0);
    CHECK_WAIT(qtbus_main_drain() == 1, TU_WAIT_MS);
    pthread_join(waiter, NULL);
    CHECK_EQ_INT(atomic_load(&other_rc), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&main_calls), 1);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    qtbus_main_drain();
}

/* ---- threads: producers on several queues, several waiters, all woken ---- */
enum { PRODUCERS = 4, PER_PRODUCER = 500, WAITERS = 4 };
static atomic_int seen_at_return[WAITERS];
static atomic_int thread_calls;
static void count_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    atomic_fetch_add(&thread_calls, 1);
}

static void producer(int index, void *ctx)
{
    (void)index;
    (void)ctx;
    for (int i = 0; i < PER_PRODUCER; i++) {
        qtbus_event_desc d = tu_event("Threads", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
    }
}

static void waiter(int index, void *ctx)
{
    (void)ctx;
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, -1), QTBUS_OK);
    atomic_store(&seen_at_return[index], atomic_load(&thread_calls));
}

static void test_threads(void)
{
    qtbus_queue *q1 = qtbus_queue_create("t1"), *q2 = qtbus_queue_create("t2");
    tu_gate g;
    close_gate(q1, &g);
    atomic_store(&thread_calls, 0);
    qtbus_token a = tu_sub_on_queue(bus, q1, "Threads", count_handler, NULL);
    qtbus_token b = tu_sub_on_queue(bus, q2, "Threads", count_handler, NULL);
    tu_run_threads(PRODUCERS, producer, NULL);
    tu_threads waiters;
    tu_threads_start(&waiters, WAITERS, waiter, NULL);
    tu_sleep_ms(5);
    atomic_store(&g.open, 1);
    tu_threads_join(&waiters);
    for (int i = 0; i < WAITERS; i++)
        CHECK_EQ_INT(atomic_load(&seen_at_return[i]), 2 * PRODUCERS * PER_PRODUCER);
    CHECK_EQ_INT(qtbus_token_dispose(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(b), QTBUS_OK);
    qtbus_queue_release(q1);
    qtbus_queue_release(q2);
}

/* ---- a bus destroyed with deliveries queued: they end on a valid bus ---- */
static void test_destroy_with_work(void)
{
    qtbus_bus *other = qtbus_bus_create();
    qtbus_bus *saved = bus;
    bus = other;
    qtbus_queue *q = qtbus_queue_create("destroyed");
    tu_gate g;
    close_gate(q, &g);
    tu_rec rec;
    tu_rec_init(&rec);
    qtbus_sub_options o = tu_options();
    o.queue = q;
    CHECK_EQ_INT(tu_sub_rec(bus, "Late", &o, &rec, NULL), QTBUS_OK);
    for (int i = 0; i < 10; i++) {
        qtbus_event_desc d = tu_event("Late", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    }
    CHECK_EQ_INT(qtbus_bus_destroy(other), QTBUS_OK);
    atomic_store(&g.open, 1);
    /* The queued deliveries are dropped (rule 2), then the release runs. */
    CHECK_WAIT(atomic_load(&rec.releases) == 1, TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&rec.calls), 0);
    CHECK_REC_SANE(&rec);
    qtbus_queue_release(q);
    bus = saved;
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    CHECK_EQ_INT(qtbus_bus_wait_idle(NULL, 0), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, 0), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_wait_idle(bus, -1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_wait_idle(qtbus_shared(), 0), QTBUS_OK);
    test_waits_for_all();
    test_timeout();
    test_from_handler();
    test_posted();
    test_main_queue();
    test_main_queue_other_thread();
    test_threads();
    test_destroy_with_work();
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_wait_idle: ok\n");
    return 0;
}
