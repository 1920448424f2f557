/* SPDX-License-Identifier: MIT */
/*
 * test_deferred_reply.c -- a handler answers after it returned (qtbus_event_defer):
 * the request stays open until every deferred reply is finished, replies from other
 * threads reach on_reply, the completion runs exactly once, and bad or stale handles
 * are refused without touching anything.
 */
#include "test_util.h"

typedef struct sender {
    atomic_int replies;
    atomic_int completions;
    char last[32];
} sender;

static void on_reply(const qtbus_event *reply, void *userdata)
{
    sender *s = userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(reply, &size);
    CHECK_EQ_STR(qtbus_event_type(reply), "Lookup");
    CHECK_EQ_STR(qtbus_event_subtype(reply), "users");
    CHECK_EQ_INT(qtbus_event_flags(reply), 0);
    if (size < sizeof s->last) {
        if (size) memcpy(s->last, data, size); /* a reply of no bytes has data NULL */
        s->last[size] = '\0';
    }
    atomic_fetch_add(&s->replies, 1);
}

static void on_complete(void *userdata) { atomic_fetch_add(&((sender *)userdata)->completions, 1); }

static qtbus_deferred held[2];
static int held_count;

/* Answers one at once, then defers. */
static void deferring_handler(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_flags(e), QTBUS_EVENT_REQUEST);
    CHECK_EQ_INT(qtbus_event_reply(e, "now", 3), QTBUS_OK);
    CHECK_EQ_INT(qtbus_event_defer(e, &held[held_count]), QTBUS_OK);
    CHECK(held[held_count].id != 0);
    held_count++;
}

static void plain_handler(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    qtbus_deferred d = {7};
    CHECK_EQ_INT(qtbus_event_flags(e), 0);
    CHECK_EQ_INT(qtbus_event_defer(e, &d), QTBUS_EINVAL);
    CHECK_EQ_U64(d.id, 0);
    CHECK(strstr(qtbus_errmsg(), "qtbus_event_defer: the event is not a request") != NULL);
}

/* Many requests deferred and finished on other threads: each completes exactly once,
 * after its last reply. */
enum { STRESS_REQUESTS = 2000, STRESS_THREADS = 4 };
static qtbus_deferred pending[STRESS_REQUESTS];
static atomic_int pending_next;
static atomic_int stress_replies, stress_completions, replies_after_completion;
static atomic_int completed[STRESS_REQUESTS];

static void stress_reply(const qtbus_event *reply, void *userdata)
{
    (void)reply;
    if (atomic_load(&completed[(intptr_t)userdata])) atomic_fetch_add(&replies_after_completion, 1);
    atomic_fetch_add(&stress_replies, 1);
}

static void stress_complete(void *userdata)
{
    CHECK_EQ_INT(atomic_fetch_add(&completed[(intptr_t)userdata], 1), 0);
    atomic_fetch_add(&stress_completions, 1);
}

static void stress_handler(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    int i = atomic_fetch_add(&pending_next, 1);
    CHECK_EQ_INT(qtbus_event_defer(e, &pending[i]), QTBUS_OK);
}

static void finisher(int index, void *ctx)
{
    (void)ctx;
    for (int i = index; i < STRESS_REQUESTS; i += STRESS_THREADS) {
        CHECK_EQ_INT(qtbus_deferred_reply(pending[i], "x", 1), QTBUS_OK);
        CHECK_EQ_INT(qtbus_deferred_finish(pending[i]), QTBUS_OK);
        CHECK_EQ_INT(qtbus_deferred_reply(pending[i], "x", 1), QTBUS_ESTALE);
    }
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);

    /* Two handlers defer: the completion waits for both, replies come after return. */
    {
        qtbus_token t1, t2;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Lookup", NULL, deferring_handler, NULL, NULL, &t1), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus, "Lookup", NULL, deferring_handler, NULL, NULL, &t2), QTBUS_OK);
        static sender s;
        qtbus_event_desc d = tu_event("Lookup", "users");
        CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, &s, on_complete), 2);
        CHECK_EQ_INT(atomic_load(&s.replies), 2);
        CHECK_EQ_INT(atomic_load(&s.completions), 0);

        CHECK_EQ_INT(qtbus_deferred_reply(held[0], "later", 5), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&s.replies), 3);
        CHECK_EQ_STR(s.last, "later");
        CHECK_EQ_INT(qtbus_deferred_finish(held[0]), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&s.completions), 0);
        CHECK_EQ_INT(qtbus_deferred_finish(held[0]), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_deferred_reply(held[0], "x", 1), QTBUS_ESTALE);
        CHECK(strstr(qtbus_errmsg(), "qtbus_deferred_reply: the deferred reply is finished") != NULL);

        CHECK_EQ_INT(qtbus_deferred_reply(held[1], NULL, 2), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_deferred_reply(held[1], NULL, 0), QTBUS_OK);
        CHECK_EQ_INT(qtbus_deferred_finish(held[1]), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&s.completions), 1);
        CHECK_EQ_INT(atomic_load(&s.replies), 4);
        CHECK_EQ_INT(qtbus_token_dispose(t1), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t2), QTBUS_OK);
    }

    /* Not a request, NULL, forged ids. */
    {
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Plain", NULL, plain_handler, NULL, NULL, &t), QTBUS_OK);
        qtbus_event_desc d = tu_event("Plain", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        qtbus_deferred d0 = {5};
        CHECK_EQ_INT(qtbus_event_defer(NULL, &d0), QTBUS_EINVAL);
        CHECK_EQ_U64(d0.id, 0);
        CHECK_EQ_INT(qtbus_deferred_finish((qtbus_deferred){0}), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_deferred_finish((qtbus_deferred){0x123456789ull}), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_deferred_reply((qtbus_deferred){~0ull}, "x", 1), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* Stress: deferred on this thread, answered and finished on four others. */
    {
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Job", NULL, stress_handler, NULL, NULL, &t), QTBUS_OK);
        for (intptr_t i = 0; i < STRESS_REQUESTS; i++) {
            qtbus_event_desc d = tu_event("Job", NULL);
            CHECK_EQ_INT(qtbus_request(bus, &d, stress_reply, (void *)i, stress_complete), 1);
        }
        CHECK_EQ_INT(atomic_load(&stress_completions), 0);
        tu_run_threads(STRESS_THREADS, finisher, NULL);
        CHECK_EQ_INT(atomic_load(&stress_completions), STRESS_REQUESTS);
        CHECK_EQ_INT(atomic_load(&stress_replies), STRESS_REQUESTS);
        CHECK_EQ_INT(atomic_load(&replies_after_completion), 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_deferred_reply: passed\n");
    return 0;
}
