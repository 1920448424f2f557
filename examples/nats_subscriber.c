/* SPDX-License-Identifier: MIT */
/*
 * examples/nats_subscriber.c -- the receiving half of the NATS example: imports every
 * type of the family "Order.>" (Order.created, Order.paid, ...) from a NATS server into
 * its bus, the server filtering by the pattern, and prints every event its bus receives
 * until an "Order.closed" arrives.  scripts/nats-demo.sh runs it with nats_publisher.c.
 *
 *   cc examples/nats_subscriber.c $(pkg-config --cflags --libs qtbus-nats) -o sub
 *   ./sub nats://127.0.0.1:4222
 */
#define _POSIX_C_SOURCE 200809L
#include <qtbus_nats.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t closed = PTHREAD_COND_INITIALIZER;
static int done;

/* Runs on the bridge's thread, as any handler of an imported type does. */
static void on_event(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(event, &size);
    const char *type = qtbus_event_type(event);
    printf("%s: %.*s\n", type, (int)size, data ? data : "");
    fflush(stdout);
    if (strcmp(type, "Order.closed") == 0) {
        pthread_mutex_lock(&lock);
        done = 1;
        pthread_cond_signal(&closed);
        pthread_mutex_unlock(&lock);
    }
}

int main(int argc, char **argv)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_nats_options options = {.url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222"};
    qtbus_nats *bridge;
    if (!bus || qtbus_nats_connect(bus, &options, &bridge) != QTBUS_OK) {
        fprintf(stderr, "%s\n", qtbus_errmsg());
        return 1;
    }
    /* Every event the bus receives ("an invoice" would show here, if one crossed). */
    qtbus_sub_options every = {.flags = QTBUS_SUB_PATTERN};
    qtbus_subscribe(bus, ">", &every, on_event, NULL, NULL, NULL);
    if (qtbus_nats_import(bridge, "Order.>") != QTBUS_OK) {
        fprintf(stderr, "%s\n", qtbus_errmsg());
        return 1;
    }
    printf("ready\n");
    fflush(stdout);

    pthread_mutex_lock(&lock);
    while (!done)
        pthread_cond_wait(&closed, &lock);
    pthread_mutex_unlock(&lock);

    qtbus_nats_close(bridge); /* before the bus goes */
    qtbus_bus_destroy(bus);
    return 0;
}
