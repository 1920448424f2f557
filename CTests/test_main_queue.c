/* SPDX-License-Identifier: MIT */
/*
 * test_main_queue: the main queue, drained by the program's own main loop.
 *
 * Users rely on: QTBUS_SUB_MAIN handlers and qtbus_dispatch_on_main work running on
 * the main thread, only when main drains; qtbus_main_fd polling readable while work is
 * pending and not after a drain (so it can sit in poll/epoll/GLib/libuv);
 * qtbus_main_drain returning how many items it ran; qtbus_main_wait honouring its
 * timeout; and drain/wait refusing (QTBUS_EINVAL, running nothing) on any other thread,
 * leaving the work for the main thread.
 *
 * This file's main() is the process's main thread.
 */
#include "test_util.h"

#include <poll.h>

static pthread_t main_thread;

static int fd_readable(int timeout_ms)
{
    struct pollfd p;
    p.fd = qtbus_main_fd();
    p.events = POLLIN;
    p.revents = 0;
    int rc = poll(&p, 1, timeout_ms);
    CHECK(rc >= 0);
    return rc > 0 && (p.revents & POLLIN);
}

typedef struct on_main {
    atomic_int calls;
    atomic_int off_main; /* calls that ran on another thread: must stay 0 */
    int order[64];
    atomic_int n;
} on_main;

static void main_handler(const qtbus_event *ev, void *userdata)
{
    on_main *m = (on_main *)userdata;
    if (!pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&m->off_main, 1);
    size_t size = 0;
    const int *v = (const int *)qtbus_event_data(ev, &size);
    int i = atomic_load(&m->n);
    if (v && size == sizeof(int) && i < 64) {
        m->order[i] = *v;
        atomic_store(&m->n, i + 1);
    }
    atomic_fetch_add(&m->calls, 1);
}

static void post_main(qtbus_bus *bus, const char *type, int value)
{
    qtbus_event_desc d = tu_event(type, NULL);
    d.data = &value;
    d.size = sizeof value;
    CHECK_EQ_INT(qtbus_dispatch_on_main(bus, &d), QTBUS_OK);
}

/* ---- from another thread ---- */
typedef struct off_thread {
    int drain_rc;
    int wait0_rc;
    int wait100_rc;
    qtbus_bus *bus;
} off_thread;

static void try_drain_off_main(int index, void *ctx)
{
    off_thread *o = (off_thread *)ctx;
    (void)index;
    o->drain_rc = qtbus_main_drain();
    o->wait0_rc = qtbus_main_wait(0);
    o->wait100_rc = qtbus_main_wait(100);
}

static void post_from_thread(int index, void *ctx)
{
    off_thread *o = (off_thread *)ctx;
    (void)index;
    post_main(o->bus, "Sync", 77);
}

