/* SPDX-License-Identifier: MIT */
/*
 * test_token_block: qtbus_token_block / qtbus_token_unblock.
 *
 * Users rely on: blocks nesting as GLib's (blocked while blocked more times than
 * unblocked, an unblock too many QTBUS_EINVAL, at most QTBUS_MAX_BLOCKS); stale and
 * disposed tokens QTBUS_ESTALE; a blocked subscription left out of every dispatch made
 * while it is blocked (not called, not counted, no delivery queued), by the cached
 * handler array, the subtype walk and the pattern walk alike, and reached again in its
 * place once unblocked; deliveries queued (and a replay) before the block still
 * running; an event whose subscriptions are all blocked becoming a
 * QTNoSubscriberEvent; a blocked token active, counted and disposable, its release
 * running once; a handler blocking its own token; a blocked ONCE subscription not
 * firing until unblocked, and a block racing a dispatch of it giving exactly one
 * outcome; typed signal connections blocked alike; and, with threads dispatching in a
 * loop while another blocks and unblocks, no handler call and no queued delivery from
 * a dispatch that began after the block returned.
 */
#include "test_util.h"

static qtbus_bus *bus;

static int dispatch(const char *type, const char *subtype)
{
    qtbus_event_desc d = tu_event(type, subtype);
    return qtbus_dispatch(bus, &d);
}

/* ---- a log of which subscription was called, in order ---- */
#define LOG_MAX 64
static char log_text[LOG_MAX];
static atomic_int log_count;

static void logger(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    int i = atomic_fetch_add(&log_count, 1);
    CHECK(i < LOG_MAX - 1);
    log_text[i] = *(const char *)userdata;
    log_text[i + 1] = '\0';
}

static void log_reset(void)
{
    atomic_store(&log_count, 0);
    log_text[0] = '\0';
}

static qtbus_token sub_logger(const char *type, const char *subtype, const char *name)
{
    qtbus_sub_options o = tu_options();
    o.subtypes = &subtype;
    o.subtype_count = subtype ? 1 : 0;
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(bus, type, &o, logger, (void *)name, NULL, &t), QTBUS_OK);
    return t;
}

static void nesting_and_statuses(void)
{
    tu_rec r;
    tu_rec_init(&r);
    qtbus_token t;
    CHECK_EQ_INT(tu_sub_rec(bus, "Nest", NULL, &r, &t), QTBUS_OK);

    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Nest", NULL), 0);
    CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Nest", NULL), 0); /* still blocked once */
    /* Live all along: active, counted. */
    CHECK_EQ_INT(qtbus_token_is_active(t), 1);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Nest", NULL), 1);
    CHECK_EQ_INT(atomic_load(&r.calls), 0);
    CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Nest", NULL), 1);
    CHECK_EQ_INT(atomic_load(&r.calls), 1);

    /* An unblock too many changes nothing and says why. */
    CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "qtbus_token_unblock") != NULL);
    CHECK(strstr(qtbus_errmsg(), "not blocked") != NULL);
    CHECK_EQ_INT(dispatch("Nest", NULL), 1);

    /* The limit: QTBUS_MAX_BLOCKS blocks, one more refused, then as many unblocks. */
    for (int i = 0; i < QTBUS_MAX_BLOCKS; i++)
        CHECK_EQ_INT(qtbus_token_block(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "QTBUS_MAX_BLOCKS") != NULL);
    CHECK_EQ_INT(dispatch("Nest", NULL), 0);
    for (int i = 0; i < QTBUS_MAX_BLOCKS - 1; i++)
        CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Nest", NULL), 0);
    CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_EINVAL);
    CHECK_EQ_INT(dispatch("Nest", NULL), 1);
    CHECK_EQ_INT(atomic_load(&r.calls), 3);

    /* Stale tokens: none, forged, another generation of this one. */
    CHECK_EQ_INT(qtbus_token_block((qtbus_token){0}), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_token_unblock((qtbus_token){0}), QTBUS_ESTALE);
    CHECK(strstr(qtbus_errmsg(), "qtbus_token_unblock") != NULL);
    CHECK_EQ_INT(qtbus_token_block((qtbus_token){0xFFFFFFFFull}), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_token_block((qtbus_token){t.id + (1ull << 32)}), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_token_unblock((qtbus_token){t.id + (1ull << 32)}), QTBUS_ESTALE);

    /* A blocked token disposes with no unblock first; then it is stale, not blocked. */
    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&r.releases), 1);
    CHECK_EQ_INT(qtbus_token_is_active(t), 0);
    CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_ESTALE);
    CHECK(strstr(qtbus_errmsg(), "qtbus_token_block") != NULL);
    CHECK_REC_SANE(&r);

    /* The record is reused with its count at 0: a new subscription is not blocked. */
    tu_rec r2;
    tu_rec_init(&r2);
    qtbus_token t2;
    CHECK_EQ_INT(tu_sub_rec(bus, "Nest", NULL, &r2, &t2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_unblock(t2), QTBUS_EINVAL);
    CHECK_EQ_INT(dispatch("Nest", NULL), 1);
    CHECK_EQ_INT(qtbus_token_dispose(t2), QTBUS_OK);
}

