/* SPDX-License-Identifier: MIT */
/*
 * test_bus_destroy: qtbus_bus_destroy and isolated buses.
 *
 * Users rely on: destroy disposing every subscription (each release once, every token
 * stale), dropping sticky events and queued deliveries; dispatches already running on
 * other threads finishing safely (their handlers never see freed userdata); calls that
 * reach the bus while it is being destroyed returning QTBUS_ECLOSED; buses created with
 * qtbus_bus_create never seeing each other's events.
 *
 * Validity of the concurrent part: "after destroy returns the pointer must not be used
 * again", so each dispatcher thread makes exactly ONE call on the doomed bus after the
 * warm-up, and that call is known to be in progress (its first handler has started)
 * before destroy is called.  No thread starts a call on the bus after destroy began.
 */
#include "test_util.h"

/* ---------------------------------------------------------------------------------
 * Userdata with a magic number: a handler call after release is caught (and, under
 * AddressSanitizer, reported as a use after free).
 * ------------------------------------------------------------------------------- */
#define MAGIC_LIVE 0x51B05C0DE11FEull
#define MAGIC_DEAD 0xDEADDEADDEADDEADull

typedef struct guarded {
    uint64_t pad[2]; /* keep the magic out of the allocator's free-list words */
    uint64_t magic;
    int index;
} guarded;

#define MAX_GUARDED 64
static atomic_int g_released[MAX_GUARDED];
static atomic_int g_calls[MAX_GUARDED];
static atomic_int bad_magic;

static void guarded_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    guarded *g = (guarded *)userdata;
    if (g->magic != MAGIC_LIVE) {
        atomic_fetch_add(&bad_magic, 1);
        return;
    }
    atomic_fetch_add(&g_calls[g->index], 1);
    /* Stay a little while, so destroy overlaps running handlers. */
    for (volatile int spin = 0; spin < 2000; spin++) {
    }
    if (g->magic != MAGIC_LIVE) atomic_fetch_add(&bad_magic, 1);
}

static void guarded_release(void *userdata)
{
    guarded *g = (guarded *)userdata;
    if (g->magic != MAGIC_LIVE) atomic_fetch_add(&bad_magic, 1);
    atomic_fetch_add(&g_released[g->index], 1);
    g->magic = MAGIC_DEAD;
    free(g);
}

static guarded *new_guarded(int index)
{
    guarded *g = (guarded *)calloc(1, sizeof *g);
    CHECK(g != NULL);
    g->magic = MAGIC_LIVE;
    g->index = index;
    return g;
}

/* ---------------------------------------------------------------------------------
 * Destroy racing with in-progress dispatches.
 * ------------------------------------------------------------------------------- */
#define DISPATCHERS 4
#define GUARDED_SUBS 20
#define WARMUP 200
#define ROUNDS 30

typedef struct race {
    qtbus_bus *bus;
    pthread_barrier_t warmed; /* warm-up over (main then turns blocking on) */
    pthread_barrier_t armed;  /* blocking is on: make the last call */
    atomic_int blocking;      /* 1: the first handler waits for destroy_begun */
    atomic_int entered;       /* dispatchers inside the first handler */
    atomic_int destroy_begun;
    atomic_int errors;
    atomic_int closed; /* QTBUS_ECLOSED results (allowed) */
} race;

static void first_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    race *r = (race *)userdata;
    if (!atomic_load(&r->blocking)) return;
    atomic_fetch_add(&r->entered, 1);
    int64_t deadline = tu_now_ms() + TU_WAIT_MS;
    while (!atomic_load(&r->destroy_begun)) {
        if (tu_now_ms() > deadline) tu_fail(__FILE__, __LINE__, "destroy never began");
        sched_yield();
    }
}

