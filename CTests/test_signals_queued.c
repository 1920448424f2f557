/* SPDX-License-Identifier: MIT */
/*
 * test_signals_queued: on a queue, the arguments (strings included) travel with the
 * event: they stay valid after the emitter's buffer is reused.
 *
 * Moved verbatim from test_signals.c, which tested every behaviour of typed signals in
 * one file; what the files share is in test_signals.h.
 */
#include "test_signals.h"

/* ---------------------------------------------------------------------------------
 * Queues: the arguments (strings included) travel with the event
 * ------------------------------------------------------------------------------- */

typedef struct queued_seen {
    atomic_int calls;
    atomic_int releases;
    char text[64];
    int32_t number;
} queued_seen;

static void on_queued(const char *text, int32_t number, void *userdata)
{
    queued_seen *q = userdata;
    /* The n-th delivery must see the n-th emit's values (serial queue: in order). */
    char expect[64];
    snprintf(expect, sizeof expect, "message %d", (int)number);
    CHECK_EQ_STR(text, expect);
    CHECK_EQ_INT(number, atomic_load(&q->calls));
    snprintf(q->text, sizeof q->text, "%s", text);
    q->number = number;
    atomic_fetch_add(&q->calls, 1);
}

static void queued_release(void *userdata) { atomic_fetch_add(&((queued_seen *)userdata)->releases, 1); }

static void hold_queue(const qtbus_event *event, void *userdata)
{
    (void)event;
    tu_gate_pass(userdata);
}

static void test_queued(qtbus_bus *bus)
{
    queued_seen q;
    memset(&q, 0, sizeof q);
    qtbus_queue *queue = qtbus_queue_create("signals");
    CHECK(queue != NULL);
    tu_gate gate = {0, 0};
    CHECK_EQ_INT(qtbus_signal_define(bus, "Queued", text_number_args, 2), QTBUS_OK);
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.queue = queue;
    qtbus_token t;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Queued", &o, QTBUS_CALLBACK(on_queued), &q, queued_release, &t), QTBUS_OK);

    /* Hold the queue so every delivery is still pending while the emitter reuses its
     * buffer. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "Hold", &o, hold_queue, &gate, NULL, NULL), QTBUS_OK);
    qtbus_event_desc hold = tu_event("Hold", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &hold), 1);
    char buffer[64];
    for (int i = 0; i < 50; i++) {
        snprintf(buffer, sizeof buffer, "message %d", i);
        CHECK_EQ_INT(qtbus_signal_emit(bus, "Queued", NULL, buffer, (int32_t)i), 1);
        memset(buffer, '#', sizeof buffer - 1);
        buffer[sizeof buffer - 1] = 0;
    }
    CHECK_EQ_INT(atomic_load(&q.calls), 0);
    atomic_store(&gate.open, 1);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&q.calls), 50);
    CHECK_EQ_STR(q.text, "message 49");
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_WAIT(atomic_load(&q.releases) == 1, TU_WAIT_MS);
    qtbus_queue_release(queue);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    test_queued(bus);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_signals_queued: ok\n");
    return 0;
}