int main(void)
{
    main_thread = pthread_self();
    qtbus_bus *shared = qtbus_shared();
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);

    CHECK(qtbus_main_fd() >= 0);
    CHECK_EQ_INT(qtbus_main_fd(), qtbus_main_fd());
    /* Start clean: whatever is pending (nothing, normally) runs now; the fd may stay
     * readable once after a drain racing with a post (header), the next drain clears it. */
    CHECK(qtbus_main_drain() >= 0);
    CHECK_EQ_INT(qtbus_main_drain(), 0);
    CHECK(!fd_readable(0));

    /* Nothing pending: wait(0) returns 0 at once; wait(60) returns 0 after >= ~60 ms. */
    CHECK_EQ_INT(qtbus_main_wait(0), 0);
    int64_t t0 = tu_now_ms();
    CHECK_EQ_INT(qtbus_main_wait(60), 0);
    int64_t waited = tu_now_ms() - t0;
    CHECK_MSG(waited >= 55, "qtbus_main_wait(60) returned after %lld ms", (long long)waited);
    CHECK_MSG(waited < 5000, "qtbus_main_wait(60) returned after %lld ms", (long long)waited);

    /* QTBUS_SUB_MAIN: dispatch counts the queued delivery, nothing runs until drain,
     * the fd is readable, drain runs it here and returns 1, the fd is quiet after. */
    static on_main sub_main;
    memset(&sub_main, 0, sizeof sub_main);
    qtbus_bag bag;
    CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
    CHECK_EQ_INT(QTBUS_SUB_MAIN(bag, "MainEvt", main_handler, &sub_main), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscriber_count(shared, "MainEvt", NULL), 1);
    for (int i = 0; i < 3; i++) {
        qtbus_event_desc d = tu_event("MainEvt", NULL);
        d.data = &i;
        d.size = sizeof i;
        CHECK_EQ_INT(qtbus_dispatch(shared, &d), 1);
    }
    CHECK_EQ_INT(atomic_load(&sub_main.calls), 0);
    CHECK(fd_readable(TU_WAIT_MS));
    CHECK(fd_readable(0)); /* polling does not consume it */
    CHECK_EQ_INT(qtbus_main_drain(), 3);
    CHECK_EQ_INT(atomic_load(&sub_main.calls), 3);
    CHECK_EQ_INT(atomic_load(&sub_main.off_main), 0);
    CHECK_EQ_INT(sub_main.order[0], 0);
    CHECK_EQ_INT(sub_main.order[1], 1);
    CHECK_EQ_INT(sub_main.order[2], 2);
    CHECK(!fd_readable(0));
    CHECK_EQ_INT(qtbus_main_drain(), 0);

    /* A main-queue delivery dispatched from another thread still runs on main. */
    {
        off_thread o;
        memset(&o, 0, sizeof o);
        o.bus = shared;
        static on_main sync_sub;
        memset(&sync_sub, 0, sizeof sync_sub);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(shared, "Sync", NULL, main_handler, &sync_sub, NULL, &t), QTBUS_OK);
        tu_run_threads(1, post_from_thread, &o);
        CHECK_EQ_INT(atomic_load(&sync_sub.calls), 0);
        CHECK(fd_readable(TU_WAIT_MS));
        CHECK_EQ_INT(qtbus_main_drain(), 1);
        CHECK_EQ_INT(atomic_load(&sync_sub.calls), 1);
        CHECK_EQ_INT(sync_sub.order[0], 77);
        CHECK_EQ_INT(atomic_load(&sync_sub.off_main), 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* dispatch_on_main: each post is one item, run in post order by the drain; its
     * synchronous subscribers run on main inside the drain. */
    static on_main sync_sub;
    memset(&sync_sub, 0, sizeof sync_sub);
    qtbus_token ts;
    CHECK_EQ_INT(qtbus_subscribe(bus, "OnMain", NULL, main_handler, &sync_sub, NULL, &ts), QTBUS_OK);
    for (int i = 10; i < 15; i++)
        post_main(bus, "OnMain", i);
    CHECK_EQ_INT(atomic_load(&sync_sub.calls), 0);
    CHECK(fd_readable(TU_WAIT_MS));
    CHECK_EQ_INT(qtbus_main_drain(), 5);
    CHECK_EQ_INT(atomic_load(&sync_sub.calls), 5);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(sync_sub.order[i], 10 + i);
    CHECK_EQ_INT(atomic_load(&sync_sub.off_main), 0);
    CHECK(!fd_readable(0));

    /* Work posted during a drain waits for the next drain: a dispatch_on_main whose
     * event reaches a main-queue subscriber posts that delivery while draining. */
    {
        static on_main nested;
        memset(&nested, 0, sizeof nested);
        qtbus_token tn;
        qtbus_sub_options o = tu_options();
        o.queue = qtbus_queue_main();
        CHECK_EQ_INT(qtbus_subscribe(bus, "Twice", &o, main_handler, &nested, NULL, &tn), QTBUS_OK);
        post_main(bus, "Twice", 5);
        CHECK_EQ_INT(qtbus_main_drain(), 1); /* the dispatch; it posted the delivery */
        CHECK_EQ_INT(atomic_load(&nested.calls), 0);
        CHECK(fd_readable(TU_WAIT_MS));
        CHECK_EQ_INT(qtbus_main_drain(), 1);
        CHECK_EQ_INT(atomic_load(&nested.calls), 1);
        CHECK_EQ_INT(atomic_load(&nested.off_main), 0);
        CHECK_EQ_INT(qtbus_token_dispose(tn), QTBUS_OK);
    }

    /* Another thread may not drain or wait: EINVAL, nothing run, the work (and the
     * readable fd) still there for the main thread. */
    {
        post_main(bus, "OnMain", 20);
        post_main(bus, "OnMain", 21);
        int before = atomic_load(&sync_sub.calls);
        off_thread o;
        memset(&o, 0, sizeof o);
        tu_run_threads(1, try_drain_off_main, &o);
        CHECK_EQ_INT(o.drain_rc, QTBUS_EINVAL);
        CHECK_EQ_INT(o.wait0_rc, QTBUS_EINVAL);
        CHECK_EQ_INT(o.wait100_rc, QTBUS_EINVAL);
        CHECK_EQ_INT(atomic_load(&sync_sub.calls), before);
        CHECK(fd_readable(TU_WAIT_MS));
        CHECK_EQ_INT(qtbus_main_drain(), 2);
        CHECK_EQ_INT(atomic_load(&sync_sub.calls), before + 2);
        CHECK_EQ_INT(sync_sub.order[before], 20);
        CHECK_EQ_INT(sync_sub.order[before + 1], 21);
        CHECK(!fd_readable(0));
    }

    /* qtbus_main_wait with work pending returns at once and runs it; with a long
     * timeout it returns as soon as work arrives from another thread. */
    {
        int before = atomic_load(&sync_sub.calls);
        post_main(bus, "OnMain", 30);
        t0 = tu_now_ms();
        CHECK_EQ_INT(qtbus_main_wait(-1), 1);
        CHECK(tu_now_ms() - t0 < 5000);
        CHECK_EQ_INT(atomic_load(&sync_sub.calls), before + 1);

        off_thread o;
        memset(&o, 0, sizeof o);
        o.bus = bus;
        static on_main late;
        memset(&late, 0, sizeof late);
        qtbus_token tl;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Sync", NULL, main_handler, &late, NULL, &tl), QTBUS_OK);
        tu_threads th;
        tu_threads_start(&th, 1, post_from_thread, &o);
        int ran = 0;
        int64_t deadline = tu_now_ms() + TU_WAIT_MS;
        while (ran == 0 && tu_now_ms() < deadline) {
            int rc = qtbus_main_wait(TU_WAIT_MS);
            CHECK(rc >= 0);
            ran += rc;
        }
        tu_threads_join(&th);
        CHECK_EQ_INT(ran, 1);
        CHECK_EQ_INT(atomic_load(&late.calls), 1);
        CHECK_EQ_INT(qtbus_token_dispose(tl), QTBUS_OK);
    }

    /* A main-queue subscription disposed while its delivery is pending: never called,
     * released once (after the drain dropped the delivery at the latest). */
    {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_sub_options o = tu_options();
        o.queue = qtbus_queue_main();
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Dropped", &o, &r, &t), QTBUS_OK);
        atomic_int obj;
        atomic_init(&obj, 0);
        qtbus_event_desc d = tu_event("Dropped", NULL);
        d.object = &obj;
        d.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK(qtbus_main_drain() >= 0);
        CHECK_EQ_INT(atomic_load(&r.calls), 0);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        CHECK_EQ_INT(atomic_load(&obj), 1);
        CHECK_REC_SANE(&r);
        CHECK_EQ_INT(qtbus_main_drain(), 0);
    }

    /* The main queue is static: releasing it changes nothing. */
    qtbus_queue_release(qtbus_queue_main());
    post_main(bus, "OnMain", 40);
    CHECK_EQ_INT(qtbus_main_drain(), 1);

    CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscriber_count(shared, "MainEvt", NULL), 0);
    CHECK_EQ_INT(qtbus_token_dispose(ts), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    CHECK(qtbus_main_drain() >= 0);
    printf("test_main_queue: passed\n");
    return 0;
}
