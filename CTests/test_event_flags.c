/* SPDX-License-Identifier: MIT */
/*
 * test_event_flags.c -- qtbus_event_flags(): what a handler learns about how the event
 * was sent (sticky, a request), on every delivery path: synchronous, queued, replayed,
 * posted on the bus queue.
 */
#include "test_util.h"

typedef struct seen {
    atomic_int calls;
    atomic_uint flags; /* of the last call */
} seen;

static void record(const qtbus_event *e, void *userdata)
{
    seen *s = userdata;
    atomic_store(&s->flags, qtbus_event_flags(e));
    atomic_fetch_add(&s->calls, 1);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("flags");
    CHECK(bus != NULL && queue != NULL);
    CHECK_EQ_INT(qtbus_event_flags(NULL), 0);

    static seen sync_seen, queued_seen;
    qtbus_token ts, tq;
    CHECK_EQ_INT(qtbus_subscribe(bus, "State", NULL, record, &sync_seen, NULL, &ts), QTBUS_OK);
    qtbus_sub_options on_queue = {.queue = queue};
    CHECK_EQ_INT(qtbus_subscribe(bus, "State", &on_queue, record, &queued_seen, NULL, &tq), QTBUS_OK);

    /* Plain, then sticky: synchronous and queued deliveries both tell. */
    qtbus_event_desc d = tu_event("State", "door");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
    CHECK_EQ_INT(atomic_load(&sync_seen.flags), 0);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&queued_seen.calls), 1);
    CHECK_EQ_INT(atomic_load(&queued_seen.flags), 0);

    d.flags = QTBUS_EVENT_STICKY;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
    CHECK_EQ_INT(atomic_load(&sync_seen.flags), QTBUS_EVENT_STICKY);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&queued_seen.calls), 2);
    CHECK_EQ_INT(atomic_load(&queued_seen.flags), QTBUS_EVENT_STICKY);

    /* A plain dispatch after it is plain again (the kept one is not this one). */
    d.flags = 0;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
    CHECK_EQ_INT(atomic_load(&sync_seen.flags), 0);

    /* The replay of the kept event is sticky. */
    static seen replay_seen;
    qtbus_token tr;
    qtbus_sub_options replay = {.flags = QTBUS_SUB_REPLAY};
    CHECK_EQ_INT(qtbus_subscribe(bus, "State", &replay, record, &replay_seen, NULL, &tr), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&replay_seen.calls), 1);
    CHECK_EQ_INT(atomic_load(&replay_seen.flags), QTBUS_EVENT_STICKY);

    /* Posted on the bus queue, sticky. */
    d.flags = QTBUS_EVENT_STICKY;
    CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_OK);
    CHECK_WAIT(atomic_load(&replay_seen.calls) == 2, TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&replay_seen.flags), QTBUS_EVENT_STICKY);

    /* A request, synchronous and queued. */
    d.flags = 0;
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&queued_seen.calls), 4); /* the posted one too */
    CHECK_EQ_INT(qtbus_request(bus, &d, NULL, NULL, NULL), 3);
    CHECK_EQ_INT(atomic_load(&sync_seen.flags), QTBUS_EVENT_REQUEST);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&queued_seen.calls), 5);
    CHECK_EQ_INT(atomic_load(&queued_seen.flags), QTBUS_EVENT_REQUEST);

    /* QTBUS_EVENT_REQUEST is only reported: a dispatch refuses it. */
    d.flags = QTBUS_EVENT_REQUEST;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "unknown flag bits 0x2") != NULL);

    qtbus_queue_release(queue);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_event_flags: passed\n");
    return 0;
}
