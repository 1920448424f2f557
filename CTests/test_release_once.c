/* SPDX-License-Identifier: MIT */
/*
 * test_release_once: lifetime rule 1 -- release(userdata) runs exactly once per
 * successful subscribe, on every path that ends a subscription, and never for a
 * subscribe that failed.
 *
 * Users free their userdata in release, so: never twice (double free), never while the
 * handler runs or could still be called (use after free), never zero times (leak), and
 * at a predictable moment: before the disposing call returns when no dispatch is in
 * progress, and after the handler returns (before the outer dispatch returns) when a
 * handler disposes its own subscription.
 */
#include "test_util.h"

static qtbus_bus *bus;

/* ---- A handler that disposes its own token. ---- */
typedef struct self_disposer {
    tu_rec rec;
    qtbus_token token; /* set after subscribe returns (single thread) */
    int dispose_rc;
    int releases_seen_after_dispose;
} self_disposer;

static void self_dispose_handler(const qtbus_event *ev, void *userdata)
{
    self_disposer *s = (self_disposer *)userdata;
    tu_rec_handler(ev, &s->rec);
    s->dispose_rc = qtbus_token_dispose(s->token);
    /* Still inside the handler: release must wait until the handler returns. */
    s->releases_seen_after_dispose = atomic_load(&s->rec.releases);
}
static void self_disposer_release(void *userdata) { tu_rec_release(&((self_disposer *)userdata)->rec); }

/* ---- An outer handler that dispatches an inner event (nested self-dispose). ---- */
static int inner_dispatch_rc = -100;
static int inner_releases_after_inner_dispatch = -1;
static self_disposer *nested_target;
static void outer_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    qtbus_event_desc d = tu_event("InnerSelf", NULL);
    inner_dispatch_rc = qtbus_dispatch(bus, &d);
    /* The inner handler returned, but the outer dispatch is still in progress. */
    inner_releases_after_inner_dispatch = atomic_load(&nested_target->rec.releases);
}

/* ---- A handler that disposes ANOTHER subscription (which is not running). ---- */
static qtbus_token victim_token;
static int victim_dispose_rc = -100;
static void dispose_other_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    victim_dispose_rc = qtbus_token_dispose(victim_token);
}

/* ---- A release hook that calls back into the library (no lock may be held). ---- */
static atomic_int reentrant_release_ran;
static int reentrant_count_rc = -100;
static int reentrant_dispatch_rc = -100;
static int reentrant_sub_rc = -100;
static qtbus_token reentrant_new_token;
static tu_rec reentrant_new_rec;
static void reentrant_release(void *userdata)
{
    (void)userdata;
    reentrant_count_rc = qtbus_subscriber_count(bus, "Reentrant", NULL);
    qtbus_event_desc d = tu_event("Reentrant", NULL);
    reentrant_dispatch_rc = qtbus_dispatch(bus, &d);
    reentrant_sub_rc = tu_sub_rec(bus, "Reentrant", NULL, &reentrant_new_rec, &reentrant_new_token);
    atomic_fetch_add(&reentrant_release_ran, 1);
}
static void nop_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
}

