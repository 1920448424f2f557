/* SPDX-License-Identifier: MIT */
/*
 * test_source: shared sources (ReactiveCocoa's RACMulticastConnection) in C.
 *
 * Users rely on: the side effect starting once per connection however many subscribers
 * there are, inside the call that connects; a repeated connect doing nothing; disconnect
 * stopping it and a later connect starting it again; with QTBUS_SOURCE_AUTOCONNECT the
 * first subscription of the type starting it (inside qtbus_subscribe, so that
 * subscriber receives what start dispatches), the last one's dispose -- by token, bag,
 * ONCE firing -- stopping it, and a later first subscriber restarting it; start and
 * stop alternating, never nested, even when start disconnects its own source; dispose
 * (and the bus's destroy) stopping a connected source, then releasing it once.
 */
#include "test_util.h"

static qtbus_bus *bus;

typedef struct feed {
    qtbus_source self;
    atomic_int starts;
    atomic_int stops;
    atomic_int releases;
    atomic_int active;  /* started and not stopped */
    atomic_int overlap; /* start while active, stop while inactive */
    int disconnect_in_start;
    atomic_int disconnect_rc;
    int stops_seen_in_start;
} feed;

static void feed_init(feed *f) { memset(f, 0, sizeof *f); }

/* The side effect: one "Price" event per start, dispatched synchronously. */
static void feed_start(qtbus_bus *b, void *userdata)
{
    feed *f = (feed *)userdata;
    if (atomic_fetch_add(&f->active, 1) != 0) atomic_fetch_add(&f->overlap, 1);
    atomic_fetch_add(&f->starts, 1);
    CHECK(b == bus);
    qtbus_event_desc d = tu_event("Price", NULL);
    d.data = "42";
    d.size = 2;
    CHECK(qtbus_dispatch(b, &d) >= 0);
    if (f->disconnect_in_start) {
        f->disconnect_in_start = 0;
        atomic_store(&f->disconnect_rc, qtbus_source_disconnect(f->self));
        /* Recorded, not nested: stop runs after this start returns. */
        f->stops_seen_in_start = atomic_load(&f->stops);
    }
}

static void feed_stop(void *userdata)
{
    feed *f = (feed *)userdata;
    if (atomic_fetch_sub(&f->active, 1) != 1) atomic_fetch_add(&f->overlap, 1);
    atomic_fetch_add(&f->stops, 1);
}

static void feed_release(void *userdata)
{
    feed *f = (feed *)userdata;
    atomic_fetch_add(&f->releases, 1);
}

