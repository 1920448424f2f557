/* SPDX-License-Identifier: MIT */
/*
 * test_lifetime_stress: the lifetime rules under random concurrent use.
 *
 * 4 threads, ~2 seconds, on one bus: random subscribe (synchronous or on a created
 * queue, with subtypes, priorities, ONCE, REPLAY, in a bag, without token), dispose,
 * bag dispose, dispatch (synchronous, on the bus queue, sticky; with event objects),
 * sticky_clear; handlers sometimes dispatch again.  Every userdata and every event
 * object is malloc'ed and freed by its release hook, which first poisons its magic.
 *
 * Users rely on, and this counts:
 *   - every successful subscribe's release runs exactly once (after queues are drained
 *     and the bus destroyed, none is missing, none ran twice);
 *   - no handler is called after (or while) its release runs -- the handler checks the
 *     magic, and under AddressSanitizer a late call is a use after free;
 *   - a ONCE handler runs at most once;
 *   - every event object of a successful dispatch is released exactly once;
 *   - dispose returns OK, or ESTALE only for a subscription that may already be gone
 *     (ONCE, or in a bag that was disposed).
 */
#include "test_util.h"

#define THREADS 4
#define DURATION_MS 2000
#define MAX_SUBS (1 << 20)
#define MAX_OBJS (1 << 21)
#define TOKENS_PER_THREAD 32
#define MAX_UNOWNED 64 /* subscriptions without token or bag, living until destroy */

#define MAGIC_LIVE 0x1170BEEF5EEDull
#define MAGIC_DEAD 0xDEADDEADDEADDEADull

static qtbus_bus *bus;
static qtbus_queue *queues[2];
static const char *const types[] = {"S0", "S1", "S2"};
static const char *const subtype_names[] = {"a", "b", "c"};

/* ---- per subscription ---- */
typedef struct userdata {
    uint64_t pad[2]; /* the allocator reuses the first words of freed memory */
    uint64_t magic;
    uint32_t id;
} userdata;

static atomic_int sub_next;
static atomic_int subscribed; /* successful subscribes */
static atomic_int released_total;
static atomic_int unowned;
static atomic_uchar sub_ok[MAX_SUBS];
static atomic_uchar sub_once[MAX_SUBS];
static atomic_int sub_released[MAX_SUBS];
static atomic_int sub_running[MAX_SUBS];
static atomic_int sub_calls[MAX_SUBS];

/* ---- per event object ---- */
typedef struct object {
    uint64_t pad[2];
    uint64_t magic;
    uint32_t id;
} object;

static atomic_int obj_next;
static atomic_int obj_owned_total; /* objects handed to a successful dispatch */
static atomic_int obj_released_total;
static atomic_uchar obj_owned[MAX_OBJS];
static atomic_int obj_released[MAX_OBJS];

/* ---- violations (must all stay 0) ---- */
static atomic_int v_bad_magic; /* handler saw a released (or garbage) userdata */
static atomic_int v_call_after_release;
static atomic_int v_release_while_running;
static atomic_int v_double_release;
static atomic_int v_once_twice;
static atomic_int v_object_bad;
static atomic_int v_unexpected_rc;

/* A call returned something it must not: count it, and say which (first few). */
static void unexpected(const char *call, int rc)
{
    if (atomic_fetch_add(&v_unexpected_rc, 1) < 10)
        fprintf(stderr, "unexpected result of %s: %d %s\n", call, rc, tu_status_name(rc));
}

static atomic_int nest_allowed = 1; /* handlers may call into the bus */
static atomic_int nest_inside;      /* handlers currently allowed to */
static atomic_long handler_calls;
static atomic_long dispatches;
static _Thread_local int nesting;

