/*
 * The out-of-memory sweep's workload (scripts/oom-sweep.sh): every call of qtbus.h once
 * or twice, each status checked against what the header documents, with QTBUS_ENOMEM
 * (or NULL from a constructor) accepted from the calls that document it.
 *
 * Exit 0: every call returned a documented status.  Exit 3: a call returned something
 * the header does not document for it (the call is printed).  A signal or a hang is the
 * sweep's to classify.  Without failmalloc.so preloaded it just runs.
 */
#include <qtbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void oom_arm(void) __attribute__((weak));
void oom_call(const char *name) __attribute__((weak));

static const char *current = "";
static void call(const char *name)
{
    current = name;
    if (oom_call) oom_call(name);
}

/* ok: the status is what the call documents; nomem: QTBUS_ENOMEM is documented. */
static void expect(int rc, int ok_min, int nomem)
{
    if (rc >= ok_min) return;
    if (nomem && rc == QTBUS_ENOMEM) return;
    fprintf(stderr, "workload: %s returned %d (%s)\n", current, rc, qtbus_strerror(rc));
    exit(3);
}

static int handled, released;
static void handler(const qtbus_event *e, void *u)
{
    (void)u;
    handled++;
    if (qtbus_event_subtype(e) && strcmp(qtbus_event_subtype(e), "reply") == 0) qtbus_event_reply(e, "r", 1);
}
static void release(void *u) { (void)u; released++; }
static void on_reply(const qtbus_event *e, void *u) { (void)e; (void)u; }
static void execute(const qtbus_event *in, qtbus_execution x, void *u)
{
    (void)in;
    (void)u;
    qtbus_execution_send(x, "v", 1);
    qtbus_execution_finish(x, 0, NULL);
}
static void start(qtbus_bus *b, void *u) { (void)b; (void)u; }
static void stop(void *u) { (void)u; }

int main(void)
{
    if (oom_arm) oom_arm();
    call("qtbus_bus_create");
    qtbus_bus *bus = qtbus_bus_create();
    if (!bus) return 0; /* documented: NULL only when out of memory */
    call("qtbus_queue_create");
    qtbus_queue *q = qtbus_queue_create("oom");
    call("qtbus_bag_create");
    qtbus_bag bag = {0};
    expect(qtbus_bag_create(&bag), 0, 1);

    const char *subs[] = {"a", "b"};
    qtbus_sub_options o = {0};
    o.subtypes = subs;
    o.subtype_count = 2;
    o.bag = bag;
    qtbus_token t1 = {0}, t2 = {0}, t3 = {0};
    call("qtbus_subscribe (subtypes, bag)");
    expect(qtbus_subscribe(bus, "E", bag.id ? &o : NULL, handler, NULL, release, &t1), 0, 1);
    qtbus_sub_options oq = {0};
    oq.queue = q;
    call("qtbus_subscribe (queue)");
    expect(qtbus_subscribe(bus, "E", q ? &oq : NULL, handler, NULL, release, &t2), 0, 1);
    qtbus_sub_options orp = {0};
    orp.flags = QTBUS_SUB_REPLAY;
    call("qtbus_dispatch (sticky)");
    qtbus_event_desc sticky = {.type = "S", .data = "x", .size = 1, .flags = QTBUS_EVENT_STICKY};
    expect(qtbus_dispatch(bus, &sticky), 0, 1);
    call("qtbus_subscribe (replay)");
    expect(qtbus_subscribe(bus, "S", &orp, handler, NULL, release, &t3), 0, 1);

    call("qtbus_dispatch");
    qtbus_event_desc d = {.type = "E", .subtype = "a", .data = "12345678", .size = 8};
    expect(qtbus_dispatch(bus, &d), 0, 1);
    call("qtbus_dispatch_json");
    expect(qtbus_dispatch_json(bus, "cfg", "{\"a\":[1,2,3]}"), 0, 1);
    call("qtbus_dispatch_on_bus_queue");
    expect(qtbus_dispatch_on_bus_queue(bus, &d), 0, 1);
    call("qtbus_request");
    qtbus_event_desc r = {.type = "E", .subtype = "reply"};
    expect(qtbus_request(bus, &r, on_reply, NULL, NULL), 0, 1);
    call("qtbus_subscriber_count");
    expect(qtbus_subscriber_count(bus, "E", NULL), 0, 1);

    qtbus_command c = {0};
    call("qtbus_command_create");
    expect(qtbus_command_create(bus, "cmd", 0, execute, NULL, NULL, &c), 0, 1);
    if (c.id) {
        call("qtbus_command_execute");
        expect(qtbus_command_execute(c, NULL, NULL), 0, 1);
        call("qtbus_command_dispose");
        expect(qtbus_command_dispose(c), 0, 0);
    }
    qtbus_source s = {0};
    call("qtbus_source_create");
    expect(qtbus_source_create(bus, "F", 0, start, stop, NULL, NULL, &s), 0, 1);
    if (s.id) {
        call("qtbus_source_connect");
        expect(qtbus_source_connect(s), 0, 1);
        call("qtbus_source_dispose");
        expect(qtbus_source_dispose(s), 0, 0);
    }

    call("qtbus_sticky_clear");
    expect(qtbus_sticky_clear(bus, "S", NULL), 0, 1);
    call("qtbus_token_dispose");
    if (t2.id) expect(qtbus_token_dispose(t2), 0, 0);
    call("qtbus_bag_dispose");
    if (bag.id) expect(qtbus_bag_dispose(bag), 0, 0);
    call("qtbus_bus_destroy");
    expect(qtbus_bus_destroy(bus), 0, 0);
    if (q) {
        call("qtbus_queue_release");
        qtbus_queue_release(q);
    }
    call("done");
    return 0;
}
