/* SPDX-License-Identifier: MIT */
/*
 * test_once: QTBUS_SUB_ONCE.
 *
 * Users rely on: a ONCE handler running at most once even when several threads
 * dispatch at the same moment (a one-shot "first login" reaction must not run twice),
 * its token going stale after it fired, its release running once; an event it does not
 * match (other subtype, stopped before reaching it) not using it up.
 */
#include "test_util.h"

#define ROUNDS 200
#define THREADS 4
#define DISPATCHES_PER_THREAD 20

typedef struct race {
    qtbus_bus *bus;
    pthread_barrier_t start;
    atomic_int returned_sum; /* sum of qtbus_dispatch results of all threads */
    atomic_int errors;
} race;

static void racer(int index, void *ctx)
{
    race *r = (race *)ctx;
    (void)index;
    qtbus_event_desc d = tu_event("Race", NULL);
    pthread_barrier_wait(&r->start);
    for (int i = 0; i < DISPATCHES_PER_THREAD; i++) {
        int rc = qtbus_dispatch(r->bus, &d);
        if (rc < 0)
            atomic_fetch_add(&r->errors, 1);
        else
            atomic_fetch_add(&r->returned_sum, rc);
    }
}

static void stopper(const qtbus_event *ev, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_stop(ev), QTBUS_OK);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    qtbus_sub_options once = tu_options();
    once.flags = QTBUS_SUB_ONCE;

    /* Single thread: once, then stale and released. */
    {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Once", &once, &r, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_is_active(t), 1);
        CHECK_EQ_INT(qtbus_subscriber_count(bus, "Once", NULL), 1);
        qtbus_event_desc d = tu_event("Once", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(atomic_load(&r.calls), 1);
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_subscriber_count(bus, "Once", NULL), 0);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        CHECK_REC_SANE(&r);
    }

    /* A non-matching subtype does not use it up. */
    {
        tu_rec r;
        tu_rec_init(&r);
        const char *subs[] = {"yes"};
        qtbus_sub_options o = once;
        o.subtypes = subs;
        o.subtype_count = 1;
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "OnceSub", &o, &r, &t), QTBUS_OK);
        qtbus_event_desc no = tu_event("OnceSub", "no");
        qtbus_event_desc plain = tu_event("OnceSub", NULL);
        qtbus_event_desc yes = tu_event("OnceSub", "yes");
        CHECK_EQ_INT(qtbus_dispatch(bus, &no), 0);
        CHECK_EQ_INT(qtbus_dispatch(bus, &plain), 0);
        CHECK_EQ_INT(qtbus_token_is_active(t), 1);
        CHECK_EQ_INT(qtbus_dispatch(bus, &yes), 1);
        CHECK_EQ_INT(qtbus_dispatch(bus, &yes), 0);
        CHECK_EQ_INT(atomic_load(&r.calls), 1);
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
    }

    /* A dispatch stopped before reaching it does not use it up. */
    {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t, ts;
        qtbus_sub_options hi = tu_options();
        hi.priority = 5;
        CHECK_EQ_INT(tu_sub_rec(bus, "OnceStop", &once, &r, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus, "OnceStop", &hi, stopper, NULL, NULL, &ts), QTBUS_OK);
        qtbus_event_desc d = tu_event("OnceStop", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(atomic_load(&r.calls), 0);
        CHECK_EQ_INT(qtbus_token_is_active(t), 1);
        CHECK_EQ_INT(qtbus_token_dispose(ts), QTBUS_OK);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(atomic_load(&r.calls), 1);
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
    }

    /* Concurrency: 4 threads released together each dispatch 20 times; the ONCE
     * handler runs exactly once, exactly one dispatch counts it, release runs once. */
    race rc;
    memset(&rc, 0, sizeof rc);
    rc.bus = bus;
    int fired_total = 0;
    for (int round = 0; round < ROUNDS; round++) {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Race", &once, &r, &t), QTBUS_OK);
        atomic_store(&rc.returned_sum, 0);
        atomic_store(&rc.errors, 0);
        CHECK(pthread_barrier_init(&rc.start, NULL, THREADS) == 0);
        tu_run_threads(THREADS, racer, &rc);
        pthread_barrier_destroy(&rc.start);
        CHECK_MSG(atomic_load(&r.calls) == 1, "round %d: ONCE handler ran %d times", round, atomic_load(&r.calls));
        CHECK_EQ_INT(atomic_load(&rc.errors), 0);
        CHECK_MSG(atomic_load(&rc.returned_sum) == 1, "round %d: dispatches reported %d deliveries", round,
                  atomic_load(&rc.returned_sum));
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_ESTALE);
        /* All dispatches returned (joined): the release has run, once. */
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        CHECK_REC_SANE(&r);
        fired_total += atomic_load(&r.calls);
    }
    CHECK_EQ_INT(fired_total, ROUNDS);

    /* The same with the ONCE subscription on a queue: one delivery queued in total. */
    qtbus_queue *q = qtbus_queue_create("once.queue");
    CHECK(q != NULL);
    for (int round = 0; round < ROUNDS / 4; round++) {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_sub_options o = once;
        o.queue = q;
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Race", &o, &r, &t), QTBUS_OK);
        atomic_store(&rc.returned_sum, 0);
        atomic_store(&rc.errors, 0);
        CHECK(pthread_barrier_init(&rc.start, NULL, THREADS) == 0);
        tu_run_threads(THREADS, racer, &rc);
        pthread_barrier_destroy(&rc.start);
        CHECK_EQ_INT(atomic_load(&rc.errors), 0);
        CHECK_MSG(atomic_load(&rc.returned_sum) == 1, "queued round %d: %d deliveries", round,
                  atomic_load(&rc.returned_sum));
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        CHECK_WAIT(atomic_load(&r.releases) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(atomic_load(&r.calls), 1);
        CHECK_REC_SANE(&r);
    }
    qtbus_queue_release(q);

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_once: %d concurrent rounds passed\n", ROUNDS);
    return 0;
}
