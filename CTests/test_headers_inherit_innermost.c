/* SPDX-License-Identifier: MIT */
/*
 * test_headers_inherit_innermost: when handlers nest, a dispatch inherits from the
 * innermost event being handled, and only from it.
 *
 * Users rely on: a dispatch inside a nested handler taking the inner event's
 * traceparent; a name the inner event lacks not taken from the outer one (no
 * fallback); once the nested handler returns, a dispatch in the outer handler
 * inheriting from the outer event again.  The inner handler here is a replay, run
 * inside the outer handler's qtbus_subscribe, of a sticky event dispatched outside any
 * handler with a traceparent only.
 */
#include "test_util.h"
#include "test_headers.h"

static qtbus_bus *bus;
static th_snap from_inner, from_outer_after;

static void replayed(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    qtbus_event_desc d = tu_event("FromInner", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
}

static void outer_handler(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    qtbus_sub_options replay = tu_options();
    replay.flags = QTBUS_SUB_REPLAY | QTBUS_SUB_ONCE;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Kept", &replay, replayed, NULL, NULL, NULL), QTBUS_OK);
    qtbus_event_desc d = tu_event("FromOuter", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_subscribe(bus, "Outer", NULL, outer_handler, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "FromInner", NULL, th_snap_handler, &from_inner, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "FromOuter", NULL, th_snap_handler, &from_outer_after, NULL, NULL), QTBUS_OK);

    const qtbus_header kept[] = {{"traceparent", TH_TP2}};
    qtbus_event_desc k = th_desc("Kept", kept, 1);
    k.flags |= QTBUS_EVENT_STICKY;
    CHECK_EQ_INT(qtbus_dispatch(bus, &k), 0);

    const qtbus_header outer[] = {{"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG}};
    qtbus_event_desc d = th_desc("Outer", outer, 3);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);

    CHECK_EQ_INT(atomic_load(&from_inner.taken), 1);
    TH_CHECK_EXACT(&from_inner, {"traceparent", TH_TP2}); /* no tracestate, no baggage from outside */
    CHECK_EQ_INT(atomic_load(&from_outer_after.taken), 1);
    TH_CHECK_EXACT(&from_outer_after, {"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG});

    qtbus_bus_destroy(bus);
    th_snap_clear(&from_inner);
    th_snap_clear(&from_outer_after);
    printf("test_headers_inherit_innermost: the innermost event only, no fallback\n");
    return 0;
}