static void handler(const qtbus_event *ev, void *p)
{
    userdata *u = (userdata *)p;
    if (u->magic != MAGIC_LIVE || u->id >= MAX_SUBS) {
        atomic_fetch_add(&v_bad_magic, 1);
        return;
    }
    uint32_t id = u->id;
    atomic_fetch_add(&sub_running[id], 1);
    if (atomic_load(&sub_released[id]) != 0) atomic_fetch_add(&v_call_after_release, 1);
    int calls = atomic_fetch_add(&sub_calls[id], 1) + 1;
    if (calls > 1 && atomic_load(&sub_once[id])) atomic_fetch_add(&v_once_twice, 1);
    atomic_fetch_add(&handler_calls, 1);

    /* The event object, if any, is alive during the delivery. */
    object *o = (object *)qtbus_event_object(ev);
    if (o && o->magic != MAGIC_LIVE) atomic_fetch_add(&v_object_bad, 1);

    /* Sometimes dispatch again from inside the handler (re-entrancy, depth 1).  Queued
     * handlers may still run while main destroys the bus, and the bus pointer must not
     * be used once destroy returned: main closes `nest_allowed` and waits for
     * `nest_inside` to drain before destroying (both seq_cst, Dekker-style). */
    if (nesting == 0 && (calls % 16) == 3) {
        atomic_fetch_add(&nest_inside, 1);
        if (atomic_load(&nest_allowed)) {
            nesting++;
            qtbus_event_desc d = tu_event(types[id % 3], NULL);
            int rc = qtbus_dispatch(bus, &d);
            if (rc < 0) unexpected("nested qtbus_dispatch", rc);
            nesting--;
        }
        atomic_fetch_sub(&nest_inside, 1);
    }
    if (u->magic != MAGIC_LIVE) atomic_fetch_add(&v_bad_magic, 1);
    atomic_fetch_sub(&sub_running[id], 1);
}

static void release(void *p)
{
    userdata *u = (userdata *)p;
    if (u->magic != MAGIC_LIVE || u->id >= MAX_SUBS) {
        atomic_fetch_add(&v_double_release, 1);
        return;
    }
    uint32_t id = u->id;
    if (atomic_load(&sub_running[id]) != 0) atomic_fetch_add(&v_release_while_running, 1);
    if (atomic_fetch_add(&sub_released[id], 1) != 0) atomic_fetch_add(&v_double_release, 1);
    atomic_fetch_add(&released_total, 1);
    u->magic = MAGIC_DEAD;
    free(u);
}

static void object_release(void *p)
{
    object *o = (object *)p;
    if (o->magic != MAGIC_LIVE || o->id >= MAX_OBJS) {
        atomic_fetch_add(&v_object_bad, 1);
        return;
    }
    if (atomic_fetch_add(&obj_released[o->id], 1) != 0) atomic_fetch_add(&v_object_bad, 1);
    atomic_fetch_add(&obj_released_total, 1);
    o->magic = MAGIC_DEAD;
    free(o);
}

/* ---- the workers ---- */
typedef struct held {
    qtbus_token token;
    int may_be_stale; /* ONCE, or in a bag */
} held;

typedef struct worker_ctx {
    int64_t end_ms;
} worker_ctx;

/* Builds a random event; with an object half of the time (NULL when out of ids). */
static qtbus_event_desc random_event(uint64_t *rng, object **obj_out, uint32_t flags)
{
    qtbus_event_desc d = tu_event(types[tu_rand(rng) % 3], NULL);
    uint64_t r = tu_rand(rng);
    if (r % 3) d.subtype = subtype_names[(r / 3) % 3];
    d.flags = flags;
    static const char payload[] = "payload";
    d.data = payload;
    d.size = sizeof payload;
    *obj_out = NULL;
    if (tu_rand(rng) % 2) {
        int id = atomic_fetch_add(&obj_next, 1);
        if (id < MAX_OBJS) {
            object *o = (object *)calloc(1, sizeof *o);
            CHECK(o != NULL);
            o->magic = MAGIC_LIVE;
            o->id = (uint32_t)id;
            d.object = o;
            d.object_release = object_release;
            *obj_out = o;
        }
    }
    return d;
}

/* Accounts for one dispatch.  `obj_id` was read before the call: once a dispatch
 * succeeded the object belongs to the library and may already be freed. */
static void dispatched(object *o, int obj_id, int rc, int expect_ok_only)
{
    int ok = expect_ok_only ? rc == QTBUS_OK : rc >= 0;
    if (!ok) {
        unexpected(expect_ok_only ? "qtbus_dispatch_on_bus_queue" : "qtbus_dispatch", rc);
        if (o) free(o); /* a failed dispatch took no ownership */
        return;
    }
    if (o) {
        atomic_store(&obj_owned[obj_id], 1);
        atomic_fetch_add(&obj_owned_total, 1);
    }
    atomic_fetch_add(&dispatches, 1);
}

