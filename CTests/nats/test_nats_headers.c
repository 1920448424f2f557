/* SPDX-License-Identifier: MIT */
/*
 * test_nats_headers.c -- event headers across the bridge (qtbus_nats.h, HEADERS):
 *   - between two bridges: an exported event's headers are the imported event's, but
 *     for one with an empty value, which the bridge leaves out (nats.c 3.4.1 cannot read
 *     one back: qtbus_nats.h's HEADERS) without losing the others; none of the
 *     bridge's own Qtbus-* headers shows;
 *   - a request carries its headers to the answering side's handlers, and the replies
 *     that come back carry none;
 *   - a plain NATS client with OpenTelemetry (traced_client.py: nats-py and the W3C
 *     propagator) publishes with a span's context: the qtbus handler reads the same
 *     traceparent, tracestate and baggage, headers named Qtbus-* in any case do not
 *     reach it, and what it dispatches on an exported type goes back to the client
 *     with the context inherited, where the propagator extracts the same trace id;
 *   - a plain requester's traceparent reaches the answering handler; its reply has no
 *     header;
 *   - a plain listener sees an exported event's headers, inherited ones included.
 */
#include "nats_server.h"

#include <stdbool.h>
#include <strings.h>

static ns_server server;

/* The next line of the client's output, which must start with `prefix`; the rest is
 * copied to out. */
static void read_line(FILE *f, const char *prefix, char *out, size_t size)
{
    char line[1024];
    CHECK_MSG(fgets(line, sizeof line, f) != NULL, "traced_client.py ended before \"%s\"", prefix);
    line[strcspn(line, "\n")] = '\0';
    printf("traced client: %s\n", line);
    CHECK_MSG(strncmp(line, prefix, strlen(prefix)) == 0, "\"%s\" does not start with \"%s\"", line, prefix);
    snprintf(out, size, "%s", line + strlen(prefix));
}

/* What a handler read: every header, as "name=value;" in _at's order, and a few by
 * name. */
typedef struct seen {
    pthread_mutex_t lock;
    int count;
    size_t headers;
    char all[2048], traceparent[128], tracestate[128], baggage[128];
    bool bridge_header; /* a header named Qtbus-*, in any case */
} seen;

static void copy_header(const qtbus_event *e, const char *name, char *out, size_t size)
{
    const char *v = qtbus_event_header(e, name);
    snprintf(out, size, "%s", v ? v : "-");
}

