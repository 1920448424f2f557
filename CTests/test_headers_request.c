/* SPDX-License-Identifier: MIT */
/*
 * test_headers_request: a request's handlers read its headers; a reply carries none.
 *
 * Users rely on: synchronous and queued handlers of qtbus_request reading the
 * request's headers; the reply handler's event having no headers (count 0, every
 * lookup NULL), whether answered at once or deferred from another thread; a request
 * redirected to QTBUS_NO_SUBSCRIBER_TYPE carrying them too.
 */
#include "test_util.h"
#include "test_headers.h"

static th_snap sync_snap, queued_snap, reply_snap;
static atomic_int replies;

static void answer(const qtbus_event *event, void *userdata)
{
    th_take(userdata, event);
    CHECK_EQ_INT(qtbus_event_reply(event, "ok", 2), QTBUS_OK);
}

static void on_reply(const qtbus_event *reply, void *userdata)
{
    (void)userdata;
    th_take(&reply_snap, reply);
    CHECK(qtbus_event_header(reply, "traceparent") == NULL);
    const char *name = NULL, *value = NULL;
    CHECK_EQ_INT(qtbus_event_header_at(reply, 0, &name, &value), QTBUS_EINVAL);
    atomic_fetch_add(&replies, 1);
}

/* Defers, and a thread answers later. */
static qtbus_deferred deferred;
static void defer(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_defer(event, &deferred), QTBUS_OK);
}
static void *answer_later(void *arg)
{
    (void)arg;
    CHECK_EQ_INT(qtbus_deferred_reply(deferred, "later", 5), QTBUS_OK);
    CHECK_EQ_INT(qtbus_deferred_finish(deferred), QTBUS_OK);
    return NULL;
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("answers");
    qtbus_sub_options on_queue = tu_options();
    on_queue.queue = queue;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Q", NULL, answer, &sync_snap, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Q", &on_queue, answer, &queued_snap, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "D", NULL, defer, NULL, NULL, NULL), QTBUS_OK);

    qtbus_header h[] = {{"traceparent", TH_TP}, {"baggage", TH_BAG}};
    qtbus_event_desc d = th_desc("Q", h, 2);
    CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, NULL, NULL), 2);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&replies), 2);
    TH_CHECK_EXACT(&sync_snap, {"traceparent", TH_TP}, {"baggage", TH_BAG});
    TH_CHECK_EXACT(&queued_snap, {"traceparent", TH_TP}, {"baggage", TH_BAG});
    TH_CHECK_NONE(&reply_snap);

    d = th_desc("D", h, 2);
    CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, NULL, NULL), 1);
    pthread_t thread;
    CHECK_EQ_INT(pthread_create(&thread, NULL, answer_later, NULL), 0);
    pthread_join(thread, NULL);
    CHECK_EQ_INT(atomic_load(&replies), 3);
    TH_CHECK_NONE(&reply_snap);

    /* Nobody subscribes to the request's type: the redirected event has them. */
    th_snap redirected = {0};
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, NULL, th_snap_handler, &redirected, NULL, NULL),
                 QTBUS_OK);
    d = th_desc("Nobody", h, 2);
    CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, NULL, NULL), 0);
    TH_CHECK_EXACT(&redirected, {"traceparent", TH_TP}, {"baggage", TH_BAG});

    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    th_snap_clear(&sync_snap);
    th_snap_clear(&queued_snap);
    th_snap_clear(&reply_snap);
    th_snap_clear(&redirected);
    printf("test_headers_request: handlers read the request's headers, replies have none\n");
    return 0;
}
