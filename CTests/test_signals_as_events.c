/* SPDX-License-Identifier: MIT */
/*
 * test_signals_as_events: a signal event behaves as any event of its type: ONCE,
 * sticky with REPLAY, re-entrant emits, qtbus_event_stop and plain subscribers,
 * typed requests answered by plain handlers.
 *
 * Moved verbatim from test_signals.c, which tested every behaviour of typed signals in
 * one file; what the files share is in test_signals.h.
 */
#include "test_signals.h"

/* ---------------------------------------------------------------------------------
 * ONCE, sticky with REPLAY, re-entrant emit
 * ------------------------------------------------------------------------------- */

static void test_once(qtbus_bus *bus)
{
    counted c;
    tu_rec_init(&c.rec);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Once", text_number_args, 2), QTBUS_OK);
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.flags = QTBUS_SUB_ONCE;
    qtbus_token t;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Once", &o, QTBUS_CALLBACK(on_counted), &c, counted_release, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Once", NULL, "a", (int32_t)1), 1);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Once", NULL, "b", (int32_t)2), 0);
    CHECK_EQ_INT(atomic_load(&c.rec.calls), 1);
    CHECK_EQ_INT(qtbus_token_is_active(t), 0);
    CHECK_EQ_INT(atomic_load(&c.rec.releases), 1);
    CHECK_REC_SANE(&c.rec);
}

static char replayed_text[32];
static int32_t replayed_number;
static atomic_int replayed;
static void on_replayed(const char *text, int32_t number, void *userdata)
{
    (void)userdata;
    snprintf(replayed_text, sizeof replayed_text, "%s", text);
    replayed_number = number;
    atomic_fetch_add(&replayed, 1);
}

static void test_sticky_replay(qtbus_bus *bus)
{
    CHECK_EQ_INT(qtbus_signal_define(bus, "Status", text_number_args, 2), QTBUS_OK);
    qtbus_value v[2];
    char text[32] = "first";
    v[0].str = text;
    v[1].i32 = 1;
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Status", NULL, QTBUS_EVENT_STICKY, v, 2), 0);
    strcpy(text, "second");
    v[1].i32 = 2;
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Status", NULL, QTBUS_EVENT_STICKY, v, 2), 0);
    strcpy(text, "overwritten");
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.flags = QTBUS_SUB_REPLAY;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Status", &o, QTBUS_CALLBACK(on_replayed), NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&replayed), 1);
    CHECK_EQ_STR(replayed_text, "second");
    CHECK_EQ_INT(replayed_number, 2);
    /* A plain emit reaches it and does not replace the kept event. */
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Status", NULL, "live", (int32_t)3), 1);
    CHECK_EQ_INT(atomic_load(&replayed), 2);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Status", &o, QTBUS_CALLBACK(on_replayed), NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&replayed), 3);
    CHECK_EQ_STR(replayed_text, "second");
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "Status", NULL), 1);
}

typedef struct nest {
    qtbus_bus *bus;
    char order[64];
    int used;
    atomic_int low_calls;
} nest;

static void on_nest(const char *label, int32_t depth, void *userdata)
{
    nest *n = userdata;
    n->order[n->used++] = label[0];
    if (depth < 3) {
        char next[2] = {(char)(label[0] + 1), 0};
        CHECK_EQ_INT(qtbus_signal_emit(n->bus, "Nest", NULL, next, depth + 1), 2);
    }
    n->order[n->used++] = (char)(label[0] - 'a' + 'A');
}

static void test_reentrant(qtbus_bus *bus)
{
    nest n;
    memset(&n, 0, sizeof n);
    n.bus = bus;
    CHECK_EQ_INT(qtbus_signal_define(bus, "Nest", text_number_args, 2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Nest", NULL, QTBUS_CALLBACK(on_nest), &n, NULL, NULL), QTBUS_OK);
    qtbus_sub_options low;
    memset(&low, 0, sizeof low);
    low.priority = -1;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Nest", &low, QTBUS_CALLBACK(on_count_text), &n.low_calls, NULL, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Nest", NULL, "a", (int32_t)0), 2);
    /* Depth-first: each nested emit is delivered inside the handler that made it. */
    CHECK_EQ_STR(n.order, "abcdDCBA");
    CHECK_EQ_INT(atomic_load(&n.low_calls), 4);
}

/* ---------------------------------------------------------------------------------
 * Subtypes, priorities with stop, QTNoSubscriberEvent
 * ------------------------------------------------------------------------------- */

