/* SPDX-License-Identifier: MIT */
/*
 * test_nats_close.c -- qtbus_nats_close says when what it was asked to deliver may
 * be lost:
 *   - an import whose subscription does not drain (nats.c still holds messages for it
 *     when the drain's 3 s are up, because its delivery thread is held) makes close
 *     return QTBUS_EIO, the bridge freed all the same, with qtbus_errmsg() naming the
 *     import's subject and nats.c's reason, and one MISUSE record, close's; the server
 *     being up and the flush fine, the previous bridge returned QTBUS_OK;
 *   - with the server gone, close's one report names both the flush that did not
 *     complete and the subscriptions that did not drain.
 * How the delivery thread is held: the receiving bus's handler is stuck, so the
 * bridge's backlog fills (QTBUS_NATS_MAX_PENDING_BYTES); the next event is dropped
 * with a report made on nats.c's delivery thread, and this test's trace hook keeps
 * that thread until the test lets it go.
 */
#include "nats_server.h"

#include <nats/nats.h>
#include <qtbus_nats.h>

static ns_server server;

/* A gate that waits longer than tu_gate's 10 s: a held thread waits through close. */
static atomic_int drop_gate_open, dispatch_gate_open;
static void wait_open(atomic_int *gate)
{
    int64_t deadline = tu_now_ms() + 60000;
    while (!atomic_load(gate)) {
        if (tu_now_ms() > deadline) tu_fail(__FILE__, __LINE__, "gate never opened");
        tu_sleep_ms(1);
    }
}

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static int close_records;
static char close_errmsg[400];
static atomic_int drops_held; /* the drop report that holds nats.c's thread: 1 once it does */
static atomic_int hold_drops; /* armed: the next drop report holds its thread */

static void hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind != QTBUS_TRACE_MISUSE) return;
    if (strcmp(r->function, "qtbus_nats_close") == 0) {
        pthread_mutex_lock(&seen_lock);
        close_records++;
        snprintf(close_errmsg, sizeof close_errmsg, "%s", qtbus_errmsg());
        pthread_mutex_unlock(&seen_lock);
    }
    if (strcmp(r->function, "qtbus_nats_import") == 0 && strstr(qtbus_errmsg(), "dropped a") &&
        atomic_exchange(&hold_drops, 0)) {
        atomic_store(&drops_held, 1);
        wait_open(&drop_gate_open);
    }
}

static atomic_int stuck_calls;
static void stuck(const qtbus_event *e, void *userdata)
{
    (void)e;
    (void)userdata;
    if (atomic_fetch_add(&stuck_calls, 1) == 0) wait_open(&dispatch_gate_open);
}

/* Opens both gates after `ms`: long enough for close's drain to have timed out. */
static void *open_later(void *arg)
{
    tu_sleep_ms(*(int *)arg);
    atomic_store(&drop_gate_open, 1);
    atomic_store(&dispatch_gate_open, 1);
    return NULL;
}

