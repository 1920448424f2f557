/* SPDX-License-Identifier: MIT */
/*
 * test_nats_patterns.c -- subjects across the bridge (qtbus_nats.h, SUBJECTS): a type's
 * tokens are subject tokens one for one, so that
 *   - the subject of every kind of name is the documented one (a plain NATS subscriber
 *     on <prefix>.> sees them), and each name comes back as it was;
 *   - a plain subscriber's own wildcards (qtbus.e.*.Order.>) select qtbus types;
 *   - qtbus_nats_import(bridge, "Order.*") and import_subtype(bridge, "Order.>", "eu")
 *     receive exactly the types and subtypes the pattern matches (the server filters);
 *   - imports or exports that overlap ("Order.>", "Order.created", ">") dispatch or
 *     publish each event once, requests included (one acknowledgement, one reply);
 *   - a pattern exported and imported on both sides does not loop;
 *   - patterns that are not ones are QTBUS_EINVAL with the reason; a literal type with
 *     an empty token ("a..b") crosses;
 *   - malformed type tokens in received subjects are dropped and reported;
 *   - with JetStream, an import of a pattern replays the kept event of every matching
 *     type, each once though two imports take it.
 */
#include "nats_server.h"

#include <nats/nats.h>

static ns_server server;

/* What one bus received ("type/subtype", "_" for none), or the subjects a raw
 * connection received. */
typedef struct seen {
    pthread_mutex_t lock;
    int count;
    char item[64][800];
} seen;

static void seen_init(seen *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
}

static void seen_add(seen *s, const char *a, const char *b)
{
    pthread_mutex_lock(&s->lock);
    if (s->count < 64) snprintf(s->item[s->count], sizeof s->item[0], "%s%s%s", a, b ? "/" : "", b ? b : "");
    s->count++;
    pthread_mutex_unlock(&s->lock);
}

static int seen_count(seen *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->count;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* How many times `item` was seen. */
static int seen_times(seen *s, const char *item)
{
    pthread_mutex_lock(&s->lock);
    int n = 0;
    for (int i = 0; i < s->count && i < 64; i++)
        n += strcmp(s->item[i], item) == 0;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void on_event(const qtbus_event *e, void *userdata)
{
    const char *subtype = qtbus_event_subtype(e);
    seen_add(userdata, qtbus_event_type(e), subtype ? subtype : "_");
}

static void on_raw(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    seen_add(closure, natsMsg_GetSubject(msg), NULL);
    natsMsg_Destroy(msg);
}

/* Every event of `bus`, recorded in `s`. */
static void record_all(qtbus_bus *bus, seen *s)
{
    qtbus_sub_options every = {.flags = QTBUS_SUB_PATTERN};
    CHECK_EQ_INT(qtbus_subscribe(bus, ">", &every, on_event, s, NULL, NULL), QTBUS_OK);
}

static qtbus_nats *bridge(qtbus_bus *bus, const char *prefix, int jetstream)
{
    qtbus_nats *b = NULL;
    qtbus_nats_options o = {.url = server.url, .prefix = prefix, .jetstream = jetstream};
    CHECK_EQ_INT(qtbus_nats_connect(bus, &o, &b), QTBUS_OK);
    return b;
}

/* A plain NATS connection subscribed to `subject`, recording into `s`. */
typedef struct raw_listener {
    natsConnection *conn;
    natsSubscription *sub;
} raw_listener;

static raw_listener raw_listen(const char *subject, seen *s)
{
    raw_listener raw = {0};
    CHECK_EQ_INT(natsConnection_ConnectTo(&raw.conn, server.url), NATS_OK);
    CHECK_EQ_INT(natsConnection_Subscribe(&raw.sub, raw.conn, subject, on_raw, s), NATS_OK);
    CHECK_EQ_INT(natsConnection_Flush(raw.conn), NATS_OK);
    return raw;
}

static void raw_stop(raw_listener raw)
{
    natsSubscription_Destroy(raw.sub);
    natsConnection_Destroy(raw.conn);
}

static void dispatch(qtbus_bus *bus, const char *type, const char *subtype, uint32_t flags)
{
    qtbus_event_desc d = tu_event(type, subtype);
    d.flags = flags;
    CHECK_MSG(qtbus_dispatch(bus, &d) >= 1, "dispatch %s: %s", type, qtbus_errmsg());
}

/* Nothing more arrives: the counts stay (messages of several subscriptions have no
 * order between them, so waiting for a last one would prove nothing). */
static void settle(void) { tu_sleep_ms(200); }

static atomic_int import_drops;
static char import_drop_why[600];
static void drop_hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind == QTBUS_TRACE_MISUSE && strcmp(r->function, "qtbus_nats_import") == 0) {
        snprintf(import_drop_why, sizeof import_drop_why, "%s", qtbus_errmsg());
        atomic_fetch_add(&import_drops, 1);
    }
}

