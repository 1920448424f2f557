/* SPDX-License-Identifier: MIT */
/*
 * test_bags: dispose bags, the C stand-in for QTEventBus's freeWith(object).
 *
 * Users rely on: a bag disposing every token put in it (with qtbus_bag_add or
 * options.bag, with or without a token_out), exactly once each; a token belonging to at
 * most one bag; a disposed bag id being stale; tokens disposed on their own leaving
 * the bag, so disposing the bag later is still fine and releases nothing twice.
 */
#include "test_util.h"

static qtbus_bus *bus;

/* Disposes a bag from inside a handler of one of its subscriptions. */
static qtbus_bag handler_bag;
static int handler_bag_rc = -100;
static void bag_disposing_handler(const qtbus_event *ev, void *userdata)
{
    tu_rec_handler(ev, userdata);
    handler_bag_rc = qtbus_bag_dispose(handler_bag);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    qtbus_event_desc d = tu_event("Bagged", NULL);

    /* Empty bag: created with a non-zero id, disposed once, then stale. */
    {
        qtbus_bag b;
        b.id = 0;
        CHECK_EQ_INT(qtbus_bag_create(&b), QTBUS_OK);
        CHECK(b.id != 0);
        CHECK_EQ_INT(qtbus_bag_dispose(b), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_dispose(b), QTBUS_ESTALE);
    }

    /* bag_add; same bag twice is OK; another bag is EINVAL; dispose releases. */
    {
        qtbus_bag b1, b2;
        CHECK_EQ_INT(qtbus_bag_create(&b1), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_create(&b2), QTBUS_OK);
        CHECK(b1.id != b2.id);
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Bagged", NULL, &r, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(b1, t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(b1, t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(b2, t), QTBUS_EINVAL);
        /* The EINVAL changed nothing: disposing b2 leaves the token alone. */
        CHECK_EQ_INT(qtbus_bag_dispose(b2), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_is_active(t), 1);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(atomic_load(&r.releases), 0);
        /* The token was added twice but is released once. */
        CHECK_EQ_INT(qtbus_bag_dispose(b1), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(atomic_load(&r.calls), 1);
        /* Stale bag: add and dispose are ESTALE. */
        tu_rec r2;
        tu_rec_init(&r2);
        qtbus_token t2;
        CHECK_EQ_INT(tu_sub_rec(bus, "Bagged", NULL, &r2, &t2), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(b1, t2), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_bag_dispose(b1), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_token_is_active(t2), 1);
        /* Stale token into a live bag: ESTALE. */
        qtbus_bag b3;
        CHECK_EQ_INT(qtbus_bag_create(&b3), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(b3, t), QTBUS_ESTALE);
        qtbus_token none = {0};
        CHECK_EQ_INT(qtbus_bag_add(b3, none), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_bag_dispose(b3), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t2), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r2.releases), 1);
        CHECK_REC_SANE(&r);
        CHECK_REC_SANE(&r2);
    }

    /* options.bag: the token is in that bag (same bag OK, another EINVAL), with or
     * without token_out; the bag disposes both. */
    {
        qtbus_bag b, other;
        CHECK_EQ_INT(qtbus_bag_create(&b), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_create(&other), QTBUS_OK);
        qtbus_sub_options o = tu_options();
        o.bag = b;
        tu_rec with_token, without_token;
        tu_rec_init(&with_token);
        tu_rec_init(&without_token);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Bagged", &o, &with_token, &t), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(bus, "Bagged", &o, &without_token, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(b, t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(other, t), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_subscriber_count(bus, "Bagged", NULL), 2);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
        CHECK_EQ_INT(atomic_load(&without_token.calls), 1);
        CHECK_EQ_INT(qtbus_bag_dispose(b), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&with_token.releases), 1);
        CHECK_EQ_INT(atomic_load(&without_token.releases), 1);
        CHECK_EQ_INT(qtbus_subscriber_count(bus, "Bagged", NULL), 0);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(qtbus_bag_dispose(other), QTBUS_OK);
        CHECK_REC_SANE(&with_token);
        CHECK_REC_SANE(&without_token);
    }

    /* Tokens disposed on their own leave the bag: disposing the bag afterwards is OK and
     * releases each exactly once in total; the remaining ones are disposed. */
    {
        enum { N = 6 };
        qtbus_bag b;
        CHECK_EQ_INT(qtbus_bag_create(&b), QTBUS_OK);
        qtbus_sub_options o = tu_options();
        o.bag = b;
        tu_rec r[N];
        qtbus_token t[N];
        for (int i = 0; i < N; i++) {
            tu_rec_init(&r[i]);
            CHECK_EQ_INT(tu_sub_rec(bus, "Bagged", &o, &r[i], &t[i]), QTBUS_OK);
        }
        for (int i = 0; i < N; i += 2)
            CHECK_EQ_INT(qtbus_token_dispose(t[i]), QTBUS_OK);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), N / 2);
        CHECK_EQ_INT(qtbus_bag_dispose(b), QTBUS_OK);
        for (int i = 0; i < N; i++) {
            CHECK_EQ_INT(atomic_load(&r[i].releases), 1);
            CHECK_EQ_INT(atomic_load(&r[i].calls), i % 2);
            CHECK_REC_SANE(&r[i]);
        }
    }

    /* A bag whose tokens were ALL disposed (by token, and a ONCE that fired) still
     * disposes fine. */
    {
        qtbus_bag b;
        CHECK_EQ_INT(qtbus_bag_create(&b), QTBUS_OK);
        qtbus_sub_options o = tu_options();
        o.bag = b;
        tu_rec r1, r2;
        tu_rec_init(&r1);
        tu_rec_init(&r2);
        qtbus_token t1, t2;
        CHECK_EQ_INT(tu_sub_rec(bus, "Bagged", &o, &r1, &t1), QTBUS_OK);
        o.flags = QTBUS_SUB_ONCE;
        CHECK_EQ_INT(tu_sub_rec(bus, "BaggedOnce", &o, &r2, &t2), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t1), QTBUS_OK);
        qtbus_event_desc once = tu_event("BaggedOnce", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &once), 1);
        CHECK_EQ_INT(qtbus_token_is_active(t2), 0);
        CHECK_EQ_INT(qtbus_bag_dispose(b), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r1.releases), 1);
        CHECK_EQ_INT(atomic_load(&r2.releases), 1);
        CHECK_EQ_INT(atomic_load(&r2.calls), 1);
        CHECK_EQ_INT(qtbus_bag_dispose(b), QTBUS_ESTALE);
    }

    /* A token that left its bag (disposed) cannot be re-added anywhere. */
    {
        qtbus_bag b1, b2;
        CHECK_EQ_INT(qtbus_bag_create(&b1), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_create(&b2), QTBUS_OK);
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Bagged", NULL, &r, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(b1, t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(b1, t), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_bag_add(b2, t), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_bag_dispose(b1), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_dispose(b2), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
    }

    /* One bag holding subscriptions of two buses, and many tokens. */
    {
        enum { N = 500 };
        qtbus_bus *other = qtbus_bus_create();
        CHECK(other != NULL);
        qtbus_bag b;
        CHECK_EQ_INT(qtbus_bag_create(&b), QTBUS_OK);
        qtbus_sub_options o = tu_options();
        o.bag = b;
        static tu_rec r[N];
        for (int i = 0; i < N; i++) {
            tu_rec_init(&r[i]);
            CHECK_EQ_INT(tu_sub_rec(i % 2 ? other : bus, "Bagged", &o, &r[i], NULL), QTBUS_OK);
        }
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), N / 2);
        CHECK_EQ_INT(qtbus_dispatch(other, &d), N / 2);
        CHECK_EQ_INT(qtbus_bag_dispose(b), QTBUS_OK);
        for (int i = 0; i < N; i++) {
            CHECK_EQ_INT(atomic_load(&r[i].releases), 1);
            CHECK_EQ_INT(atomic_load(&r[i].calls), 1);
        }
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(qtbus_dispatch(other, &d), 0);
        CHECK_EQ_INT(qtbus_bus_destroy(other), QTBUS_OK);
    }

    /* A handler disposing the bag that holds it and a later subscription: the later one
     * is not called in that dispatch; both are released once by the time it returns. */
    {
        CHECK_EQ_INT(qtbus_bag_create(&handler_bag), QTBUS_OK);
        qtbus_sub_options o = tu_options();
        o.bag = handler_bag;
        o.priority = 10;
        tu_rec first, later;
        tu_rec_init(&first);
        tu_rec_init(&later);
        CHECK_EQ_INT(qtbus_subscribe(bus, "BagSelf", &o, bag_disposing_handler, &first, tu_rec_release, NULL),
                     QTBUS_OK);
        o.priority = 0;
        CHECK_EQ_INT(tu_sub_rec(bus, "BagSelf", &o, &later, NULL), QTBUS_OK);
        qtbus_event_desc ds = tu_event("BagSelf", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &ds), 1);
        CHECK_EQ_INT(handler_bag_rc, QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&first.calls), 1);
        CHECK_EQ_INT(atomic_load(&later.calls), 0);
        CHECK_EQ_INT(atomic_load(&first.releases), 1);
        CHECK_EQ_INT(atomic_load(&later.releases), 1);
        CHECK_REC_SANE(&first);
        CHECK_REC_SANE(&later);
    }

    /* Bag and bus lifetimes are independent: a bus destroyed under a live bag. */
    {
        qtbus_bus *b2 = qtbus_bus_create();
        CHECK(b2 != NULL);
        qtbus_bag b;
        CHECK_EQ_INT(qtbus_bag_create(&b), QTBUS_OK);
        qtbus_sub_options o = tu_options();
        o.bag = b;
        tu_rec r;
        tu_rec_init(&r);
        CHECK_EQ_INT(tu_sub_rec(b2, "Bagged", &o, &r, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(b2), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        CHECK_EQ_INT(qtbus_bag_dispose(b), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
    }

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_bags: passed\n");
    return 0;
}
