/* SPDX-License-Identifier: MIT */
/*
 * test_headers_copy: the library copies the headers a dispatch is given.
 *
 * Users rely on: the caller's array and strings being free to change or go as soon as
 * the dispatch returns, while queued deliveries, posted dispatches and a kept sticky
 * event's later replays still see the values as given; the pointers that
 * qtbus_event_header and _at return staying valid and unchanged for the whole handler
 * call.
 */
#include "test_util.h"
#include "test_headers.h"

static th_snap queued_snap, posted_snap, replay_snap;

/* A handler that reads a header, lets time pass, and reads it again: same pointer, same
 * text. */
static atomic_int stable;
static void read_twice(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    const char *before = qtbus_event_header(event, "traceparent");
    char copy[128];
    snprintf(copy, sizeof copy, "%s", before ? before : "");
    tu_sleep_ms(20);
    const char *name = NULL, *value = NULL;
    CHECK_EQ_INT(qtbus_event_header_at(event, 0, &name, &value), QTBUS_OK);
    if (before && value == before && strcmp(before, copy) == 0 && strcmp(copy, TH_TP) == 0)
        atomic_fetch_add(&stable, 1);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("headers");
    tu_gate gate = {0};
    qtbus_sub_options queued = tu_options();
    queued.queue = queue;
    /* The gate holds the queue until every dispatch below has returned. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "Gate", &queued, tu_gate_handler, &gate, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", &queued, th_snap_handler, &queued_snap, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "P", NULL, th_snap_handler, &posted_snap, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "R", &queued, read_twice, NULL, NULL, NULL), QTBUS_OK);
    qtbus_event_desc gate_event = tu_event("Gate", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &gate_event), 1);
    CHECK_WAIT(atomic_load(&gate.entered) == 1, TU_WAIT_MS);

    /* The strings and the array live on the heap, and are scribbled over and freed as
     * soon as each call returns. */
    const char *types[] = {"T", "P", "S", "R"};
    for (int k = 0; k < 4; k++) {
        char *name = th_strdup("traceparent"), *value = th_strdup(TH_TP);
        char *other = th_strdup("x-other"), *other_value = th_strdup("kept");
        qtbus_header *h = malloc(2 * sizeof *h);
        CHECK(h != NULL);
        h[0] = (qtbus_header){name, value};
        h[1] = (qtbus_header){other, other_value};
        qtbus_event_desc d = th_desc(types[k], h, 2);
        if (k == 1) {
            CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_OK);
        } else {
            d.flags |= k == 2 ? QTBUS_EVENT_STICKY : 0;
            CHECK(qtbus_dispatch(bus, &d) >= 0);
        }
        memset(name, 'X', strlen(name));
        memset(value, 'X', strlen(value));
        memset(other_value, 'X', strlen(other_value));
        h[0] = (qtbus_header){"junk", "junk"};
        free(name);
        free(value);
        free(other);
        free(other_value);
        free(h);
    }
    atomic_store(&gate.open, 1);
    CHECK_IDLE(bus);
    /* The sticky event is replayed after its desc is long gone. */
    qtbus_sub_options replay = tu_options();
    replay.flags = QTBUS_SUB_REPLAY;
    CHECK_EQ_INT(qtbus_subscribe(bus, "S", &replay, th_snap_handler, &replay_snap, NULL, NULL), QTBUS_OK);
    CHECK_IDLE(bus);

    th_snap *snaps[] = {&queued_snap, &posted_snap, &replay_snap};
    for (int k = 0; k < 3; k++) {
        CHECK_EQ_INT(atomic_load(&snaps[k]->taken), 1);
        TH_CHECK_EXACT(snaps[k], {"traceparent", TH_TP}, {"x-other", "kept"});
        th_snap_clear(snaps[k]);
    }
    CHECK_EQ_INT(atomic_load(&stable), 1);

    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    printf("test_headers_copy: queued, posted and replayed deliveries see the headers as given\n");
    return 0;
}
