/* SPDX-License-Identifier: MIT */
/*
 * test_nats_interop.c -- the bridge and a plain NATS client (nats-py, no qtbus:
 * plain_client.py), both ways, as CONTRACT section 10 promises:
 *   - a plain subscriber's wildcards select qtbus events, whose data are the bytes as
 *     dispatched (no frame);
 *   - an event a plain client publishes on a qtbus subject is dispatched;
 *   - a plain requester asking a C handler gets the handler's reply as the first
 *     message on its inbox (no acknowledgement before it);
 *   - a qtbus_request on an exported type answered by a plain service: on_reply gets
 *     its bytes and the request completes before its timeout;
 *   - a request nobody subscribes to completes early (the server's "no responders"),
 *     one that only a silent subscriber receives at its timeout.
 */
#include "nats_server.h"

static ns_server server;

static void expect_line(FILE *f, const char *expected)
{
    char line[1024];
    CHECK_MSG(fgets(line, sizeof line, f) != NULL, "plain_client.py ended before \"%s\"", expected);
    line[strcspn(line, "\n")] = '\0';
    printf("plain client: %s\n", line);
    CHECK_EQ_STR(line, expected);
}

typedef struct got {
    pthread_mutex_t lock;
    int count;
    char type[256], data[256];
} got;

static void record(const qtbus_event *e, void *userdata)
{
    got *g = userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(e, &size);
    pthread_mutex_lock(&g->lock);
    snprintf(g->type, sizeof g->type, "%s", qtbus_event_type(e));
    snprintf(g->data, sizeof g->data, "%.*s", (int)size, data ? data : "");
    g->count++;
    pthread_mutex_unlock(&g->lock);
}

static int got_count(got *g)
{
    pthread_mutex_lock(&g->lock);
    int n = g->count;
    pthread_mutex_unlock(&g->lock);
    return n;
}

static void answer_42(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_reply(e, "42", 2), QTBUS_OK);
}

typedef struct asked {
    pthread_mutex_t lock;
    int replies, completions;
    char last[256];
    int64_t completed_ms;
} asked;

static void on_reply(const qtbus_event *reply, void *userdata)
{
    asked *q = userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(reply, &size);
    pthread_mutex_lock(&q->lock);
    snprintf(q->last, sizeof q->last, "%.*s", (int)size, data ? data : "");
    q->replies++;
    pthread_mutex_unlock(&q->lock);
}

static void on_complete(void *userdata)
{
    asked *q = userdata;
    pthread_mutex_lock(&q->lock);
    q->completions++;
    q->completed_ms = tu_now_ms();
    pthread_mutex_unlock(&q->lock);
}

static int completions(asked *q)
{
    pthread_mutex_lock(&q->lock);
    int n = q->completions;
    pthread_mutex_unlock(&q->lock);
    return n;
}

/* A request on `type` from bus `a` (its bridge exports it); returns ms to completion. */
static int64_t ask(qtbus_bus *a, const char *type, const char *subtype, asked *q)
{
    memset(q, 0, sizeof *q);
    pthread_mutex_init(&q->lock, NULL);
    qtbus_event_desc d = tu_event(type, subtype);
    d.data = "?";
    d.size = 1;
    int64_t start = tu_now_ms();
    CHECK_EQ_INT(qtbus_request(a, &d, on_reply, q, on_complete), 1); /* the export */
    CHECK_WAIT(completions(q) == 1, TU_WAIT_MS);
    return q->completed_ms - start;
}