typedef struct asked {
    atomic_int replies, completions;
} asked;

static void on_reply(const qtbus_event *reply, void *userdata)
{
    (void)reply;
    atomic_fetch_add(&((asked *)userdata)->replies, 1);
}

static void on_complete(void *userdata) { atomic_fetch_add(&((asked *)userdata)->completions, 1); }

static void answer(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_reply(e, "ok", 2), QTBUS_OK);
}

/* 1. The layout, for every kind of name, and each name back as it was. */
static void layout(void)
{
    static const struct {
        const char *type, *subtype;
        uint32_t flags;
        const char *subject;
    } cases[] = {
        {"Order.created", NULL, 0, "lay.e._.Order.created"},
        {"Order.created", "eu", 0, "lay.e.eu.Order.created"},
        {"Order", "x.y", 0, "lay.e.x_2Ey.Order"},
        {"a..b", NULL, 0, "lay.e._.a._.b"},
        {".", NULL, 0, "lay.e._._._"},
        {"Or*.x_y", NULL, 0, "lay.e._.Or_2A.x_5Fy"},
        {"Order.*", NULL, 0, "lay.e._.Order._2A"}, /* a literal type: its "*" is a byte */
        {"Prix \xce\x94", "_", 0, "lay.e._5F.Prix_20_CE_94"},
        {"Kept.one", NULL, QTBUS_EVENT_STICKY, "lay.k._.Kept.one"},
    };
    enum { N = sizeof cases / sizeof cases[0] };
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    qtbus_nats *ba = bridge(a, "lay", 0), *bb = bridge(b, "lay", 0);
    seen subjects, got;
    seen_init(&subjects);
    seen_init(&got);
    raw_listener raw = raw_listen("lay.>", &subjects);
    record_all(b, &got);
    CHECK_EQ_INT(qtbus_nats_export(ba, ">"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, ">"), QTBUS_OK);
    for (int i = 0; i < N; i++)
        dispatch(a, cases[i].type, cases[i].subtype, cases[i].flags);
    CHECK_WAIT(seen_count(&subjects) == N && seen_count(&got) == N, TU_WAIT_MS);
    settle();
    CHECK_EQ_INT(seen_count(&subjects), N);
    CHECK_EQ_INT(seen_count(&got), N);
    for (int i = 0; i < N; i++) {
        /* One publisher, one subscription each: in order. */
        CHECK_EQ_STR(subjects.item[i], cases[i].subject);
        char expected[600];
        snprintf(expected, sizeof expected, "%s/%s", cases[i].type, cases[i].subtype ? cases[i].subtype : "_");
        CHECK_EQ_STR(got.item[i], expected);
        printf("%-22s -> %s\n", expected, subjects.item[i]);
    }
    raw_stop(raw);
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    qtbus_bus_destroy(a);
    qtbus_bus_destroy(b);
}

