/* SPDX-License-Identifier: MIT */
/*
 * examples/logger.c -- every event of a bus, logged in a few lines: one subscription
 * to the pattern ">" (QTBUS_SUB_PATTERN), which matches every type, at the highest
 * priority so it sees each event first.  "Order.*" would log the orders only.
 *
 *   cc examples/logger.c $(pkg-config --cflags --libs qtbus) && ./a.out
 */
#include <qtbus.h>
#include <stdint.h>
#include <stdio.h>

static void log_event(const qtbus_event *event, void *userdata)
{
    FILE *out = userdata;
    size_t size = 0;
    qtbus_event_data(event, &size);
    const char *subtype = qtbus_event_subtype(event);
    fprintf(out, "%s%s%s (%zu bytes)\n", qtbus_event_type(event), subtype ? "/" : "", subtype ? subtype : "", size);
}

static void on_order(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_subscribe(bus, ">", &(qtbus_sub_options){.flags = QTBUS_SUB_PATTERN, .priority = INT32_MAX}, log_event,
                    stdout, NULL, NULL);
    /* The application's own subscriptions and events, unaware of the logger. */
    qtbus_subscribe(bus, "Order.created", NULL, on_order, NULL, NULL, NULL);
    qtbus_dispatch(bus, &(qtbus_event_desc){.type = "Order.created", .subtype = "eu", .data = "42", .size = 2});
    qtbus_dispatch(bus, &(qtbus_event_desc){.type = "Invoice.paid"});
    qtbus_dispatch(bus, &(qtbus_event_desc){.type = "Tick"});
    qtbus_bus_destroy(bus);
    return 0;
}
