/* SPDX-License-Identifier: MIT */
/*
 * lib_qtbus.c -- qtbus through its C ABI, the way a C user calls it: an isolated bus
 * from qtbus_bus_create(), the event type given as a string literal, the event
 * description built once outside the loop.
 */
#include "bench.h"

#include <qtbus.h>
#include <stdio.h>
#include <stdlib.h>

#define TYPE "BenchEvent"

typedef struct {
    qtbus_bus *bus;
    qtbus_token *tokens;
    size_t n, cap;
} qctx;

static void *q_create(void)
{
    qctx *c = calloc(1, sizeof *c);
    if (!c || !(c->bus = qtbus_bus_create())) bench_fail("qtbus: qtbus_bus_create failed");
    return c;
}

static void q_reserve(void *s, size_t n)
{
    qctx *c = s;
    if (n <= c->cap) return;
    c->tokens = realloc(c->tokens, n * sizeof *c->tokens);
    if (!c->tokens) bench_fail("qtbus: out of memory");
    for (size_t i = c->cap; i < n; i++)
        c->tokens[i].id = 0; /* touch the pages now, not during a measurement */
    c->cap = n;
}

static void q_connect_n(void *s, size_t n)
{
    qctx *c = s;
    q_reserve(c, c->n + n);
    for (size_t i = 0; i < n; i++) {
        int rc = qtbus_subscribe(c->bus, TYPE, NULL, h_qtbus, NULL, NULL, &c->tokens[c->n]);
        if (rc != QTBUS_OK) bench_fail("qtbus: qtbus_subscribe: %s", qtbus_strerror(rc));
        c->n++;
    }
}

static void q_dispatch(void *s, uint64_t iters)
{
    qctx *c = s;
    const qtbus_event_desc desc = {.type = TYPE};
    int64_t reached = 0;
    for (uint64_t i = 0; i < iters; i++)
        reached += qtbus_dispatch(c->bus, &desc);
    if (reached != (int64_t)(iters * c->n))
        bench_fail("qtbus: qtbus_dispatch reported %lld deliveries, expected %llu", (long long)reached,
                   (unsigned long long)(iters * c->n));
}

static void q_sub_dispose(void *s, uint64_t iters)
{
    qctx *c = s;
    int bad = 0;
    for (uint64_t i = 0; i < iters; i++) {
        qtbus_token token;
        bad |= qtbus_subscribe(c->bus, TYPE, NULL, h_qtbus, NULL, NULL, &token);
        bad |= qtbus_token_dispose(token);
    }
    if (bad) bench_fail("qtbus: subscribe/dispose failed");
}

static void q_destroy(void *s)
{
    qctx *c = s;
    qtbus_bus_destroy(c->bus);
    free(c->tokens);
    free(c);
}

const bench_lib bench_qtbus = {
    .key = "qtbus",
    .name = "qtbus",
    .thread_safe = 1,
    .create = q_create,
    .reserve = q_reserve,
    .connect_n = q_connect_n,
    .dispatch = q_dispatch,
    .sub_dispose = q_sub_dispose,
    .destroy = q_destroy,
    .version = qtbus_version,
};

/* The same bus, dispatched by type id (qtbus_type_lookup once, then qtbus_dispatch_id):
 * the hot-loop form.  Subscribe + dispose is the same calls as above. */
static void q_dispatch_id(void *s, uint64_t iters)
{
    qctx *c = s;
    qtbus_type_id type;
    if (qtbus_type_lookup(c->bus, TYPE, &type) != QTBUS_OK) bench_fail("qtbus: qtbus_type_lookup: %s", qtbus_errmsg());
    const qtbus_event_desc desc = {0};
    int64_t reached = 0;
    for (uint64_t i = 0; i < iters; i++)
        reached += qtbus_dispatch_id(c->bus, type, &desc);
    if (reached != (int64_t)(iters * c->n))
        bench_fail("qtbus: qtbus_dispatch_id reported %lld deliveries, expected %llu", (long long)reached,
                   (unsigned long long)(iters * c->n));
}

