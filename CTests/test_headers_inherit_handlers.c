/* SPDX-License-Identifier: MIT */
/*
 * test_headers_inherit_handlers: every call the library makes with an event is a
 * handler whose dispatches inherit, on whatever thread it runs.
 *
 * Users rely on: a dispatch inheriting from the event being handled inside a handler on
 * a created queue (its thread, not the dispatcher's), on the main queue, a replay, a
 * typed-signal handler (which never sees its event: its signal is emitted inside a
 * handler, so inherits), a request's handler, and a command's execute function (from
 * its input, run now or on a queue).
 */
#include "test_util.h"
#include "test_headers.h"

enum { QUEUED, MAIN, REPLAY, SIGNAL, REQUEST, COMMAND, COMMAND_QUEUED, KINDS };
static const char *const kind_names[KINDS] = {"queued",  "main",    "replay",        "signal",
                                              "request", "command", "command_queued"};
static th_snap snaps[KINDS];
static qtbus_bus *bus;
static pthread_t main_thread;
static atomic_int queued_thread_differs;

static void dispatch_kind(int kind)
{
    qtbus_event_desc d = tu_event("Seen", kind_names[kind]);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
}

static void handler(const qtbus_event *event, void *userdata)
{
    (void)event;
    int kind = (int)(intptr_t)userdata;
    if (kind == QUEUED && !pthread_equal(pthread_self(), main_thread)) atomic_store(&queued_thread_differs, 1);
    dispatch_kind(kind);
}

static void signal_handler(int32_t value, void *userdata)
{
    (void)value;
    (void)userdata;
    dispatch_kind(SIGNAL);
}

static void emit_signal(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Sig", NULL, (int32_t)1), 1);
}

static void execute(const qtbus_event *input, qtbus_execution execution, void *userdata)
{
    (void)input;
    dispatch_kind((int)(intptr_t)userdata);
    qtbus_execution_finish(execution, 0, NULL);
}

static void record(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    for (int k = 0; k < KINDS; k++) {
        if (strcmp(qtbus_event_subtype(event), kind_names[k]) == 0) th_take(&snaps[k], event);
    }
}

int main(void)
{
    main_thread = pthread_self();
    bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("handlers");
    CHECK_EQ_INT(qtbus_subscribe(bus, "Seen", NULL, record, NULL, NULL, NULL), QTBUS_OK);
    qtbus_sub_options o = tu_options();
    o.queue = queue;
    CHECK_EQ_INT(qtbus_subscribe(bus, "E", &o, handler, (void *)(intptr_t)QUEUED, NULL, NULL), QTBUS_OK);
    o.queue = qtbus_queue_main();
    CHECK_EQ_INT(qtbus_subscribe(bus, "E", &o, handler, (void *)(intptr_t)MAIN, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Q", NULL, handler, (void *)(intptr_t)REQUEST, NULL, NULL), QTBUS_OK);
    static const qtbus_arg args[] = {QTBUS_ARG_INT32};
    CHECK_EQ_INT(qtbus_signal_define(bus, "Sig", args, 1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Sig", NULL, QTBUS_CALLBACK(signal_handler), NULL, NULL, NULL), QTBUS_OK);
    qtbus_command now, later;
    CHECK_EQ_INT(qtbus_command_create(bus, "now", 0, execute, (void *)(intptr_t)COMMAND, NULL, &now), QTBUS_OK);
    CHECK_EQ_INT(qtbus_command_create(bus, "later", 0, execute, (void *)(intptr_t)COMMAND_QUEUED, NULL, &later),
                 QTBUS_OK);

    /* Each event below is dispatched outside any handler, with the three W3C headers. */
    const qtbus_header h[] = {{"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG}};
    qtbus_event_desc d = th_desc("E", h, 3);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
    d = th_desc("Q", h, 3);
    CHECK_EQ_INT(qtbus_request(bus, &d, NULL, NULL, NULL), 1);
    d = th_desc("K", h, 3);
    d.flags |= QTBUS_EVENT_STICKY;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
    qtbus_sub_options replay = tu_options();
    replay.flags = QTBUS_SUB_REPLAY;
    CHECK_EQ_INT(qtbus_subscribe(bus, "K", &replay, handler, (void *)(intptr_t)REPLAY, NULL, NULL), QTBUS_OK);
    /* The typed-signal handler: the signal is emitted inside a handler of an event with
     * the headers (so its event inherits them), and the signal handler's own dispatch
     * inherits from that event. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "S", NULL, emit_signal, NULL, NULL, NULL), QTBUS_OK);
    d = th_desc("S", h, 3);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    d = th_desc("Input", h, 3);
    CHECK_EQ_INT(qtbus_command_execute(now, &d, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_command_execute(later, &d, queue), QTBUS_OK);
    CHECK_IDLE(bus);
    CHECK_WAIT(atomic_load(&snaps[COMMAND_QUEUED].taken) == 1, TU_WAIT_MS);

    CHECK_EQ_INT(atomic_load(&queued_thread_differs), 1);
    for (int k = 0; k < KINDS; k++) {
        CHECK_MSG(atomic_load(&snaps[k].taken) == 1, "%s: %d", kind_names[k], atomic_load(&snaps[k].taken));
        TH_CHECK_EXACT(&snaps[k], {"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG});
        th_snap_clear(&snaps[k]);
    }

    qtbus_command_dispose(now);
    qtbus_command_dispose(later);
    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    printf("test_headers_inherit_handlers: queued, main, replay, request and command handlers\n");
    return 0;
}
