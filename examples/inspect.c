/* SPDX-License-Identifier: MIT */
/*
 * examples/inspect.c -- what is subscribed on a bus, as a table: the answer to "why
 * does my event not arrive?" that qtbus_subscriber_count() alone cannot give.
 *
 *   cc examples/inspect.c $(pkg-config --cflags --libs qtbus) && ./a.out
 */
#include <qtbus.h>
#include <stdio.h>
#include <string.h>

static void on_event(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
}

/* One row per subscription: the token, the type, its subtypes, priority and options. */
static void print_row(const qtbus_sub_info *info, void *userdata)
{
    (void)userdata;
    char subtypes[64] = "(all)";
    if (info->subtype_count > 0) {
        size_t n = 0;
        for (size_t i = 0; i < info->subtype_count && n < sizeof subtypes; i++)
            n += (size_t)snprintf(subtypes + n, sizeof subtypes - n, "%s%s", i ? "," : "", info->subtypes[i]);
    }
    printf("%-20llx %-14s %-16s %8d  %s%s%s%s%s\n", (unsigned long long)info->token.id, info->type, subtypes,
           (int)info->priority, info->flags & QTBUS_SUB_ONCE ? "once " : "",
           info->flags & QTBUS_SUB_REPLAY ? "replay " : "", info->flags & QTBUS_SUB_PATTERN ? "pattern " : "",
           info->queued ? "queued " : "", info->in_bag ? "in-bag" : "");
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("inspect.worker");
    qtbus_bag bag;
    qtbus_bag_create(&bag);
    const char *users[] = {"alice", "bob"};

    qtbus_subscribe(bus, "LoginEvent", NULL, on_event, NULL, NULL, NULL);
    qtbus_subscribe(bus, "LoginEvent",
                    &(qtbus_sub_options){.subtypes = users, .subtype_count = 2, .priority = 10, .bag = bag}, on_event,
                    NULL, NULL, NULL);
    qtbus_subscribe(bus, "LogoutEvent", &(qtbus_sub_options){.flags = QTBUS_SUB_ONCE | QTBUS_SUB_REPLAY}, on_event,
                    NULL, NULL, NULL);
    qtbus_subscribe(bus, "Download", &(qtbus_sub_options){.queue = queue}, on_event, NULL, NULL, NULL);

    printf("%-20s %-14s %-16s %8s  %s\n", "token", "type", "subtypes", "priority", "options");
    int n = qtbus_bus_foreach(bus, print_row, NULL);
    if (n < 0) {
        fprintf(stderr, "%s\n", qtbus_errmsg());
        return 1;
    }
    printf("%d subscriptions\n", n);

    qtbus_bag_dispose(bag);
    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    return n == 4 ? 0 : 1;
}