static void worker(int index, void *p)
{
    worker_ctx *ctx = (worker_ctx *)p;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)(index + 1);
    held tokens[TOKENS_PER_THREAD];
    int ntok = 0;
    qtbus_bag bag;
    CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);

    while (tu_now_ms() < ctx->end_ms) {
        int op = (int)(tu_rand(&rng) % 100);
        if (op < 30) {
            /* subscribe */
            if (ntok == TOKENS_PER_THREAD) {
                int k = (int)(tu_rand(&rng) % (uint64_t)ntok);
                int rc = qtbus_token_dispose(tokens[k].token);
                if (!(rc == QTBUS_OK || (rc == QTBUS_ESTALE && tokens[k].may_be_stale)))
                    unexpected("qtbus_token_dispose", rc);
                tokens[k] = tokens[--ntok];
            }
            int id = atomic_fetch_add(&sub_next, 1);
            if (id >= MAX_SUBS) continue;
            uint64_t r = tu_rand(&rng);
            qtbus_sub_options o = tu_options();
            const char *subs[2];
            if (r % 3 == 1) {
                subs[0] = subtype_names[(r >> 8) % 3];
                o.subtypes = subs;
                o.subtype_count = 1;
            } else if (r % 3 == 2) {
                subs[0] = "a";
                subs[1] = "b";
                o.subtypes = subs;
                o.subtype_count = 2;
            }
            if ((r >> 12) % 4 == 0) o.queue = queues[(r >> 14) % 2];
            o.priority = (int32_t)((r >> 16) % 5) - 2;
            if ((r >> 20) % 8 == 0) o.flags |= QTBUS_SUB_ONCE;
            if ((r >> 24) % 8 == 0) o.flags |= QTBUS_SUB_REPLAY;
            int in_bag = (r >> 28) % 6 == 0;
            if (in_bag) o.bag = bag;
            int want_token = !in_bag || (r >> 32) % 2;
            if (!in_bag && (r >> 34) % 20 == 0 && atomic_fetch_add(&unowned, 1) < MAX_UNOWNED)
                want_token = 0; /* lives until the bus is destroyed */

            userdata *u = (userdata *)calloc(1, sizeof *u);
            CHECK(u != NULL);
            u->magic = MAGIC_LIVE;
            u->id = (uint32_t)id;
            atomic_store(&sub_once[id], (o.flags & QTBUS_SUB_ONCE) != 0);
            qtbus_token t = {0};
            int rc = qtbus_subscribe(bus, types[(r >> 36) % 3], &o, handler, u, release, want_token ? &t : NULL);
            if (rc != QTBUS_OK) {
                unexpected("qtbus_subscribe", rc);
                free(u);
                continue;
            }
            atomic_store(&sub_ok[id], 1);
            atomic_fetch_add(&subscribed, 1);
            if (want_token) {
                tokens[ntok].token = t;
                tokens[ntok].may_be_stale = in_bag || (o.flags & QTBUS_SUB_ONCE);
                ntok++;
            }
        } else if (op < 45) {
            /* dispose */
            if (ntok == 0) continue;
            int k = (int)(tu_rand(&rng) % (uint64_t)ntok);
            int rc = qtbus_token_dispose(tokens[k].token);
            if (!(rc == QTBUS_OK || (rc == QTBUS_ESTALE && tokens[k].may_be_stale)))
                unexpected("qtbus_token_dispose", rc);
            tokens[k] = tokens[--ntok];
        } else if (op < 80) {
            object *obj;
            qtbus_event_desc d = random_event(&rng, &obj, 0);
            int obj_id = obj ? (int)obj->id : -1;
            dispatched(obj, obj_id, qtbus_dispatch(bus, &d), 0);
        } else if (op < 88) {
            object *obj;
            qtbus_event_desc d = random_event(&rng, &obj, 0);
            int obj_id = obj ? (int)obj->id : -1;
            dispatched(obj, obj_id, qtbus_dispatch_on_bus_queue(bus, &d), 1);
        } else if (op < 94) {
            object *obj;
            qtbus_event_desc d = random_event(&rng, &obj, QTBUS_EVENT_STICKY);
            int obj_id = obj ? (int)obj->id : -1;
            dispatched(obj, obj_id, qtbus_dispatch(bus, &d), 0);
        } else if (op < 97) {
            int rc = qtbus_bag_dispose(bag);
            if (rc != QTBUS_OK) unexpected("qtbus_bag_dispose", rc);
            CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
        } else {
            int rc = qtbus_sticky_clear(bus, types[tu_rand(&rng) % 3], tu_rand(&rng) % 2 ? NULL : "a");
            if (rc < 0) unexpected("qtbus_sticky_clear", rc);
        }
    }
    for (int k = 0; k < ntok; k++) {
        int rc = qtbus_token_dispose(tokens[k].token);
        if (!(rc == QTBUS_OK || (rc == QTBUS_ESTALE && tokens[k].may_be_stale))) unexpected("qtbus_token_dispose", rc);
    }
    int rc = qtbus_bag_dispose(bag);
    if (rc != QTBUS_OK) unexpected("final qtbus_bag_dispose", rc);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    queues[0] = qtbus_queue_create("stress.q0");
    queues[1] = qtbus_queue_create("stress.q1");
    CHECK(queues[0] != NULL && queues[1] != NULL);

    worker_ctx ctx;
    ctx.end_ms = tu_now_ms() + DURATION_MS;
    tu_run_threads(THREADS, worker, &ctx);

    /* No handler may call into the bus from here on (see handler()). */
    atomic_store(&nest_allowed, 0);
    CHECK_WAIT(atomic_load(&nest_inside) == 0, TU_WAIT_MS);

    /* Give back the queues (pending work still runs) and destroy the bus: it disposes
     * the subscriptions made without token, drops sticky events and bus-queue posts. */
    qtbus_queue_release(queues[0]);
    qtbus_queue_release(queues[1]);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);

    /* Queued deliveries finish or are dropped; then every release has run. */
    CHECK_WAIT(atomic_load(&released_total) == atomic_load(&subscribed), TU_WAIT_MS * 2);
    CHECK_WAIT(atomic_load(&obj_released_total) == atomic_load(&obj_owned_total), TU_WAIT_MS * 2);

    int subs = atomic_load(&sub_next);
    if (subs > MAX_SUBS) subs = MAX_SUBS;
    int missing = 0, twice = 0;
    for (int i = 0; i < subs; i++) {
        int rel = atomic_load(&sub_released[i]);
        if (atomic_load(&sub_ok[i])) {
            if (rel == 0) missing++;
            if (rel > 1) twice++;
        } else if (rel != 0) {
            twice++;
        }
    }
    int objs = atomic_load(&obj_next);
    if (objs > MAX_OBJS) objs = MAX_OBJS;
    int obj_missing = 0, obj_twice = 0;
    for (int i = 0; i < objs; i++) {
        int rel = atomic_load(&obj_released[i]);
        if (atomic_load(&obj_owned[i]) && rel == 0) obj_missing++;
        if (rel > 1 || (!atomic_load(&obj_owned[i]) && rel != 0)) obj_twice++;
    }

    printf("test_lifetime_stress: %d subscriptions, %ld dispatches, %ld handler calls, "
           "%d objects\n",
           atomic_load(&subscribed), atomic_load(&dispatches), atomic_load(&handler_calls),
           atomic_load(&obj_owned_total));
    printf("  releases missing %d, extra %d; objects missing %d, extra %d\n", missing, twice, obj_missing, obj_twice);
    printf("  bad magic %d, call after release %d, release while running %d, double release %d,"
           " ONCE twice %d, bad object %d, unexpected rc %d\n",
           atomic_load(&v_bad_magic), atomic_load(&v_call_after_release), atomic_load(&v_release_while_running),
           atomic_load(&v_double_release), atomic_load(&v_once_twice), atomic_load(&v_object_bad),
           atomic_load(&v_unexpected_rc));

    CHECK(atomic_load(&subscribed) > 100);
    CHECK(atomic_load(&dispatches) > 100);
    CHECK_EQ_INT(missing, 0);
    CHECK_EQ_INT(twice, 0);
    CHECK_EQ_INT(obj_missing, 0);
    CHECK_EQ_INT(obj_twice, 0);
    CHECK_EQ_INT(atomic_load(&v_bad_magic), 0);
    CHECK_EQ_INT(atomic_load(&v_call_after_release), 0);
    CHECK_EQ_INT(atomic_load(&v_release_while_running), 0);
    CHECK_EQ_INT(atomic_load(&v_double_release), 0);
    CHECK_EQ_INT(atomic_load(&v_once_twice), 0);
    CHECK_EQ_INT(atomic_load(&v_object_bad), 0);
    CHECK_EQ_INT(atomic_load(&v_unexpected_rc), 0);
    return 0;
}