/* Left out where it stands, reached again in its place: by the handler array (a whole
 * list of direct subscriptions, dispatched often enough to have one), and by the
 * merge of a subtype list with the whole list. */
static void skipped_in_place(void)
{
    qtbus_token a = sub_logger("Arr", NULL, "a"), b = sub_logger("Arr", NULL, "b");
    qtbus_token c = sub_logger("Arr", NULL, "c"), d = sub_logger("Arr", NULL, "d");
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(dispatch("Arr", NULL), 4);
    log_reset();
    CHECK_EQ_INT(qtbus_token_block(b), QTBUS_OK);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(dispatch("Arr", NULL), 3);
    CHECK_EQ_STR(log_text, "acdacdacd");
    CHECK_EQ_INT(qtbus_token_block(d), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_unblock(b), QTBUS_OK);
    log_reset();
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(dispatch("Arr", NULL), 3);
    CHECK_EQ_STR(log_text, "abcabcabc");
    CHECK_EQ_INT(qtbus_token_unblock(d), QTBUS_OK);
    log_reset();
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(dispatch("Arr", NULL), 4);
    CHECK_EQ_STR(log_text, "abcdabcdabcd");
    qtbus_token all[] = {a, b, c, d};
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(qtbus_token_dispose(all[i]), QTBUS_OK);

    /* Subtype-specific before whole-type at equal priority; a subscription to two
     * subtypes is blocked in both lists. */
    qtbus_token s = sub_logger("Sub", "x", "s"), w = sub_logger("Sub", NULL, "w");
    const char *two[] = {"x", "y"};
    qtbus_sub_options o = tu_options();
    o.subtypes = two;
    o.subtype_count = 2;
    qtbus_token m;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Sub", &o, logger, (void *)"m", NULL, &m), QTBUS_OK);
    log_reset();
    CHECK_EQ_INT(dispatch("Sub", "x"), 3);
    CHECK_EQ_STR(log_text, "smw");
    CHECK_EQ_INT(qtbus_token_block(s), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_block(m), QTBUS_OK);
    log_reset();
    CHECK_EQ_INT(dispatch("Sub", "x"), 1);
    CHECK_EQ_INT(dispatch("Sub", "y"), 1);
    CHECK_EQ_STR(log_text, "ww");
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Sub", "x"), 3);
    CHECK_EQ_INT(qtbus_token_unblock(s), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_unblock(m), QTBUS_OK);
    log_reset();
    CHECK_EQ_INT(dispatch("Sub", "y"), 2);
    CHECK_EQ_STR(log_text, "mw");
    qtbus_token subs[] = {s, w, m};
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(qtbus_token_dispose(subs[i]), QTBUS_OK);

    /* Pattern subscriptions alike. */
    qtbus_sub_options po = tu_options();
    po.flags = QTBUS_SUB_PATTERN;
    qtbus_token p, lit = sub_logger("Order.new", NULL, "l");
    CHECK_EQ_INT(qtbus_subscribe(bus, "Order.*", &po, logger, (void *)"p", NULL, &p), QTBUS_OK);
    log_reset();
    CHECK_EQ_INT(dispatch("Order.new", NULL), 2);
    CHECK_EQ_INT(qtbus_token_block(p), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Order.new", NULL), 1);
    CHECK_EQ_INT(dispatch("Order.old", NULL), 0);
    CHECK_EQ_INT(qtbus_token_is_active(p), 1);
    CHECK_EQ_INT(qtbus_token_unblock(p), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Order.old", NULL), 1);
    CHECK_EQ_STR(log_text, "lplp");
    CHECK_EQ_INT(qtbus_token_dispose(p), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(lit), QTBUS_OK);
}

static void on_numbers(int32_t a, const char *s, void *userdata)
{
    (void)a;
    (void)s;
    atomic_fetch_add((atomic_int *)userdata, 1);
}

static void typed_signal(void)
{
    static const qtbus_arg args[] = {QTBUS_ARG_INT32, QTBUS_ARG_STRING};
    CHECK_EQ_INT(qtbus_signal_define(bus, "Typed", args, 2), QTBUS_OK);
    atomic_int calls;
    atomic_init(&calls, 0);
    qtbus_token t;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Typed", NULL, QTBUS_CALLBACK(on_numbers), &calls, NULL, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Typed", NULL, (int32_t)1, "one"), 1);
    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Typed", NULL, (int32_t)2, "two"), 0);
    CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Typed", NULL, (int32_t)3, "three"), 1);
    CHECK_EQ_INT(atomic_load(&calls), 2);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
}