static void stop_it(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_stop(event), QTBUS_OK);
}

static char lost_subtype[32];
static atomic_int lost_args = -1;
static void on_lost(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    qtbus_value v[2];
    snprintf(lost_subtype, sizeof lost_subtype, "%s", qtbus_event_subtype(event));
    int n = qtbus_event_args(event, v, 2);
    CHECK(n == 2 && strcmp(v[0].str, "nobody") == 0 && v[1].i32 == 5);
    atomic_store(&lost_args, n);
}

static void test_ordinary_event(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Ord", text_number_args, 2), QTBUS_OK);

    /* Subtypes: a connection with subtypes gets only those. */
    atomic_int alice = 0, all = 0;
    const char *subtypes[] = {"alice"};
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.subtypes = subtypes;
    o.subtype_count = 1;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Ord", &o, QTBUS_CALLBACK(on_count_text), &alice, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Ord", NULL, QTBUS_CALLBACK(on_count_text), &all, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Ord", "alice", "a", (int32_t)1), 2);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Ord", "bob", "b", (int32_t)2), 1);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Ord", NULL, "c", (int32_t)3), 1);
    CHECK_EQ_INT(atomic_load(&alice), 1);
    CHECK_EQ_INT(atomic_load(&all), 3);

    /* A plain handler of higher priority stops the event before the typed ones. */
    memset(&o, 0, sizeof o);
    o.priority = 10;
    qtbus_token stopper;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Ord", &o, stop_it, NULL, NULL, &stopper), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Ord", "alice", "d", (int32_t)4), 1);
    CHECK_EQ_INT(atomic_load(&alice), 1);
    CHECK_EQ_INT(atomic_load(&all), 3);
    CHECK_EQ_INT(qtbus_token_dispose(stopper), QTBUS_OK);

    /* Nobody connected: the signal goes to QTNoSubscriberEvent, arguments and all. */
    CHECK_EQ_INT(qtbus_signal_define(bus, "Lonely", text_number_args, 2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, NULL, on_lost, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Lonely", NULL, "nobody", (int32_t)5), 0);
    CHECK_EQ_INT(atomic_load(&lost_args), 2);
    CHECK_EQ_STR(lost_subtype, "Lonely");
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
}

/* ---------------------------------------------------------------------------------
 * A typed request: plain handlers read the arguments and reply
 * ------------------------------------------------------------------------------- */

static void answer(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    qtbus_value v[2];
    CHECK_EQ_INT(qtbus_event_args(event, v, 2), 2);
    char reply[64];
    int n = snprintf(reply, sizeof reply, "%s x%d", v[0].str, (int)v[1].i32);
    CHECK_EQ_INT(qtbus_event_reply(event, reply, (size_t)n), QTBUS_OK);
}

typedef struct replies {
    char text[4][64];
    int count;
    atomic_int done;
} replies;

static void on_reply(const qtbus_event *reply, void *userdata)
{
    replies *r = userdata;
    size_t size;
    const char *data = qtbus_event_data(reply, &size);
    CHECK(r->count < 4 && size < 64);
    memcpy(r->text[r->count], data, size);
    r->text[r->count][size] = 0;
    r->count++;
}

static void on_replies_done(void *userdata) { atomic_fetch_add(&((replies *)userdata)->done, 1); }

static void test_request(qtbus_bus *bus)
{
    replies r;
    memset(&r, 0, sizeof r);
    atomic_int typed = 0;
    CHECK_EQ_INT(qtbus_signal_define(bus, "Ask", text_number_args, 2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Ask", NULL, answer, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Ask", NULL, answer, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Ask", NULL, QTBUS_CALLBACK(on_count_text), &typed, NULL, NULL), QTBUS_OK);
    qtbus_value v[2];
    v[0].str = "ping";
    v[1].i32 = 3;
    CHECK_EQ_INT(qtbus_signal_requestv(bus, "Ask", NULL, v, 2, on_reply, &r, on_replies_done), 3);
    CHECK_EQ_INT(r.count, 2);
    CHECK_EQ_STR(r.text[0], "ping x3");
    CHECK_EQ_STR(r.text[1], "ping x3");
    CHECK_EQ_INT(atomic_load(&r.done), 1);
    CHECK_EQ_INT(atomic_load(&typed), 1);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    test_once(bus);
    test_sticky_replay(bus);
    test_reentrant(bus);
    test_request(bus);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    test_ordinary_event();
    printf("test_signals_as_events: ok\n");
    return 0;
}
