/* SPDX-License-Identifier: MIT */
/*
 * test_nats_bridge.c -- libqtbus-nats in one process against a real nats-server: two
 * buses, each with its own bridge and connection, stand for two processes.  What
 * crosses (type, subtype, data, sticky; not object), names that are not subject tokens,
 * no loops, subtype filtering by the server, the bridge's thread, malformed subjects,
 * close flushing, bad arguments, a server that is not there.
 */
#include "nats_server.h"

#include <qtbus_nats.h>
#include <nats/nats.h>

static ns_server server;

typedef struct inbox {
    pthread_mutex_t lock;
    int count;
    char type[256], subtype[256];
    int has_subtype;
    char data[512];
    size_t size;
    uint32_t flags;
    void *object;
    pthread_t thread;
} inbox;

static void inbox_init(inbox *in)
{
    memset(in, 0, sizeof *in);
    pthread_mutex_init(&in->lock, NULL);
}

static int inbox_count(inbox *in)
{
    pthread_mutex_lock(&in->lock);
    int n = in->count;
    pthread_mutex_unlock(&in->lock);
    return n;
}

static void receive(const qtbus_event *e, void *userdata)
{
    inbox *in = userdata;
    pthread_mutex_lock(&in->lock);
    snprintf(in->type, sizeof in->type, "%s", qtbus_event_type(e));
    in->has_subtype = qtbus_event_subtype(e) != NULL;
    snprintf(in->subtype, sizeof in->subtype, "%s", in->has_subtype ? qtbus_event_subtype(e) : "");
    const void *data = qtbus_event_data(e, &in->size);
    if (in->size <= sizeof in->data && data) memcpy(in->data, data, in->size);
    in->flags = qtbus_event_flags(e);
    in->object = qtbus_event_object(e);
    in->thread = pthread_self();
    in->count++;
    pthread_mutex_unlock(&in->lock);
}

/* Both connections have seen everything sent before: a request/flush round trip on a
 * third connection would not order them, so the tests wait for counts instead. */
static void settle(void) { tu_sleep_ms(150); }

static atomic_int import_misuse;
static char import_misuse_why[400];
static void misuse_hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind == QTBUS_TRACE_MISUSE && strcmp(r->function, "qtbus_nats_import") == 0) {
        snprintf(import_misuse_why, sizeof import_misuse_why, "%s", qtbus_errmsg());
        atomic_fetch_add(&import_misuse, 1);
    }
}

static void stopper(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    qtbus_event_stop(e);
}

static void object_release(void *object) { (void)object; }

