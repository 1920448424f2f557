/* SPDX-License-Identifier: MIT */
/* dispatch_loop H N: subscribes H handlers to "E" on the shared bus and dispatches N
 * events to them; exits 0 when every handler ran N times.  For instruction counts under
 * callgrind (scripts/bench-variants.sh runs it at two N and takes the difference, so
 * start-up and subscribe cancel out). */
#include <qtbus.h>
#include <stdlib.h>
static volatile long hits;
static void h(const qtbus_event *e, void *u)
{
    (void)e;
    (void)u;
    hits++;
}
int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    int handlers = atoi(argv[1]);
    long n = atol(argv[2]);
    qtbus_bag bag;
    qtbus_bag_create(&bag);
    for (int i = 0; i < handlers; i++)
        QTBUS_SUB(bag, "E", h, NULL);
    qtbus_event_desc d = {.type = "E"};
    for (long i = 0; i < n; i++)
        qtbus_dispatch(qtbus_shared(), &d);
    qtbus_bag_dispose(bag);
    return hits == handlers * n ? 0 : 1;
}