static void take(seen *s, const qtbus_event *e)
{
    pthread_mutex_lock(&s->lock);
    s->headers = qtbus_event_header_count(e);
    s->all[0] = '\0';
    s->bridge_header = false;
    for (size_t i = 0; i < s->headers; i++) {
        const char *name = NULL, *value = NULL;
        CHECK_EQ_INT(qtbus_event_header_at(e, i, &name, &value), QTBUS_OK);
        size_t used = strlen(s->all);
        snprintf(s->all + used, sizeof s->all - used, "%s=%s;", name, value);
        if (strncasecmp(name, "qtbus-", 6) == 0) s->bridge_header = true;
    }
    copy_header(e, "traceparent", s->traceparent, sizeof s->traceparent);
    copy_header(e, "tracestate", s->tracestate, sizeof s->tracestate);
    copy_header(e, "baggage", s->baggage, sizeof s->baggage);
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

static void record(const qtbus_event *e, void *userdata) { take(userdata, e); }

/* Reads the order's context, then dispatches Shipped (exported): it inherits. */
static qtbus_bus *bus_b;
static void ship(const qtbus_event *e, void *userdata)
{
    take(userdata, e);
    qtbus_event_desc d = tu_event("Shipped", NULL);
    d.data = "shipped";
    d.size = 7;
    CHECK(qtbus_dispatch(bus_b, &d) >= 1);
}

static void answer(const qtbus_event *e, void *userdata)
{
    take(userdata, e);
    CHECK_EQ_INT(qtbus_event_reply(e, "42", 2), QTBUS_OK);
}

typedef struct replies {
    pthread_mutex_t lock;
    int count, with_headers, completions;
} replies;

static void on_reply(const qtbus_event *reply, void *userdata)
{
    replies *r = userdata;
    pthread_mutex_lock(&r->lock);
    r->count++;
    r->with_headers += qtbus_event_header_count(reply) != 0;
    pthread_mutex_unlock(&r->lock);
}

static void on_complete(void *userdata)
{
    replies *r = userdata;
    pthread_mutex_lock(&r->lock);
    r->completions++;
    pthread_mutex_unlock(&r->lock);
}

static int completions(replies *r)
{
    pthread_mutex_lock(&r->lock);
    int n = r->completions;
    pthread_mutex_unlock(&r->lock);
    return n;
}

int main(void)
{
    ns_start(&server);
    qtbus_bus *a = qtbus_bus_create();
    bus_b = qtbus_bus_create();
    qtbus_nats *ba = ns_bridge(&server, a, 2000, 0), *bb = ns_bridge(&server, bus_b, 2000, 0);

    /* 1. Bridge to bridge. */
    {
        seen s = {.lock = PTHREAD_MUTEX_INITIALIZER};
        CHECK_EQ_INT(qtbus_nats_export(ba, "H"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "H"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus_b, "H", NULL, record, &s, NULL, NULL), QTBUS_OK);
        qtbus_header h[] = {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
                            {"x-empty", "e"},
                            {"x-utf8", "caf\xc3\xa9"}};
        qtbus_event_desc d = tu_event("H", NULL);
        d.flags = QTBUS_EVENT_HEADERS;
        d.headers = h;
        d.header_count = 3;
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
        CHECK_WAIT(seen_count(&s) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(s.headers, 3);
        CHECK(!s.bridge_header);
        CHECK_EQ_STR(s.traceparent, h[0].value);
        CHECK(strstr(s.all, "x-empty=e;") != NULL);
        CHECK(strstr(s.all, "x-utf8=caf\xc3\xa9;") != NULL);

        /* An empty value is left out, and the headers around it cross intact (sent,
         * nats.c's parser would take the next line for its value). */
        qtbus_header e[] = {{"x-before", "b"}, {"x-empty", ""}, {"x-after", "a"}, {"x-last", "l"}};
        d.headers = e;
        d.header_count = 4;
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
        CHECK_WAIT(seen_count(&s) == 2, TU_WAIT_MS);
        CHECK_EQ_INT(s.headers, 3);
        CHECK(!s.bridge_header);
        CHECK(strstr(s.all, "x-empty") == NULL);
        CHECK(strstr(s.all, "x-before=b;") != NULL);
        CHECK(strstr(s.all, "x-after=a;") != NULL);
        CHECK(strstr(s.all, "x-last=l;") != NULL);
    }

    /* 2. A request across: the answering handler reads its headers; replies none. */
    {
        seen s = {.lock = PTHREAD_MUTEX_INITIALIZER};
        replies r = {.lock = PTHREAD_MUTEX_INITIALIZER};
        CHECK_EQ_INT(qtbus_nats_export(ba, "Price"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Price"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus_b, "Price", NULL, answer, &s, NULL, NULL), QTBUS_OK);
        qtbus_header h[] = {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
                            {"baggage", "userId=alice"}};
        qtbus_event_desc d = tu_event("Price", NULL);
        d.flags = QTBUS_EVENT_HEADERS;
        d.headers = h;
        d.header_count = 2;
        CHECK_EQ_INT(qtbus_request(a, &d, on_reply, &r, on_complete), 1);
        CHECK_WAIT(completions(&r) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(seen_count(&s), 1);
        CHECK_EQ_INT(s.headers, 2); /* not Qtbus-Request */
        CHECK(!s.bridge_header);
        CHECK_EQ_STR(s.traceparent, h[0].value);
        CHECK_EQ_STR(s.baggage, "userId=alice");
        CHECK_EQ_INT(r.count, 1);
        CHECK_EQ_INT(r.with_headers, 0);
    }

    /* 3. OpenTelemetry at the other end: one trace id in and back out. */
    {
        seen s = {.lock = PTHREAD_MUTEX_INITIALIZER};
        CHECK_EQ_INT(qtbus_nats_import(bb, "Order"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(bb, "Shipped"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus_b, "Order", NULL, ship, &s, NULL, NULL), QTBUS_OK);
        FILE *f = ns_client(TRACED_CLIENT, 4, "roundtrip", server.url, "qtbus.e._.Order", "qtbus.e.*.Shipped");
        char sent[256], back[512], ids[256];
        read_line(f, "sent ", sent, sizeof sent);
        read_line(f, "back ", back, sizeof back);
        read_line(f, "trace ", ids, sizeof ids);
        ns_client_exit(f, "traced client");
        CHECK_EQ_INT(seen_count(&s), 1);
        CHECK_EQ_STR(s.traceparent, sent);
        CHECK_EQ_STR(s.tracestate, "congo=t61rcWkgMzE");
        CHECK_EQ_STR(s.baggage, "userId=alice");
        CHECK(!s.bridge_header); /* Qtbus-Forged and qtbus-lower stayed out */
        char expected_back[512];
        snprintf(expected_back, sizeof expected_back, "%s congo=t61rcWkgMzE userId=alice", sent);
        CHECK_EQ_STR(back, expected_back);
        char sent_id[64], back_id[64];
        CHECK_EQ_INT(sscanf(ids, "%63s %63s", sent_id, back_id), 2);
        CHECK(strcmp(sent_id, "none") != 0);
        CHECK_EQ_STR(sent_id, back_id);
        CHECK_MSG(strncmp(sent + 3, sent_id, 32) == 0, "the trace id %s is not traceparent %s's", sent_id, sent);
    }

    /* 4. A plain requester's context reaches the handler; the reply has no header. */
    {
        seen s = {.lock = PTHREAD_MUTEX_INITIALIZER};
        CHECK_EQ_INT(qtbus_nats_import(bb, "Quote"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus_b, "Quote", NULL, answer, &s, NULL, NULL), QTBUS_OK);
        FILE *f = ns_client(TRACED_CLIENT, 4, "request", server.url, "qtbus.q._.Quote", "?");
        char sent[256], reply[256];
        read_line(f, "sent ", sent, sizeof sent);
        read_line(f, "reply ", reply, sizeof reply);
        ns_client_exit(f, "traced client");
        /* The handler replied after it recorded, but through a socket, which orders
         * nothing for ThreadSanitizer: the lock does (and the count is checked too). */
        CHECK_EQ_INT(seen_count(&s), 1);
        CHECK_EQ_STR(s.traceparent, sent);
        CHECK_EQ_STR(reply, "42 headers none");
    }

    /* 5. A plain listener: an exported event's headers, the inherited ones included. */
    {
        CHECK_EQ_INT(qtbus_nats_export(ba, "Note"), QTBUS_OK);
        FILE *f = ns_client(TRACED_CLIENT, 3, "listen", server.url, "qtbus.e.*.Note");
        char ready[16];
        read_line(f, "ready", ready, sizeof ready);
        qtbus_header h[] = {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
                            {"x-note", "n"}};
        qtbus_event_desc d = tu_event("Note", NULL);
        d.flags = QTBUS_EVENT_HEADERS;
        d.headers = h;
        d.header_count = 2;
        d.data = "hi";
        d.size = 2;
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
        char got[512];
        read_line(f, "hi ", got, sizeof got);
        ns_client_exit(f, "traced client");
        CHECK_EQ_STR(got, "traceparent=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 x-note=n");
    }

    qtbus_nats_close(ba);
    qtbus_nats_close(bb);
    qtbus_bus_destroy(a);
    qtbus_bus_destroy(bus_b);
    ns_stop(&server);
    printf("test_nats_headers: headers cross the bridge both ways, one trace id end to end\n");
    return 0;
}
