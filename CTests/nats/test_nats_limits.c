/* SPDX-License-Identifier: MIT */
/*
 * test_nats_limits.c -- what does not fit is reported, never a crash and never silent:
 *   - an exported event larger than the server's max_payload (1 MiB by default) is not
 *     published: a MISUSE record and qtbus_errmsg() say so, the dispatch itself works;
 *   - a receiving bridge whose handler is stuck holds at most
 *     QTBUS_NATS_MAX_PENDING_BYTES of received events: beyond that each one is
 *     dropped with a report, and received + reported == sent once it is unstuck;
 *   - the nodes a backlog of small events took are given back once the bridge has been
 *     idle for a second (the heap in use falls back), and events still flow after.
 */
#include "nats_server.h"

#include <malloc.h>
#include <qtbus_nats.h>

static ns_server server;

static atomic_int export_reports, import_reports;
static char export_why[400], import_why[400];

static void hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind != QTBUS_TRACE_MISUSE) return;
    /* The text before the count: the test reads it once it sees the count (each kind is
     * reported from one thread: exports on the dispatching one, imports on nats.c's). */
    if (strcmp(r->function, "qtbus_nats_export") == 0) {
        if (atomic_load(&export_reports) == 0) snprintf(export_why, sizeof export_why, "%s", qtbus_errmsg());
        atomic_fetch_add(&export_reports, 1);
    }
    if (strcmp(r->function, "qtbus_nats_import") == 0) {
        if (atomic_load(&import_reports) == 0) snprintf(import_why, sizeof import_why, "%s", qtbus_errmsg());
        atomic_fetch_add(&import_reports, 1);
    }
}

static tu_gate gate;
static atomic_int received;
static void stuck(const qtbus_event *e, void *userdata)
{
    (void)e;
    (void)userdata;
    tu_gate_pass(&gate);
    atomic_fetch_add(&received, 1);
}

/* Bytes in use over every malloc arena (mallinfo2 sees only the main one, and the
 * bridge's nodes come from nats.c's threads' arenas): malloc_info's totals, the last
 * <system type="current"> less the last free <total>s.  0 where malloc is not glibc's
 * (valgrind, ASan). */
static long long heap_in_use(void)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) return 0;
    malloc_info(0, f);
    fclose(f);
    long long current = 0, fast = 0, rest = 0, v;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (sscanf(line, " <system type=\"current\" size=\"%lld\"/>", &v) == 1) current = v;
        if (sscanf(line, " <total type=\"fast\" count=\"%*d\" size=\"%lld\"/>", &v) == 1) fast = v;
        if (sscanf(line, " <total type=\"rest\" count=\"%*d\" size=\"%lld\"/>", &v) == 1) rest = v;
    }
    free(text);
    return current - fast - rest;
}

int main(void)
{
    ns_start(&server);
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    qtbus_nats *ba = NULL, *bb = NULL;
    qtbus_nats_options o = {.url = server.url};
    CHECK_EQ_INT(qtbus_nats_connect(a, &o, &ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_connect(b, &o, &bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(a, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(b, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_export(ba, "Blob"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "Blob"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(b, "Blob", NULL, stuck, NULL, NULL, NULL), QTBUS_OK);

    static char blob[2 * 1024 * 1024];

    /* Larger than the server takes. */
    qtbus_event_desc big = {.type = "Blob", .data = blob, .size = sizeof blob};
    CHECK_EQ_INT(qtbus_dispatch(a, &big), 1);
    CHECK_EQ_INT(atomic_load(&export_reports), 1);
    printf("too big to publish: %s\n", export_why);
    CHECK(strstr(export_why, "qtbus_nats_export: 2097152 bytes on qtbus.e._.Blob not published") == export_why);

    /* 100 events of 1,000,000 bytes to a stuck handler: about 67 fit the 64 MiB bound. */
    enum { SENT = 100, SIZE = 1000000 };
    for (int i = 0; i < SENT; i++) {
        qtbus_event_desc d = {.type = "Blob", .data = blob, .size = SIZE};
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
    }
    int expected_dropped = SENT - (int)(QTBUS_NATS_MAX_PENDING_BYTES / SIZE);
    /* One may sit in the stuck handler, outside the bound. */
    CHECK_WAIT(atomic_load(&import_reports) >= expected_dropped - 1, TU_WAIT_MS);
    atomic_store(&gate.open, 1);
    CHECK_WAIT(atomic_load(&received) + atomic_load(&import_reports) == SENT, TU_WAIT_MS);
    tu_sleep_ms(200);
    printf("to a stuck handler: %d sent, %d received, %d dropped and reported:\n  %s\n", SENT, atomic_load(&received),
           atomic_load(&import_reports), import_why);
    CHECK_EQ_INT(atomic_load(&received) + atomic_load(&import_reports), SENT);
    CHECK(strstr(import_why, "qtbus_nats_import: dropped a 1000000-byte event on qtbus.e._.Blob") == import_why);

    /* A backlog of 3000 small events behind a stuck handler: each waits in a node. */
    enum { BURST = 3000 };
    atomic_store(&gate.open, 0);
    atomic_store(&gate.entered, 0);
    atomic_store(&received, 0);
    long long before = heap_in_use();
    for (int i = 0; i < BURST; i++) {
        qtbus_event_desc d = {.type = "Blob", .data = blob, .size = 64};
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
    }
    CHECK_WAIT(atomic_load(&gate.entered) > 0, TU_WAIT_MS);
    tu_sleep_ms(300); /* the rest arrives and waits */
    atomic_store(&gate.open, 1);
    CHECK_WAIT(atomic_load(&received) == BURST, TU_WAIT_MS);
    long long after_burst = heap_in_use();
    tu_sleep_ms(1500);
    long long after_idle = heap_in_use();
    printf("heap in use: %lld before a %d-event backlog, %lld after it, %lld after a second idle\n", before, BURST,
           after_burst, after_idle);
    if (after_burst - before > 400000) {
        CHECK(after_idle - before < (after_burst - before) / 2);
    } else {
        printf("(malloc is not glibc's here: the heap is not measured)\n");
    }
    for (int i = 0; i < 100; i++) {
        qtbus_event_desc d = {.type = "Blob", .data = blob, .size = 64};
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
    }
    CHECK_WAIT(atomic_load(&received) == BURST + 100, TU_WAIT_MS);

    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(a, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(b, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_limits: passed\n");
    return 0;
}