static void dispatcher(int index, void *ctx)
{
    race *r = (race *)ctx;
    (void)index;
    qtbus_event_desc d = tu_event("Race", NULL);
    for (int i = 0; i < WARMUP; i++) {
        int rc = qtbus_dispatch(r->bus, &d);
        if (rc != GUARDED_SUBS + 1) atomic_fetch_add(&r->errors, 1);
    }
    pthread_barrier_wait(&r->warmed);
    pthread_barrier_wait(&r->armed);
    /* The one call that overlaps destroy.  After it returns, r->bus is never used. */
    int rc = qtbus_dispatch(r->bus, &d);
    if (rc == QTBUS_ECLOSED)
        atomic_fetch_add(&r->closed, 1);
    else if (rc < 0)
        atomic_fetch_add(&r->errors, 1);
}

static void destroy_race_round(int round)
{
    race r;
    memset(&r, 0, sizeof r);
    r.bus = qtbus_bus_create();
    CHECK(r.bus != NULL);
    for (int i = 0; i < MAX_GUARDED; i++) {
        atomic_store(&g_released[i], 0);
        atomic_store(&g_calls[i], 0);
    }
    qtbus_sub_options o = tu_options();
    o.priority = 100;
    CHECK_EQ_INT(qtbus_subscribe(r.bus, "Race", &o, first_handler, &r, NULL, NULL), QTBUS_OK);
    for (int i = 0; i < GUARDED_SUBS; i++) {
        o.priority = i % 3;
        CHECK_EQ_INT(qtbus_subscribe(r.bus, "Race", &o, guarded_handler, new_guarded(i), guarded_release, NULL),
                     QTBUS_OK);
    }
    CHECK(pthread_barrier_init(&r.warmed, NULL, DISPATCHERS + 1) == 0);
    CHECK(pthread_barrier_init(&r.armed, NULL, DISPATCHERS + 1) == 0);
    tu_threads th;
    tu_threads_start(&th, DISPATCHERS, dispatcher, &r);
    pthread_barrier_wait(&r.warmed);
    atomic_store(&r.blocking, 1);
    pthread_barrier_wait(&r.armed);
    /* Every dispatcher is now inside its last dispatch (in the first handler). */
    CHECK_WAIT(atomic_load(&r.entered) == DISPATCHERS, TU_WAIT_MS);
    atomic_store(&r.destroy_begun, 1);
    CHECK_EQ_INT(qtbus_bus_destroy(r.bus), QTBUS_OK);
    tu_threads_join(&th);
    pthread_barrier_destroy(&r.warmed);
    pthread_barrier_destroy(&r.armed);

    CHECK_EQ_INT(atomic_load(&r.errors), 0);
    CHECK_EQ_INT(atomic_load(&bad_magic), 0);
    /* Destroy returned and the in-progress dispatches returned: every release ran,
     * exactly once. */
    for (int i = 0; i < GUARDED_SUBS; i++) {
        CHECK_MSG(atomic_load(&g_released[i]) == 1, "round %d: subscription %d released %d times", round, i,
                  atomic_load(&g_released[i]));
        CHECK(atomic_load(&g_calls[i]) >= DISPATCHERS * WARMUP);
    }
}

/* ---------------------------------------------------------------------------------
 * Calls reaching a bus while it is being destroyed: QTBUS_ECLOSED.  A release hook run
 * by destroy (no dispatch in progress: it runs before destroy returns) makes them.
 * ------------------------------------------------------------------------------- */
typedef struct closing {
    qtbus_bus *bus;
    int sub_rc, dispatch_rc, count_rc, clear_rc, json_rc, post_rc, main_rc;
    tu_rec late;
    atomic_int late_object;
    int ran;
} closing;

static void closing_release(void *userdata)
{
    closing *c = (closing *)userdata;
    c->ran++;
    c->sub_rc = tu_sub_rec(c->bus, "Late", NULL, &c->late, NULL);
    qtbus_event_desc d = tu_event("Late", NULL);
    d.object = &c->late_object;
    d.object_release = tu_count_release;
    c->dispatch_rc = qtbus_dispatch(c->bus, &d);
    c->post_rc = qtbus_dispatch_on_bus_queue(c->bus, &d);
    c->main_rc = qtbus_dispatch_on_main(c->bus, &d);
    c->count_rc = qtbus_subscriber_count(c->bus, "Late", NULL);
    c->clear_rc = qtbus_sticky_clear(c->bus, "Late", NULL);
    c->json_rc = qtbus_dispatch_json(c->bus, "Late", "{}");
}