int main(void)
{
    ns_start(&server);
    natsConnection *raw = NULL;
    CHECK_EQ_INT(natsConnection_ConnectTo(&raw, server.url), NATS_OK);

    /* The import's delivery thread held past the drain's 3 s. */
    {
        qtbus_bus *b = qtbus_bus_create();
        qtbus_nats *bb = NULL;
        qtbus_nats_options o = {.url = server.url};
        CHECK_EQ_INT(qtbus_nats_connect(b, &o, &bb), QTBUS_OK);
        CHECK_EQ_INT(qtbus_trace_set(b, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Blob"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(b, "Blob", NULL, stuck, NULL, NULL, NULL), QTBUS_OK);

        /* 1,000,000-byte events: about 67 fill the backlog; the next is dropped. */
        enum { SIZE = 1000000, FILL = 70, MORE = 5 };
        static char blob[SIZE];
        atomic_store(&hold_drops, 1);
        for (int i = 0; i < FILL; i++)
            CHECK_EQ_INT(natsConnection_Publish(raw, "qtbus.e._.Blob", blob, SIZE), NATS_OK);
        CHECK_EQ_INT(natsConnection_FlushTimeout(raw, 10000), NATS_OK);
        CHECK_WAIT(atomic_load(&drops_held) == 1, 30000);
        /* These wait in nats.c, behind the held thread: the drain cannot deliver them. */
        for (int i = 0; i < MORE; i++)
            CHECK_EQ_INT(natsConnection_Publish(raw, "qtbus.e._.Blob", blob, 16), NATS_OK);
        CHECK_EQ_INT(natsConnection_FlushTimeout(raw, 10000), NATS_OK);
        tu_sleep_ms(200);

        static int after_ms = 6000;
        pthread_t opener;
        CHECK_EQ_INT(pthread_create(&opener, NULL, open_later, &after_ms), 0);
        int64_t start = tu_now_ms();
        int rc = qtbus_nats_close(bb);
        const char *m = qtbus_errmsg();
        printf("close with an import that did not drain: %s after %lld ms: %s\n", tu_status_name(rc),
               (long long)(tu_now_ms() - start), m);
        CHECK_EQ_INT(rc, QTBUS_EIO);
        CHECK(strstr(m, "qtbus_nats_close: ") == m);
        CHECK(strstr(m, "did not drain") != NULL);
        CHECK(strstr(m, "qtbus.*.*.Blob") != NULL);
        CHECK(strstr(m, natsStatus_GetText(NATS_TIMEOUT)) != NULL);
        /* The flush was fine: the report is about the drain alone. */
        CHECK(strstr(m, "did not reach the server") == NULL);
        pthread_mutex_lock(&seen_lock);
        CHECK_EQ_INT(close_records, 1);
        CHECK_EQ_STR(close_errmsg, m);
        close_records = 0;
        pthread_mutex_unlock(&seen_lock);
        pthread_join(opener, NULL);
        CHECK(atomic_load(&stuck_calls) >= 1);
        CHECK_EQ_INT(qtbus_trace_set(b, 0, NULL, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    }

    /* The server gone: the flush and the drain both fail, in one report. */
    {
        qtbus_bus *b = qtbus_bus_create();
        qtbus_nats *bb = NULL;
        qtbus_nats_options o = {.url = server.url};
        CHECK_EQ_INT(qtbus_nats_connect(b, &o, &bb), QTBUS_OK);
        CHECK_EQ_INT(qtbus_trace_set(b, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Gone"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(bb, "Gone"), QTBUS_OK);
        ns_kill(&server);
        CHECK_WAIT(qtbus_nats_is_connected(bb) == 0, TU_WAIT_MS);
        qtbus_event_desc d = {.type = "Gone", .data = "x", .size = 1};
        CHECK_EQ_INT(qtbus_dispatch(b, &d), 1); /* waits in the reconnect buffer */
        int64_t start = tu_now_ms();
        int rc = qtbus_nats_close(bb);
        const char *m = qtbus_errmsg();
        printf("close with the server gone: %s after %lld ms: %s\n", tu_status_name(rc),
               (long long)(tu_now_ms() - start), m);
        CHECK_EQ_INT(rc, QTBUS_EIO);
        CHECK(strstr(m, "qtbus_nats_close: what was published did not reach the server within 5000 ms") == m);
        CHECK(strstr(m, "did not drain") != NULL);
        CHECK(strstr(m, "qtbus.*.*.Gone") != NULL);
        pthread_mutex_lock(&seen_lock);
        CHECK_EQ_INT(close_records, 1);
        CHECK_EQ_STR(close_errmsg, m);
        pthread_mutex_unlock(&seen_lock);
        CHECK_EQ_INT(qtbus_trace_set(b, 0, NULL, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    }

    natsConnection_Destroy(raw);
    ns_stop(&server);
    printf("test_nats_close: passed\n");
    return 0;
}
