/* SPDX-License-Identifier: MIT */
/*
 * test_headers_sticky: a sticky event's replays carry its headers.
 *
 * Users rely on: a QTBUS_SUB_REPLAY subscription made after the dispatch (on this
 * thread and on a queue) reading the kept event's headers; a newer sticky event of the
 * type replacing the kept one's headers with its own; a plain dispatch leaving the kept
 * event and its headers alone.
 */
#include "test_util.h"
#include "test_headers.h"

static void dispatch_sticky(qtbus_bus *bus, const char *tp, uint32_t flags)
{
    qtbus_header h[] = {{"traceparent", tp}, {"x-kept", "yes"}};
    qtbus_event_desc d = th_desc("S", h, 2);
    d.flags |= flags;
    CHECK(qtbus_dispatch(bus, &d) >= 0);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("replay");
    dispatch_sticky(bus, TH_TP, QTBUS_EVENT_STICKY);

    qtbus_sub_options replay = tu_options();
    replay.flags = QTBUS_SUB_REPLAY;
    th_snap now = {0}, queued = {0};
    qtbus_token t1, t2;
    CHECK_EQ_INT(qtbus_subscribe(bus, "S", &replay, th_snap_handler, &now, NULL, &t1), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&now.taken), 1);
    TH_CHECK_EXACT(&now, {"traceparent", TH_TP}, {"x-kept", "yes"});
    replay.queue = queue;
    CHECK_EQ_INT(qtbus_subscribe(bus, "S", &replay, th_snap_handler, &queued, NULL, &t2), QTBUS_OK);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&queued.taken), 1);
    TH_CHECK_EXACT(&queued, {"traceparent", TH_TP}, {"x-kept", "yes"});
    qtbus_token_dispose(t1);
    qtbus_token_dispose(t2);

    /* A plain dispatch does not replace the kept event; a sticky one does. */
    dispatch_sticky(bus, TH_TP2, 0);
    replay.queue = NULL;
    th_snap later = {0};
    CHECK_EQ_INT(qtbus_subscribe(bus, "S", &replay, th_snap_handler, &later, NULL, &t1), QTBUS_OK);
    TH_CHECK_EXACT(&later, {"traceparent", TH_TP}, {"x-kept", "yes"});
    qtbus_token_dispose(t1);
    dispatch_sticky(bus, TH_TP2, QTBUS_EVENT_STICKY);
    th_snap newest = {0};
    CHECK_EQ_INT(qtbus_subscribe(bus, "S", &replay, th_snap_handler, &newest, NULL, &t1), QTBUS_OK);
    TH_CHECK_EXACT(&newest, {"traceparent", TH_TP2}, {"x-kept", "yes"});

    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    th_snap_clear(&now);
    th_snap_clear(&queued);
    th_snap_clear(&later);
    th_snap_clear(&newest);
    printf("test_headers_sticky: replays carry the kept event's headers\n");
    return 0;
}