static qtbus_queue_stats stats_of(qtbus_queue *q)
{
    qtbus_queue_stats s;
    memset(&s, 0, sizeof s);
    CHECK_EQ_INT(qtbus_queue_stats_get(q, &s), QTBUS_OK);
    return s;
}

/* Nothing queued while blocked; what was queued before the block runs, a replay too. */
static void queued(void)
{
    qtbus_queue *q = qtbus_queue_create("block");
    CHECK(q != NULL);
    tu_rec r;
    tu_rec_init(&r);
    qtbus_sub_options o = tu_options();
    o.queue = q;
    qtbus_token t;
    CHECK_EQ_INT(tu_sub_rec(bus, "Q", &o, &r, &t), QTBUS_OK);

    /* Blocked: no delivery queued at all. */
    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_OK);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(dispatch("Q", NULL), 0);
    CHECK_EQ_U64(stats_of(q).pending, 0);
    CHECK_IDLE(bus);
    CHECK_EQ_U64(stats_of(q).delivered, 0);
    CHECK_EQ_INT(atomic_load(&r.calls), 0);
    CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_OK);

    /* Queued behind a held queue, then blocked: those three still run, the two
     * dispatched while blocked are not queued. */
    tu_gate gate;
    atomic_init(&gate.open, 0);
    atomic_init(&gate.entered, 0);
    qtbus_token hold = tu_sub_on_queue(bus, q, "Hold", tu_gate_handler, &gate);
    CHECK_EQ_INT(dispatch("Hold", NULL), 1);
    CHECK_WAIT(atomic_load(&gate.entered) == 1, TU_WAIT_MS);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(dispatch("Q", NULL), 1);
    CHECK_EQ_U64(stats_of(q).pending, 3);
    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_OK);
    for (int i = 0; i < 2; i++)
        CHECK_EQ_INT(dispatch("Q", NULL), 0);
    CHECK_EQ_U64(stats_of(q).pending, 3);
    atomic_store(&gate.open, 1);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&r.calls), 3);
    CHECK_EQ_U64(stats_of(q).delivered, 4); /* the gate's call and those three */

    /* A replay queued before the block runs. */
    atomic_store(&gate.open, 0);
    atomic_store(&gate.entered, 0);
    CHECK_EQ_INT(dispatch("Hold", NULL), 1);
    CHECK_WAIT(atomic_load(&gate.entered) == 1, TU_WAIT_MS);
    qtbus_event_desc sticky = tu_event("Kept", NULL);
    sticky.flags = QTBUS_EVENT_STICKY;
    CHECK_EQ_INT(qtbus_dispatch(bus, &sticky), 0);
    tu_rec rr;
    tu_rec_init(&rr);
    qtbus_sub_options ro = tu_options();
    ro.queue = q;
    ro.flags = QTBUS_SUB_REPLAY;
    qtbus_token replayed;
    CHECK_EQ_INT(tu_sub_rec(bus, "Kept", &ro, &rr, &replayed), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_block(replayed), QTBUS_OK);
    CHECK_EQ_INT(qtbus_dispatch(bus, &sticky), 0); /* live, while blocked: left out */
    atomic_store(&gate.open, 1);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&rr.calls), 1);

    CHECK_EQ_INT(qtbus_token_dispose(replayed), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(hold), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "Kept", NULL), 1);
    qtbus_queue_release(q);
    CHECK_WAIT(atomic_load(&r.releases) == 1 && atomic_load(&rr.releases) == 1, TU_WAIT_MS);
    CHECK_REC_SANE(&r);
    CHECK_REC_SANE(&rr);
}

