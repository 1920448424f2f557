/* SPDX-License-Identifier: MIT */
/*
 * test_nats_answers.c -- the answering side of a bridged request (the process whose
 * handlers answer a remote qtbus_request) reports every answer it could not send,
 * instead of leaving the requester to time out or miss replies:
 *   - a reply larger than the server's max_payload: a MISUSE record on the answering
 *     bus, function "qtbus_nats_import", qtbus_errmsg() naming the reply's size, the
 *     request's subject and nats.c's reason; the other replies and the end still go,
 *     so the requester gets them and completes before its timeout;
 *   - the acknowledgement, when it cannot be published (here: the server is gone and
 *     nats.c's reconnect buffer is full when the request is handed to the bridge);
 *   - a reply and the end sent after the answering bridge was closed (a handler that
 *     deferred): reported on the thread that answers, in qtbus_errmsg(), with no
 *     MISUSE record (a closed bridge no longer knows that its bus is alive).
 */
#include "nats_server.h"

#include <nats/nats.h>
#include <qtbus_nats.h>

static ns_server server;

/* ---- what the answering bus's trace hook saw ------------------------------------- */

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static int answer_records;       /* qtbus_nats_import records about an answer */
static char answer_why[400];     /* the first one's qtbus_errmsg() */
static int other_import_records; /* drops (expected where the backlog is full) */
static int buffer_full;          /* qtbus_nats_export: the reconnect buffer is full */
static int other_records;
static char other_why[400];

static atomic_int hold_drops, drops_held, drop_gate_open, dispatch_gate_open;

static void wait_open(atomic_int *gate)
{
    int64_t deadline = tu_now_ms() + 60000;
    while (!atomic_load(gate)) {
        if (tu_now_ms() > deadline) tu_fail(__FILE__, __LINE__, "gate never opened");
        tu_sleep_ms(1);
    }
}

static void hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind != QTBUS_TRACE_MISUSE) return;
    const char *m = qtbus_errmsg();
    pthread_mutex_lock(&seen_lock);
    if (strcmp(r->function, "qtbus_nats_import") == 0 && strstr(m, "was not sent")) {
        if (!answer_records++) snprintf(answer_why, sizeof answer_why, "%s", m);
    } else if (strcmp(r->function, "qtbus_nats_import") == 0 && strstr(m, "dropped a")) {
        other_import_records++;
    } else if (strcmp(r->function, "qtbus_nats_export") == 0 && strstr(m, "reconnect buffer is full")) {
        buffer_full++;
    } else {
        if (!other_records++) snprintf(other_why, sizeof other_why, "%s", m);
    }
    pthread_mutex_unlock(&seen_lock);
    /* Holds nats.c's delivery thread that reported the drop, once armed. */
    if (strstr(m, "dropped a") && atomic_exchange(&hold_drops, 0)) {
        atomic_store(&drops_held, 1);
        wait_open(&drop_gate_open);
    }
}

static int seen(int *counter)
{
    pthread_mutex_lock(&seen_lock);
    int n = *counter;
    pthread_mutex_unlock(&seen_lock);
    return n;
}

static void seen_reset(void)
{
    pthread_mutex_lock(&seen_lock);
    answer_records = other_import_records = buffer_full = other_records = 0;
    answer_why[0] = other_why[0] = '\0';
    pthread_mutex_unlock(&seen_lock);
}

/* ---- the requester ----------------------------------------------------------------- */

typedef struct requester {
    atomic_int replies, completions;
    char last[64];
} requester;

static void on_reply(const qtbus_event *reply, void *userdata)
{
    requester *q = userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(reply, &size);
    snprintf(q->last, sizeof q->last, "%.*s", (int)size, data ? data : "");
    atomic_fetch_add(&q->replies, 1);
}

static void on_complete(void *userdata) { atomic_fetch_add(&((requester *)userdata)->completions, 1); }

/* ---- the answering handlers ------------------------------------------------------- */

enum { BIG = 2 * 1024 * 1024 };
static char big[BIG];