static void nop_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
}

static void destroy_execute(const qtbus_event *in, qtbus_execution x, void *u)
{
    (void)in;
    (void)u;
    qtbus_execution_finish(x, 0, NULL);
}
static void destroy_source_start(qtbus_bus *b, void *u)
{
    (void)b;
    (void)u;
}
static void count_release(void *u) { atomic_fetch_add((atomic_int *)u, 1); }

int main(void)
{
    /* Destroy disposes everything: token, no token, bag, ONCE, REPLAY, queued. */
    {
        qtbus_bus *bus = qtbus_bus_create();
        CHECK(bus != NULL);
        qtbus_queue *q = qtbus_queue_create("destroy.all");
        CHECK(q != NULL);
        qtbus_bag bag;
        CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
        enum { N = 6 };
        tu_rec r[N];
        qtbus_token t[N];
        for (int i = 0; i < N; i++)
            tu_rec_init(&r[i]);
        qtbus_sub_options o = tu_options();
        CHECK_EQ_INT(tu_sub_rec(bus, "E", &o, &r[0], &t[0]), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(bus, "E", &o, &r[1], NULL), QTBUS_OK);
        t[1].id = 0;
        o.bag = bag;
        CHECK_EQ_INT(tu_sub_rec(bus, "E", &o, &r[2], &t[2]), QTBUS_OK);
        o = tu_options();
        o.flags = QTBUS_SUB_ONCE;
        CHECK_EQ_INT(tu_sub_rec(bus, "F", &o, &r[3], &t[3]), QTBUS_OK);
        o.flags = QTBUS_SUB_REPLAY;
        CHECK_EQ_INT(tu_sub_rec(bus, "E", &o, &r[4], &t[4]), QTBUS_OK);
        o = tu_options();
        o.queue = q;
        CHECK_EQ_INT(tu_sub_rec(bus, "E", &o, &r[5], &t[5]), QTBUS_OK);
        atomic_int sticky_obj;
        atomic_init(&sticky_obj, 0);
        qtbus_event_desc d = tu_event("E", "kept");
        d.flags = QTBUS_EVENT_STICKY;
        d.object = &sticky_obj;
        d.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 5);
        CHECK_WAIT(atomic_load(&r[5].calls) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
        for (int i = 0; i < N; i++) {
            /* No dispatch in progress: released before destroy returned -- except that
             * the queued one may still be finishing its delivery on the queue thread. */
            if (i == 5) CHECK_WAIT(atomic_load(&r[i].releases) == 1, TU_WAIT_MS);
            CHECK_MSG(atomic_load(&r[i].releases) == 1, "subscription %d released %d times", i,
                      atomic_load(&r[i].releases));
            CHECK_REC_SANE(&r[i]);
            if (t[i].id) {
                CHECK_EQ_INT(qtbus_token_is_active(t[i]), 0);
                CHECK_EQ_INT(qtbus_token_dispose(t[i]), QTBUS_ESTALE);
            }
        }
        CHECK_WAIT(atomic_load(&sticky_obj) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK); /* the bag is not the bus's */
        qtbus_queue_release(q);
    }

    /* Deliveries still queued when the bus is destroyed are dropped (rule 2), then the
     * release runs once, and each event object is released once. */
    {
        qtbus_bus *bus = qtbus_bus_create();
        CHECK(bus != NULL);
        qtbus_queue *q = qtbus_queue_create("destroy.queued");
        CHECK(q != NULL);
        tu_gate g;
        atomic_init(&g.open, 0);
        atomic_init(&g.entered, 0);
        qtbus_sub_options o = tu_options();
        o.queue = q;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Gate", &o, tu_gate_handler, &g, NULL, NULL), QTBUS_OK);
        tu_rec r;
        tu_rec_init(&r);
        CHECK_EQ_INT(tu_sub_rec(bus, "Queued", &o, &r, NULL), QTBUS_OK);
        qtbus_event_desc dg = tu_event("Gate", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &dg), 1);
        CHECK_WAIT(atomic_load(&g.entered) == 1, TU_WAIT_MS);
        enum { K = 5 };
        atomic_int objs[K];
        for (int i = 0; i < K; i++) {
            atomic_init(&objs[i], 0);
            qtbus_event_desc d = tu_event("Queued", NULL);
            d.object = &objs[i];
            d.object_release = tu_count_release;
            CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        }
        CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
        atomic_store(&g.open, 1);
        CHECK_WAIT(atomic_load(&r.releases) == 1, TU_WAIT_MS);
        for (int i = 0; i < K; i++)
            CHECK_WAIT(atomic_load(&objs[i]) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(atomic_load(&r.calls), 0);
        CHECK_REC_SANE(&r);
        qtbus_queue_release(q);
    }

    /* ECLOSED for calls reaching a bus that is being destroyed; the failed subscribe's
     * release is not called, the failed dispatch's object is not released. */
    {
        closing c;
        memset(&c, 0, sizeof c);
        tu_rec_init(&c.late);
        atomic_init(&c.late_object, 0);
        c.bus = qtbus_bus_create();
        CHECK(c.bus != NULL);
        CHECK_EQ_INT(qtbus_subscribe(c.bus, "Closing", NULL, nop_handler, &c, closing_release, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(c.bus), QTBUS_OK);
        CHECK_EQ_INT(c.ran, 1);
        CHECK_EQ_INT(c.sub_rc, QTBUS_ECLOSED);
        CHECK_EQ_INT(c.dispatch_rc, QTBUS_ECLOSED);
        CHECK_EQ_INT(c.post_rc, QTBUS_ECLOSED);
        CHECK_EQ_INT(c.main_rc, QTBUS_ECLOSED);
        CHECK_EQ_INT(c.count_rc, QTBUS_ECLOSED);
        CHECK_EQ_INT(c.clear_rc, QTBUS_ECLOSED);
        CHECK_EQ_INT(c.json_rc, QTBUS_ECLOSED);
        CHECK_EQ_INT(atomic_load(&c.late.releases), 0);
        CHECK_EQ_INT(atomic_load(&c.late_object), 0);
        CHECK_EQ_INT(qtbus_main_drain(), 0);
    }

    /* Isolated buses: same type on two buses and the shared one; each dispatch reaches
     * only its own bus; sticky events and lost events stay on their bus; destroying one
     * leaves the other working. */
    {
        qtbus_bus *x = qtbus_bus_create();
        qtbus_bus *y = qtbus_bus_create();
        CHECK(x != NULL && y != NULL && x != y);
        tu_rec rx, ry, rs, lx, ly;
        tu_rec_init(&rx);
        tu_rec_init(&ry);
        tu_rec_init(&rs);
        tu_rec_init(&lx);
        tu_rec_init(&ly);
        qtbus_token ts;
        CHECK_EQ_INT(tu_sub_rec(x, "Iso", NULL, &rx, NULL), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(y, "Iso", NULL, &ry, NULL), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(qtbus_shared(), "Iso", NULL, &rs, &ts), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(x, QTBUS_NO_SUBSCRIBER_TYPE, NULL, &lx, NULL), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(y, QTBUS_NO_SUBSCRIBER_TYPE, NULL, &ly, NULL), QTBUS_OK);
        qtbus_event_desc d = tu_event("Iso", NULL);
        CHECK_EQ_INT(qtbus_dispatch(x, &d), 1);
        CHECK_EQ_INT(atomic_load(&rx.calls), 1);
        CHECK_EQ_INT(atomic_load(&ry.calls), 0);
        CHECK_EQ_INT(atomic_load(&rs.calls), 0);
        CHECK_EQ_INT(qtbus_subscriber_count(y, "Iso", NULL), 1);
        d = tu_event("OnlyOnX", NULL);
        qtbus_dispatch(x, &d);
        CHECK_EQ_INT(atomic_load(&lx.calls), 1);
        CHECK_EQ_INT(atomic_load(&ly.calls), 0);
        d = tu_event("StickyX", NULL);
        d.flags = QTBUS_EVENT_STICKY;
        qtbus_dispatch(x, &d);
        CHECK_EQ_INT(qtbus_sticky_clear(y, "StickyX", NULL), 0);
        CHECK_EQ_INT(qtbus_bus_destroy(x), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&rx.releases), 1);
        CHECK_EQ_INT(atomic_load(&lx.releases), 1);
        d = tu_event("Iso", NULL);
        CHECK_EQ_INT(qtbus_dispatch(y, &d), 1);
        CHECK_EQ_INT(qtbus_dispatch(qtbus_shared(), &d), 1);
        CHECK_EQ_INT(atomic_load(&ry.calls), 1);
        CHECK_EQ_INT(atomic_load(&rs.calls), 1);
        CHECK_EQ_INT(atomic_load(&ry.releases), 0);
        CHECK_EQ_INT(qtbus_bus_destroy(y), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&ry.releases), 1);
        CHECK_EQ_INT(atomic_load(&ly.releases), 1);
        CHECK_EQ_INT(qtbus_token_is_active(ts), 1);
        CHECK_EQ_INT(qtbus_token_dispose(ts), QTBUS_OK);
    }

    /* Destroy while other threads are inside dispatches on the bus. */
    for (int round = 0; round < ROUNDS; round++)
        destroy_race_round(round);

    /* Many create/destroy cycles: nothing leaks into the next bus. */
    for (int i = 0; i < 200; i++) {
        qtbus_bus *b = qtbus_bus_create();
        CHECK(b != NULL);
        tu_rec r;
        tu_rec_init(&r);
        CHECK_EQ_INT(qtbus_subscriber_count(b, "Cycle", NULL), 0);
        CHECK_EQ_INT(tu_sub_rec(b, "Cycle", NULL, &r, NULL), QTBUS_OK);
        qtbus_event_desc d = tu_event("Cycle", NULL);
        d.flags = QTBUS_EVENT_STICKY;
        CHECK_EQ_INT(qtbus_dispatch(b, &d), 1);
        CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
    }

    /* Destroy disposes every command and source of the bus, however many (the fuzzer
     * found that disposing them while walking the bus's list skipped every other one,
     * leaving commands that outlived their bus). */
    {
        enum { N = 9 };
        qtbus_bus *b = qtbus_bus_create();
        CHECK(b != NULL);
        qtbus_command commands[N];
        qtbus_source sources[N];
        atomic_int command_releases = 0, source_releases = 0;
        for (int i = 0; i < N; i++) {
            CHECK_EQ_INT(
                qtbus_command_create(b, "Cmd", 0, destroy_execute, &command_releases, count_release, &commands[i]),
                QTBUS_OK);
            CHECK_EQ_INT(qtbus_source_create(b, "Src", 0, destroy_source_start, NULL, &source_releases, count_release,
                                             &sources[i]),
                         QTBUS_OK);
        }
        CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
        for (int i = 0; i < N; i++) {
            CHECK_EQ_INT(qtbus_command_execute(commands[i], NULL, NULL), QTBUS_ESTALE);
            CHECK_EQ_INT(qtbus_command_dispose(commands[i]), QTBUS_ESTALE);
            CHECK_EQ_INT(qtbus_source_dispose(sources[i]), QTBUS_ESTALE);
        }
        CHECK_EQ_INT(atomic_load(&command_releases), N);
        CHECK_EQ_INT(atomic_load(&source_releases), N);
    }

    printf("test_bus_destroy: passed (%d destroy races)\n", ROUNDS);
    return 0;
}