/* 2. A plain NATS subscriber's wildcards, and 3. imports of patterns. */
static void wildcards(void)
{
    qtbus_bus *a = qtbus_bus_create(), *c = qtbus_bus_create(), *d = qtbus_bus_create();
    qtbus_nats *ba = bridge(a, "w", 0), *bc = bridge(c, "w", 0), *bd = bridge(d, "w", 0);
    seen plain, got_c, got_d;
    seen_init(&plain);
    seen_init(&got_c);
    seen_init(&got_d);
    raw_listener raw = raw_listen("w.e.*.Order.>", &plain);
    record_all(c, &got_c);
    record_all(d, &got_d);
    CHECK_EQ_INT(qtbus_nats_export(ba, ">"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bc, "Order.*"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import_subtype(bd, "Order.>", "eu"), QTBUS_OK);
    dispatch(a, "Order.created", NULL, 0);
    dispatch(a, "Order.a.b", NULL, 0);
    dispatch(a, "Order", NULL, 0);
    dispatch(a, "Order.paid", "eu", 0);
    dispatch(a, "Order.x.y", "eu", 0);
    dispatch(a, "Order.x.y", "us", 0);
    dispatch(a, "Invoice.x", NULL, 0);
    dispatch(a, "Orders.x", "eu", 0);
    /* Order.>: the types of more than one token that start with Order, any subtype. */
    CHECK_WAIT(seen_count(&plain) == 5, TU_WAIT_MS);
    /* Order.*: two tokens, any subtype. */
    CHECK_WAIT(seen_count(&got_c) == 2, TU_WAIT_MS);
    /* Order.> with the subtype eu only. */
    CHECK_WAIT(seen_count(&got_d) == 2, TU_WAIT_MS);
    settle();
    CHECK_EQ_INT(seen_count(&plain), 5);
    CHECK_EQ_STR(plain.item[0], "w.e._.Order.created");
    CHECK_EQ_STR(plain.item[1], "w.e._.Order.a.b");
    CHECK_EQ_STR(plain.item[2], "w.e.eu.Order.paid");
    CHECK_EQ_STR(plain.item[3], "w.e.eu.Order.x.y");
    CHECK_EQ_STR(plain.item[4], "w.e.us.Order.x.y");
    CHECK_EQ_INT(seen_count(&got_c), 2);
    CHECK_EQ_STR(got_c.item[0], "Order.created/_");
    CHECK_EQ_STR(got_c.item[1], "Order.paid/eu");
    CHECK_EQ_INT(seen_count(&got_d), 2);
    CHECK_EQ_STR(got_d.item[0], "Order.paid/eu");
    CHECK_EQ_STR(got_d.item[1], "Order.x.y/eu");
    printf("plain w.e.*.Order.> got %d; import Order.* got %d; import_subtype Order.> eu got %d\n", seen_count(&plain),
           seen_count(&got_c), seen_count(&got_d));
    raw_stop(raw);
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bc), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bd), QTBUS_OK);
    qtbus_bus_destroy(a);
    qtbus_bus_destroy(c);
    qtbus_bus_destroy(d);
}

