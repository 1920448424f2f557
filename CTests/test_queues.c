/* SPDX-License-Identifier: MIT */
/*
 * test_queues: subscriptions delivered on a created (serial) queue.
 *
 * Users rely on: queued handlers running one at a time, in FIFO order, off the
 * dispatching thread; qtbus_dispatch counting them; the payload bytes copied (the
 * caller may reuse its buffer as soon as dispatch returns); the event object released
 * once, after the last queued delivery; deliveries still queued when a subscription is
 * disposed being dropped (rule 2) with release following once; qtbus_queue_release
 * letting pending work run; qtbus_event_stop refusing a queued event.
 *
 * A "gate" handler on the same serial queue blocks it until the test opens the gate,
 * so the test knows that work is still queued (not already run) at a given moment.
 */
#include "test_util.h"

static qtbus_bus *bus;
static pthread_t main_thread;

/* ---- FIFO, serial, off-thread ---- */
#define FIFO_N 1000
typedef struct fifo {
    uint32_t got[FIFO_N];
    atomic_int n;
    atomic_int in_flight;
    atomic_int max_in_flight;
    atomic_int on_dispatching_thread;
    atomic_int stop_rc;
} fifo;

static void fifo_handler(const qtbus_event *ev, void *userdata)
{
    fifo *f = (fifo *)userdata;
    int now = atomic_fetch_add(&f->in_flight, 1) + 1;
    int max = atomic_load(&f->max_in_flight);
    while (now > max && !atomic_compare_exchange_weak(&f->max_in_flight, &max, now)) {
    }
    if (pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&f->on_dispatching_thread, 1);
    size_t size = 0;
    const uint32_t *v = (const uint32_t *)qtbus_event_data(ev, &size);
    CHECK_EQ_INT(size, sizeof(uint32_t));
    int i = atomic_load(&f->n);
    CHECK(i < FIFO_N);
    f->got[i] = *v;
    /* A queued event's dispatch has finished: stop is refused. */
    atomic_store(&f->stop_rc, qtbus_event_stop(ev));
    atomic_fetch_sub(&f->in_flight, 1);
    atomic_store(&f->n, i + 1);
}

/* ---- gates ---- */
static qtbus_token sub_gate(qtbus_queue *q, const char *type, tu_gate *g)
{
    qtbus_sub_options o = tu_options();
    o.queue = q;
    qtbus_token t;
    atomic_init(&g->open, 0);
    atomic_init(&g->entered, 0);
    CHECK_EQ_INT(qtbus_subscribe(bus, type, &o, tu_gate_handler, g, NULL, &t), QTBUS_OK);
    return t;
}

