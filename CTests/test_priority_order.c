/* SPDX-License-Identifier: MIT */
/*
 * test_priority_order: the order handlers run in, and qtbus_event_stop.
 *
 * Users rely on: higher priority first; at equal priority, subscriptions naming the
 * event's subtype before whole-type ones, each group in subscription order (also after
 * earlier subscriptions were disposed and slots reused); the full int32 range of
 * priorities; a handler ending the delivery with qtbus_event_stop (later handlers,
 * synchronous or queued, do not get it; a nested dispatch's stop ends only that one).
 */
#include "test_util.h"

#include <stdint.h>

/* A log of handler ids, single-threaded. */
static int order_log[64];
static int order_len;
static int stop_at = -1; /* id of the handler that calls qtbus_event_stop */
static int stop_rc = 12345;

typedef struct entry {
    int id;
} entry;

static void log_handler(const qtbus_event *ev, void *userdata)
{
    entry *e = (entry *)userdata;
    CHECK(order_len < 64);
    order_log[order_len++] = e->id;
    if (e->id == stop_at) stop_rc = qtbus_event_stop(ev);
}

static void reset_log(void)
{
    order_len = 0;
    stop_at = -1;
    stop_rc = 12345;
}

#define CHECK_ORDER(...)                                                                                               \
    do {                                                                                                               \
        const int expect_[] = {__VA_ARGS__};                                                                           \
        const int n_ = (int)(sizeof expect_ / sizeof expect_[0]);                                                      \
        int ok_ = order_len == n_;                                                                                     \
        for (int i_ = 0; ok_ && i_ < n_; i_++)                                                                         \
            ok_ = order_log[i_] == expect_[i_];                                                                        \
        if (!ok_) {                                                                                                    \
            fprintf(stderr, "order: got");                                                                             \
            for (int i_ = 0; i_ < order_len; i_++)                                                                     \
                fprintf(stderr, " %d", order_log[i_]);                                                                 \
            fprintf(stderr, ", expected");                                                                             \
            for (int i_ = 0; i_ < n_; i_++)                                                                            \
                fprintf(stderr, " %d", expect_[i_]);                                                                   \
            fprintf(stderr, "\n");                                                                                     \
        }                                                                                                              \
        CHECK(ok_);                                                                                                    \
    } while (0)

static qtbus_token sub(qtbus_bus *bus, const char *type, const char *subtype, int32_t priority, entry *e)
{
    const char *subtypes[1] = {subtype};
    qtbus_sub_options o = tu_options();
    o.priority = priority;
    if (subtype) {
        o.subtypes = subtypes;
        o.subtype_count = 1;
    }
    qtbus_token t = {0};
    CHECK_EQ_INT(qtbus_subscribe(bus, type, &o, log_handler, e, NULL, &t), QTBUS_OK);
    return t;
}

/* Nested stop: the outer handler dispatches an inner event whose first handler stops. */
static qtbus_bus *nested_bus;
static int inner_rc = -100;
static void outer_first(const qtbus_event *ev, void *userdata)
{
    log_handler(ev, userdata);
    qtbus_event_desc d = tu_event("Inner", NULL);
    inner_rc = qtbus_dispatch(nested_bus, &d);
}

