/* SPDX-License-Identifier: MIT */
/*
 * test_headers_no_subscriber: an event that reaches no subscription keeps its headers
 * when it is dispatched as QTBUS_NO_SUBSCRIBER_TYPE.
 *
 * Users rely on: a QTBUS_NO_SUBSCRIBER_TYPE handler, synchronous or queued, reading the
 * original event's headers (and its type as subtype), so that a dead-letter log can
 * record which trace lost an event.
 */
#include "test_util.h"
#include "test_headers.h"

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("dead letters");
    th_snap sync_snap = {0}, queued_snap = {0};
    qtbus_sub_options on_queue = tu_options();
    on_queue.queue = queue;
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, NULL, th_snap_handler, &sync_snap, NULL, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, &on_queue, th_snap_handler, &queued_snap, NULL, NULL),
                 QTBUS_OK);

    qtbus_header h[] = {{"traceparent", TH_TP}, {"x-why", "lost"}};
    qtbus_event_desc d = th_desc("Unheard", h, 2);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
    CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_OK);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&sync_snap.taken), 2);
    CHECK_EQ_INT(atomic_load(&queued_snap.taken), 2);
    TH_CHECK_EXACT(&sync_snap, {"traceparent", TH_TP}, {"x-why", "lost"});
    TH_CHECK_EXACT(&queued_snap, {"traceparent", TH_TP}, {"x-why", "lost"});

    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    th_snap_clear(&sync_snap);
    th_snap_clear(&queued_snap);
    printf("test_headers_no_subscriber: the redirected event keeps its headers\n");
    return 0;
}