const bench_lib bench_qtbus_id = {
    .key = "qtbus_id",
    .name = "qtbus (type id)",
    .thread_safe = 1,
    .create = q_create,
    .reserve = q_reserve,
    .connect_n = q_connect_n,
    .dispatch = q_dispatch_id,
    .sub_dispose = q_sub_dispose,
    .destroy = q_destroy,
    .version = qtbus_version,
};

/* The same bus, dispatched by name with headers (qtbus.h, "Event headers"): what giving
 * them costs, W3C Trace Context's traceparent alone (1) or with tracestate, baggage and
 * five more (8).  The headers array is built once outside the loop, as the desc is. */
static const qtbus_header bench_headers[8] = {
    {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
    {"tracestate", "vendor=opaque"},
    {"baggage", "userId=alice"},
    {"x-request-id", "6f1c2a"},
    {"x-tenant", "acme"},
    {"x-origin", "bench"},
    {"x-priority", "3"},
    {"x-attempt", "1"},
};

static void q_dispatch_headers(qctx *c, uint64_t iters, size_t count)
{
    const qtbus_event_desc desc = {
        .type = TYPE, .flags = QTBUS_EVENT_HEADERS, .headers = bench_headers, .header_count = count};
    int64_t reached = 0;
    for (uint64_t i = 0; i < iters; i++)
        reached += qtbus_dispatch(c->bus, &desc);
    if (reached != (int64_t)(iters * c->n))
        bench_fail("qtbus: qtbus_dispatch with %zu headers reported %lld deliveries, expected %llu", count,
                   (long long)reached, (unsigned long long)(iters * c->n));
}

static void q_dispatch_h1(void *s, uint64_t iters) { q_dispatch_headers(s, iters, 1); }
static void q_dispatch_h8(void *s, uint64_t iters) { q_dispatch_headers(s, iters, 8); }

const bench_lib bench_qtbus_h1 = {
    .key = "qtbus_h1",
    .name = "qtbus (1 header)",
    .thread_safe = 1,
    .create = q_create,
    .reserve = q_reserve,
    .connect_n = q_connect_n,
    .dispatch = q_dispatch_h1,
    .sub_dispose = q_sub_dispose,
    .destroy = q_destroy,
    .version = qtbus_version,
};

const bench_lib bench_qtbus_h8 = {
    .key = "qtbus_h8",
    .name = "qtbus (8 headers)",
    .thread_safe = 1,
    .create = q_create,
    .reserve = q_reserve,
    .connect_n = q_connect_n,
    .dispatch = q_dispatch_h8,
    .sub_dispose = q_sub_dispose,
    .destroy = q_destroy,
    .version = qtbus_version,
};

/* ---- memory per subscription with a subtype --------------------------------------- */

void qtbus_subtype_memory(size_t n, int distinct, double rss(void), double heap(void), double *rss_out,
                          double *heap_out)
{
    qctx *c = q_create();
    q_reserve(c, n);
    /* The names are the caller's storage, made before measuring. */
    char(*names)[24] = malloc(n * sizeof *names);
    if (!names) bench_fail("qtbus: out of memory");
    for (size_t i = 0; i < n; i++)
        snprintf(names[i], sizeof names[i], "s%zu", distinct ? i : 0);
    /* First use (the type, the pool's first chunk) is not counted. */
    qtbus_sub_options warm = {.subtypes = (const char *const[]){"warm"}, .subtype_count = 1};
    for (int i = 0; i < 16; i++) {
        qtbus_token t;
        if (qtbus_subscribe(c->bus, TYPE, &warm, h_qtbus, NULL, NULL, &t) != QTBUS_OK ||
            qtbus_token_dispose(t) != QTBUS_OK)
            bench_fail("qtbus: subscribe/dispose with a subtype failed");
    }
    double rss0 = rss(), heap0 = heap();
    for (size_t i = 0; i < n; i++) {
        const char *subtype = names[i];
        qtbus_sub_options options = {.subtypes = &subtype, .subtype_count = 1};
        int rc = qtbus_subscribe(c->bus, TYPE, &options, h_qtbus, NULL, NULL, &c->tokens[i]);
        if (rc != QTBUS_OK) bench_fail("qtbus: qtbus_subscribe with a subtype: %s", qtbus_strerror(rc));
    }
    double rss1 = rss(), heap1 = heap();
    /* Each subscription is reached by its subtype's dispatch, once. */
    int64_t reached = 0;
    for (size_t i = 0; i < (distinct ? n : 1); i++) {
        qtbus_event_desc desc = {.type = TYPE, .subtype = names[i]};
        reached += qtbus_dispatch(c->bus, &desc);
    }
    if (reached != (int64_t)n)
        bench_fail("qtbus: dispatches by subtype reached %lld of %zu subscriptions", (long long)reached, n);
    *rss_out = (rss1 - rss0) / (double)n;
    *heap_out = (heap1 - heap0) / (double)n;
    free(names);
    q_destroy(c);
}

/* ---- queued delivery: one subscription on a serial qtbus_queue ------------------- */

typedef struct {
    qtbus_bus *bus;
    qtbus_queue *queue;
} qqueue;

static void *qq_create(void)
{
    qqueue *q = calloc(1, sizeof *q);
    if (!q || !(q->bus = qtbus_bus_create()) || !(q->queue = qtbus_queue_create("bench")))
        bench_fail("qtbus: bus or queue creation failed");
    qtbus_sub_options options = {.queue = q->queue};
    int rc = qtbus_subscribe(q->bus, "BenchQueued", &options, h_queued_qtbus, NULL, NULL, NULL);
    if (rc == QTBUS_OK) rc = qtbus_subscribe(q->bus, "BenchGate", &options, h_gate_qtbus, NULL, NULL, NULL);
    if (rc != QTBUS_OK) bench_fail("qtbus: queued qtbus_subscribe: %s", qtbus_strerror(rc));
    return q;
}

/* The same queue bounded to BENCH_QUEUE_SLOTS deliveries; a dispatch that finds it
 * full waits for room (QTBUS_OVERFLOW_BLOCK, no timeout).  The gate counts against the
 * capacity until it is taken to run. */
static void *qq_create_bounded(void)
{
    qqueue *q = qq_create();
    int rc = qtbus_queue_set_limit(q->queue, BENCH_QUEUE_SLOTS, QTBUS_OVERFLOW_BLOCK, -1);
    if (rc != QTBUS_OK) bench_fail("qtbus: qtbus_queue_set_limit: %s", qtbus_strerror(rc));
    return q;
}

static uint64_t qq_post(qqueue *q, uint64_t n)
{
    const qtbus_event_desc desc = {.type = "BenchQueued"};
    uint64_t posted = 0;
    for (uint64_t i = 0; i < n; i++)
        posted += (uint64_t)qtbus_dispatch(q->bus, &desc);
    return posted;
}

static void qq_run(void *p, uint64_t n, uint64_t chunk)
{
    qqueue *q = p;
    const qtbus_event_desc gate = {.type = "BenchGate"};
    uint64_t posted = 0;
    bench_queued_arm(n);
    if (chunk == 0) {
        posted = qq_post(q, n);
    } else {
        for (uint64_t done = 0; done < n;) {
            uint64_t k = n - done < chunk ? n - done : chunk;
            bench_queued_expect(done + k);
            bench_gate_prepare();
            if (qtbus_dispatch(q->bus, &gate) != 1) bench_fail("qtbus: the gate event was not queued");
            posted += qq_post(q, k);
            bench_gate_open();
            done += k;
            if (done < n) bench_queued_wait();
        }
    }
    if (posted != n)
        bench_fail("qtbus: queued qtbus_dispatch posted %llu of %llu", (unsigned long long)posted,
                   (unsigned long long)n);
    bench_queued_wait();
}

static void qq_destroy(void *p)
{
    qqueue *q = p;
    qtbus_bus_destroy(q->bus);
    qtbus_queue_release(q->queue);
    free(q);
}

const bench_queue_impl bench_queue_qtbus = {
    .key = "qtbus",
    .name = "qtbus",
    .create = qq_create,
    .run = qq_run,
    .destroy = qq_destroy,
};

const bench_queue_impl bench_queue_qtbus_bounded = {
    .key = "qtbus",
    .name = "qtbus, bounded (BLOCK)",
    .create = qq_create_bounded,
    .run = qq_run,
    .destroy = qq_destroy,
};
