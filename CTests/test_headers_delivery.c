/* SPDX-License-Identifier: MIT */
/*
 * test_headers_delivery: an event's headers reach every delivery of it.
 *
 * Users rely on: synchronous handlers, handlers on a created queue, on the main queue,
 * a pattern subscription's handler, and the handlers of a dispatch by id and of posted
 * dispatches (the bus queue, the main queue) all reading the same headers, in the
 * order given.
 */
#include "test_util.h"
#include "test_headers.h"

enum { SYNC, QUEUED, MAIN, PATTERN, COUNT };
static th_snap snaps[COUNT];

static void check_all(int deliveries)
{
    for (int k = 0; k < COUNT; k++) {
        CHECK_EQ_INT(atomic_load(&snaps[k].taken), deliveries);
        TH_CHECK_EXACT(&snaps[k], {"traceparent", TH_TP}, {"x-id", "42"});
        th_snap_clear(&snaps[k]);
    }
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("headers");
    qtbus_sub_options on_queue = tu_options(), on_main = tu_options(), pattern = tu_options();
    on_queue.queue = queue;
    on_main.queue = qtbus_queue_main();
    pattern.flags = QTBUS_SUB_PATTERN;
    CHECK_EQ_INT(qtbus_subscribe(bus, "a.T", NULL, th_snap_handler, &snaps[SYNC], NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "a.T", &on_queue, th_snap_handler, &snaps[QUEUED], NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "a.T", &on_main, th_snap_handler, &snaps[MAIN], NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "a.*", &pattern, th_snap_handler, &snaps[PATTERN], NULL, NULL), QTBUS_OK);
    qtbus_type_id id;
    CHECK_EQ_INT(qtbus_type_lookup(bus, "a.T", &id), QTBUS_OK);

    qtbus_header h[] = {{"traceparent", TH_TP}, {"x-id", "42"}};
    qtbus_event_desc d = th_desc("a.T", h, 2);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 4);
    CHECK_IDLE(bus);
    check_all(1);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, id, &d), 4);
    CHECK_IDLE(bus);
    check_all(1);
    CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_OK);
    CHECK_IDLE(bus);
    check_all(1);
    CHECK_EQ_INT(qtbus_dispatch_on_main(bus, &d), QTBUS_OK);
    CHECK_IDLE(bus);
    check_all(1);

    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    printf("test_headers_delivery: sync, queued, main, pattern, by id and posted: same headers\n");
    return 0;
}