static void close_queue_with(const char *gate_type, tu_gate *g)
{
    qtbus_event_desc d = tu_event(gate_type, NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_WAIT(atomic_load(&g->entered) == 1, TU_WAIT_MS); /* the queue is now blocked */
}

/* ---- payload copy and object lifetime ---- */
typedef struct payload_seen {
    char text[32];
    atomic_int calls;
    void *object;
    int object_releases_at_call;
} payload_seen;
static atomic_int object_releases;

static void payload_handler(const qtbus_event *ev, void *userdata)
{
    payload_seen *p = (payload_seen *)userdata;
    size_t size = 0;
    const char *data = (const char *)qtbus_event_data(ev, &size);
    CHECK(size < sizeof p->text);
    memcpy(p->text, data, size);
    p->text[size] = '\0';
    p->object = qtbus_event_object(ev);
    p->object_releases_at_call = atomic_load(&object_releases);
    atomic_fetch_add(&p->calls, 1);
}

/* ---- a queued handler running while its subscription is disposed ---- */
typedef struct running_sub {
    tu_rec rec;
    tu_gate gate;
} running_sub;

static void running_handler(const qtbus_event *ev, void *userdata)
{
    running_sub *r = (running_sub *)userdata;
    tu_rec_handler(ev, &r->rec);
    tu_gate_pass(&r->gate);
    if (atomic_load(&r->rec.releases) != 0) atomic_fetch_add(&r->rec.calls_after_release, 1);
}

static void running_release(void *userdata) { tu_rec_release(&((running_sub *)userdata)->rec); }

int main(void)
{
    main_thread = pthread_self();
    bus = qtbus_bus_create();
    CHECK(bus != NULL);

    /* FIFO on a background thread, one at a time, each dispatch counting 1. */
    {
        qtbus_queue *q = qtbus_queue_create("queues.fifo");
        CHECK(q != NULL);
        static fifo f;
        memset(&f, 0, sizeof f);
        qtbus_sub_options o = tu_options();
        o.queue = q;
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Fifo", &o, fifo_handler, &f, NULL, &t), QTBUS_OK);
        for (uint32_t i = 0; i < FIFO_N; i++) {
            qtbus_event_desc d = tu_event("Fifo", NULL);
            d.data = &i;
            d.size = sizeof i;
            CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        }
        CHECK_IDLE(bus);
        CHECK_EQ_INT(atomic_load(&f.n), FIFO_N);
        for (uint32_t i = 0; i < FIFO_N; i++)
            CHECK_MSG(f.got[i] == i, "position %u received %u", i, f.got[i]);
        CHECK_EQ_INT(atomic_load(&f.max_in_flight), 1);
        CHECK_EQ_INT(atomic_load(&f.on_dispatching_thread), 0);
        CHECK_EQ_INT(atomic_load(&f.stop_rc), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        qtbus_queue_release(q);
    }

    /* dispatch counts synchronous + queued deliveries. */
    {
        qtbus_queue *q1 = qtbus_queue_create("queues.count1");
        qtbus_queue *q2 = qtbus_queue_create(NULL); /* label is nullable */
        CHECK(q1 != NULL && q2 != NULL);
        tu_rec sync_rec, r1, r2;
        tu_rec_init(&sync_rec);
        tu_rec_init(&r1);
        tu_rec_init(&r2);
        qtbus_token ts, t1, t2;
        qtbus_sub_options o = tu_options();
        CHECK_EQ_INT(tu_sub_rec(bus, "Count", &o, &sync_rec, &ts), QTBUS_OK);
        o.queue = q1;
        CHECK_EQ_INT(tu_sub_rec(bus, "Count", &o, &r1, &t1), QTBUS_OK);
        o.queue = q2;
        CHECK_EQ_INT(tu_sub_rec(bus, "Count", &o, &r2, &t2), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscriber_count(bus, "Count", NULL), 3);
        qtbus_event_desc d = tu_event("Count", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 3);
        CHECK_EQ_INT(atomic_load(&sync_rec.calls), 1); /* synchronous: already ran */
        CHECK_IDLE(bus);
        CHECK_EQ_INT(atomic_load(&r1.calls), 1);
        CHECK_EQ_INT(atomic_load(&r2.calls), 1);
        CHECK_EQ_INT(qtbus_token_dispose(ts), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t1), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t2), QTBUS_OK);
        CHECK_WAIT(atomic_load(&r1.releases) == 1 && atomic_load(&r2.releases) == 1, TU_WAIT_MS);
        CHECK_REC_SANE(&r1);
        CHECK_REC_SANE(&r2);
        qtbus_queue_release(q1);
        qtbus_queue_release(q2);
    }

    /* Payload bytes are copied; the object is released once, after the LAST queued
     * delivery (two queues, opened one after the other). */
    {
        qtbus_queue *q1 = qtbus_queue_create("queues.copy1");
        qtbus_queue *q2 = qtbus_queue_create("queues.copy2");
        CHECK(q1 != NULL && q2 != NULL);
        tu_gate g1, g2;
        qtbus_token tg1 = sub_gate(q1, "Gate1", &g1);
        qtbus_token tg2 = sub_gate(q2, "Gate2", &g2);
        payload_seen p1, p2, psync;
        memset(&p1, 0, sizeof p1);
        memset(&p2, 0, sizeof p2);
        memset(&psync, 0, sizeof psync);
        qtbus_sub_options o = tu_options();
        qtbus_token t1, t2, tsync;
        o.queue = q1;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Payload", &o, payload_handler, &p1, NULL, &t1), QTBUS_OK);
        o.queue = q2;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Payload", &o, payload_handler, &p2, NULL, &t2), QTBUS_OK);
        o.queue = NULL;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Payload", &o, payload_handler, &psync, NULL, &tsync), QTBUS_OK);
        close_queue_with("Gate1", &g1);
        close_queue_with("Gate2", &g2);

        char buffer[32];
        snprintf(buffer, sizeof buffer, "original");
        qtbus_event_desc d = tu_event("Payload", NULL);
        d.data = buffer;
        d.size = strlen(buffer);
        d.object = &object_releases;
        d.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 3);
        memset(buffer, 'X', sizeof buffer - 1); /* the caller reuses its buffer at once */
        CHECK_EQ_STR(psync.text, "original");
        CHECK_EQ_INT(atomic_load(&object_releases), 0); /* two deliveries still queued */

        atomic_store(&g1.open, 1);
        CHECK_WAIT(atomic_load(&p1.calls) == 1, TU_WAIT_MS);
        CHECK_EQ_STR(p1.text, "original");
        CHECK(p1.object == &object_releases);
        CHECK_EQ_INT(p1.object_releases_at_call, 0);
        CHECK_EQ_INT(atomic_load(&object_releases), 0); /* q2's delivery still pending */

        atomic_store(&g2.open, 1);
        CHECK_WAIT(atomic_load(&p2.calls) == 1, TU_WAIT_MS);
        CHECK_EQ_STR(p2.text, "original");
        CHECK(p2.object == &object_releases);
        CHECK_EQ_INT(p2.object_releases_at_call, 0);
        CHECK_WAIT(atomic_load(&object_releases) == 1, TU_WAIT_MS);

        qtbus_token all[] = {tg1, tg2, t1, t2, tsync};
        for (int i = 0; i < 5; i++)
            CHECK_EQ_INT(qtbus_token_dispose(all[i]), QTBUS_OK);
        qtbus_queue_release(q1);
        qtbus_queue_release(q2);
        CHECK_EQ_INT(atomic_load(&object_releases), 1);
    }

    /* Deliveries still queued when the subscription is disposed are dropped; release
     * then runs once; their objects are still released once each. */
    {
        qtbus_queue *q = qtbus_queue_create("queues.drop");
        CHECK(q != NULL);
        tu_gate g;
        qtbus_token tg = sub_gate(q, "GateD", &g);
        tu_rec r, marker;
        tu_rec_init(&r);
        tu_rec_init(&marker);
        qtbus_sub_options o = tu_options();
        o.queue = q;
        qtbus_token t, tm;
        CHECK_EQ_INT(tu_sub_rec(bus, "Dropped", &o, &r, &t), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(bus, "MarkerD", &o, &marker, &tm), QTBUS_OK);
        close_queue_with("GateD", &g);
        enum { K = 10 };
        atomic_int objs[K];
        for (int i = 0; i < K; i++) {
            atomic_init(&objs[i], 0);
            qtbus_event_desc d = tu_event("Dropped", NULL);
            d.object = &objs[i];
            d.object_release = tu_count_release;
            CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        }
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        /* The marker is queued behind the dropped deliveries (FIFO). */
        qtbus_event_desc dm = tu_event("MarkerD", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &dm), 1);
        atomic_store(&g.open, 1);
        CHECK_WAIT(atomic_load(&marker.calls) == 1, TU_WAIT_MS);
        CHECK_WAIT(atomic_load(&r.releases) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(atomic_load(&r.calls), 0);
        for (int i = 0; i < K; i++)
            CHECK_WAIT(atomic_load(&objs[i]) == 1, TU_WAIT_MS);
        CHECK_REC_SANE(&r);
        CHECK_EQ_INT(qtbus_token_dispose(tm), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(tg), QTBUS_OK);
        CHECK_WAIT(atomic_load(&marker.releases) == 1, TU_WAIT_MS);
        qtbus_queue_release(q);
        for (int i = 0; i < K; i++)
            CHECK_EQ_INT(atomic_load(&objs[i]), 1);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
    }

    /* Disposed while its queued invocation runs: dispose returns at once, the running
     * call finishes, the later queued ones are dropped, release runs once after. */
    {
        qtbus_queue *q = qtbus_queue_create("queues.running");
        CHECK(q != NULL);
        running_sub r;
        memset(&r, 0, sizeof r);
        tu_rec_init(&r.rec);
        atomic_init(&r.gate.open, 0);
        atomic_init(&r.gate.entered, 0);
        qtbus_sub_options o = tu_options();
        o.queue = q;
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Running", &o, running_handler, &r, running_release, &t), QTBUS_OK);
        qtbus_event_desc d = tu_event("Running", NULL);
        for (int i = 0; i < 3; i++)
            CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_WAIT(atomic_load(&r.gate.entered) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.rec.releases), 0); /* the handler is running */
        atomic_store(&r.gate.open, 1);
        CHECK_WAIT(atomic_load(&r.rec.releases) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(atomic_load(&r.rec.calls), 1); /* the two queued behind it: dropped */
        CHECK_REC_SANE(&r.rec);
        qtbus_queue_release(q);
    }

    /* queue_release with work pending: the work still runs; subscriptions keep the
     * queue alive (later dispatches still delivered); release of the subscription once. */
    {
        qtbus_queue *q = qtbus_queue_create("queues.release");
        CHECK(q != NULL);
        tu_gate g;
        qtbus_token tg = sub_gate(q, "GateR", &g);
        tu_rec r;
        tu_rec_init(&r);
        qtbus_sub_options o = tu_options();
        o.queue = q;
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Pending", &o, &r, &t), QTBUS_OK);
        close_queue_with("GateR", &g);
        qtbus_event_desc d = tu_event("Pending", NULL);
        for (int i = 0; i < 5; i++)
            CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        qtbus_queue_release(q); /* the caller's reference is gone; q is not used again */
        atomic_store(&g.open, 1);
        CHECK_WAIT(atomic_load(&r.calls) == 5, TU_WAIT_MS);
        for (int i = 0; i < 3; i++)
            CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_WAIT(atomic_load(&r.calls) == 8, TU_WAIT_MS);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(tg), QTBUS_OK);
        CHECK_WAIT(atomic_load(&r.releases) == 1, TU_WAIT_MS);
        CHECK_REC_SANE(&r);
    }

    /* Releasing NULL or the main queue does nothing. */
    qtbus_queue_release(NULL);
    qtbus_queue_release(qtbus_queue_main());
    CHECK(qtbus_queue_main() != NULL);
    CHECK(qtbus_queue_main() == qtbus_queue_main());

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_queues: passed\n");
    return 0;
}