int main(void)
{
    ns_start(&server);
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    CHECK(a && b);

    /* Bad arguments: refused, with the reason. */
    {
        qtbus_nats *bridge = (qtbus_nats *)1;
        qtbus_nats_options o = {.url = server.url};
        CHECK_EQ_INT(qtbus_nats_connect(NULL, &o, &bridge), QTBUS_EINVAL);
        CHECK(bridge == NULL);
        CHECK_EQ_INT(qtbus_nats_connect(a, NULL, &bridge), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_nats_connect(a, &o, NULL), QTBUS_EINVAL);
        o.prefix = "bad prefix";
        CHECK_EQ_INT(qtbus_nats_connect(a, &o, &bridge), QTBUS_EINVAL);
        CHECK(strstr(qtbus_errmsg(), "qtbus_nats_connect: options->prefix") != NULL);
        o.prefix = "a.*";
        CHECK_EQ_INT(qtbus_nats_connect(a, &o, &bridge), QTBUS_EINVAL);
        o.prefix = "a..b";
        CHECK_EQ_INT(qtbus_nats_connect(a, &o, &bridge), QTBUS_EINVAL);
        o.prefix = NULL;
        o.request_timeout_ms = -1;
        CHECK_EQ_INT(qtbus_nats_connect(a, &o, &bridge), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_nats_export(NULL, "T"), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_nats_import(NULL, "T"), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_nats_close(NULL), QTBUS_EINVAL);
    }

    /* No server there: QTBUS_EIO, and the message names the url. */
    {
        char url[64];
        snprintf(url, sizeof url, "nats://127.0.0.1:%d", ns_free_port());
        qtbus_nats *bridge = (qtbus_nats *)1;
        qtbus_nats_options o = {.url = url};
        int64_t start = tu_now_ms();
        CHECK_EQ_INT(qtbus_nats_connect(a, &o, &bridge), QTBUS_EIO);
        CHECK(bridge == NULL);
        CHECK(tu_now_ms() - start < 5000);
        CHECK_MSG(strstr(qtbus_errmsg(), url) != NULL, "errmsg: %s", qtbus_errmsg());
        CHECK_MSG(strstr(qtbus_errmsg(), "qtbus_nats_connect: no server at") == qtbus_errmsg(), "errmsg: %s",
                  qtbus_errmsg());
        printf("server down: %s\n", qtbus_errmsg());
    }

    qtbus_nats *ba = ns_bridge(&server, a, 0, 0), *bb = ns_bridge(&server, b, 0, 0);
    CHECK_EQ_INT(qtbus_nats_export(ba, ""), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_nats_import_subtype(bb, "T", NULL), QTBUS_EINVAL);

    /* Type, subtype, data and the sticky flag cross; the object does not; the receiving
     * handler runs on the bridge's thread. */
    {
        static inbox in;
        inbox_init(&in);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(b, "Order", NULL, receive, &in, NULL, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(ba, "Order"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(ba, "Order"), QTBUS_OK); /* twice: once */
        CHECK_EQ_INT(qtbus_nats_import(bb, "Order"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Order"), QTBUS_OK);
        settle();
        int obj;
        qtbus_event_desc d = {.type = "Order",
                              .subtype = "created",
                              .data = "{\"id\":7}",
                              .size = 8,
                              .object = &obj,
                              .object_release = object_release};
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1); /* the export subscription */
        CHECK_WAIT(inbox_count(&in) == 1, TU_WAIT_MS);
        CHECK_EQ_STR(in.type, "Order");
        CHECK_EQ_STR(in.subtype, "created");
        CHECK_EQ_INT(in.size, 8);
        CHECK(memcmp(in.data, "{\"id\":7}", 8) == 0);
        CHECK_EQ_INT(in.flags, 0);
        CHECK(in.object == NULL);
        CHECK(!pthread_equal(in.thread, pthread_self()));

        qtbus_event_desc plain = {.type = "Order"};
        CHECK_EQ_INT(qtbus_dispatch(a, &plain), 1);
        CHECK_WAIT(inbox_count(&in) == 2, TU_WAIT_MS);
        CHECK(!in.has_subtype);
        CHECK_EQ_INT(in.size, 0);

        /* A local handler that stops the event runs after the export (highest priority). */
        qtbus_token ts;
        qtbus_sub_options high = {.priority = 1000};
        CHECK_EQ_INT(qtbus_subscribe(a, "Order", &high, stopper, NULL, NULL, &ts), QTBUS_OK);
        CHECK_EQ_INT(qtbus_dispatch(a, &plain), 2);
        CHECK_WAIT(inbox_count(&in) == 3, TU_WAIT_MS);
        CHECK_EQ_INT(qtbus_token_dispose(ts), QTBUS_OK);

        /* Sticky: kept on the receiving bus, so a later REPLAY subscriber gets it. */
        qtbus_event_desc sticky = {
            .type = "Order", .subtype = "last", .data = "42", .size = 2, .flags = QTBUS_EVENT_STICKY};
        CHECK_EQ_INT(qtbus_dispatch(a, &sticky), 1);
        CHECK_WAIT(inbox_count(&in) == 4, TU_WAIT_MS);
        CHECK_EQ_INT(in.flags, QTBUS_EVENT_STICKY);
        static inbox late;
        inbox_init(&late);
        qtbus_token tl;
        qtbus_sub_options replay = {.flags = QTBUS_SUB_REPLAY};
        CHECK_EQ_INT(qtbus_subscribe(b, "Order", &replay, receive, &late, NULL, &tl), QTBUS_OK);
        CHECK_EQ_INT(inbox_count(&late), 1);
        CHECK_EQ_STR(late.subtype, "last");
        CHECK(memcmp(late.data, "42", 2) == 0);
        CHECK_EQ_INT(qtbus_token_dispose(tl), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* Names that are not subject tokens cross and come back as they were. */
    {
        static const char *const names[] = {
            "a.b",       "*",    ">",      "a b",    "_",
            "_41",       "__",   "-",      "Δ",      "Prix Δ",
            "tab\there", "$SYS", "x>y.z*", "日本語", "\xf0\x9f\x9a\x80",
        };
        static inbox in;
        inbox_init(&in);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(b, "Weird", NULL, receive, &in, NULL, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(ba, "Weird"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Weird"), QTBUS_OK);
        settle();
        int sent = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            qtbus_event_desc d = {.type = "Weird", .subtype = names[i]};
            CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
            sent++;
            CHECK_WAIT(inbox_count(&in) == sent, TU_WAIT_MS);
            CHECK_EQ_STR(in.subtype, names[i]);
        }
        /* The longest name: 255 bytes, each one escaped. */
        char longest[256];
        memset(longest, '.', 255);
        longest[255] = '\0';
        for (int k = 0; k < 2; k++) {
            qtbus_event_desc d = {.type = k ? longest : "Weird", .subtype = k ? "x" : longest};
            if (k) {
                CHECK_EQ_INT(qtbus_nats_export(ba, longest), QTBUS_OK);
                CHECK_EQ_INT(qtbus_nats_import(bb, longest), QTBUS_OK);
                CHECK_EQ_INT(qtbus_subscribe(b, longest, NULL, receive, &in, NULL, NULL), QTBUS_OK);
                settle();
            }
            CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
            sent++;
            CHECK_WAIT(inbox_count(&in) == sent, TU_WAIT_MS);
            CHECK_EQ_STR(in.type, d.type);
            CHECK_EQ_STR(in.subtype, d.subtype);
        }
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* No loops: a type both exported and imported on both sides crosses once. */
    {
        static inbox in_a, in_b;
        inbox_init(&in_a);
        inbox_init(&in_b);
        qtbus_token ta, tb;
        CHECK_EQ_INT(qtbus_subscribe(a, "Chat", NULL, receive, &in_a, NULL, &ta), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(b, "Chat", NULL, receive, &in_b, NULL, &tb), QTBUS_OK);
        qtbus_nats *both[2] = {ba, bb};
        for (int i = 0; i < 2; i++) {
            CHECK_EQ_INT(qtbus_nats_export(both[i], "Chat"), QTBUS_OK);
            CHECK_EQ_INT(qtbus_nats_import(both[i], "Chat"), QTBUS_OK);
        }
        settle();
        qtbus_event_desc d = {.type = "Chat", .data = "hi", .size = 2};
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 2);
        CHECK_WAIT(inbox_count(&in_b) == 1, TU_WAIT_MS);
        tu_sleep_ms(300);
        CHECK_EQ_INT(inbox_count(&in_a), 1); /* its own dispatch, not an echo */
        CHECK_EQ_INT(inbox_count(&in_b), 1);
        CHECK_EQ_INT(qtbus_token_dispose(ta), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(tb), QTBUS_OK);
    }

    /* A subtype import: the server sends only that subtype. */
    {
        qtbus_bus *c = qtbus_bus_create();
        qtbus_nats *bc = ns_bridge(&server, c, 0, 0);
        static inbox in;
        inbox_init(&in);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(c, "Price", NULL, receive, &in, NULL, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(ba, "Price"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import_subtype(bc, "Price", "EUR"), QTBUS_OK);
        settle();
        const char *const subtypes[] = {"USD", "EUR", "GBP", "EUR"};
        for (int i = 0; i < 4; i++) {
            qtbus_event_desc d = {.type = "Price", .subtype = subtypes[i]};
            CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
        }
        CHECK_WAIT(inbox_count(&in) == 2, TU_WAIT_MS);
        tu_sleep_ms(200);
        CHECK_EQ_INT(inbox_count(&in), 2);
        CHECK_EQ_STR(in.subtype, "EUR");
        CHECK_EQ_INT(qtbus_nats_close(bc), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(c), QTBUS_OK);
    }

    /* Malformed subjects under the prefix are dropped and reported, never dispatched. */
    {
        static inbox in;
        inbox_init(&in);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(b, "Raw", NULL, receive, &in, NULL, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_trace_set(b, QTBUS_TRACE_MISUSE, misuse_hook, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Raw"), QTBUS_OK);
        natsConnection *raw = NULL;
        CHECK_EQ_INT(natsConnection_ConnectTo(&raw, server.url), NATS_OK);
        settle();
        const char *const bad[] = {
            "qtbus.x._.Raw",   /* unknown kind */
            "qtbus.e._ZZ.Raw", /* bad escape */
            "qtbus.e._41.Raw", /* a plain byte escaped: a second spelling */
            "qtbus.e._FF.Raw", /* not UTF-8 */
            "qtbus.e.a~b.Raw", /* a byte the encoding never writes */
        };
        int expected = 0;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            if (natsConnection_PublishString(raw, bad[i], "x") != NATS_OK) continue;
            expected++;
        }
        CHECK_EQ_INT(natsConnection_PublishString(raw, "qtbus.e.ok.Raw", "fine"), NATS_OK);
        CHECK_EQ_INT(natsConnection_Flush(raw), NATS_OK);
        /* One publisher's messages arrive in order: the good one last. */
        CHECK_WAIT(inbox_count(&in) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(expected, 5);
        CHECK_EQ_INT(atomic_load(&import_misuse), expected);
        printf("malformed: %d of %d published subjects reported; last: %s\n", atomic_load(&import_misuse), expected,
               import_misuse_why);
        CHECK_EQ_STR(in.subtype, "ok");
        CHECK(strstr(import_misuse_why, "qtbus_nats_import: dropped a message on qtbus.e.") == import_misuse_why);
        natsConnection_Destroy(raw);
        CHECK_EQ_INT(qtbus_trace_set(b, 0, NULL, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* Close flushes: a burst dispatched right before close arrives whole. */
    {
        enum { BURST = 5000 };
        static inbox in;
        inbox_init(&in);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(b, "Burst", NULL, receive, &in, NULL, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Burst"), QTBUS_OK);
        qtbus_bus *d_bus = qtbus_bus_create();
        qtbus_nats *bd = ns_bridge(&server, d_bus, 0, 0);
        CHECK_EQ_INT(qtbus_nats_export(bd, "Burst"), QTBUS_OK);
        settle();
        char payload[64] = {0};
        for (int i = 0; i < BURST; i++) {
            qtbus_event_desc d = {.type = "Burst", .data = payload, .size = sizeof payload};
            CHECK_EQ_INT(qtbus_dispatch(d_bus, &d), 1);
        }
        CHECK_EQ_INT(qtbus_nats_close(bd), QTBUS_OK);
        /* After close the bus is plain again: nothing subscribed by the bridge. */
        CHECK_EQ_INT(qtbus_subscriber_count(d_bus, "Burst", NULL), 0);
        CHECK_EQ_INT(qtbus_bus_destroy(d_bus), QTBUS_OK);
        CHECK_WAIT(inbox_count(&in) == BURST, TU_WAIT_MS);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_bridge: passed\n");
    return 0;
}
