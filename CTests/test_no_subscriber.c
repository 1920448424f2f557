/* SPDX-License-Identifier: MIT */
/*
 * test_no_subscriber: events nobody receives become QTNoSubscriberEvent.
 *
 * Users rely on: a catch-all for lost events (logging, debugging): an event that
 * reaches no subscription -- also when its type has subscriptions, but none for its
 * subtype -- is dispatched as QTBUS_NO_SUBSCRIBER_TYPE with subtype = the original type
 * and the same data; an event someone received (synchronously or queued) is not; and a
 * lost QTNoSubscriberEvent is never re-dispatched (no recursion).
 */
#include "test_util.h"

typedef struct lost {
    int calls;
    char type[64];
    char subtype[64];
    unsigned char data[64];
    size_t size;
} lost;

static void lost_handler(const qtbus_event *ev, void *userdata)
{
    lost *l = (lost *)userdata;
    l->calls++;
    snprintf(l->type, sizeof l->type, "%s", qtbus_event_type(ev));
    const char *st = qtbus_event_subtype(ev);
    snprintf(l->subtype, sizeof l->subtype, "%s", st ? st : "(none)");
    const void *data = qtbus_event_data(ev, &l->size);
    CHECK(l->size <= sizeof l->data);
    if (l->size) memcpy(l->data, data, l->size);
}

static atomic_int queued_calls;
static void queued_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    atomic_fetch_add(&queued_calls, 1);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    CHECK_EQ_STR(QTBUS_NO_SUBSCRIBER_TYPE, "QTNoSubscriberEvent");

    /* Nobody listens for lost events: a lost event just reaches nobody (and does not
     * loop). */
    {
        qtbus_event_desc d = tu_event("Lonely", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        d = tu_event(QTBUS_NO_SUBSCRIBER_TYPE, "X");
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
    }

    lost all;
    memset(&all, 0, sizeof all);
    qtbus_token t_all;
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, NULL, lost_handler, &all, NULL, &t_all), QTBUS_OK);

    /* A lost event: re-dispatched with subtype = its type and the same bytes (the
     * original subtype is not part of it). */
    {
        static const unsigned char bytes[5] = {'x', 0, 'y', 0xfe, 'z'};
        atomic_int released;
        atomic_init(&released, 0);
        qtbus_event_desc d = tu_event("Lonely", "sub");
        d.data = bytes;
        d.size = sizeof bytes;
        d.object = &released;
        d.object_release = tu_count_release;
        int rc = qtbus_dispatch(bus, &d);
        CHECK_MSG(rc == 0 || rc == 1, "dispatch of a lost event returned %d", rc);
        CHECK_EQ_INT(all.calls, 1);
        CHECK_EQ_STR(all.type, QTBUS_NO_SUBSCRIBER_TYPE);
        CHECK_EQ_STR(all.subtype, "Lonely");
        CHECK_EQ_INT(all.size, sizeof bytes);
        CHECK(memcmp(all.data, bytes, sizeof bytes) == 0);
        /* The object is still released exactly once. */
        CHECK_EQ_INT(atomic_load(&released), 1);
    }

    /* The type has subscriptions, but none for this subtype: lost too. */
    tu_rec typed;
    tu_rec_init(&typed);
    qtbus_token t_typed;
    {
        const char *only_a[] = {"a"};
        qtbus_sub_options o = tu_options();
        o.subtypes = only_a;
        o.subtype_count = 1;
        CHECK_EQ_INT(tu_sub_rec(bus, "Typed", &o, &typed, &t_typed), QTBUS_OK);
        qtbus_event_desc d = tu_event("Typed", "b");
        d.data = "B";
        d.size = 1;
        qtbus_dispatch(bus, &d);
        CHECK_EQ_INT(all.calls, 2);
        CHECK_EQ_STR(all.subtype, "Typed");
        CHECK_EQ_INT(all.size, 1);
        CHECK_EQ_INT(all.data[0], 'B');
        d = tu_event("Typed", NULL); /* no subtype: the subtype subscription misses it too */
        qtbus_dispatch(bus, &d);
        CHECK_EQ_INT(all.calls, 3);
        CHECK_EQ_INT(atomic_load(&typed.calls), 0);

        /* Received: not lost. */
        d = tu_event("Typed", "a");
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(atomic_load(&typed.calls), 1);
        CHECK_EQ_INT(all.calls, 3);
    }

    /* Received on a queue only: not lost either.  The marker, queued behind it on the
     * same serial queue, tells when it has run. */
    {
        qtbus_queue *q = qtbus_queue_create("nosub.queue");
        CHECK(q != NULL);
        qtbus_sub_options o = tu_options();
        o.queue = q;
        qtbus_token tq;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Queued", &o, queued_handler, NULL, NULL, &tq), QTBUS_OK);
        qtbus_event_desc d = tu_event("Queued", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_WAIT(atomic_load(&queued_calls) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(all.calls, 3);
        CHECK_EQ_INT(qtbus_token_dispose(tq), QTBUS_OK);
        qtbus_queue_release(q);
    }

    /* A lost-event subscriber restricted to some original types. */
    lost only_lonely;
    memset(&only_lonely, 0, sizeof only_lonely);
    qtbus_token t_only;
    {
        const char *lonely[] = {"Lonely"};
        qtbus_sub_options o = tu_options();
        o.subtypes = lonely;
        o.subtype_count = 1;
        CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, &o, lost_handler, &only_lonely, NULL, &t_only),
                     QTBUS_OK);
        qtbus_event_desc d = tu_event("Lonely", NULL);
        qtbus_dispatch(bus, &d);
        CHECK_EQ_INT(only_lonely.calls, 1);
        CHECK_EQ_INT(all.calls, 4);
        d = tu_event("Elsewhere", NULL);
        qtbus_dispatch(bus, &d);
        CHECK_EQ_INT(only_lonely.calls, 1);
        CHECK_EQ_INT(all.calls, 5);
        CHECK_EQ_STR(all.subtype, "Elsewhere");
    }

    /* Never recursive: drop the catch-all; keep only a subscriber that would receive a
     * lost QTNoSubscriberEvent's re-dispatch (subtype "QTNoSubscriberEvent"). */
    CHECK_EQ_INT(qtbus_token_dispose(t_all), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t_only), QTBUS_OK);
    {
        lost recursion;
        memset(&recursion, 0, sizeof recursion);
        const char *self[] = {QTBUS_NO_SUBSCRIBER_TYPE};
        qtbus_sub_options o = tu_options();
        o.subtypes = self;
        o.subtype_count = 1;
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, &o, lost_handler, &recursion, NULL, &t), QTBUS_OK);
        /* A QTNoSubscriberEvent nobody receives: not re-dispatched. */
        qtbus_event_desc d = tu_event(QTBUS_NO_SUBSCRIBER_TYPE, "Zed");
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        /* A lost event whose QTNoSubscriberEvent is lost too: not re-re-dispatched. */
        d = tu_event("Lonely2", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        CHECK_EQ_INT(recursion.calls, 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    CHECK_EQ_INT(qtbus_token_dispose(t_typed), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&typed.releases), 1);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_no_subscriber: passed\n");
    return 0;
}