static void check_stale(qtbus_token t)
{
    CHECK_EQ_INT(qtbus_token_is_active(t), 0);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_ESTALE);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    int paths = 0;

    /* 1. Token dispose, no dispatch in progress: release before dispose returns. */
    {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "A", NULL, &r, &t), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.releases), 0);
        qtbus_event_desc d = tu_event("A", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(atomic_load(&r.releases), 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        check_stale(t);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        CHECK_EQ_INT(atomic_load(&r.calls), 1);
        CHECK_REC_SANE(&r);
        paths++;
    }

    /* 2. Bag dispose: every subscription in it released once, before bag_dispose
     *    returns; one of them was subscribed with token_out NULL. */
    {
        tu_rec r[3];
        qtbus_bag bag;
        CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
        qtbus_sub_options o = tu_options();
        o.bag = bag;
        qtbus_token t0, t1;
        for (int i = 0; i < 3; i++)
            tu_rec_init(&r[i]);
        CHECK_EQ_INT(tu_sub_rec(bus, "B", &o, &r[0], &t0), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(bus, "B", &o, &r[1], NULL), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(bus, "B", NULL, &r[2], &t1), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(bag, t1), QTBUS_OK);
        qtbus_event_desc d = tu_event("B", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 3);
        CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
        for (int i = 0; i < 3; i++) {
            CHECK_EQ_INT(atomic_load(&r[i].releases), 1);
            CHECK_EQ_INT(atomic_load(&r[i].calls), 1);
            CHECK_REC_SANE(&r[i]);
        }
        check_stale(t0);
        check_stale(t1);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        paths++;
    }

    /* 3. ONCE firing: released once, after the dispatch that fired it returned. */
    {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_sub_options o = tu_options();
        o.flags = QTBUS_SUB_ONCE;
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "C", &o, &r, &t), QTBUS_OK);
        qtbus_event_desc d = tu_event("C", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(atomic_load(&r.calls), 1);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        check_stale(t);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        CHECK_REC_SANE(&r);
        paths++;
    }

    /* 3b. A ONCE subscription disposed before it fired: released once, never called. */
    {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_sub_options o = tu_options();
        o.flags = QTBUS_SUB_ONCE;
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "C2", &o, &r, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        qtbus_event_desc d = tu_event("C2", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(atomic_load(&r.calls), 0);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        paths++;
    }

    /* 4. Bus destroy: every subscription released once (token, no token, in a bag,
     *    ONCE not yet fired, on a queue), tokens stale, before destroy returns. */
    {
        qtbus_bus *b2 = qtbus_bus_create();
        CHECK(b2 != NULL);
        qtbus_queue *q = qtbus_queue_create("release.destroy");
        CHECK(q != NULL);
        tu_rec r[5];
        for (int i = 0; i < 5; i++)
            tu_rec_init(&r[i]);
        qtbus_bag bag;
        CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
        qtbus_token t[5];
        qtbus_sub_options o = tu_options();
        CHECK_EQ_INT(tu_sub_rec(b2, "D", &o, &r[0], &t[0]), QTBUS_OK);
        CHECK_EQ_INT(tu_sub_rec(b2, "D", &o, &r[1], NULL), QTBUS_OK);
        o.bag = bag;
        CHECK_EQ_INT(tu_sub_rec(b2, "D", &o, &r[2], &t[2]), QTBUS_OK);
        o = tu_options();
        o.flags = QTBUS_SUB_ONCE;
        CHECK_EQ_INT(tu_sub_rec(b2, "D2", &o, &r[3], &t[3]), QTBUS_OK);
        o = tu_options();
        o.queue = q;
        CHECK_EQ_INT(tu_sub_rec(b2, "D3", &o, &r[4], &t[4]), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(b2), QTBUS_OK);
        for (int i = 0; i < 5; i++) {
            CHECK_MSG(atomic_load(&r[i].releases) == 1, "subscription %d released %d times", i,
                      atomic_load(&r[i].releases));
            CHECK_REC_SANE(&r[i]);
            if (i != 1) check_stale(t[i]);
        }
        /* The bag outlives the bus; its token left it when the bus disposed it. */
        CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r[2].releases), 1);
        qtbus_queue_release(q);
        paths++;
    }

    /* 5. A handler disposing its own token: dispose returns OK, release has not run
     *    while the handler is still running, it has run once the dispatch returned,
     *    and the handler is not called again. */
    {
        self_disposer s;
        memset(&s, 0, sizeof s);
        tu_rec_init(&s.rec);
        s.releases_seen_after_dispose = -1;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Self", NULL, self_dispose_handler, &s, self_disposer_release, &s.token),
                     QTBUS_OK);
        qtbus_event_desc d = tu_event("Self", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(s.dispose_rc, QTBUS_OK);
        CHECK_EQ_INT(s.releases_seen_after_dispose, 0);
        CHECK_EQ_INT(atomic_load(&s.rec.releases), 1);
        check_stale(s.token);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(atomic_load(&s.rec.calls), 1);
        CHECK_REC_SANE(&s.rec);
        paths++;
    }

    /* 5b. The same inside a nested dispatch: release waits for the outer dispatch (it
     *     was in progress when the inner handler disposed), and has run once it returns. */
    {
        self_disposer s;
        memset(&s, 0, sizeof s);
        tu_rec_init(&s.rec);
        s.releases_seen_after_dispose = -1;
        nested_target = &s;
        CHECK_EQ_INT(qtbus_subscribe(bus, "InnerSelf", NULL, self_dispose_handler, &s, self_disposer_release, &s.token),
                     QTBUS_OK);
        qtbus_token outer;
        CHECK_EQ_INT(qtbus_subscribe(bus, "OuterSelf", NULL, outer_handler, NULL, NULL, &outer), QTBUS_OK);
        qtbus_event_desc d = tu_event("OuterSelf", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(inner_dispatch_rc, 1);
        CHECK_EQ_INT(s.dispose_rc, QTBUS_OK);
        CHECK_EQ_INT(s.releases_seen_after_dispose, 0);
        CHECK(inner_releases_after_inner_dispatch == 0 || inner_releases_after_inner_dispatch == 1);
        CHECK_EQ_INT(atomic_load(&s.rec.releases), 1);
        CHECK_EQ_INT(atomic_load(&s.rec.calls), 1);
        CHECK_REC_SANE(&s.rec);
        CHECK_EQ_INT(qtbus_token_dispose(outer), QTBUS_OK);
        paths++;
    }

    /* 6. A handler disposing another (not running) subscription during a dispatch:
     *    released once, at the latest when that dispatch returns. */
    {
        tu_rec victim;
        tu_rec_init(&victim);
        qtbus_token killer;
        CHECK_EQ_INT(tu_sub_rec(bus, "Victim", NULL, &victim, &victim_token), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus, "Killer", NULL, dispose_other_handler, NULL, NULL, &killer), QTBUS_OK);
        qtbus_event_desc d = tu_event("Killer", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(victim_dispose_rc, QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&victim.releases), 1);
        check_stale(victim_token);
        CHECK_EQ_INT(qtbus_token_dispose(killer), QTBUS_OK);
        paths++;
    }

    /* 7. A ONCE handler disposing its own token: OK or ESTALE (it may already count as
     *    fired), but released exactly once either way. */
    {
        self_disposer s;
        memset(&s, 0, sizeof s);
        tu_rec_init(&s.rec);
        qtbus_sub_options o = tu_options();
        o.flags = QTBUS_SUB_ONCE;
        CHECK_EQ_INT(qtbus_subscribe(bus, "OnceSelf", &o, self_dispose_handler, &s, self_disposer_release, &s.token),
                     QTBUS_OK);
        qtbus_event_desc d = tu_event("OnceSelf", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK(s.dispose_rc == QTBUS_OK || s.dispose_rc == QTBUS_ESTALE);
        CHECK_EQ_INT(s.releases_seen_after_dispose, 0);
        CHECK_EQ_INT(atomic_load(&s.rec.releases), 1);
        CHECK_REC_SANE(&s.rec);
        paths++;
    }

    /* 8. A release hook may call back into the library (no lock held): count, dispatch,
     *    subscribe on the same bus. */
    {
        qtbus_token t;
        tu_rec_init(&reentrant_new_rec);
        CHECK_EQ_INT(qtbus_subscribe(bus, "Reentrant", NULL, nop_handler, NULL, reentrant_release, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&reentrant_release_ran), 1);
        CHECK_EQ_INT(reentrant_count_rc, 0);
        CHECK_EQ_INT(reentrant_dispatch_rc, 0);
        CHECK_EQ_INT(reentrant_sub_rc, QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_is_active(reentrant_new_token), 1);
        CHECK_EQ_INT(qtbus_token_dispose(reentrant_new_token), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&reentrant_new_rec.releases), 1);
        paths++;
    }

    /* 9. Failed subscribes never call release, and set *token_out to {0}. */
    {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t;
        qtbus_sub_options o;

        t.id = 0xdeadbeef;
        CHECK_EQ_INT(tu_sub_rec(bus, "", NULL, &r, &t), QTBUS_EINVAL);
        CHECK_EQ_U64(t.id, 0);
        t.id = 0xdeadbeef;
        CHECK_EQ_INT(tu_sub_rec(bus, NULL, NULL, &r, &t), QTBUS_EINVAL);
        CHECK_EQ_U64(t.id, 0);
        t.id = 0xdeadbeef;
        CHECK_EQ_INT(tu_sub_rec(NULL, "Fail", NULL, &r, &t), QTBUS_EINVAL);
        CHECK_EQ_U64(t.id, 0);
        t.id = 0xdeadbeef;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Fail", NULL, NULL, &r, tu_rec_release, &t), QTBUS_EINVAL);
        CHECK_EQ_U64(t.id, 0);
        o = tu_options();
        o.flags = 1u << 7;
        t.id = 0xdeadbeef;
        CHECK_EQ_INT(tu_sub_rec(bus, "Fail", &o, &r, &t), QTBUS_EINVAL);
        CHECK_EQ_U64(t.id, 0);
        o = tu_options();
        o.subtype_count = 2; /* subtypes NULL with a count */
        t.id = 0xdeadbeef;
        CHECK_EQ_INT(tu_sub_rec(bus, "Fail", &o, &r, &t), QTBUS_EINVAL);
        CHECK_EQ_U64(t.id, 0);
        const char *bad_sub[] = {"ok", "\xff"};
        o = tu_options();
        o.subtypes = bad_sub;
        o.subtype_count = 2;
        t.id = 0xdeadbeef;
        CHECK_EQ_INT(tu_sub_rec(bus, "Fail", &o, &r, &t), QTBUS_EINVAL);
        CHECK_EQ_U64(t.id, 0);
        /* A stale bag. */
        qtbus_bag bag;
        CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
        o = tu_options();
        o.bag = bag;
        t.id = 0xdeadbeef;
        CHECK_EQ_INT(tu_sub_rec(bus, "Fail", &o, &r, &t), QTBUS_ESTALE);
        CHECK_EQ_U64(t.id, 0);

        CHECK_EQ_INT(atomic_load(&r.releases), 0);
        CHECK_EQ_INT(qtbus_subscriber_count(bus, "Fail", NULL), 0);
        qtbus_event_desc d = tu_event("Fail", "ok");
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(atomic_load(&r.calls), 0);
        paths++;
    }

    /* 10. Many subscriptions, disposed in an order unlike the subscription order. */
    {
        enum { N = 200 };
        static tu_rec r[N];
        static qtbus_token t[N];
        for (int i = 0; i < N; i++) {
            tu_rec_init(&r[i]);
            CHECK_EQ_INT(tu_sub_rec(bus, "Many", NULL, &r[i], &t[i]), QTBUS_OK);
        }
        qtbus_event_desc d = tu_event("Many", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), N);
        for (int i = 0; i < N; i += 2)
            CHECK_EQ_INT(qtbus_token_dispose(t[i]), QTBUS_OK);
        for (int i = N - 1; i > 0; i -= 2)
            CHECK_EQ_INT(qtbus_token_dispose(t[i]), QTBUS_OK);
        for (int i = 0; i < N; i++) {
            CHECK_EQ_INT(atomic_load(&r[i].releases), 1);
            CHECK_EQ_INT(atomic_load(&r[i].calls), 1);
            CHECK_REC_SANE(&r[i]);
        }
        paths++;
    }

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    CHECK_EQ_INT(paths, 12);
    printf("test_release_once: %d paths passed\n", paths);
    return 0;
}
