/*
 * Both ends of both pairs.  The raw pair is what nats.c alone does for the same
 * subject, payload and subscription settings (unbounded pending limits, as the
 * bridge sets them); the bridge pair adds what qtbus adds: a dispatch and the export
 * handler on the publishing side, the bridge's queue, its thread and a dispatch to
 * one handler on the receiving side.
 */
#include "bench_nats.h"

#include <nats/nats.h>
#include <qtbus_nats.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SUBJECT "qtbus.e.Bench._"   /* what the bridge publishes type "Bench" on */
#define IDLE_NS (2 * 1000000000LL)  /* a subscriber that hears nothing this long stops */

int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "bench-nats: %s (%s)\n", what, qtbus_errmsg());
        exit(1);
    }
}

/* ---- publishing -------------------------------------------------------------------- */

pub_result publish_events(enum mode mode, const char *url, enum test test, size_t size, int count, int pace_us)
{
    char *buffer = calloc(1, size);
    natsConnection *nc = NULL;
    qtbus_bus *bus = NULL;
    qtbus_nats *bridge = NULL;
    if (mode != MODE_BRIDGE) {
        natsOptions *o = NULL;
        check(natsOptions_Create(&o) == NATS_OK && natsOptions_SetURL(o, url) == NATS_OK
                  && natsOptions_SetSendAsap(o, mode == MODE_RAW_ASAP) == NATS_OK,
              "raw publisher: options");
        check(natsConnection_Connect(&nc, o) == NATS_OK, "raw publisher: connect");
        natsOptions_Destroy(o);
    } else {
        bus = qtbus_bus_create();
        qtbus_nats_options o = { .url = url };
        check(qtbus_nats_connect(bus, &o, &bridge) == QTBUS_OK, "bridge publisher: connect");
        check(qtbus_nats_export(bridge, "Bench") == QTBUS_OK, "bridge publisher: export");
    }
    qtbus_event_desc d = { .type = "Bench", .data = buffer, .size = size };
    pub_result r = { .start_ns = now_ns() };
    for (int i = 0; i < count; i++) {
        if (test == TEST_LATENCY) {
            struct timespec t = { 0, pace_us * 1000L };
            nanosleep(&t, NULL);
            int64_t sent = now_ns();
            memcpy(buffer, &sent, sizeof sent);
        }
        if (mode != MODE_BRIDGE) {
            natsConnection_Publish(nc, SUBJECT, buffer, (int)size);
        } else {
            qtbus_dispatch(bus, &d);
        }
    }
    if (mode != MODE_BRIDGE) {
        natsConnection_Flush(nc);
        r.end_ns = now_ns();
        natsConnection_Destroy(nc);
    } else {
        check(qtbus_nats_close(bridge) == QTBUS_OK, "bridge publisher: close");
        r.end_ns = now_ns();
        qtbus_bus_destroy(bus);
    }
    free(buffer);
    return r;
}

/* ---- subscribing ------------------------------------------------------------------- */

typedef struct receiver {
    enum test test;
    int expected;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int count;
    int64_t first_ns, last_ns;
    int64_t *latencies;
} receiver;

static void received(receiver *r, const void *data, size_t size)
{
    int64_t now = now_ns();
    pthread_mutex_lock(&r->lock);
    if (r->count == 0) r->first_ns = now;
    r->last_ns = now;
    if (r->test == TEST_LATENCY && r->count < r->expected && size >= sizeof(int64_t)) {
        int64_t sent;
        memcpy(&sent, data, sizeof sent);
        r->latencies[r->count] = now - sent;
    }
    if (++r->count == r->expected) pthread_cond_signal(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

static void on_raw(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    received(closure, natsMsg_GetData(msg), (size_t)natsMsg_GetDataLength(msg));
    natsMsg_Destroy(msg);
}

static void on_event(const qtbus_event *e, void *userdata)
{
    size_t size = 0;
    const void *data = qtbus_event_data(e, &size);
    received(userdata, data, size);
}

static int compare(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int subscriber_main(enum mode mode, const char *url, enum test test, size_t size, int count)
{
    (void)size;
    static receiver r;
    r.test = test;
    r.expected = count;
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.changed, NULL);
    r.latencies = calloc((size_t)count, sizeof *r.latencies);
    natsConnection *nc = NULL;
    natsSubscription *sub = NULL;
    qtbus_bus *bus = NULL;
    qtbus_nats *bridge = NULL;
    if (mode != MODE_BRIDGE) {
        check(natsConnection_ConnectTo(&nc, url) == NATS_OK, "raw subscriber: connect");
        check(natsConnection_Subscribe(&sub, nc, SUBJECT, on_raw, &r) == NATS_OK, "raw subscriber: subscribe");
        natsSubscription_SetPendingLimits(sub, -1, -1);
        check(natsConnection_Flush(nc) == NATS_OK, "raw subscriber: flush");
    } else {
        bus = qtbus_bus_create();
        qtbus_nats_options o = { .url = url };
        check(qtbus_nats_connect(bus, &o, &bridge) == QTBUS_OK, "bridge subscriber: connect");
        check(qtbus_subscribe(bus, "Bench", NULL, on_event, &r, NULL, NULL) == QTBUS_OK, "bridge subscriber: subscribe");
        check(qtbus_nats_import(bridge, "Bench") == QTBUS_OK, "bridge subscriber: import");
    }
    printf("ready\n");
    fflush(stdout);

    /* Until all arrived, or nothing has for IDLE_NS (core NATS may drop). */
    pthread_mutex_lock(&r.lock);
    int64_t waited_from = now_ns();
    while (r.count < r.expected) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100000000;
        if (until.tv_nsec >= 1000000000) { until.tv_sec++; until.tv_nsec -= 1000000000; }
        pthread_cond_timedwait(&r.changed, &r.lock, &until);
        int64_t last = r.count ? r.last_ns : waited_from;
        if (now_ns() - last > IDLE_NS) break;
    }
    int got = r.count;
    int64_t first = r.first_ns, last = r.last_ns;
    pthread_mutex_unlock(&r.lock);

    if (test == TEST_THROUGHPUT) {
        printf("received %d %lld %lld\n", got, (long long)first, (long long)last);
    } else {
        int n = got < count ? got : count;
        qsort(r.latencies, (size_t)n, sizeof *r.latencies, compare);
        printf("received %d %lld %lld\n", got, n ? (long long)r.latencies[n / 2] : 0LL,
               n ? (long long)r.latencies[(n * 99) / 100] : 0LL);
    }
    fflush(stdout);
    if (mode != MODE_BRIDGE) {
        natsSubscription_Destroy(sub);
        natsConnection_Destroy(nc);
    } else {
        qtbus_nats_close(bridge);
        qtbus_bus_destroy(bus);
    }
    free(r.latencies);
    return 0;
}
