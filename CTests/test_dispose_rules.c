/* SPDX-License-Identifier: MIT */
/*
 * test_dispose_rules: lifetime rule 2 and the generation check on ids.
 *
 * Users rely on: after qtbus_token_dispose returns, no later dispatch calls the handler;
 * a second dispose is a harmless QTBUS_ESTALE; qtbus_token_is_active says 1 then 0; and,
 * above all, a stale token kept by mistake never disposes ANOTHER subscription that
 * reuses its slot (the sokol/GLib "wrong handle" guarantee), nor does a forged id.
 */
#include "test_util.h"

#define REUSE 64

/* A handler that blocks until the test lets it go, on whatever thread runs it. */
typedef struct busy {
    tu_rec rec;
    tu_gate gate;
    pthread_t release_thread;
} busy;

static void busy_handler(const qtbus_event *ev, void *userdata)
{
    busy *b = (busy *)userdata;
    tu_rec_handler(ev, &b->rec);
    tu_gate_pass(&b->gate);
    /* Still running: the release must not have run (rule 1). */
    if (atomic_load(&b->rec.releases) != 0) atomic_fetch_add(&b->rec.calls_after_release, 1);
}

static void busy_release(void *userdata)
{
    busy *b = (busy *)userdata;
    b->release_thread = pthread_self();
    tu_rec_release(&b->rec);
}

typedef struct busy_dispatch {
    qtbus_bus *bus;
    int rc;
    pthread_t thread;
} busy_dispatch;

