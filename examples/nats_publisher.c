/* SPDX-License-Identifier: MIT */
/*
 * examples/nats_publisher.c -- the sending half of the NATS example: exports the family
 * of types "Order.>" and dispatches a few orders on its own bus, as it would with no
 * NATS at all; the bridge publishes each on its type's subject (qtbus.e._.Order.paid).
 * An invoice is dispatched too, and stays: no export matches it.
 * scripts/nats-demo.sh runs it with nats_subscriber.c.
 *
 *   cc examples/nats_publisher.c $(pkg-config --cflags --libs qtbus-nats) -o pub
 *   ./pub nats://127.0.0.1:4222
 */
#include <qtbus_nats.h>

#include <stdio.h>
#include <string.h>

static void dispatch(qtbus_bus *bus, const char *type, const char *json)
{
    qtbus_event_desc event = {.type = type, .data = json, .size = strlen(json)};
    if (qtbus_dispatch(bus, &event) < 0) fprintf(stderr, "%s\n", qtbus_errmsg());
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
    qtbus_nats_export(bridge, "Order.>");

    dispatch(bus, "Order.created", "{\"id\": 1, \"item\": \"tea\"}");
    dispatch(bus, "Order.created", "{\"id\": 2, \"item\": \"cake\"}");
    dispatch(bus, "Invoice.sent", "{\"id\": 1}");
    dispatch(bus, "Order.paid", "{\"id\": 1}");
    dispatch(bus, "Order.closed", "{}");

    int status = qtbus_nats_close(bridge); /* flushes: every order has left */
    qtbus_bus_destroy(bus);
    printf("published 4 orders\n");
    return status == QTBUS_OK ? 0 : 1;
}
