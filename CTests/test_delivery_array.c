/* SPDX-License-Identifier: MIT */
/*
 * test_delivery_array.c -- a type dispatched again and again with nothing changing is
 * delivered from an array of its subscriptions (Dispatch.swift, deliverArray), made by
 * the second dispatch after a change.  Each case here dispatches a few times first, so
 * that the array is in use, then checks that it behaves as the list walk:
 *   - order by priority, then subscription order;
 *   - a handler disposing a later subscription: that one is not called; its own token:
 *     the later ones still are; the release runs after the dispatch returned;
 *   - a handler subscribing: the new one does not receive the current dispatch, and
 *     receives the next;
 *   - qtbus_event_stop ends the delivery and the count says how many ran;
 *   - a ONCE subscription among direct ones fires once, the others every time;
 *   - a subscription on another thread while dispatches run (threads).
 */
#include "test_util.h"

enum { N = 6 };
static qtbus_bus *bus;
static qtbus_token tokens[N + 2];
static int order[64], norder;
static atomic_int calls[N + 2];
static atomic_int releases[N + 2];
static int stop_at = -1, dispose_at = -1, dispose_which = -1, subscribe_at = -1;
static int record = 1; /* order[] is written by one thread only */
static _Thread_local int in_handler;

static void on(const qtbus_event *e, void *userdata)
{
    int i = (int)(intptr_t)userdata;
    in_handler = 1;
    atomic_fetch_add(&calls[i], 1);
    if (record && norder < 64) order[norder++] = i;
    if (i == dispose_at) CHECK_EQ_INT(qtbus_token_dispose(tokens[dispose_which]), QTBUS_OK);
    if (i == subscribe_at) {
        qtbus_sub_options o = {.priority = -100};
        CHECK_EQ_INT(qtbus_subscribe(bus, "Arr", &o, on, (void *)(intptr_t)(N + 1), NULL, &tokens[N + 1]), QTBUS_OK);
        subscribe_at = -1;
    }
    if (i == stop_at) CHECK_EQ_INT(qtbus_event_stop(e), QTBUS_OK);
    in_handler = 0;
}

static void on_release(void *userdata)
{
    int i = (int)(intptr_t)userdata;
    CHECK(!in_handler); /* lifetime rule 1: once the dispatch's handlers returned */
    atomic_fetch_add(&releases[i], 1);
}

static int dispatch(void)
{
    qtbus_event_desc d = {.type = "Arr"};
    norder = 0;
    return qtbus_dispatch(bus, &d);
}

static void reset(void)
{
    for (int i = 0; i < N + 2; i++)
        atomic_store(&calls[i], 0);
    stop_at = dispose_at = dispose_which = subscribe_at = -1;
}

/* N subscriptions, priorities 0, 5, 0, 5, 0, 5: delivered 1 3 5 0 2 4. */
static void subscribe_all(void)
{
    for (int i = 0; i < N; i++) {
        qtbus_sub_options o = {.priority = i % 2 ? 5 : 0};
        CHECK_EQ_INT(qtbus_subscribe(bus, "Arr", &o, on, (void *)(intptr_t)i, on_release, &tokens[i]), QTBUS_OK);
    }
}

static void warm(int expected)
{
    for (int k = 0; k < 3; k++)
        CHECK_EQ_INT(dispatch(), expected);
}

static const int expected_order[N] = {1, 3, 5, 0, 2, 4};

static void dispose_rest(void)
{
    for (int i = 0; i < N + 2; i++)
        if (tokens[i].id) (void)qtbus_token_dispose(tokens[i]);
    memset(tokens, 0, sizeof tokens);
}

typedef struct {
    atomic_int stop;
} churn_ctx;
static void churn(int index, void *p)
{
    churn_ctx *c = p;
    if (index == 0) {
        /* Subscribes and disposes while the others dispatch: each dispatch reaches the
         * N steady subscriptions, plus the churning one or not. */
        for (int k = 0; k < 20000; k++) {
            qtbus_token t;
            CHECK_EQ_INT(qtbus_subscribe(bus, "Arr", NULL, on, (void *)(intptr_t)N, NULL, &t), QTBUS_OK);
            CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        }
        atomic_store(&c->stop, 1);
    } else {
        qtbus_event_desc d = {.type = "Arr"};
        while (!atomic_load(&c->stop)) {
            int n = qtbus_dispatch(bus, &d);
            CHECK(n == N || n == N + 1);
        }
    }
}

int main(void)
{
    bus = qtbus_bus_create();
    subscribe_all();

    /* Order, every time. */
    warm(N);
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(dispatch(), N);
        CHECK_EQ_INT(norder, N);
        for (int i = 0; i < N; i++)
            CHECK_EQ_INT(order[i], expected_order[i]);
    }

    /* Stop at the third handler (5): three ran. */
    reset();
    warm(N);
    stop_at = 5;
    CHECK_EQ_INT(dispatch(), 3);
    CHECK_EQ_INT(norder, 3);
    stop_at = -1;

    /* 3 disposes 2 (later): 2 is not called; its release runs after the dispatch. */
    reset();
    warm(N);
    dispose_at = 3;
    dispose_which = 2;
    CHECK_EQ_INT(dispatch(), N - 1);
    CHECK_EQ_INT(atomic_load(&calls[2]), 3);
    CHECK_EQ_INT(atomic_load(&releases[2]), 1);
    tokens[2].id = 0;
    dispose_at = -1;
    warm(N - 1);

    /* 5 disposes itself: the later ones (0, 4) still run. */
    reset();
    dispose_at = 5;
    dispose_which = 5;
    CHECK_EQ_INT(dispatch(), N - 1);
    CHECK_EQ_INT(atomic_load(&calls[0]), 1);
    CHECK_EQ_INT(atomic_load(&calls[4]), 1);
    CHECK_EQ_INT(atomic_load(&releases[5]), 1);
    tokens[5].id = 0;
    dispose_at = -1;
    warm(N - 2);

    /* 1 subscribes a new one (lowest priority): not now, then every time. */
    reset();
    subscribe_at = 1;
    CHECK_EQ_INT(dispatch(), N - 2);
    CHECK_EQ_INT(atomic_load(&calls[N + 1]), 0);
    warm(N - 1);
    CHECK_EQ_INT(atomic_load(&calls[N + 1]), 3);
    CHECK_EQ_INT(order[N - 2], N + 1);

    /* A ONCE subscription among them: once; the others every time. */
    reset();
    qtbus_sub_options once = {.flags = QTBUS_SUB_ONCE, .priority = 1};
    CHECK_EQ_INT(qtbus_subscribe(bus, "Arr", &once, on, (void *)(intptr_t)N, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(dispatch(), N);
    for (int k = 0; k < 4; k++)
        CHECK_EQ_INT(dispatch(), N - 1);
    CHECK_EQ_INT(atomic_load(&calls[N]), 1);
    CHECK_EQ_INT(atomic_load(&calls[1]), 5);

    /* Subscribe and dispose on one thread while three dispatch. */
    dispose_rest();
    subscribe_all();
    warm(N);
    churn_ctx c = {0};
    record = 0;
    tu_run_threads(4, churn, &c);
    record = 1;
    CHECK_EQ_INT(dispatch(), N);

    dispose_rest();
    CHECK_EQ_INT(dispatch(), 0);
    qtbus_bus_destroy(bus);
    for (int i = 0; i < N; i++)
        CHECK(atomic_load(&releases[i]) >= 1);
    puts("test_delivery_array: ok");
    return 0;
}
