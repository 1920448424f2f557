/* SPDX-License-Identifier: MIT */
/* A user program that exits with its subscriptions live (their userdata is reachable
 * through the library) and is run under AddressSanitizer by scripts/sanitize.sh
 * (user-asan): LeakSanitizer must report nothing. */
#include <qtbus.h>
#include <stdlib.h>
#include <string.h>
static void on_event(const qtbus_event *e, void *u)
{
    (void)e;
    (void)u;
}
int main(void)
{
    qtbus_queue *q = qtbus_queue_create("user");
    for (int i = 0; i < 1000; i++) {
        char *state = malloc(64);
        strcpy(state, "per-subscription state");
        qtbus_sub_options o = {0};
        if (i % 2) o.queue = q;
        qtbus_token t;
        if (qtbus_subscribe(qtbus_shared(), "Live", &o, on_event, state, free, &t) != QTBUS_OK) return 1;
    }
    qtbus_queue_release(q);
    qtbus_event_desc d = {.type = "Live"};
    return qtbus_dispatch(qtbus_shared(), &d) == 1000 ? 0 : 1;
}
