/* SPDX-License-Identifier: MIT */
/*
 * test_headers_order: reading an event's headers.
 *
 * Users rely on: qtbus_event_header_at walking them in the order given, a repeated
 * name once with its last value at its first place, inherited ones after; past the end
 * and NULL arguments QTBUS_EINVAL; qtbus_event_header finding a name exactly (case
 * kept) and NULL for an absent one, a NULL event or name; qtbus_event_header_count 0
 * for an event without headers, one dispatched without QTBUS_EVENT_HEADERS, and NULL.
 */
#include "test_util.h"
#include "test_headers.h"

static th_snap snap;
static atomic_int checked;

static void check_reading(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    th_take(&snap, event);
    const char *name = "unset", *value = "unset";
    size_t n = qtbus_event_header_count(event);
    CHECK_EQ_INT(qtbus_event_header_at(event, n, &name, &value), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_event_header_at(event, (size_t)-1, &name, &value), QTBUS_EINVAL);
    if (n > 0) {
        CHECK_EQ_INT(qtbus_event_header_at(event, 0, NULL, &value), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_event_header_at(event, 0, &name, NULL), QTBUS_EINVAL);
    }
    CHECK_EQ_INT(qtbus_event_header_at(NULL, 0, &name, &value), QTBUS_EINVAL);
    CHECK(qtbus_event_header(event, NULL) == NULL);
    CHECK(qtbus_event_header(event, "absent") == NULL);
    CHECK(qtbus_event_header(event, "") == NULL);
    CHECK(qtbus_event_header(event, "TRACEPARENT") == NULL);
    CHECK(qtbus_event_header(event, "traceparen") == NULL);
    CHECK(qtbus_event_header(event, "traceparentx") == NULL);
    atomic_fetch_add(&checked, 1);
}

/* Dispatches "Inner" with headers of its own while handling "Outer". */
static void dispatch_inner(const qtbus_event *event, void *userdata)
{
    (void)event;
    qtbus_header h[] = {{"b", "1"}, {"a", "2"}};
    qtbus_event_desc d = th_desc("Inner", h, 2);
    CHECK_EQ_INT(qtbus_dispatch((qtbus_bus *)userdata, &d), 1);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, check_reading, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Inner", NULL, check_reading, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Outer", NULL, dispatch_inner, bus, NULL, NULL), QTBUS_OK);

    /* Given order, not sorted. */
    qtbus_header given[] = {{"zeta", "1"}, {"alpha", "2"}, {"mid", "3"}};
    qtbus_event_desc d = th_desc("T", given, 3);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    TH_CHECK_EXACT(&snap, {"zeta", "1"}, {"alpha", "2"}, {"mid", "3"});

    /* A repeated name: once, its last value, at its first place. */
    qtbus_header repeated[] = {{"a", "1"}, {"b", "2"}, {"a", "3"}, {"c", "4"}, {"b", "5"}, {"a", "6"}};
    d = th_desc("T", repeated, 6);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    TH_CHECK_EXACT(&snap, {"a", "6"}, {"b", "5"}, {"c", "4"});

    /* Inherited ones after the given ones, in the outer event's order. */
    qtbus_header outer[] = {{"baggage", TH_BAG}, {"x", "not inherited"}, {"traceparent", TH_TP}};
    d = th_desc("Outer", outer, 3);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    TH_CHECK_EXACT(&snap, {"b", "1"}, {"a", "2"}, {"baggage", TH_BAG}, {"traceparent", TH_TP});

    /* No headers: none given, the flag without any, the flag not set. */
    d = tu_event("T", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    TH_CHECK_NONE(&snap);
    d = th_desc("T", NULL, 0);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    TH_CHECK_NONE(&snap);
    d = th_desc("T", given, 3);
    d.flags = 0; /* the fields are set but not read */
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    TH_CHECK_NONE(&snap);

    CHECK_EQ_INT(qtbus_event_header_count(NULL), 0);
    CHECK(qtbus_event_header(NULL, "traceparent") == NULL);
    /* T given, T repeated, Inner, and the three without headers. */
    CHECK_EQ_INT(atomic_load(&checked), 6);

    qtbus_bus_destroy(bus);
    th_snap_clear(&snap);
    printf("test_headers_order: given order, merged names, inherited after, exact lookup\n");
    return 0;
}