/* Queued handler behind a stopper: must never be posted. */
static atomic_int queued_calls;
static atomic_int marker_calls;
static void queued_handler(const qtbus_event *ev, void *userdata)
{
    (void)userdata;
    if (strcmp(qtbus_event_type(ev), "Marker") == 0)
        atomic_fetch_add(&marker_calls, 1);
    else
        atomic_fetch_add(&queued_calls, 1);
}
static void stopper(const qtbus_event *ev, void *userdata)
{
    (void)userdata;
    stop_rc = qtbus_event_stop(ev);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    entry e[16];
    for (int i = 0; i < 16; i++)
        e[i].id = i;

    /* Subscription order:       id  priority  subtype */
    qtbus_token t1 = sub(bus, "T", NULL, 0, &e[1]);
    qtbus_token t2 = sub(bus, "T", NULL, 10, &e[2]);
    qtbus_token t3 = sub(bus, "T", "s", 0, &e[3]);
    qtbus_token t4 = sub(bus, "T", "s", -5, &e[4]);
    qtbus_token t5 = sub(bus, "T", "s", 10, &e[5]);
    qtbus_token t6 = sub(bus, "T", NULL, 0, &e[6]);
    qtbus_token t7 = sub(bus, "T", "s", 0, &e[7]);

    /* With subtype "s": priority 10 (subtype 5, whole 2), priority 0 (subtype 3, 7,
     * whole 1, 6), priority -5 (4). */
    qtbus_event_desc d = tu_event("T", "s");
    reset_log();
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 7);
    CHECK_ORDER(5, 2, 3, 7, 1, 6, 4);

    /* Without subtype: only the whole-type ones. */
    d = tu_event("T", NULL);
    reset_log();
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 3);
    CHECK_ORDER(2, 1, 6);

    /* Another subtype: whole-type ones only. */
    d = tu_event("T", "other");
    reset_log();
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 3);
    CHECK_ORDER(2, 1, 6);

    /* Equal priority after a dispose: a new subscription goes last in its group even if
     * it reuses the disposed one's slot. */
    CHECK_EQ_INT(qtbus_token_dispose(t1), QTBUS_OK);
    qtbus_token t8 = sub(bus, "T", NULL, 0, &e[8]);
    d = tu_event("T", NULL);
    reset_log();
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 3);
    CHECK_ORDER(2, 6, 8);
    CHECK_EQ_INT(qtbus_token_dispose(t3), QTBUS_OK);
    qtbus_token t9 = sub(bus, "T", "s", 0, &e[9]);
    d = tu_event("T", "s");
    reset_log();
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 7);
    CHECK_ORDER(5, 2, 7, 9, 6, 8, 4);

    /* Extreme priorities (a comparator computing a - b would overflow). */
    qtbus_token t10 = sub(bus, "T", NULL, INT32_MIN, &e[10]);
    qtbus_token t11 = sub(bus, "T", NULL, INT32_MAX, &e[11]);
    qtbus_token t12 = sub(bus, "T", "s", INT32_MIN, &e[12]);
    qtbus_token t13 = sub(bus, "T", "s", INT32_MAX, &e[13]);
    reset_log();
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 11);
    CHECK_ORDER(13, 11, 5, 2, 7, 9, 6, 8, 4, 12, 10);

    /* Stop: the handler that stops has run, no later one runs; dispatch returns the
     * number that ran; stop itself returns OK. */
    reset_log();
    stop_at = 7;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 5);
    CHECK_ORDER(13, 11, 5, 2, 7);
    CHECK_EQ_INT(stop_rc, QTBUS_OK);
    reset_log();
    stop_at = 13; /* the very first */
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_ORDER(13);
    CHECK_EQ_INT(stop_rc, QTBUS_OK);
    reset_log();
    stop_at = 10; /* the very last: nothing to skip */
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 11);
    CHECK_EQ_INT(stop_rc, QTBUS_OK);
    /* The stop was for that dispatch only. */
    reset_log();
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 11);
    CHECK_EQ_INT(order_len, 11);

    /* qtbus_event_stop(NULL) is EINVAL. */
    CHECK_EQ_INT(qtbus_event_stop(NULL), QTBUS_EINVAL);

    qtbus_token all[] = {t2, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        CHECK_EQ_INT(qtbus_token_dispose(all[i]), QTBUS_OK);

    /* A stop inside a nested dispatch ends the nested one only. */
    nested_bus = bus;
    qtbus_token o1, o2, i1, i2;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Outer", &(qtbus_sub_options){.priority = 1}, outer_first, &e[1], NULL, &o1),
                 QTBUS_OK);
    o2 = sub(bus, "Outer", NULL, 0, &e[2]);
    i1 = sub(bus, "Inner", NULL, 1, &e[3]);
    i2 = sub(bus, "Inner", NULL, 0, &e[4]);
    reset_log();
    stop_at = 3;
    d = tu_event("Outer", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
    CHECK_ORDER(1, 3, 2);
    CHECK_EQ_INT(inner_rc, 1);
    CHECK_EQ_INT(stop_rc, QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(o1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(o2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(i1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(i2), QTBUS_OK);

    /* A stop also keeps lower-priority queued subscriptions from being posted.  The
     * marker event goes through the same serial queue afterwards: when it arrives,
     * anything posted before it has arrived too (FIFO). */
    qtbus_queue *q = qtbus_queue_create("priority.stop");
    CHECK(q != NULL);
    qtbus_sub_options qo = tu_options();
    qo.queue = q;
    qo.priority = -1;
    qtbus_token tq, tmark, tstop;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Stopped", &qo, queued_handler, NULL, NULL, &tq), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Marker", &qo, queued_handler, NULL, NULL, &tmark), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Stopped", NULL, stopper, NULL, NULL, &tstop), QTBUS_OK);
    stop_rc = 12345;
    d = tu_event("Stopped", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(stop_rc, QTBUS_OK);
    d = tu_event("Marker", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_WAIT(atomic_load(&marker_calls) == 1, TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&queued_calls), 0);
    CHECK_EQ_INT(qtbus_token_dispose(tq), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(tmark), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(tstop), QTBUS_OK);
    qtbus_queue_release(q);

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_priority_order: passed\n");
    return 0;
}
