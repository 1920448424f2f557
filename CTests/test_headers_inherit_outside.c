/* SPDX-License-Identifier: MIT */
/*
 * test_headers_inherit_outside: a dispatch made outside any handler inherits nothing.
 *
 * Users rely on: nothing inherited before any handler ran, after a handler returned
 * (the context does not linger on the thread), nor on another thread while a handler
 * runs on this one (the context is the handling thread's only); a queue's thread
 * between two deliveries carrying nothing from the first into a dispatch made by the
 * second's handler, whose event has no headers.
 */
#include "test_util.h"
#include "test_headers.h"

static qtbus_bus *bus;
static th_snap seen;
static tu_gate in_handler;

static void *dispatch_from_other_thread(void *arg)
{
    (void)arg;
    CHECK_WAIT(atomic_load(&in_handler.entered) == 1, TU_WAIT_MS);
    qtbus_event_desc d = tu_event("Seen", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    atomic_store(&in_handler.open, 1);
    return NULL;
}

/* Holds its thread in the handler while another thread dispatches. */
static void holding(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    tu_gate_pass(&in_handler);
}

/* On a queue: an event with headers, then one without; the second's dispatch must not
 * carry the first's. */
static void redispatch(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    qtbus_event_desc d = tu_event("Seen", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_subscribe(bus, "Seen", NULL, th_snap_handler, &seen, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Hold", NULL, holding, NULL, NULL, NULL), QTBUS_OK);
    const qtbus_header h[] = {{"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG}};

    qtbus_event_desc d = tu_event("Seen", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    TH_CHECK_NONE(&seen);

    /* Another thread dispatches while this one is in a handler of an event with them. */
    pthread_t other;
    CHECK_EQ_INT(pthread_create(&other, NULL, dispatch_from_other_thread, NULL), 0);
    d = th_desc("Hold", h, 3);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    pthread_join(other, NULL);
    CHECK_EQ_INT(atomic_load(&seen.taken), 2);
    TH_CHECK_NONE(&seen);

    /* After that handler returned, this thread inherits nothing either. */
    d = tu_event("Seen", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    TH_CHECK_NONE(&seen);

    /* A queue's thread: the second delivery's dispatch has nothing of the first's. */
    qtbus_queue *queue = qtbus_queue_create("outside");
    qtbus_sub_options o = tu_options();
    o.queue = queue;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Q", &o, redispatch, NULL, NULL, NULL), QTBUS_OK);
    d = th_desc("Q", h, 3);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_IDLE(bus);
    TH_CHECK_EXACT(&seen, {"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG});
    d = tu_event("Q", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_IDLE(bus);
    TH_CHECK_NONE(&seen);

    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    th_snap_clear(&seen);
    printf("test_headers_inherit_outside: nothing inherited outside a handler\n");
    return 0;
}
