/* SPDX-License-Identifier: MIT */
/*
 * What both pairs share, so that they differ only in their ends (raw.c, bridge.c): the
 * publishing loop, and the receiving end's count, order check and latency samples.
 */
#include "bench_nats.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define IDLE_NS (2 * 1000000000LL) /* a subscriber that hears nothing this long stops */

const pair_info pairs[PAIR_COUNT] = {
    [PAIR_RAW] = {"raw", "raw nats.c", false, false, false, true},
    [PAIR_BRIDGE] = {"bridge", "qtbus bridge", false, true, true, true},
    [PAIR_RAW_ASAP] = {"raw_send_asap", "raw, SendAsap", true, false, false, false},
    [PAIR_ASAP_BRIDGE] = {"send_asap_to_bridge", "SendAsap -> bridge", true, false, true, false},
};

int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int64_t process_cpu_ns(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return ((int64_t)u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000 +
           ((int64_t)u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000;
}

void check(bool ok, const char *what, const char *why)
{
    if (!ok) {
        fprintf(stderr, "bench-nats: %s failed: %s\n", what, why && *why ? why : "(no reason given)");
        exit(1);
    }
}

/* ---- publishing ---------------------------------------------------------------------- */

pub_result publish_events(enum pair pair, const char *url, enum test test, size_t size, int count, int pace_us)
{
    char *buffer = calloc(1, size);
    check(buffer != NULL, "publisher: buffer", "out of memory");
    int64_t cpu = process_cpu_ns();
    sender s;
    if (pairs[pair].bridge_publisher) {
        bridge_sender_open(&s, url);
    } else {
        raw_sender_open(&s, url, pairs[pair].send_asap);
    }
    pub_result r = {.start_ns = now_ns()};
    int64_t first_sent = 0, last_sent = 0;
    for (int i = 0; i < count; i++) {
        stamp st = {.seq = i};
        if (test == TEST_LATENCY) {
            struct timespec t = {0, pace_us * 1000L};
            nanosleep(&t, NULL);
            st.sent_ns = now_ns();
            if (i == 0) first_sent = st.sent_ns;
            last_sent = st.sent_ns;
        }
        memcpy(buffer, &st, sizeof st);
        if (s.send(&s, buffer, size) != 0) r.unpublished++;
    }
    r.sent_ns = now_ns();
    s.close(&s);
    r.end_ns = now_ns();
    r.cpu_ns = process_cpu_ns() - cpu;
    if (test == TEST_LATENCY && count > 1) r.pace_us = (double)(last_sent - first_sent) / (count - 1) / 1000;
    free(buffer);
    return r;
}

/* ---- receiving ----------------------------------------------------------------------- */

void received(receiver *r, const void *data, size_t size)
{
    int64_t now = now_ns();
    stamp st = {.seq = -1};
    if (size >= sizeof st) memcpy(&st, data, sizeof st);
    pthread_mutex_lock(&r->lock);
    if (r->count == 0) r->first_ns = now;
    r->last_ns = now;
    if (st.seq < r->next_seq) {
        r->out_of_order++;
    } else {
        r->next_seq = st.seq + 1;
    }
    if (r->test == TEST_LATENCY && st.seq >= r->warmup && r->sampled < r->expected - r->warmup) {
        r->samples[r->sampled++] = now - st.sent_ns;
    }
    if (++r->count == r->expected) pthread_cond_signal(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

static int compare(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest sample that at least `p` of them do not exceed. */
static int64_t percentile(const int64_t *sorted, int n, double p)
{
    if (n == 0) return 0;
    int rank = (int)((double)n * p + 0.999999);
    return sorted[(rank < 1 ? 1 : rank > n ? n : rank) - 1];
}

int subscriber_main(enum pair pair, const char *url, enum test test, int warmup, int count)
{
    static receiver r;
    r.test = test;
    r.warmup = test == TEST_LATENCY ? warmup : 0;
    r.expected = count;
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.changed, NULL);
    if (test == TEST_LATENCY) {
        r.samples = calloc((size_t)count, sizeof *r.samples);
        check(r.samples != NULL, "subscriber: samples", "out of memory");
    }
    sink k;
    if (pairs[pair].bridge_subscriber) {
        bridge_sink_open(&k, url, &r);
    } else {
        raw_sink_open(&k, url, &r);
    }
    printf("ready\n");
    fflush(stdout);

    /* Until all arrived, or none has for IDLE_NS: core NATS may drop, and what it
     * dropped is counted, not waited for. */
    pthread_mutex_lock(&r.lock);
    int64_t waited_from = now_ns();
    while (r.count < r.expected) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100 * 1000 * 1000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&r.changed, &r.lock, &until);
        if (now_ns() - (r.count ? r.last_ns : waited_from) > IDLE_NS) break;
    }
    int got = r.count, out_of_order = r.out_of_order, n = r.sampled;
    int64_t first = r.first_ns, last = r.last_ns;
    pthread_mutex_unlock(&r.lock);

    /* Receiving is over (events after this are not counted): the samples are ours. */
    if (n > 0) qsort(r.samples, (size_t)n, sizeof *r.samples, compare);
    printf("result %d %d %lld %lld %lld %lld %lld\n", got, out_of_order, (long long)first, (long long)last,
           (long long)percentile(r.samples, n, 0.50), (long long)percentile(r.samples, n, 0.99),
           (long long)process_cpu_ns());
    fflush(stdout);
    k.close(&k);
    free(r.samples);
    return 0;
}
