/* SPDX-License-Identifier: MIT */
/*
 * test_reentrancy: calling the library from inside a handler (lifetime rule 3).
 *
 * Users rely on: a dispatch made in a handler being delivered at once, depth-first,
 * before the outer dispatch continues (and deep recursion working); a subscription
 * made in a handler not receiving the dispatch in progress (but receiving later ones,
 * including a nested one started after it was made); a subscription disposed in a
 * handler not being called later in the same dispatch; none of it deadlocking.
 */
#include "test_util.h"

static qtbus_bus *bus;

/* A single-threaded log of strings. */
static const char *ev_log[128];
static int ev_len;
static void log_push(const char *s)
{
    CHECK(ev_len < 128);
    ev_log[ev_len++] = s;
}
#define CHECK_LOG(...)                                                                                                 \
    do {                                                                                                               \
        const char *expect_[] = {__VA_ARGS__};                                                                         \
        int n_ = (int)(sizeof expect_ / sizeof expect_[0]);                                                            \
        int ok_ = ev_len == n_;                                                                                        \
        for (int i_ = 0; ok_ && i_ < n_; i_++)                                                                         \
            ok_ = strcmp(ev_log[i_], expect_[i_]) == 0;                                                                \
        if (!ok_) {                                                                                                    \
            fprintf(stderr, "log:");                                                                                   \
            for (int i_ = 0; i_ < ev_len; i_++)                                                                        \
                fprintf(stderr, " %s", ev_log[i_]);                                                                    \
            fprintf(stderr, "\nexpected:");                                                                            \
            for (int i_ = 0; i_ < n_; i_++)                                                                            \
                fprintf(stderr, " %s", expect_[i_]);                                                                   \
            fprintf(stderr, "\n");                                                                                     \
        }                                                                                                              \
        CHECK(ok_);                                                                                                    \
    } while (0)

/* ---- depth-first ---- */
static int nested_rc = -100;
static void a1(const qtbus_event *ev, void *u)
{
    (void)ev;
    (void)u;
    log_push("A1-begin");
    qtbus_event_desc d = tu_event("B", NULL);
    nested_rc = qtbus_dispatch(bus, &d);
    log_push("A1-end");
}
static void a2(const qtbus_event *ev, void *u)
{
    (void)ev;
    (void)u;
    log_push("A2");
}
static void b1(const qtbus_event *ev, void *u)
{
    (void)ev;
    (void)u;
    log_push("B1");
}
static void b2(const qtbus_event *ev, void *u)
{
    (void)ev;
    (void)u;
    log_push("B2");
}

/* ---- deep recursion on one type ---- */
#define DEPTH 50
static int depth;
static int max_depth;
static int recursion_calls;
static int recursion_order_ok = 1;
static void recurse(const qtbus_event *ev, void *u)
{
    (void)u;
    size_t size = 0;
    const int *level = (const int *)qtbus_event_data(ev, &size);
    CHECK_EQ_INT(size, sizeof(int));
    if (*level != depth) recursion_order_ok = 0; /* data of the event being handled */
    recursion_calls++;
    depth++;
    if (depth > max_depth) max_depth = depth;
    if (*level < DEPTH) {
        int next = *level + 1;
        qtbus_event_desc d = tu_event("Rec", NULL);
        d.data = &next;
        d.size = sizeof next;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    }
    depth--;
}

/* ---- subscribe inside a handler ---- */
static tu_rec late_rec[2];
static qtbus_token late_tok[2];
static int late_nested_rc = -100;
static int late_calls_before_nested = -1;
static int late_calls_after_nested = -1;
static void subscriber(const qtbus_event *ev, void *u)
{
    (void)u;
    if (qtbus_event_subtype(ev) != NULL) return; /* the nested dispatch below */
    qtbus_sub_options o = tu_options();
    o.priority = 100; /* would run before us if it joined this dispatch */
    CHECK_EQ_INT(tu_sub_rec(bus, "Sub", &o, &late_rec[0], &late_tok[0]), QTBUS_OK);
    o.priority = -100; /* would run after us */
    CHECK_EQ_INT(tu_sub_rec(bus, "Sub", &o, &late_rec[1], &late_tok[1]), QTBUS_OK);
    late_calls_before_nested = atomic_load(&late_rec[0].calls) + atomic_load(&late_rec[1].calls);
    /* A NEW dispatch, started after the subscriptions exist, reaches them. */
    qtbus_event_desc d = tu_event("Sub", "nested");
    late_nested_rc = qtbus_dispatch(bus, &d);
    late_calls_after_nested = atomic_load(&late_rec[0].calls) + atomic_load(&late_rec[1].calls);
}

/* ---- dispose another subscription inside a handler ---- */
static qtbus_token victim_tok;
static qtbus_token victim_bag_member;
static qtbus_bag victim_bag;
static void killer(const qtbus_event *ev, void *u)
{
    (void)ev;
    (void)u;
    CHECK_EQ_INT(qtbus_token_dispose(victim_tok), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bag_dispose(victim_bag), QTBUS_OK);
}

/* ---- dispose itself, then dispatch the same type again ---- */
static qtbus_token self_tok;
static int self_calls;
static int self_nested_rc = -100;
static void self_killer(const qtbus_event *ev, void *u)
{
    (void)ev;
    (void)u;
    self_calls++;
    CHECK_EQ_INT(qtbus_token_dispose(self_tok), QTBUS_OK);
    qtbus_event_desc d = tu_event("SelfRe", NULL);
    self_nested_rc = qtbus_dispatch(bus, &d); /* must not reach us again */
}

