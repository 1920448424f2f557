/* SPDX-License-Identifier: MIT */
/*
 * test_headers_bounded: deliveries kept by a bounded queue keep their own event's
 * headers; QTBUS_OVERFLOW_LATEST keeps the replacing event's.
 *
 * Users rely on: with DROP_OLDEST, each delivery that runs reading the headers of the
 * event it delivers (not a neighbour's); with LATEST, the one delivery that runs after
 * several replacements reading the last event's headers and data.
 */
#include "test_util.h"
#include "test_headers.h"

#define SEEN_MAX 16
static atomic_int seen_count;
static char seen_id[SEEN_MAX][16];
static char seen_data[SEEN_MAX][16];

static void record(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    int i = atomic_fetch_add(&seen_count, 1);
    CHECK(i < SEEN_MAX);
    const char *id = qtbus_event_header(event, "x-id");
    size_t size = 0;
    const char *data = qtbus_event_data(event, &size);
    snprintf(seen_id[i], sizeof seen_id[i], "%s", id ? id : "(none)");
    snprintf(seen_data[i], sizeof seen_data[i], "%.*s", (int)size, data ? data : "");
}

static void dispatch_numbered(qtbus_bus *bus, int n)
{
    char id[16];
    snprintf(id, sizeof id, "%d", n);
    qtbus_header h[] = {{"x-id", id}};
    qtbus_event_desc d = th_desc("T", h, 1);
    d.data = id;
    d.size = strlen(id);
    CHECK(qtbus_dispatch(bus, &d) >= 0);
}

static void run(uint32_t overflow, int dispatched)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("bounded");
    CHECK_EQ_INT(qtbus_queue_set_limit(queue, 2, overflow, 0), QTBUS_OK);
    tu_gate gate = {0};
    qtbus_sub_options on_queue = tu_options();
    on_queue.queue = queue;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Gate", &on_queue, tu_gate_handler, &gate, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", &on_queue, record, NULL, NULL, NULL), QTBUS_OK);
    qtbus_event_desc g = tu_event("Gate", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &g), 1);
    CHECK_WAIT(atomic_load(&gate.entered) == 1, TU_WAIT_MS);
    atomic_store(&seen_count, 0);
    for (int n = 1; n <= dispatched; n++)
        dispatch_numbered(bus, n);
    atomic_store(&gate.open, 1);
    CHECK_IDLE(bus);
    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
}

int main(void)
{
    /* DROP_OLDEST, room for 2 with the gate's delivery running: 4 and 5 are kept. */
    run(QTBUS_OVERFLOW_DROP_OLDEST, 5);
    CHECK_EQ_INT(atomic_load(&seen_count), 2);
    for (int i = 0; i < 2; i++)
        CHECK_EQ_STR(seen_id[i], seen_data[i]);
    CHECK_EQ_STR(seen_id[1], "5");

    /* LATEST: one waiting delivery of T, replaced by each newer event. */
    run(QTBUS_OVERFLOW_LATEST, 5);
    CHECK_EQ_INT(atomic_load(&seen_count), 1);
    CHECK_EQ_STR(seen_data[0], "5");
    CHECK_EQ_STR(seen_id[0], "5");

    printf("test_headers_bounded: kept deliveries keep their headers, LATEST the replacing one's\n");
    return 0;
}