/* 4. Overlapping imports and exports: each event once. */
static void overlaps(void)
{
    qtbus_bus *a = qtbus_bus_create(), *e = qtbus_bus_create();
    qtbus_nats *ba = bridge(a, "o", 0), *be = bridge(e, "o", 0);
    seen wire, got;
    seen_init(&wire);
    seen_init(&got);
    raw_listener raw = raw_listen("o.>", &wire);
    record_all(e, &got);
    CHECK_EQ_INT(qtbus_nats_export(ba, "Order.>"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_export(ba, "Order.created"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_export(ba, ">"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_export(ba, "Order.>"), QTBUS_OK); /* twice: once */
    CHECK_EQ_INT(qtbus_nats_import(be, "Order.>"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(be, "Order.created"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import_subtype(be, "Order.created", "eu"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import_subtype(be, "*.created", "eu"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(be, ">"), QTBUS_OK);
    dispatch(a, "Order.created", NULL, 0);
    dispatch(a, "Order.created", "eu", 0);
    dispatch(a, "Order.x", NULL, 0);
    dispatch(a, "Other", NULL, 0);
    CHECK_WAIT(seen_count(&wire) == 4 && seen_count(&got) == 4, TU_WAIT_MS);
    settle();
    CHECK_EQ_INT(seen_count(&wire), 4);
    CHECK_EQ_INT(seen_count(&got), 4);
    CHECK_EQ_INT(seen_times(&got, "Order.created/_"), 1);
    CHECK_EQ_INT(seen_times(&got, "Order.created/eu"), 1);
    CHECK_EQ_INT(seen_times(&got, "Order.x/_"), 1);
    CHECK_EQ_INT(seen_times(&got, "Other/_"), 1);

    /* A request that three imports and two exports take: published once, dispatched
     * once, acknowledged once, one reply. */
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(e, "Order.created", NULL, answer, NULL, NULL, &t), QTBUS_OK);
    asked s = {0};
    qtbus_event_desc q = tu_event("Order.created", "eu");
    CHECK_EQ_INT(qtbus_request(a, &q, on_reply, &s, on_complete), 3); /* the three exports */
    CHECK_WAIT(atomic_load(&s.completions) == 1, TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&s.replies), 1);
    CHECK_EQ_INT(seen_times(&got, "Order.created/eu"), 2);
    printf("overlapping: %d published, %d dispatched, request answered %d time(s)\n", seen_count(&wire),
           seen_count(&got), atomic_load(&s.replies));
    raw_stop(raw);
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(be), QTBUS_OK);
    qtbus_bus_destroy(a);
    qtbus_bus_destroy(e);
}

/* 5. A pattern exported and imported on both sides crosses once, and not back. */
static void no_loops(void)
{
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    qtbus_nats *ba = bridge(a, "l", 0), *bb = bridge(b, "l", 0);
    seen got_a, got_b;
    seen_init(&got_a);
    seen_init(&got_b);
    record_all(a, &got_a);
    record_all(b, &got_b);
    qtbus_nats *both[] = {ba, bb};
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(qtbus_nats_export(both[i], "Loop.>"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(both[i], "Loop.>"), QTBUS_OK);
    }
    dispatch(a, "Loop.x", NULL, 0);
    CHECK_WAIT(seen_count(&got_b) == 1, TU_WAIT_MS);
    settle();
    CHECK_EQ_INT(seen_count(&got_a), 1);
    CHECK_EQ_INT(seen_count(&got_b), 1);
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    qtbus_bus_destroy(a);
    qtbus_bus_destroy(b);
}

/* 6. Patterns that are not ones; a literal name with an empty token. */
static void refusals(void)
{
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    qtbus_nats *ba = bridge(a, "r", 0), *bb = bridge(b, "r", 0);
    CHECK_EQ_INT(qtbus_nats_import(bb, "a.>.b"), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_nats_import: the pattern \"a.>.b\" has '>' before its last token");
    CHECK_EQ_INT(qtbus_nats_export(ba, "a..*"), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_nats_export: the pattern \"a..*\" has an empty token");
    CHECK_EQ_INT(qtbus_nats_import_subtype(bb, "*.", "x"), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_nats_import_subtype: the pattern \"*.\" has an empty token");
    CHECK_EQ_INT(qtbus_subscriber_count(a, "a..*", NULL), 0); /* nothing subscribed */
    seen got;
    seen_init(&got);
    record_all(b, &got);
    CHECK_EQ_INT(qtbus_nats_export(ba, "a..b"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "a..b"), QTBUS_OK);
    dispatch(a, "a..b", NULL, 0);
    CHECK_WAIT(seen_count(&got) == 1, TU_WAIT_MS);
    CHECK_EQ_STR(got.item[0], "a..b/_");
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    qtbus_bus_destroy(a);
    qtbus_bus_destroy(b);
}

/* 7. Received subjects whose type tokens this encoding never writes. */
static void malformed(void)
{
    qtbus_bus *b = qtbus_bus_create();
    qtbus_nats *bb = bridge(b, "m", 0);
    seen got;
    seen_init(&got);
    record_all(b, &got);
    CHECK_EQ_INT(qtbus_trace_set(b, QTBUS_TRACE_MISUSE, drop_hook, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, ">"), QTBUS_OK);
    natsConnection *raw = NULL;
    CHECK_EQ_INT(natsConnection_ConnectTo(&raw, server.url), NATS_OK);
    CHECK_EQ_INT(natsConnection_PublishString(raw, "m.e._.A._2Eb", "x"), NATS_OK);  /* '.' escaped in a type */
    CHECK_EQ_INT(natsConnection_PublishString(raw, "m.e._._", "x"), NATS_OK);       /* an empty type */
    CHECK_EQ_INT(natsConnection_PublishString(raw, "m.e._.A.__41", "x"), NATS_OK);  /* a bad escape */
    CHECK_EQ_INT(natsConnection_PublishString(raw, "m.e.x_2Ey.A._", "x"), NATS_OK); /* fine: "A." / "x.y" */
    CHECK_EQ_INT(natsConnection_Flush(raw), NATS_OK);
    CHECK_WAIT(seen_count(&got) == 1 && atomic_load(&import_drops) == 3, TU_WAIT_MS);
    CHECK_EQ_STR(got.item[0], "A./x.y");
    printf("malformed: 3 dropped; last: %s\n", import_drop_why);
    CHECK(strstr(import_drop_why,
                 "qtbus_nats_import: dropped a message on m.e._.A.__41: its subject has a bad _XX escape") ==
          import_drop_why);
    natsConnection_Destroy(raw);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    qtbus_bus_destroy(b);
}

/* 8. JetStream: a later import of a pattern replays every matching type's kept event,
 * each once though an older import takes one of them too. */
static void kept(void)
{
    qtbus_bus *a = qtbus_bus_create(), *g = qtbus_bus_create();
    qtbus_nats *ba = bridge(a, "js", 1);
    CHECK_EQ_INT(qtbus_nats_export(ba, "Kept.>"), QTBUS_OK);
    dispatch(a, "Kept.a", NULL, QTBUS_EVENT_STICKY);
    dispatch(a, "Kept.b", "eu", QTBUS_EVENT_STICKY);
    dispatch(a, "Kept.b.c", NULL, QTBUS_EVENT_STICKY);
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK); /* flushed: the stream has them */
    qtbus_nats *bg = bridge(g, "js", 1);
    seen got;
    seen_init(&got);
    record_all(g, &got);
    CHECK_EQ_INT(qtbus_nats_import(bg, "Kept.a"), QTBUS_OK);
    CHECK_WAIT(seen_count(&got) == 1, TU_WAIT_MS);
    CHECK_EQ_INT(qtbus_nats_import(bg, "Kept.*"), QTBUS_OK);
    CHECK_WAIT(seen_count(&got) == 2, TU_WAIT_MS);
    settle();
    CHECK_EQ_INT(seen_count(&got), 2);
    CHECK_EQ_INT(seen_times(&got, "Kept.a/_"), 1);
    CHECK_EQ_INT(seen_times(&got, "Kept.b/eu"), 1);
    CHECK_EQ_INT(qtbus_nats_close(bg), QTBUS_OK);
    qtbus_bus_destroy(a);
    qtbus_bus_destroy(g);
}

int main(void)
{
    ns_start(&server);
    layout();
    wildcards();
    overlaps();
    no_loops();
    refusals();
    malformed();
    kept();
    ns_stop(&server);
    printf("test_nats_patterns: ok\n");
    return 0;
}
