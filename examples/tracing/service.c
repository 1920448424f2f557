/* SPDX-License-Identifier: MIT */
/*
 * examples/tracing/service.c -- one W3C trace through a qtbus service (README.md beside
 * this file).  The service imports "Order" from NATS and exports "Shipped".  An Order
 * is handled on the queue "warehouse" (another thread than the bridge's), whose handler
 * dispatches "Shipped": that dispatch names no traceparent, so it inherits the Order's
 * (with its tracestate and baggage), and the bridge publishes Shipped with them as NATS
 * headers.  Each hop prints the trace id it sees.  It exits after `count` orders.
 *
 *   cc examples/tracing/service.c $(pkg-config --cflags --libs qtbus-nats) -o service
 *   ./service nats://127.0.0.1:4222 [count]
 */
#define _POSIX_C_SOURCE 200809L
#include <qtbus_nats.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static qtbus_bus *bus;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t shipped = PTHREAD_COND_INITIALIZER;
static int orders_left;

/* The trace id of a traceparent ("00-<trace id>-<parent id>-<flags>"), or "none". */
static void print_hop(const char *hop, const qtbus_event *event)
{
    const char *traceparent = qtbus_event_header(event, "traceparent");
    const char *baggage = qtbus_event_header(event, "baggage");
    if (traceparent && strlen(traceparent) >= 35) {
        printf("%-28s trace %.32s (baggage: %s)\n", hop, traceparent + 3, baggage ? baggage : "none");
    } else {
        printf("%-28s trace none\n", hop);
    }
    fflush(stdout);
}

/* On the warehouse queue's thread: the order is packed and shipped. */
static void on_order(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    print_hop("qtbus Order (warehouse)", event);
    size_t size = 0;
    const char *data = qtbus_event_data(event, &size);
    char text[128];
    int n = snprintf(text, sizeof text, "shipped %.*s", (int)size, data ? data : "");
    /* No header given: traceparent, tracestate and baggage come from the Order. */
    qtbus_event_desc d = {.type = "Shipped", .data = text, .size = (size_t)n};
    if (qtbus_dispatch(bus, &d) < 0) fprintf(stderr, "%s\n", qtbus_errmsg());
}

/* Synchronous, in the warehouse handler's dispatch, after the bridge's export (which
 * subscribes at the highest priority) has published it. */
static void on_shipped(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    print_hop("qtbus Shipped (dispatched)", event);
    pthread_mutex_lock(&lock);
    orders_left--;
    pthread_cond_signal(&shipped);
    pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
    orders_left = argc > 2 ? atoi(argv[2]) : 1;
    bus = qtbus_bus_create();
    qtbus_queue *warehouse = qtbus_queue_create("warehouse");
    qtbus_nats_options options = {.url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222"};
    qtbus_nats *bridge;
    if (!bus || !warehouse || qtbus_nats_connect(bus, &options, &bridge) != QTBUS_OK) {
        fprintf(stderr, "%s\n", qtbus_errmsg());
        return 1;
    }
    qtbus_sub_options on_queue = {.queue = warehouse};
    if (qtbus_subscribe(bus, "Order", &on_queue, on_order, NULL, NULL, NULL) != QTBUS_OK ||
        qtbus_subscribe(bus, "Shipped", NULL, on_shipped, NULL, NULL, NULL) != QTBUS_OK ||
        qtbus_nats_export(bridge, "Shipped") != QTBUS_OK || qtbus_nats_import(bridge, "Order") != QTBUS_OK) {
        fprintf(stderr, "%s\n", qtbus_errmsg());
        return 1;
    }
    printf("ready\n");
    fflush(stdout);

    pthread_mutex_lock(&lock);
    while (orders_left > 0)
        pthread_cond_wait(&shipped, &lock);
    pthread_mutex_unlock(&lock);

    qtbus_nats_close(bridge); /* before the bus goes; what it published is flushed */
    qtbus_bus_destroy(bus);
    qtbus_queue_release(warehouse);
    return 0;
}
