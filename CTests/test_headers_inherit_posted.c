/* SPDX-License-Identifier: MIT */
/*
 * test_headers_inherit_posted: a posted dispatch (qtbus_dispatch_on_bus_queue,
 * qtbus_dispatch_on_main) inherits at the call, not when its queue runs it.
 *
 * Users rely on: a handler that posts and returns having its context carried by the
 * posted event, though the dispatch itself runs later, outside that handler, on
 * another thread (the bus queue) or on the main thread's next drain; and a dispatch
 * made by the posted event's handler inheriting from the posted event.
 */
#include "test_util.h"
#include "test_headers.h"

static qtbus_bus *bus;
static th_snap posted_bus, posted_main, chained;
static atomic_int handler_returned;

static void post_both(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    qtbus_event_desc d = tu_event("Posted", "bus");
    CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_OK);
    d.subtype = "main";
    CHECK_EQ_INT(qtbus_dispatch_on_main(bus, &d), QTBUS_OK);
    atomic_store(&handler_returned, 1);
}

static void on_posted(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    /* The main queue's runs on the drain, after the handler; the bus queue's may start
     * on its own thread before the handler has returned, so only the first is checked. */
    if (strcmp(qtbus_event_subtype(event), "main") == 0) CHECK_EQ_INT(atomic_load(&handler_returned), 1);
    th_take(strcmp(qtbus_event_subtype(event), "bus") == 0 ? &posted_bus : &posted_main, event);
    if (strcmp(qtbus_event_subtype(event), "bus") == 0) {
        qtbus_event_desc d = tu_event("Chained", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    }
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_subscribe(bus, "Origin", NULL, post_both, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Posted", NULL, on_posted, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Chained", NULL, th_snap_handler, &chained, NULL, NULL), QTBUS_OK);

    const qtbus_header h[] = {{"traceparent", TH_TP}, {"baggage", TH_BAG}, {"x-local", "no"}};
    qtbus_event_desc d = th_desc("Origin", h, 3);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    /* Now outside the handler: the posted dispatches run (the main one on this drain). */
    CHECK_IDLE(bus);

    TH_CHECK_EXACT(&posted_bus, {"traceparent", TH_TP}, {"baggage", TH_BAG});
    TH_CHECK_EXACT(&posted_main, {"traceparent", TH_TP}, {"baggage", TH_BAG});
    TH_CHECK_EXACT(&chained, {"traceparent", TH_TP}, {"baggage", TH_BAG});

    qtbus_bus_destroy(bus);
    th_snap_clear(&posted_bus);
    th_snap_clear(&posted_main);
    th_snap_clear(&chained);
    printf("test_headers_inherit_posted: posted dispatches inherit at the call\n");
    return 0;
}