/* ---- QTNoSubscriberEvent for an event whose subscriptions are all blocked ---- */
static atomic_int lost_calls;
static char lost_subtype[64];

static void lost_handler(const qtbus_event *ev, void *userdata)
{
    (void)userdata;
    atomic_fetch_add(&lost_calls, 1);
    snprintf(lost_subtype, sizeof lost_subtype, "%s", qtbus_event_subtype(ev));
}

static void all_blocked_is_lost(void)
{
    qtbus_token lost;
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, NULL, lost_handler, NULL, NULL, &lost), QTBUS_OK);
    tu_rec r1, r2;
    tu_rec_init(&r1);
    tu_rec_init(&r2);
    qtbus_token t1, t2;
    CHECK_EQ_INT(tu_sub_rec(bus, "Lone", NULL, &r1, &t1), QTBUS_OK);
    CHECK_EQ_INT(tu_sub_rec(bus, "Lone", NULL, &r2, &t2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_block(t1), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Lone", NULL), 1);
    CHECK_EQ_INT(atomic_load(&lost_calls), 0);
    CHECK_EQ_INT(qtbus_token_block(t2), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Lone", NULL), 0);
    CHECK_EQ_INT(atomic_load(&lost_calls), 1);
    CHECK_EQ_STR(lost_subtype, "Lone");
    CHECK_EQ_INT(qtbus_token_unblock(t2), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Lone", NULL), 1);
    CHECK_EQ_INT(atomic_load(&lost_calls), 1);
    /* The catch-all itself can be blocked: then a lost event goes nowhere. */
    CHECK_EQ_INT(qtbus_token_block(t2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_block(lost), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Lone", NULL), 0);
    CHECK_EQ_INT(atomic_load(&lost_calls), 1);
    CHECK_EQ_INT(atomic_load(&r1.calls) + atomic_load(&r2.calls), 2);
    CHECK_EQ_INT(qtbus_token_dispose(lost), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t2), QTBUS_OK);
}

/* ---- a handler that blocks its own token, then dispatches again ---- */
typedef struct self_block {
    qtbus_token token;
    int calls;
    int nested_rc;
} self_block;

static void self_blocker(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    self_block *s = (self_block *)userdata;
    if (++s->calls > 1) return;
    CHECK_EQ_INT(qtbus_token_block(s->token), QTBUS_OK);
    s->nested_rc = dispatch("Self", NULL);
}

static void block_from_own_handler(void)
{
    self_block s = {{0}, 0, -100};
    CHECK_EQ_INT(qtbus_subscribe(bus, "Self", NULL, self_blocker, &s, NULL, &s.token), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Self", NULL), 1); /* the call that blocked counts */
    CHECK_EQ_INT(s.calls, 1);
    CHECK_EQ_INT(s.nested_rc, 0);
    CHECK_EQ_INT(dispatch("Self", NULL), 0);
    CHECK_EQ_INT(qtbus_token_unblock(s.token), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Self", NULL), 1);
    CHECK_EQ_INT(s.calls, 2);
    CHECK_EQ_INT(qtbus_token_dispose(s.token), QTBUS_OK);
}

/* ---- ONCE ---- */
typedef struct once_race {
    qtbus_token token;
    pthread_barrier_t start;
    int dispatched;
    int blocked;
} once_race;

static void once_racer(int index, void *ctx)
{
    once_race *r = (once_race *)ctx;
    pthread_barrier_wait(&r->start);
    if (index == 0)
        r->dispatched = dispatch("OnceRace", NULL);
    else
        r->blocked = qtbus_token_block(r->token);
}

static void once(void)
{
    qtbus_sub_options o = tu_options();
    o.flags = QTBUS_SUB_ONCE;
    tu_rec r;
    tu_rec_init(&r);
    qtbus_token t;
    CHECK_EQ_INT(tu_sub_rec(bus, "Once", &o, &r, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Once", NULL), 0);
    CHECK_EQ_INT(dispatch("Once", NULL), 0);
    CHECK_EQ_INT(qtbus_token_is_active(t), 1);
    CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_OK);
    CHECK_EQ_INT(dispatch("Once", NULL), 1);
    CHECK_EQ_INT(dispatch("Once", NULL), 0);
    CHECK_EQ_INT(atomic_load(&r.calls), 1);
    CHECK_EQ_INT(qtbus_token_is_active(t), 0);
    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_ESTALE);
    CHECK_WAIT(atomic_load(&r.releases) == 1, TU_WAIT_MS);

    /* A block racing a dispatch: exactly one of them wins. */
    int fired = 0, kept = 0;
    for (int round = 0; round < 300; round++) {
        tu_rec rr;
        tu_rec_init(&rr);
        once_race race;
        CHECK_EQ_INT(tu_sub_rec(bus, "OnceRace", &o, &rr, &race.token), QTBUS_OK);
        pthread_barrier_init(&race.start, NULL, 2);
        tu_run_threads(2, once_racer, &race);
        pthread_barrier_destroy(&race.start);
        if (race.blocked == QTBUS_ESTALE) {
            CHECK_EQ_INT(race.dispatched, 1);
            CHECK_EQ_INT(atomic_load(&rr.calls), 1);
            CHECK_EQ_INT(qtbus_token_is_active(race.token), 0);
            fired++;
        } else {
            CHECK_EQ_INT(race.blocked, QTBUS_OK);
            CHECK_EQ_INT(race.dispatched, 0);
            CHECK_EQ_INT(atomic_load(&rr.calls), 0);
            CHECK_EQ_INT(qtbus_token_is_active(race.token), 1);
            CHECK_EQ_INT(qtbus_token_dispose(race.token), QTBUS_OK);
            kept++;
        }
        CHECK_WAIT(atomic_load(&rr.releases) == 1, TU_WAIT_MS);
        CHECK_REC_SANE(&rr);
    }
    CHECK_EQ_INT(fired + kept, 300);
}

/* A blocked subscription of a destroyed bus: disposed with it, released once. */
static void bus_destroyed(void)
{
    qtbus_bus *other = qtbus_bus_create();
    CHECK(other != NULL);
    tu_rec r;
    tu_rec_init(&r);
    qtbus_token t;
    CHECK_EQ_INT(tu_sub_rec(other, "Gone", NULL, &r, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_block(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(other), QTBUS_OK);
    CHECK_WAIT(atomic_load(&r.releases) == 1, TU_WAIT_MS);
    CHECK_EQ_INT(qtbus_token_unblock(t), QTBUS_ESTALE);
}

/* ---- the stress: threads dispatch in a loop, another blocks and unblocks ----
 *
 * `phase` is odd from just after the blocks returned to just before the unblocks
 * start.  A dispatch carries the phase it read before it began.  A blocked handler
 * called by a dispatch that read an odd phase while the phase is still that one was
 * started by a dispatch made after the blocks returned: a violation.  A dispatch that
 * read an odd phase and finds it unchanged when it returns ran wholly inside the
 * blocked time: it must count exactly the subscriptions that are never blocked (so
 * no delivery was queued for the blocked queued one). */
#define STRESS_ROUNDS 1000
#define DISPATCHERS 2

static atomic_int phase;
static atomic_int stop_dispatching;
static atomic_int violations;
static atomic_int wrong_counts;
static atomic_int inside_blocked; /* dispatches wholly inside a blocked time */
static atomic_int blocked_calls;  /* calls of the blocked subscriptions */
static atomic_int dispatches;
static qtbus_token blocked_tokens[3];

static void counting(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
}

static void blocked_handler(const qtbus_event *ev, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    const void *data = qtbus_event_data(ev, &size);
    CHECK_EQ_INT(size, sizeof(int));
    int seen;
    memcpy(&seen, data, sizeof seen);
    if ((seen & 1) && atomic_load(&phase) == seen) atomic_fetch_add(&violations, 1);
    atomic_fetch_add(&blocked_calls, 1);
}

static void stress_dispatcher(int index, void *ctx)
{
    (void)ctx;
    /* Per type and subtype: the subscriptions never blocked. */
    static const char *const types[] = {"Stress", "Stress", "StressArray"};
    static const char *const subtypes[] = {NULL, "x", NULL};
    static const int never_blocked[] = {2, 3, 2};
    int i = index;
    while (!atomic_load(&stop_dispatching)) {
        int k = i++ % 3;
        int seen = atomic_load(&phase);
        qtbus_event_desc d = tu_event(types[k], subtypes[k]);
        d.data = &seen;
        d.size = sizeof seen;
        int rc = qtbus_dispatch(bus, &d);
        atomic_fetch_add(&dispatches, 1);
        if ((seen & 1) && atomic_load(&phase) == seen) {
            atomic_fetch_add(&inside_blocked, 1);
            if (rc != never_blocked[k]) atomic_fetch_add(&wrong_counts, 1);
        }
        /* Not a spin: under valgrind, whose threads take turns, one would starve the
         * blocker and the queue. */
        sched_yield();
    }
}

/* Waits until the dispatchers made `n` more dispatches (each phase sees some, however
 * fast or loaded the machine). */
static void let_dispatch(int n)
{
    int target = atomic_load(&dispatches) + n;
    while (atomic_load(&dispatches) < target)
        sched_yield();
}

static void stress_blocker(int index, void *ctx)
{
    (void)index;
    (void)ctx;
    for (int round = 0; round < STRESS_ROUNDS; round++) {
        for (int i = 0; i < 3; i++)
            CHECK_EQ_INT(qtbus_token_block(blocked_tokens[i]), QTBUS_OK);
        atomic_store(&phase, 2 * round + 1);
        let_dispatch(1 + round % 4);
        atomic_store(&phase, 2 * round + 2);
        for (int i = 0; i < 3; i++)
            CHECK_EQ_INT(qtbus_token_unblock(blocked_tokens[i]), QTBUS_OK);
        let_dispatch(1 + round % 3);
    }
    atomic_store(&stop_dispatching, 1);
}

static void dispatcher_or_blocker(int index, void *ctx)
{
    if (index == DISPATCHERS)
        stress_blocker(index, ctx);
    else
        stress_dispatcher(index, ctx);
}

static void stress(void)
{
    qtbus_queue *q = qtbus_queue_create("block-stress");
    CHECK(q != NULL);
    qtbus_token others[5];
    /* "Stress": a, T (blocked), c on the whole type, Q (blocked, queued), X on "x":
     * listed, as the queued one makes it, not by the array. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "Stress", NULL, counting, NULL, NULL, &others[0]), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Stress", NULL, blocked_handler, NULL, NULL, &blocked_tokens[0]), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Stress", NULL, counting, NULL, NULL, &others[1]), QTBUS_OK);
    qtbus_sub_options qo = tu_options();
    qo.queue = q;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Stress", &qo, blocked_handler, NULL, NULL, &blocked_tokens[1]), QTBUS_OK);
    const char *x = "x";
    qtbus_sub_options xo = tu_options();
    xo.subtypes = &x;
    xo.subtype_count = 1;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Stress", &xo, counting, NULL, NULL, &others[2]), QTBUS_OK);
    /* "StressArray": direct ones only, called by the handler array. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "StressArray", NULL, counting, NULL, NULL, &others[3]), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "StressArray", NULL, blocked_handler, NULL, NULL, &blocked_tokens[2]), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "StressArray", NULL, counting, NULL, NULL, &others[4]), QTBUS_OK);

    tu_run_threads(DISPATCHERS + 1, dispatcher_or_blocker, NULL);
    CHECK_IDLE(bus);
    printf("test_token_block: stress: %d dispatches inside blocked times, %d calls of the blocked outside them\n",
           atomic_load(&inside_blocked), atomic_load(&blocked_calls));
    CHECK_EQ_INT(atomic_load(&violations), 0);
    CHECK_EQ_INT(atomic_load(&wrong_counts), 0);
    CHECK(atomic_load(&inside_blocked) > 0);
    CHECK(atomic_load(&blocked_calls) > 0);
    /* Unblocked at the end: reached again. */
    int unblocked = 0;
    qtbus_event_desc d = tu_event("StressArray", NULL);
    d.data = &unblocked;
    d.size = sizeof unblocked;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 3);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(qtbus_token_dispose(blocked_tokens[i]), QTBUS_OK);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(qtbus_token_dispose(others[i]), QTBUS_OK);
    qtbus_queue_release(q);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    nesting_and_statuses();
    skipped_in_place();
    typed_signal();
    queued();
    all_blocked_is_lost();
    block_from_own_handler();
    once();
    bus_destroyed();
    stress();
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_token_block: ok\n");
    return 0;
}
