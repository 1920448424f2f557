/* SPDX-License-Identifier: MIT */
/*
 * test_headers_inherit_forms: every form of dispatch made inside a handler inherits.
 *
 * Users rely on: qtbus_dispatch, qtbus_dispatch_id, qtbus_dispatch_on_bus_queue,
 * qtbus_dispatch_on_main, qtbus_request, qtbus_signal_emit, qtbus_signal_emitv and
 * qtbus_command_execute (its input), each called from a handler of an event with
 * traceparent, tracestate and baggage, delivering an event that has those three.
 */
#include "test_util.h"
#include "test_headers.h"

enum { DISPATCH, BY_ID, BUS_QUEUE, MAIN, REQUEST, EMIT, EMITV, COMMAND, FORMS };
static const char *const form_names[FORMS] = {"dispatch", "dispatch_id", "on_bus_queue", "on_main",
                                              "request",  "signal_emit", "signal_emitv", "command_execute"};
static th_snap snaps[FORMS];
static qtbus_bus *bus;
static qtbus_command command;
static qtbus_type_id by_id;

static void execute(const qtbus_event *input, qtbus_execution execution, void *userdata)
{
    (void)userdata;
    th_take(&snaps[COMMAND], input);
    qtbus_execution_finish(execution, 0, NULL);
}

static void every_form(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    qtbus_event_desc d = tu_event("T", "dispatch");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    d.subtype = "dispatch_id";
    CHECK_EQ_INT(qtbus_dispatch_id(bus, by_id, &d), 1);
    d.subtype = "on_bus_queue";
    CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_OK);
    d.subtype = "on_main";
    CHECK_EQ_INT(qtbus_dispatch_on_main(bus, &d), QTBUS_OK);
    d.subtype = "request";
    CHECK_EQ_INT(qtbus_request(bus, &d, NULL, NULL, NULL), 1);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Sig", "signal_emit", (int32_t)1), 1);
    qtbus_value v = {.i32 = 2};
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Sig", "signal_emitv", 0, &v, 1), 1);
    d = tu_event("Input", NULL);
    CHECK_EQ_INT(qtbus_command_execute(command, &d, NULL), QTBUS_OK);
}

static void record(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    const char *subtype = qtbus_event_subtype(event);
    for (int k = 0; k < FORMS; k++) {
        if (subtype && strcmp(subtype, form_names[k]) == 0) th_take(&snaps[k], event);
    }
}

int main(void)
{
    bus = qtbus_bus_create();
    static const qtbus_arg args[] = {QTBUS_ARG_INT32};
    CHECK_EQ_INT(qtbus_signal_define(bus, "Sig", args, 1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_type_lookup(bus, "T", &by_id), QTBUS_OK);
    CHECK_EQ_INT(qtbus_command_create(bus, "cmd", 0, execute, NULL, NULL, &command), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Outer", NULL, every_form, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, record, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Sig", NULL, record, NULL, NULL, NULL), QTBUS_OK);

    const qtbus_header outer[] = {
        {"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG}, {"x-not", "inherited"}};
    qtbus_event_desc d = th_desc("Outer", outer, 4);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_IDLE(bus); /* the main thread: runs the dispatch posted on the main queue */

    for (int k = 0; k < FORMS; k++) {
        CHECK_MSG(atomic_load(&snaps[k].taken) == 1, "%s: %d deliveries", form_names[k], atomic_load(&snaps[k].taken));
        CHECK_MSG(snaps[k].count == 3, "%s: %zu headers", form_names[k], snaps[k].count);
        TH_CHECK_EXACT(&snaps[k], {"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG});
        th_snap_clear(&snaps[k]);
    }

    qtbus_command_dispose(command);
    qtbus_bus_destroy(bus);
    printf("test_headers_inherit_forms: eight forms of dispatch inherit inside a handler\n");
    return 0;
}
