/* SPDX-License-Identifier: MIT */
/*
 * test_nats_restart.c -- the server dies (SIGKILL) while a bridge exports: what is
 * dispatched during the outage waits in nats.c's reconnect buffer and reaches the
 * restarted server; what does not fit is reported (a MISUSE record per event, with the
 * reason), never lost silently: stored + reported == dispatched.  Imports come back
 * too: the subscription is sent again on reconnect.
 *
 * The server keeps a JetStream stream of every subject under the prefix (file storage,
 * so it survives the restart): its message count is what the server received, which
 * no subscriber's reconnect timing can blur.
 */
#include "nats_server.h"

#include <qtbus_nats.h>
#include <nats/nats.h>

static ns_server server;
static atomic_int reported;
static char last_report[400];

static void hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    /* Exports report on the dispatching thread (this test's): the text, then the count. */
    if (r->kind == QTBUS_TRACE_MISUSE && strcmp(r->function, "qtbus_nats_export") == 0) {
        if (atomic_load(&reported) == 0) snprintf(last_report, sizeof last_report, "%s", qtbus_errmsg());
        atomic_fetch_add(&reported, 1);
    }
}

/* Messages the server holds in the stream. */
static uint64_t stored(void)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    CHECK_EQ_INT(natsConnection_ConnectTo(&nc, server.url), NATS_OK);
    CHECK_EQ_INT(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    CHECK_EQ_INT(js_GetStreamInfo(&si, js, "ALL", NULL, NULL), NATS_OK);
    uint64_t n = si->State.Msgs;
    jsStreamInfo_Destroy(si);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return n;
}

static void make_stream(void)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    CHECK_EQ_INT(natsConnection_ConnectTo(&nc, server.url), NATS_OK);
    CHECK_EQ_INT(natsConnection_JetStream(&js, nc, NULL), NATS_OK);
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    const char *subjects[] = {"qtbus.>"};
    sc.Name = "ALL";
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    CHECK_EQ_INT(js_AddStream(NULL, js, &sc, NULL, NULL), NATS_OK);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
}

typedef struct counter {
    atomic_int count;
    atomic_int out_of_order;
    atomic_int last;
} counter;

static void count(const qtbus_event *e, void *userdata)
{
    counter *c = userdata;
    int seq = 0;
    size_t size = 0;
    const void *data = qtbus_event_data(e, &size);
    if (size >= sizeof seq) memcpy(&seq, data, sizeof seq);
    if (seq != atomic_load(&c->last) + 1) atomic_fetch_add(&c->out_of_order, 1);
    atomic_store(&c->last, seq);
    atomic_fetch_add(&c->count, 1);
}

static int dispatch_seq(qtbus_bus *bus, const char *type, int seq, size_t size)
{
    static char buffer[64 * 1024];
    memcpy(buffer, &seq, sizeof seq);
    qtbus_event_desc d = {.type = type, .data = buffer, .size = size};
    return qtbus_dispatch(bus, &d);
}

int main(void)
{
    ns_start(&server);
    make_stream();
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    qtbus_nats *ba = NULL, *bb = NULL;
    qtbus_nats_options o = {.url = server.url};
    CHECK_EQ_INT(qtbus_nats_connect(a, &o, &ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_connect(b, &o, &bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(a, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_export(ba, "Tick"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_export(ba, "Big"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "Tick"), QTBUS_OK);
    static counter ticks;
    CHECK_EQ_INT(qtbus_subscribe(b, "Tick", NULL, count, &ticks, NULL, NULL), QTBUS_OK);

    /* Before: everything crosses. */
    int seq = 0;
    for (int i = 0; i < 100; i++)
        CHECK_EQ_INT(dispatch_seq(a, "Tick", ++seq, 16), 1);
    CHECK_WAIT(atomic_load(&ticks.count) == 100, TU_WAIT_MS);
    CHECK_WAIT(stored() == 100, TU_WAIT_MS);

    /* The server dies.  Both bridges notice (the socket closes) and reconnect. */
    ns_kill(&server);
    CHECK_WAIT(!qtbus_nats_is_connected(ba) && !qtbus_nats_is_connected(bb), TU_WAIT_MS);

    /* During the outage: small events fit the reconnect buffer; dispatch never waits. */
    int64_t start = tu_now_ms();
    for (int i = 0; i < 1000; i++)
        CHECK_EQ_INT(dispatch_seq(a, "Tick", ++seq, 16), 1);
    /* 200 events of 64 KiB, 12.5 MiB: more than the 8 MiB buffer holds. */
    for (int i = 0; i < 200; i++)
        CHECK_EQ_INT(dispatch_seq(a, "Big", i, 64 * 1024), 1);
    int64_t took = tu_now_ms() - start;
    CHECK_MSG(took < 5000, "dispatching during the outage took %lld ms", (long long)took);
    int lost = atomic_load(&reported);
    CHECK_MSG(lost > 0 && lost < 200, "%d of the 200 big events reported as not published", lost);
    printf(
        "outage: 1000 small + 200 big events dispatched in %lld ms; %d big ones did not fit and were reported:\n  %s\n",
        (long long)took, lost, last_report);
    CHECK(strstr(last_report, "qtbus_nats_export: ") == last_report);
    CHECK(strstr(last_report, "qtbus.e._.Big not published") != NULL);

    /* Back: the buffer reaches the server, the import resumes. */
    ns_restart(&server);
    CHECK_WAIT(qtbus_nats_is_connected(ba) && qtbus_nats_is_connected(bb), TU_WAIT_MS);
    uint64_t expected = 100 + 1000 + (uint64_t)(200 - lost);
    CHECK_WAIT(stored() == expected, TU_WAIT_MS);
    printf("after the restart the server holds %llu = 100 before + 1000 small + %d big (+ %d reported) events\n",
           (unsigned long long)expected, 200 - lost, lost);

    /* Live again, in order (the outage's ticks may or may not have reached b: b's
     * subscription and a's buffer race to the new server; core NATS promises no more). */
    int before = atomic_load(&ticks.count);
    atomic_store(&ticks.last, seq);
    atomic_store(&ticks.out_of_order, 0);
    for (int i = 0; i < 100; i++)
        CHECK_EQ_INT(dispatch_seq(a, "Tick", ++seq, 16), 1);
    CHECK_WAIT(atomic_load(&ticks.count) >= before + 100 && atomic_load(&ticks.last) == seq, TU_WAIT_MS);
    printf("b received %d of the 1000 outage ticks; the 100 after it all, in order\n", before - 100);

    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(a, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_restart: passed\n");
    return 0;
}