static void dispatch_busy(int index, void *ctx)
{
    busy_dispatch *bd = (busy_dispatch *)ctx;
    (void)index;
    bd->thread = pthread_self();
    qtbus_event_desc d = tu_event("Busy", NULL);
    bd->rc = qtbus_dispatch(bd->bus, &d);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    qtbus_event_desc d = tu_event("Rule", NULL);

    /* After dispose returns the handler is never called (single thread). */
    {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "Rule", NULL, &r, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_is_active(t), 1);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        for (int i = 0; i < 10; i++)
            CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(atomic_load(&r.calls), 1);
        /* Double dispose: ESTALE, nothing else happens. */
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_ESTALE);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        CHECK_REC_SANE(&r);
    }

    /* Dispose while the handler runs on another thread: dispose returns at once (it
     * does not wait for the handler, so no deadlock even though the handler waits for
     * us), the handler is not started again, the running call finishes, and release
     * runs after it -- when that dispatch returns, on its thread (rule 1). */
    for (int by_bag = 0; by_bag < 2; by_bag++) {
        busy b;
        memset(&b, 0, sizeof b);
        tu_rec_init(&b.rec);
        atomic_init(&b.gate.open, 0);
        atomic_init(&b.gate.entered, 0);
        qtbus_bag bag = {0};
        qtbus_sub_options o = tu_options();
        if (by_bag) {
            CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
            o.bag = bag;
        }
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Busy", &o, busy_handler, &b, busy_release, &t), QTBUS_OK);
        busy_dispatch bd;
        memset(&bd, 0, sizeof bd);
        bd.bus = bus;
        tu_threads th;
        tu_threads_start(&th, 1, dispatch_busy, &bd);
        CHECK_WAIT(atomic_load(&b.gate.entered) == 1, TU_WAIT_MS);
        if (by_bag)
            CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
        else
            CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        CHECK_EQ_INT(atomic_load(&b.rec.releases), 0); /* its handler is still running */
        qtbus_event_desc busy_ev = tu_event("Busy", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &busy_ev), 0); /* not started again */
        CHECK_EQ_INT(atomic_load(&b.rec.releases), 0);
        atomic_store(&b.gate.open, 1);
        tu_threads_join(&th);
        CHECK_EQ_INT(bd.rc, 1);
        CHECK_EQ_INT(atomic_load(&b.rec.calls), 1);
        CHECK_EQ_INT(atomic_load(&b.rec.releases), 1);
        CHECK(pthread_equal(b.release_thread, bd.thread));
        CHECK_REC_SANE(&b.rec);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_ESTALE);
    }

    /* A slot reused 64 times: keep every old token, then dispose them all while a live
     * subscription (probably in the very same slot) exists.  Every old dispose is
     * ESTALE and the live one still delivers. */
    {
        static tu_rec old_rec[REUSE];
        static qtbus_token old[REUSE];
        for (int i = 0; i < REUSE; i++) {
            tu_rec_init(&old_rec[i]);
            CHECK_EQ_INT(tu_sub_rec(bus, "Reuse", NULL, &old_rec[i], &old[i]), QTBUS_OK);
            CHECK(old[i].id != 0);
            CHECK_EQ_INT(qtbus_token_dispose(old[i]), QTBUS_OK);
            CHECK_EQ_INT(atomic_load(&old_rec[i].releases), 1);
        }
        tu_rec live_rec;
        tu_rec_init(&live_rec);
        qtbus_token live;
        CHECK_EQ_INT(tu_sub_rec(bus, "Reuse", NULL, &live_rec, &live), QTBUS_OK);

        /* Ids are never reissued: all 65 differ. */
        for (int i = 0; i < REUSE; i++) {
            CHECK(old[i].id != live.id);
            for (int j = 0; j < i; j++)
                CHECK(old[i].id != old[j].id);
        }

        int stale = 0;
        for (int i = 0; i < REUSE; i++) {
            CHECK_EQ_INT(qtbus_token_is_active(old[i]), 0);
            CHECK_EQ_INT(qtbus_token_dispose(old[i]), QTBUS_ESTALE);
            stale++;
        }
        CHECK_EQ_INT(stale, REUSE);
        CHECK_EQ_INT(qtbus_token_is_active(live), 1);
        qtbus_event_desc dr = tu_event("Reuse", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &dr), 1);
        CHECK_EQ_INT(atomic_load(&live_rec.calls), 1);
        CHECK_EQ_INT(atomic_load(&live_rec.releases), 0);
        for (int i = 0; i < REUSE; i++) {
            CHECK_EQ_INT(atomic_load(&old_rec[i].releases), 1);
            CHECK_EQ_INT(atomic_load(&old_rec[i].calls), 0);
        }

        /* Forged ids: 0, random values, the live id with another generation (high half)
         * or another slot (low half).  All ESTALE / inactive, the live one untouched. */
        uint64_t rng = 0x1234567887654321ull;
        uint64_t forged[40];
        int n = 0;
        forged[n++] = 0;
        forged[n++] = UINT64_MAX;
        forged[n++] = live.id ^ (1ull << 32);
        forged[n++] = live.id + (1ull << 32);
        forged[n++] = live.id - (1ull << 32);
        forged[n++] = live.id ^ 0xffffffff00000000ull;
        forged[n++] = live.id & 0xffffffffull;         /* generation 0 */
        forged[n++] = live.id & 0xffffffff00000000ull; /* slot 0 */
        forged[n++] = live.id ^ 1u;
        forged[n++] = live.id + 1000;
        while (n < 40) {
            uint64_t v = tu_rand(&rng);
            if (v != live.id) forged[n++] = v;
        }
        for (int i = 0; i < n; i++) {
            if (forged[i] == live.id) continue;
            qtbus_token f = {forged[i]};
            CHECK_EQ_INT(qtbus_token_is_active(f), 0);
            CHECK_MSG(qtbus_token_dispose(f) == QTBUS_ESTALE, "forged id %#llx not ESTALE",
                      (unsigned long long)forged[i]);
        }
        CHECK_EQ_INT(qtbus_token_is_active(live), 1);
        CHECK_EQ_INT(qtbus_dispatch(bus, &dr), 1);
        CHECK_EQ_INT(atomic_load(&live_rec.calls), 2);
        CHECK_EQ_INT(atomic_load(&live_rec.releases), 0);

        /* A forged id in a bag add is ESTALE too. */
        qtbus_bag bag;
        CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
        for (int i = 0; i < n; i++) {
            if (forged[i] == live.id) continue;
            qtbus_token f = {forged[i]};
            CHECK_EQ_INT(qtbus_bag_add(bag, f), QTBUS_ESTALE);
        }
        CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_is_active(live), 1);

        CHECK_EQ_INT(qtbus_token_dispose(live), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&live_rec.releases), 1);
        CHECK_REC_SANE(&live_rec);
    }

    /* The same for bags: a bag id reused 64 times; old ids are stale for add and
     * dispose, and never reach the live bag (which still disposes its token). */
    {
        qtbus_bag old[REUSE];
        for (int i = 0; i < REUSE; i++) {
            CHECK_EQ_INT(qtbus_bag_create(&old[i]), QTBUS_OK);
            CHECK(old[i].id != 0);
            CHECK_EQ_INT(qtbus_bag_dispose(old[i]), QTBUS_OK);
        }
        qtbus_bag live;
        CHECK_EQ_INT(qtbus_bag_create(&live), QTBUS_OK);
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(bus, "BagReuse", NULL, &r, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_add(live, t), QTBUS_OK);
        for (int i = 0; i < REUSE; i++) {
            CHECK(old[i].id != live.id);
            CHECK_EQ_INT(qtbus_bag_dispose(old[i]), QTBUS_ESTALE);
            CHECK_EQ_INT(qtbus_bag_add(old[i], t), QTBUS_ESTALE);
        }
        CHECK_EQ_INT(qtbus_token_is_active(t), 1);
        CHECK_EQ_INT(atomic_load(&r.releases), 0);
        /* Adding it to the same (live) bag again does nothing and is OK. */
        CHECK_EQ_INT(qtbus_bag_add(live, t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_dispose(live), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        qtbus_bag forged = {live.id ^ (1ull << 32)};
        CHECK_EQ_INT(qtbus_bag_dispose(forged), QTBUS_ESTALE);
        qtbus_bag zero = {0};
        CHECK_EQ_INT(qtbus_bag_dispose(zero), QTBUS_ESTALE);
    }

    /* Tokens are not tied to one bus: a stale token of a destroyed bus stays stale
     * while another bus reuses memory and slots. */
    {
        qtbus_bus *b2 = qtbus_bus_create();
        CHECK(b2 != NULL);
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(b2, "Gone", NULL, &r, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(b2), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
        qtbus_bus *b3 = qtbus_bus_create();
        CHECK(b3 != NULL);
        tu_rec r3;
        tu_rec_init(&r3);
        qtbus_token t3;
        CHECK_EQ_INT(tu_sub_rec(b3, "Gone", NULL, &r3, &t3), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_token_is_active(t), 0);
        CHECK_EQ_INT(qtbus_token_is_active(t3), 1);
        qtbus_event_desc dg = tu_event("Gone", NULL);
        CHECK_EQ_INT(qtbus_dispatch(b3, &dg), 1);
        CHECK_EQ_INT(qtbus_bus_destroy(b3), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r3.releases), 1);
        CHECK_REC_SANE(&r3);
    }

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_dispose_rules: passed\n");
    return 0;
}
