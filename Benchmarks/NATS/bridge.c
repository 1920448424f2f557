/* SPDX-License-Identifier: MIT */
/*
 * The qtbus pair: what qtbus adds to nats.c.  Publishing, a qtbus_dispatch on a bus
 * whose type is exported (the bridge's export handler publishes it, on this thread);
 * receiving, the bridge's nats.c callback queues the message, the bridge's thread
 * dispatches it on the bus, and a plain handler there counts it.  Both buses have no
 * other subscriber and no trace hook: a hook would put every dispatch on qtbus's slow
 * path.
 */
#include "bench_nats.h"

#include <stdlib.h>

static int bridge_send(sender *s, const void *data, size_t size)
{
    qtbus_event_desc d = {.type = TYPE, .data = data, .size = size};
    /* 1: the export handler ran (it reports a failed publish itself, and the event
     * then counts as lost). */
    return qtbus_dispatch(s->bus, &d) == 1 ? 0 : -1;
}

static void bridge_send_close(sender *s)
{
    check(qtbus_nats_close(s->bridge) == QTBUS_OK, "bridge publisher: close (flush)", qtbus_errmsg());
    qtbus_bus_destroy(s->bus);
    s->bridge = NULL;
    s->bus = NULL;
}

void bridge_sender_open(sender *s, const char *url)
{
    *s = (sender){.send = bridge_send, .close = bridge_send_close, .bus = qtbus_bus_create()};
    check(s->bus != NULL, "bridge publisher: bus", "out of memory");
    qtbus_nats_options o = {.url = url};
    check(qtbus_nats_connect(s->bus, &o, &s->bridge) == QTBUS_OK, "bridge publisher: connect", qtbus_errmsg());
    check(qtbus_nats_export(s->bridge, TYPE) == QTBUS_OK, "bridge publisher: export", qtbus_errmsg());
}

static void on_event(const qtbus_event *e, void *userdata)
{
    size_t size = 0;
    const void *data = qtbus_event_data(e, &size);
    received(userdata, data, size);
}

static void bridge_sink_close(sink *k)
{
    qtbus_nats_close(k->bridge);
    qtbus_bus_destroy(k->bus);
}

void bridge_sink_open(sink *k, const char *url, receiver *r)
{
    *k = (sink){.close = bridge_sink_close, .bus = qtbus_bus_create()};
    check(k->bus != NULL, "bridge subscriber: bus", "out of memory");
    qtbus_nats_options o = {.url = url};
    check(qtbus_nats_connect(k->bus, &o, &k->bridge) == QTBUS_OK, "bridge subscriber: connect", qtbus_errmsg());
    check(qtbus_subscribe(k->bus, TYPE, NULL, on_event, r, NULL, NULL) == QTBUS_OK, "bridge subscriber: subscribe",
          qtbus_errmsg());
    /* Returns once the server has the subscription. */
    check(qtbus_nats_import(k->bridge, TYPE) == QTBUS_OK, "bridge subscriber: import", qtbus_errmsg());
}