int main(void)
{
    ns_start(&server);
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    qtbus_nats *ba = NULL, *bb = NULL;
    qtbus_nats_options o = {.url = server.url, .request_timeout_ms = 2000};
    CHECK_EQ_INT(qtbus_nats_connect(a, &o, &ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_connect(b, &o, &bb), QTBUS_OK);

    /* 1. A plain subscriber: its wildcards, the bytes as dispatched. */
    {
        CHECK_EQ_INT(qtbus_nats_export(ba, "Order.>"), QTBUS_OK);
        FILE *f = ns_client(PLAIN_CLIENT, 4, "listen", server.url, "qtbus.e.*.Order.>", "2");
        expect_line(f, "ready");
        qtbus_event_desc d = tu_event("Order.created", NULL);
        d.data = "tea";
        d.size = 3;
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
        d = tu_event("Invoice.sent", NULL);
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 0);
        d = tu_event("Order.paid", "eu");
        d.data = "{\"id\": 1}";
        d.size = strlen(d.data);
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
        expect_line(f, "qtbus.e._.Order.created tea");
        expect_line(f, "qtbus.e.eu.Order.paid {\"id\": 1}");
        ns_client_exit(f, "plain client");
    }

    /* 2. A plain publisher: dispatched as the event it names. */
    {
        got g = {.lock = PTHREAD_MUTEX_INITIALIZER};
        qtbus_sub_options family = {.flags = QTBUS_SUB_PATTERN};
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(b, "Order.>", &family, record, &g, NULL, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Order.>"), QTBUS_OK);
        ns_client_exit(ns_client(PLAIN_CLIENT, 4, "publish", server.url, "qtbus.e._.Order.shipped", "box"),
                       "plain client");
        CHECK_WAIT(got_count(&g) == 1, TU_WAIT_MS);
        CHECK_EQ_STR(g.type, "Order.shipped");
        CHECK_EQ_STR(g.data, "box");
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* 3. A plain requester asks a C handler: the reply is the first message. */
    {
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(b, "Price", NULL, answer_42, NULL, NULL, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Price"), QTBUS_OK);
        FILE *f = ns_client(PLAIN_CLIENT, 4, "request", server.url, "qtbus.q._.Price", "?");
        expect_line(f, "42");
        ns_client_exit(f, "plain client");
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* 4. A qtbus request answered by a plain service. */
    {
        CHECK_EQ_INT(qtbus_nats_export(ba, "Quote"), QTBUS_OK);
        FILE *f = ns_client(PLAIN_CLIENT, 5, "serve", server.url, "qtbus.q.*.Quote", "forty-two", "1");
        expect_line(f, "ready");
        asked q;
        int64_t ms = ask(a, "Quote", "eu", &q);
        printf("a request a plain service answered: \"%s\", completed after %lld ms\n", q.last, (long long)ms);
        CHECK_EQ_INT(q.replies, 1);
        CHECK_EQ_STR(q.last, "forty-two");
        CHECK_MSG(ms < 1500, "completed after %lld ms, the timeout is 2000", (long long)ms);
        expect_line(f, "served 1");
        ns_client_exit(f, "plain client");
    }

    /* 5. Nobody subscribes: the server says so, and the request ends early. */
    {
        CHECK_EQ_INT(qtbus_nats_export(ba, "Nobody"), QTBUS_OK);
        asked q;
        int64_t ms = ask(a, "Nobody", NULL, &q);
        printf("a request nobody subscribes to: completed after %lld ms\n", (long long)ms);
        CHECK_EQ_INT(q.replies, 0);
        CHECK_MSG(ms < 1000, "completed after %lld ms, the timeout is 2000", (long long)ms);
    }

    /* 6. A subscriber that never answers: the request ends at its timeout. */
    {
        CHECK_EQ_INT(qtbus_nats_export(ba, "Silent"), QTBUS_OK);
        FILE *f = ns_client(PLAIN_CLIENT, 4, "listen", server.url, "qtbus.q._.Silent", "1");
        expect_line(f, "ready");
        asked q;
        int64_t ms = ask(a, "Silent", NULL, &q);
        printf("a request only a silent subscriber receives: completed after %lld ms\n", (long long)ms);
        CHECK_EQ_INT(q.replies, 0);
        CHECK_MSG(ms >= 1900, "completed after %lld ms, before the timeout of 2000", (long long)ms);
        expect_line(f, "qtbus.q._.Silent ?");
        ns_client_exit(f, "plain client");
    }

    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    qtbus_bus_destroy(a);
    qtbus_bus_destroy(b);
    ns_stop(&server);
    printf("test_nats_interop: ok\n");
    return 0;
}