/* ---- subscribe and dispose inside the same handler ---- */
static tu_rec flash_rec;
static void flash(const qtbus_event *ev, void *u)
{
    (void)ev;
    (void)u;
    qtbus_token t;
    CHECK_EQ_INT(tu_sub_rec(bus, "Flash", NULL, &flash_rec, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    qtbus_event_desc d = tu_event("Flash", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0); /* disposed: reaches nobody */
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);

    /* Depth-first: A1 dispatches B; B1 and B2 run inside A1, before A2. */
    {
        qtbus_sub_options o = tu_options();
        qtbus_token t[4];
        o.priority = 1;
        CHECK_EQ_INT(qtbus_subscribe(bus, "A", &o, a1, NULL, NULL, &t[0]), QTBUS_OK);
        o.priority = 0;
        CHECK_EQ_INT(qtbus_subscribe(bus, "A", &o, a2, NULL, NULL, &t[1]), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus, "B", NULL, b1, NULL, NULL, &t[2]), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus, "B", NULL, b2, NULL, NULL, &t[3]), QTBUS_OK);
        qtbus_event_desc d = tu_event("A", NULL);
        ev_len = 0;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
        CHECK_EQ_INT(nested_rc, 2);
        CHECK_LOG("A1-begin", "B1", "B2", "A1-end", "A2");
        for (int i = 0; i < 4; i++)
            CHECK_EQ_INT(qtbus_token_dispose(t[i]), QTBUS_OK);
    }

    /* Recursion: the same type dispatched 50 levels deep. */
    {
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Rec", NULL, recurse, NULL, NULL, &t), QTBUS_OK);
        int zero = 0;
        qtbus_event_desc d = tu_event("Rec", NULL);
        d.data = &zero;
        d.size = sizeof zero;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(recursion_calls, DEPTH + 1);
        CHECK_EQ_INT(max_depth, DEPTH + 1);
        CHECK_EQ_INT(depth, 0);
        CHECK_EQ_INT(recursion_order_ok, 1);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* Subscribe inside a handler: not part of the current dispatch, part of the next
     * (and of a nested dispatch started after it was made). */
    {
        tu_rec_init(&late_rec[0]);
        tu_rec_init(&late_rec[1]);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Sub", NULL, subscriber, NULL, NULL, &t), QTBUS_OK);
        qtbus_event_desc d = tu_event("Sub", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(late_calls_before_nested, 0);
        CHECK_EQ_INT(late_nested_rc, 3);
        CHECK_EQ_INT(late_calls_after_nested, 2);
        /* Back in the outer dispatch: the -100 one still did not get the outer event. */
        CHECK_EQ_INT(atomic_load(&late_rec[0].calls), 1);
        CHECK_EQ_INT(atomic_load(&late_rec[1].calls), 1);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
        CHECK_EQ_INT(atomic_load(&late_rec[0].calls), 2);
        CHECK_EQ_INT(atomic_load(&late_rec[1].calls), 2);
        CHECK_EQ_INT(qtbus_token_dispose(late_tok[0]), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(late_tok[1]), QTBUS_OK);
        CHECK_REC_SANE(&late_rec[0]);
        CHECK_REC_SANE(&late_rec[1]);
    }

    /* Dispose other subscriptions (by token and by bag) inside a handler: those later
     * in the same dispatch are not called; they are released once by the end. */
    {
        tu_rec v1, v2;
        tu_rec_init(&v1);
        tu_rec_init(&v2);
        CHECK_EQ_INT(qtbus_bag_create(&victim_bag), QTBUS_OK);
        qtbus_sub_options o = tu_options();
        qtbus_token tk;
        o.priority = 10;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Kill", &o, killer, NULL, NULL, &tk), QTBUS_OK);
        o.priority = 0;
        CHECK_EQ_INT(tu_sub_rec(bus, "Kill", &o, &v1, &victim_tok), QTBUS_OK);
        o.bag = victim_bag;
        CHECK_EQ_INT(tu_sub_rec(bus, "Kill", &o, &v2, &victim_bag_member), QTBUS_OK);
        qtbus_event_desc d = tu_event("Kill", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(atomic_load(&v1.calls), 0);
        CHECK_EQ_INT(atomic_load(&v2.calls), 0);
        CHECK_EQ_INT(atomic_load(&v1.releases), 1);
        CHECK_EQ_INT(atomic_load(&v2.releases), 1);
        CHECK_EQ_INT(qtbus_token_is_active(victim_bag_member), 0);
        CHECK_EQ_INT(qtbus_token_dispose(tk), QTBUS_OK);
    }

    /* A handler disposes itself then dispatches its own type: not reached again. */
    {
        CHECK_EQ_INT(qtbus_subscribe(bus, "SelfRe", NULL, self_killer, NULL, NULL, &self_tok), QTBUS_OK);
        qtbus_event_desc d = tu_event("SelfRe", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(self_calls, 1);
        CHECK_EQ_INT(self_nested_rc, 0);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(self_calls, 1);
    }

    /* Subscribe + dispose in one handler: never called, released once when the
     * dispatch returns. */
    {
        tu_rec_init(&flash_rec);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, "FlashOuter", NULL, flash, NULL, NULL, &t), QTBUS_OK);
        qtbus_event_desc d = tu_event("FlashOuter", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(atomic_load(&flash_rec.calls), 0);
        CHECK_EQ_INT(atomic_load(&flash_rec.releases), 1);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_reentrancy: passed\n");
    return 0;
}
