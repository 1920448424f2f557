/* SPDX-License-Identifier: MIT */
/*
 * test_headers_inherit: a dispatch made while a handler runs inherits traceparent,
 * tracestate and baggage from the event being handled, unless it sets them itself.
 *
 * Users rely on: the three names inherited and no other header; a name the dispatch
 * sets keeping its value, the empty string included; the names the handled event lacks
 * staying absent; inherited headers after the given ones; a dispatch with no headers of
 * its own (no QTBUS_EVENT_HEADERS) inheriting as well.
 */
#include "test_util.h"
#include "test_headers.h"

static qtbus_bus *bus;
static th_snap inner;

/* The inner dispatch of each case: its headers, given as the outer's userdata. */
typedef struct inner_case {
    const qtbus_header *headers;
    size_t count;
    uint32_t flags;
} inner_case;

static void dispatch_inner(const qtbus_event *event, void *userdata)
{
    (void)event;
    const inner_case *c = *(const inner_case *const *)userdata;
    qtbus_event_desc d = tu_event("Inner", NULL);
    d.flags = c->flags;
    d.headers = c->headers;
    d.header_count = c->count;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
}

static const inner_case *current;

static void run(const qtbus_header *outer, size_t outer_count, const inner_case *c)
{
    current = c;
    qtbus_event_desc d = th_desc("Outer", outer, outer_count);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_subscribe(bus, "Outer", NULL, dispatch_inner, &current, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Inner", NULL, th_snap_handler, &inner, NULL, NULL), QTBUS_OK);

    const qtbus_header context[] = {{"x-before", "no"},  {"traceparent", TH_TP}, {"tracestate", TH_TS},
                                    {"baggage", TH_BAG}, {"x-request-id", "7"},  {"Traceparent", "case"}};

    /* Nothing of its own, no flag: the three W3C names only, in the outer's order. */
    inner_case plain = {NULL, 0, 0};
    run(context, 6, &plain);
    TH_CHECK_EXACT(&inner, {"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG});

    /* Headers of its own: they come first, the inherited ones after. */
    const qtbus_header own[] = {{"x-own", "1"}};
    inner_case with_own = {own, 1, QTBUS_EVENT_HEADERS};
    run(context, 6, &with_own);
    TH_CHECK_EXACT(&inner, {"x-own", "1"}, {"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG});

    /* A name set explicitly keeps its value, even the empty string. */
    const qtbus_header set[] = {{"traceparent", TH_TP2}, {"tracestate", ""}};
    inner_case with_set = {set, 2, QTBUS_EVENT_HEADERS};
    run(context, 6, &with_set);
    TH_CHECK_EXACT(&inner, {"traceparent", TH_TP2}, {"tracestate", ""}, {"baggage", TH_BAG});

    /* The handled event lacks some: only what it has is inherited. */
    const qtbus_header only_tp[] = {{"traceparent", TH_TP}};
    run(only_tp, 1, &plain);
    TH_CHECK_EXACT(&inner, {"traceparent", TH_TP});
    const qtbus_header none_w3c[] = {{"x-request-id", "7"}};
    run(none_w3c, 1, &plain);
    TH_CHECK_NONE(&inner);
    run(NULL, 0, &plain);
    TH_CHECK_NONE(&inner);

    /* The handled event's own empty value is inherited as it is. */
    const qtbus_header empty_tp[] = {{"traceparent", ""}};
    run(empty_tp, 1, &plain);
    TH_CHECK_EXACT(&inner, {"traceparent", ""});

    qtbus_bus_destroy(bus);
    th_snap_clear(&inner);
    printf("test_headers_inherit: traceparent, tracestate, baggage inherited unless set\n");
    return 0;
}