/* A reply too large for the server, then one that fits. */
static void answer_big(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_reply(e, big, BIG), QTBUS_OK);
    CHECK_EQ_INT(qtbus_event_reply(e, "fits", 4), QTBUS_OK);
}

static _Atomic uint64_t deferred_id;
static void answer_later(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    qtbus_deferred d;
    CHECK_EQ_INT(qtbus_event_defer(e, &d), QTBUS_OK);
    atomic_store(&deferred_id, d.id);
}

/* Plain Ask events: the first holds the bridge's thread, so its backlog fills. */
static atomic_int ask_events;
static void ask_stuck(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    if (qtbus_event_flags(e) & QTBUS_EVENT_REQUEST) return;
    if (atomic_fetch_add(&ask_events, 1) == 0) wait_open(&dispatch_gate_open);
}

int main(void)
{
    ns_start(&server);
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_trace_set(b, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);

    /* A reply over max_payload (1 MiB): reported; the rest of the answer still goes. */
    {
        enum { TIMEOUT_MS = 20000 };
        qtbus_nats *ba = ns_bridge(&server, a, TIMEOUT_MS, 0), *bb = ns_bridge(&server, b, TIMEOUT_MS, 0);
        CHECK_EQ_INT(qtbus_nats_export(ba, "Big"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Big"), QTBUS_OK);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(b, "Big", NULL, answer_big, NULL, NULL, &t), QTBUS_OK);
        static requester q;
        qtbus_event_desc d = tu_event("Big", NULL);
        int64_t start = tu_now_ms();
        CHECK_EQ_INT(qtbus_request(a, &d, on_reply, &q, on_complete), 1);
        CHECK_WAIT(atomic_load(&q.completions) == 1, TU_WAIT_MS);
        /* answer_why is read after seen_lock: b's bridge thread wrote it in the hook, and
         * what orders that before the completion (the reply's trip through the server,
         * in nats.c) is invisible to ThreadSanitizer. */
        int records = seen(&answer_records);
        printf("a reply over max_payload: requester completed after %lld ms with %d reply (\"%s\"); reported: %s\n",
               (long long)(tu_now_ms() - start), atomic_load(&q.replies), q.last, answer_why);
        CHECK(tu_now_ms() - start < TIMEOUT_MS);
        CHECK_EQ_INT(atomic_load(&q.replies), 1);
        CHECK_EQ_STR(q.last, "fits");
        CHECK_EQ_INT(records, 1);
        char expected[200];
        snprintf(expected, sizeof expected,
                 "qtbus_nats_import: a reply of %d bytes to a request on qtbus.q._.Big was not sent: %s", BIG,
                 natsStatus_GetText(NATS_MAX_PAYLOAD));
        CHECK_MSG(strstr(answer_why, expected) == answer_why, "expected \"%s...\"", expected);
        CHECK_EQ_INT(seen(&other_records), 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
        seen_reset();
    }

    /* Answered after the answering bridge was closed: told on the answering thread. */
    {
        qtbus_nats *ba = ns_bridge(&server, a, 1000, 0), *bb = ns_bridge(&server, b, 1000, 0);
        CHECK_EQ_INT(qtbus_nats_export(ba, "Later"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Later"), QTBUS_OK);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(b, "Later", NULL, answer_later, NULL, NULL, &t), QTBUS_OK);
        static requester q;
        qtbus_event_desc d = tu_event("Later", NULL);
        CHECK_EQ_INT(qtbus_request(a, &d, on_reply, &q, on_complete), 1);
        CHECK_WAIT(atomic_load(&deferred_id) != 0, TU_WAIT_MS);
        CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
        qtbus_deferred later = {atomic_exchange(&deferred_id, 0)};
        /* A known text first, so that a report that is not made cannot pass for one. */
        CHECK_EQ_INT(qtbus_nats_close(NULL), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_deferred_reply(later, "late", 4), QTBUS_OK);
        printf("a reply after close: %s\n", qtbus_errmsg());
        CHECK(strstr(qtbus_errmsg(),
                     "qtbus_nats_import: a reply of 4 bytes to a request on qtbus.q._.Later was not sent: ") ==
              qtbus_errmsg());
        CHECK(strstr(qtbus_errmsg(), "the bridge was closed") != NULL);
        CHECK_EQ_INT(qtbus_nats_close(NULL), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_deferred_finish(later), QTBUS_OK);
        printf("the end after close: %s\n", qtbus_errmsg());
        CHECK(strstr(qtbus_errmsg(), "qtbus_nats_import: the end of a request on qtbus.q._.Later was not sent: ") ==
              qtbus_errmsg());
        /* No record: the bridge was closed. */
        CHECK_EQ_INT(seen(&answer_records), 0);
        CHECK_WAIT(atomic_load(&q.completions) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(atomic_load(&q.replies), 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
        seen_reset();
    }

    /* The acknowledgement: the request reaches on_message (nats.c's delivery thread)
     * only once the server is gone and the answering bridge's reconnect buffer is
     * full, so publishing it fails at once. */
    {
        natsConnection *raw = NULL;
        CHECK_EQ_INT(natsConnection_ConnectTo(&raw, server.url), NATS_OK);
        qtbus_nats *bb = ns_bridge(&server, b, 1000, 0);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Ask"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(bb, "Fill"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(b, "Ask", NULL, ask_stuck, NULL, NULL, NULL), QTBUS_OK);
        enum { SIZE = 1000000, FILL = 70 };
        static char blob[SIZE];
        /* About 67 fill the backlog behind the stuck handler; the next drop holds
         * nats.c's delivery thread of the import in the hook. */
        atomic_store(&hold_drops, 1);
        for (int i = 0; i < FILL; i++)
            CHECK_EQ_INT(natsConnection_Publish(raw, "qtbus.e._.Ask", blob, SIZE), NATS_OK);
        CHECK_EQ_INT(natsConnection_FlushTimeout(raw, 10000), NATS_OK);
        CHECK_WAIT(atomic_load(&drops_held) == 1, 30000);
        /* The request waits in nats.c behind the held thread; it is a bridge's (the
         * header says so), which is what the acknowledgement is sent for. */
        natsMsg *ask = NULL;
        CHECK_EQ_INT(natsMsg_Create(&ask, "qtbus.q._.Ask", "answers.1", "?", 1), NATS_OK);
        CHECK_EQ_INT(natsMsgHeader_Set(ask, "Qtbus-Request", "1"), NATS_OK);
        CHECK_EQ_INT(natsConnection_PublishMsg(raw, ask), NATS_OK);
        natsMsg_Destroy(ask);
        CHECK_EQ_INT(natsConnection_FlushTimeout(raw, 10000), NATS_OK);
        tu_sleep_ms(300);
        ns_kill(&server);
        CHECK_WAIT(qtbus_nats_is_connected(bb) == 0, TU_WAIT_MS);
        for (int i = 0; i < 40 && !seen(&buffer_full); i++) {
            qtbus_event_desc d = {.type = "Fill", .data = blob, .size = SIZE};
            CHECK_EQ_INT(qtbus_dispatch(b, &d), 1);
        }
        CHECK(seen(&buffer_full) > 0);
        CHECK_EQ_INT(seen(&answer_records), 0);
        atomic_store(&drop_gate_open, 1);
        CHECK_WAIT(seen(&answer_records) == 1, TU_WAIT_MS);
        printf("an acknowledgement that could not be published: %s\n", answer_why);
        char expected[200];
        snprintf(expected, sizeof expected,
                 "qtbus_nats_import: the acknowledgement of a request on qtbus.q._.Ask was not sent: %s",
                 natsStatus_GetText(NATS_INSUFFICIENT_BUFFER));
        CHECK_MSG(strstr(answer_why, expected) == answer_why, "expected \"%s...\"", expected);
        atomic_store(&dispatch_gate_open, 1);
        ns_restart(&server);
        CHECK_WAIT(qtbus_nats_is_connected(bb) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
        CHECK_EQ_INT(seen(&other_records), 0);
        natsConnection_Destroy(raw);
    }

    CHECK_EQ_INT(qtbus_trace_set(b, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_answers: passed\n");
    return 0;
}
