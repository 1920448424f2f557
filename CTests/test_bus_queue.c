/* SPDX-License-Identifier: MIT */
/*
 * test_bus_queue: qtbus_dispatch_on_bus_queue.
 *
 * Users rely on: the call copying the event and returning QTBUS_OK at once (it never
 * waits for handlers, so it can be called while the bus queue is busy), and the posts
 * of a bus being dispatched in the order they were made -- also per thread when
 * several threads post; the posted event's object released once per post.
 */
#include "test_util.h"

#define POSTS 1000
#define THREADS 4
#define PER_THREAD 500

static qtbus_bus *bus;
static pthread_t main_thread;

typedef struct ordered {
    uint32_t got[POSTS];
    atomic_int n;
    atomic_int on_main;
} ordered;

static void ordered_handler(const qtbus_event *ev, void *userdata)
{
    ordered *o = (ordered *)userdata;
    size_t size = 0;
    const uint32_t *v = (const uint32_t *)qtbus_event_data(ev, &size);
    CHECK_EQ_INT(size, sizeof(uint32_t));
    int i = atomic_load(&o->n);
    CHECK(i < POSTS);
    o->got[i] = *v;
    if (pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&o->on_main, 1);
    atomic_store(&o->n, i + 1);
}

/* Several posting threads: each thread's posts arrive in that thread's order. */
typedef struct multi {
    uint32_t next_expected[THREADS];
    atomic_int received;
    atomic_int out_of_order;
    atomic_int errors;
} multi;

static void multi_handler(const qtbus_event *ev, void *userdata)
{
    multi *m = (multi *)userdata;
    size_t size = 0;
    const uint32_t *v = (const uint32_t *)qtbus_event_data(ev, &size);
    CHECK_EQ_INT(size, 2 * sizeof(uint32_t));
    uint32_t thread = v[0], seq = v[1];
    CHECK(thread < THREADS);
    /* Handlers of the bus queue run one at a time: plain fields are fine here. */
    if (seq != m->next_expected[thread]) atomic_fetch_add(&m->out_of_order, 1);
    m->next_expected[thread] = seq + 1;
    atomic_fetch_add(&m->received, 1);
}

static void poster(int index, void *ctx)
{
    multi *m = (multi *)ctx;
    for (uint32_t i = 0; i < PER_THREAD; i++) {
        uint32_t payload[2] = {(uint32_t)index, i};
        qtbus_event_desc d = tu_event("Multi", NULL);
        d.data = payload;
        d.size = sizeof payload;
        if (qtbus_dispatch_on_bus_queue(bus, &d) != QTBUS_OK) atomic_fetch_add(&m->errors, 1);
    }
}

int main(void)
{
    main_thread = pthread_self();
    bus = qtbus_bus_create();
    CHECK(bus != NULL);

    /* Block the bus queue with a gate, post 1000 numbered events from one reused buffer:
     * every post returns OK while nothing can be delivered (so it did not wait), then
     * open the gate: all 1000 arrive, in post order, off the main thread. */
    static ordered ord;
    memset(&ord, 0, sizeof ord);
    tu_gate gate;
    atomic_init(&gate.open, 0);
    atomic_init(&gate.entered, 0);
    qtbus_token tg, to;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Gate", NULL, tu_gate_handler, &gate, NULL, &tg), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Ordered", NULL, ordered_handler, &ord, NULL, &to), QTBUS_OK);
    qtbus_event_desc dg = tu_event("Gate", NULL);
    CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &dg), QTBUS_OK);
    CHECK_WAIT(atomic_load(&gate.entered) == 1, TU_WAIT_MS);

    atomic_int object_releases;
    atomic_init(&object_releases, 0);
    uint32_t buffer;
    for (uint32_t i = 0; i < POSTS; i++) {
        buffer = i;
        qtbus_event_desc d = tu_event("Ordered", NULL);
        d.data = &buffer;
        d.size = sizeof buffer;
        d.object = &object_releases;
        d.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_OK);
    }
    buffer = 0xdeadbeef;
    CHECK_EQ_INT(atomic_load(&ord.n), 0);
    atomic_store(&gate.open, 1);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&ord.n), POSTS);
    int in_order = 0;
    for (uint32_t i = 0; i < POSTS; i++) {
        CHECK_MSG(ord.got[i] == i, "delivery %u carried post %u", i, ord.got[i]);
        in_order++;
    }
    CHECK_EQ_INT(in_order, POSTS);
    CHECK_EQ_INT(atomic_load(&ord.on_main), 0);
    CHECK_EQ_INT(atomic_load(&object_releases), POSTS);

    /* Four threads posting at once: per-thread order kept, nothing lost. */
    static multi m;
    memset(&m, 0, sizeof m);
    qtbus_token tm;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Multi", NULL, multi_handler, &m, NULL, &tm), QTBUS_OK);
    tu_run_threads(THREADS, poster, &m);
    CHECK_EQ_INT(atomic_load(&m.errors), 0);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&m.received), THREADS * PER_THREAD);
    CHECK_EQ_INT(atomic_load(&m.out_of_order), 0);

    /* A post nobody receives is fine (and its object released). */
    atomic_int lonely;
    atomic_init(&lonely, 0);
    qtbus_event_desc dl = tu_event("NobodyPosted", NULL);
    dl.object = &lonely;
    dl.object_release = tu_count_release;
    CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &dl), QTBUS_OK);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&lonely), 1);

    CHECK_EQ_INT(qtbus_token_dispose(tg), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(to), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(tm), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&object_releases), POSTS);
    printf("test_bus_queue: %d posts in order, %d concurrent posts\n", POSTS, THREADS * PER_THREAD);
    return 0;
}