#define CHECK_FEED(f, s, p)                                                                                            \
    do {                                                                                                               \
        CHECK_EQ_INT(atomic_load(&(f)->starts), (s));                                                                  \
        CHECK_EQ_INT(atomic_load(&(f)->stops), (p));                                                                   \
        CHECK_EQ_INT(atomic_load(&(f)->overlap), 0);                                                                   \
    } while (0)

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);

    /* Explicit connect: started once for two subscribers, who both get its event. */
    {
        static feed f;
        feed_init(&f);
        CHECK_EQ_INT(qtbus_source_create(bus, "Price", 0, feed_start, feed_stop, &f, feed_release, &f.self), QTBUS_OK);
        static tu_rec a, b;
        tu_rec_init(&a);
        tu_rec_init(&b);
        qtbus_token ta, tb;
        CHECK_EQ_INT(tu_sub_rec(bus, "Price", NULL, &a, &ta), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(bus, "Price", NULL, &b, &tb), QTBUS_OK);
        CHECK_FEED(&f, 0, 0); /* not autoconnect: subscribers do not start it */
        CHECK_EQ_INT(qtbus_source_connect(f.self), QTBUS_OK);
        CHECK_FEED(&f, 1, 0);
        CHECK_EQ_INT(atomic_load(&a.calls), 1);
        CHECK_EQ_INT(atomic_load(&b.calls), 1);
        CHECK_EQ_INT(qtbus_source_connect(f.self), QTBUS_OK); /* already: nothing */
        CHECK_FEED(&f, 1, 0);
        CHECK_EQ_INT(qtbus_source_disconnect(f.self), QTBUS_OK);
        CHECK_FEED(&f, 1, 1);
        CHECK_EQ_INT(qtbus_source_disconnect(f.self), QTBUS_OK);
        CHECK_FEED(&f, 1, 1);
        /* Reconnect after disconnect: started again. */
        CHECK_EQ_INT(qtbus_source_connect(f.self), QTBUS_OK);
        CHECK_FEED(&f, 2, 1);
        CHECK_EQ_INT(atomic_load(&a.calls), 2);
        /* Disposing it connected stops it, then releases it, once. */
        CHECK_EQ_INT(qtbus_source_dispose(f.self), QTBUS_OK);
        CHECK_FEED(&f, 2, 2);
        CHECK_EQ_INT(atomic_load(&f.releases), 1);
        CHECK_EQ_INT(qtbus_source_dispose(f.self), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_source_connect(f.self), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_source_disconnect(f.self), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_token_dispose(ta), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(tb), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&f.releases), 1);
    }

    /* Autoconnect: the first subscriber starts it, inside qtbus_subscribe, and gets its
     * event; the last one's dispose stops it; a new first subscriber restarts it. */
    {
        static feed f;
        feed_init(&f);
        CHECK_EQ_INT(qtbus_source_create(bus, "Price", QTBUS_SOURCE_AUTOCONNECT, feed_start, feed_stop, &f,
                                         feed_release, &f.self),
                     QTBUS_OK);
        CHECK_FEED(&f, 0, 0);
        static tu_rec a, b;
        tu_rec_init(&a);
        tu_rec_init(&b);
        qtbus_token ta, tb;
        CHECK_EQ_INT(tu_sub_rec(bus, "Price", NULL, &a, &ta), QTBUS_OK);
        CHECK_FEED(&f, 1, 0);
        CHECK_EQ_INT(atomic_load(&a.calls), 1);
        /* A subtype subscription is a subscription of the type too. */
        const char *usd = "USD";
        qtbus_sub_options o = tu_options();
        o.subtypes = &usd;
        o.subtype_count = 1;
        CHECK_EQ_INT(tu_sub_rec(bus, "Price", &o, &b, &tb), QTBUS_OK);
        CHECK_FEED(&f, 1, 0);
        CHECK_EQ_INT(qtbus_token_dispose(ta), QTBUS_OK);
        CHECK_FEED(&f, 1, 0);
        CHECK_EQ_INT(qtbus_token_dispose(tb), QTBUS_OK);
        CHECK_FEED(&f, 1, 1);
        /* Restart, then stop by a bag's dispose. */
        qtbus_bag bag;
        CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
        qtbus_sub_options ob = tu_options();
        ob.bag = bag;
        CHECK_EQ_INT(tu_sub_rec(bus, "Price", &ob, &a, NULL), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(bus, "Price", &ob, &b, NULL), QTBUS_OK);
        CHECK_FEED(&f, 2, 1);
        CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
        CHECK_FEED(&f, 2, 2);
        /* A ONCE subscriber: started by it, stopped as it fires (during the dispatch
         * that start itself makes). */
        static tu_rec once;
        tu_rec_init(&once);
        qtbus_sub_options oo = tu_options();
        oo.flags = QTBUS_SUB_ONCE;
        CHECK_EQ_INT(tu_sub_rec(bus, "Price", &oo, &once, NULL), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&once.calls), 1);
        CHECK_FEED(&f, 3, 3);
        /* Explicit calls work on an autoconnect source too. */
        CHECK_EQ_INT(qtbus_source_connect(f.self), QTBUS_OK);
        CHECK_FEED(&f, 4, 3);
        CHECK_EQ_INT(qtbus_source_disconnect(f.self), QTBUS_OK);
        CHECK_FEED(&f, 4, 4);
        /* Disposed while idle: released at once, no stop. */
        CHECK_EQ_INT(qtbus_source_dispose(f.self), QTBUS_OK);
        CHECK_FEED(&f, 4, 4);
        CHECK_EQ_INT(atomic_load(&f.releases), 1);
        /* Gone: subscribing no longer starts it. */
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Price", NULL, &a, &t), QTBUS_OK);
        CHECK_FEED(&f, 4, 4);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* Autoconnect created while subscriptions exist: started at once. */
    {
        static tu_rec a;
        tu_rec_init(&a);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Price", NULL, &a, &t), QTBUS_OK);
        static feed f;
        feed_init(&f);
        CHECK_EQ_INT(qtbus_source_create(bus, "Price", QTBUS_SOURCE_AUTOCONNECT, feed_start, NULL, &f, NULL, &f.self),
                     QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&f.starts), 1);
        CHECK_EQ_INT(atomic_load(&a.calls), 1);
        /* stop is NULL: the disconnect is recorded, nothing is called. */
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(bus, "Price", NULL, &a, &t), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&f.starts), 2);
        CHECK_EQ_INT(qtbus_source_dispose(f.self), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* A start that disconnects its own source: stop runs after start returns, still
     * inside the connect call. */
    {
        static feed f;
        feed_init(&f);
        f.disconnect_in_start = 1;
        CHECK_EQ_INT(qtbus_source_create(bus, "Price", 0, feed_start, feed_stop, &f, feed_release, &f.self), QTBUS_OK);
        CHECK_EQ_INT(qtbus_source_connect(f.self), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&f.disconnect_rc), QTBUS_OK);
        CHECK_EQ_INT(f.stops_seen_in_start, 0);
        CHECK_FEED(&f, 1, 1);
        CHECK_EQ_INT(qtbus_source_dispose(f.self), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&f.releases), 1);
    }

    /* Bad input: refused, nothing made or called. */
    {
        static feed f;
        feed_init(&f);
        qtbus_source s = {7};
        CHECK_EQ_INT(qtbus_source_create(NULL, "Price", 0, feed_start, feed_stop, &f, feed_release, &s), QTBUS_EINVAL);
        CHECK_EQ_INT(s.id, 0);
        CHECK_EQ_INT(qtbus_source_create(bus, NULL, 0, feed_start, feed_stop, &f, feed_release, &s), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_source_create(bus, "\xfe", 0, feed_start, feed_stop, &f, feed_release, &s), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_source_create(bus, "Price", 0, NULL, feed_stop, &f, feed_release, &s), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_source_create(bus, "Price", 4, feed_start, feed_stop, &f, feed_release, &s), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_source_create(bus, "Price", 0, feed_start, feed_stop, &f, feed_release, NULL), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_source_connect((qtbus_source){0}), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_source_connect((qtbus_source){0x500000003ull}), QTBUS_ESTALE);
        CHECK_FEED(&f, 0, 0);
        CHECK_EQ_INT(atomic_load(&f.releases), 0);
    }

    /* The bus's destroy stops its connected sources and releases every source once. */
    {
        static feed on, off;
        feed_init(&on);
        feed_init(&off);
        CHECK_EQ_INT(qtbus_source_create(bus, "Price", 0, feed_start, feed_stop, &on, feed_release, &on.self),
                     QTBUS_OK);
        CHECK_EQ_INT(qtbus_source_create(bus, "Volume", 0, feed_start, feed_stop, &off, feed_release, &off.self),
                     QTBUS_OK);
        CHECK_EQ_INT(qtbus_source_connect(on.self), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
        CHECK_FEED(&on, 1, 1);
        CHECK_FEED(&off, 0, 0);
        CHECK_EQ_INT(atomic_load(&on.releases), 1);
        CHECK_EQ_INT(atomic_load(&off.releases), 1);
        CHECK_EQ_INT(qtbus_source_connect(on.self), QTBUS_ESTALE);
    }
    printf("test_source: passed\n");
    return 0;
}
