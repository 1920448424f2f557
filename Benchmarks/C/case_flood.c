/* SPDX-License-Identifier: MIT */
/*
 * case_flood.c -- case 10: a flood into one queue, per overflow rule.  What a bounded
 * queue buys when the producer is faster than the consumer: the producer's rate, the
 * heap, and where the deliveries went.
 *
 * For each rule (GROW, i.e. no limit; BLOCK; DROP_NEWEST; DROP_OLDEST; LATEST) a fresh
 * process (bench-c --child-flood RULE EVENTS SAMPLE_EVERY) makes a bus and a created
 * queue, bounded with qtbus_queue_set_limit(queue, 1000, rule, -1) (GROW: left
 * unbounded), subscribes one handler on the queue that sleeps 1 ms per call, and
 * dispatches 256-byte events (one type, no subtype) as fast as qtbus_dispatch returns:
 *
 *   - 1,000,000 events for GROW and the drop rules;
 *   - 3,000 for BLOCK, whose producer is held to the consumer's pace once the 1000 slots
 *     are full (about 2 s of posting at 1 ms per delivery, then 1 s for the 1000 left);
 *   - --smoke: 20,000 (BLOCK 200, which then never fills the queue).
 *
 * The heap (mallinfo2: uordblks + hblkhd, all arenas) is read before the first dispatch,
 * every 50,000 events (500 for BLOCK; --smoke 1,000 and 10) and at the end of posting;
 * the table shows its growth at the peak.  The producer's rate is the events over the
 * dispatch loop's time less the time of the heap samples.  qtbus_queue_stats_get at the end of posting
 * gives dropped, delivered and pending.  Then the drop rules and BLOCK wait with
 * qtbus_bus_wait_idle for the deliveries left (at most 1000 at 1 ms each: about 1 s),
 * and the child checks that nothing is pending, that delivered + dropped is every event
 * posted, and that the handler ran `delivered` times.  GROW does not wait for a million
 * 1 ms handler calls: it disposes the subscription (queued deliveries not yet started
 * are then dropped, lifetime rule 2 of qtbus.h) and then waits until the bus is idle.
 *
 * One run per rule, not repetitions: the figures are the flood's own (how many were
 * dropped depends on the producer's rate against 1 ms per delivery).  In --smoke the
 * five children run at once (seconds instead of about 8 s), otherwise one after the
 * other.
 */
#define _GNU_SOURCE
#include "bench_c.h"

#include <qtbus.h>

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define CAPACITY 1000
#define EVENT_BYTES 256

enum { F_GROW, F_BLOCK, F_DROP_NEWEST, F_DROP_OLDEST, F_LATEST, NFLOOD };

static const struct {
    const char *key, *title;
    uint32_t overflow;
} rules[NFLOOD] = {
    {"grow", "GROW (unbounded)", QTBUS_OVERFLOW_GROW},
    {"block", "BLOCK", QTBUS_OVERFLOW_BLOCK},
    {"drop_newest", "DROP_NEWEST", QTBUS_OVERFLOW_DROP_NEWEST},
    {"drop_oldest", "DROP_OLDEST", QTBUS_OVERFLOW_DROP_OLDEST},
    {"latest", "LATEST", QTBUS_OVERFLOW_LATEST},
};

/* What a child reports (one line of numbers). */
typedef struct {
    int done;
    unsigned long long posted;                                  /* events dispatched */
    double post_seconds;                                        /* the dispatch loop, less the heap samples */
    double sample_seconds;                                      /* the heap samples (mallinfo2 walks the arenas) */
    double heap_before, heap_peak;                              /* bytes */
    unsigned long long dropped, delivered, pending, high_water; /* at the end of posting */
    unsigned long long final_dropped, final_delivered, calls;   /* once idle */
    double wait_seconds;                                        /* from the end of posting until idle */
} flood_result;

static flood_result results[NFLOOD];

/* ---- the child ---------------------------------------------------------------- */

static atomic_ullong handler_calls;

static void h_flood(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    struct timespec ms = {0, 1000000};
    while (nanosleep(&ms, &ms) != 0 && errno == EINTR) {
    }
    atomic_fetch_add_explicit(&handler_calls, 1, memory_order_relaxed);
}

static void stats(qtbus_queue *q, qtbus_queue_stats *out)
{
    int rc = qtbus_queue_stats_get(q, out);
    if (rc != QTBUS_OK) bench_fail("flood: qtbus_queue_stats_get: %s", qtbus_strerror(rc));
}

int child_flood(const char *key, uint64_t events, uint64_t sample_every)
{
    int k = 0;
    while (k < NFLOOD && strcmp(rules[k].key, key) != 0)
        k++;
    if (k == NFLOOD || events == 0 || sample_every == 0) {
        fprintf(stderr, "bench-c: --child-flood %s: unknown rule or zero count\n", key);
        return 2;
    }
    const char *rule = rules[k].title;
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("flood");
    if (!bus || !queue) bench_fail("flood %s: bus or queue creation failed", rule);
    int rc = QTBUS_OK;
    if (k != F_GROW) rc = qtbus_queue_set_limit(queue, CAPACITY, rules[k].overflow, -1);
    qtbus_sub_options options = {.queue = queue};
    qtbus_token token;
    if (rc == QTBUS_OK) rc = qtbus_subscribe(bus, "Flood", &options, h_flood, NULL, NULL, &token);
    if (rc != QTBUS_OK) bench_fail("flood %s: set_limit or subscribe: %s", rule, qtbus_strerror(rc));

    static unsigned char data[EVENT_BYTES];
    memset(data, 0x5a, sizeof data);
    const qtbus_event_desc event = {.type = "Flood", .data = data, .size = sizeof data};

    flood_result r = {0};
    r.heap_before = r.heap_peak = bench_heap_bytes();
    double t0 = now();
    for (uint64_t i = 1; i <= events; i++) {
        if (qtbus_dispatch(bus, &event) < 0)
            bench_fail("flood %s: qtbus_dispatch failed at event %llu", rule, (unsigned long long)i);
        if (i % sample_every == 0 || i == events) {
            double s0 = now(), h = bench_heap_bytes();
            if (h > r.heap_peak) r.heap_peak = h;
            r.sample_seconds += now() - s0;
        }
    }
    double t1 = now();
    r.posted = events;
    r.post_seconds = t1 - t0 - r.sample_seconds;
    qtbus_queue_stats end;
    stats(queue, &end);
    r.dropped = end.dropped;
    r.delivered = end.delivered;
    r.pending = end.pending;
    r.high_water = end.high_water;

    if (k == F_GROW) {
        rc = qtbus_token_dispose(token);
        if (rc != QTBUS_OK) bench_fail("flood %s: qtbus_token_dispose: %s", rule, qtbus_strerror(rc));
    }
    rc = qtbus_bus_wait_idle(bus, 60000);
    if (rc != QTBUS_OK) bench_fail("flood %s: qtbus_bus_wait_idle: %s", rule, qtbus_strerror(rc));
    r.wait_seconds = now() - t1;
    qtbus_queue_stats last;
    stats(queue, &last);
    r.final_dropped = last.dropped;
    r.final_delivered = last.delivered;
    r.calls = atomic_load(&handler_calls);
    if (k != F_GROW) {
        if (last.pending != 0 || last.pending + last.delivered + last.dropped != events)
            bench_fail("flood %s: once idle, pending %llu + delivered %llu + dropped %llu != %llu posted", rule,
                       (unsigned long long)last.pending, (unsigned long long)last.delivered,
                       (unsigned long long)last.dropped, (unsigned long long)events);
        if (r.calls != last.delivered)
            bench_fail("flood %s: the handler ran %llu times, delivered says %llu", rule, r.calls,
                       (unsigned long long)last.delivered);
        if (k == F_BLOCK && last.dropped != 0)
            bench_fail("flood %s: %llu deliveries dropped", rule, (unsigned long long)last.dropped);
    } else if (r.calls > events) {
        bench_fail("flood %s: the handler ran %llu times for %llu events", rule, r.calls, (unsigned long long)events);
    }
    printf("%llu %.6f %.0f %.0f %llu %llu %llu %llu %llu %llu %llu %.6f %.6f\n", r.posted, r.post_seconds,
           r.heap_before, r.heap_peak, r.dropped, r.delivered, r.pending, r.high_water, r.final_dropped,
           r.final_delivered, r.calls, r.wait_seconds, r.sample_seconds);
    fflush(stdout);
    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    return 0;
}

/* ---- the parent --------------------------------------------------------------- */

typedef struct {
    pid_t pid;
    FILE *out;
} child;

static child start_child(int k, uint64_t events, uint64_t sample_every)
{
    char self[PATH_MAX + 64], n[32], every[32];
    snprintf(self, sizeof self, "%s/bench-c", opt.exe_dir);
    snprintf(n, sizeof n, "%llu", (unsigned long long)events);
    snprintf(every, sizeof every, "%llu", (unsigned long long)sample_every);
    char *argv[] = {self, "--child-flood", (char *)rules[k].key, n, every, NULL};
    child c = {0, tmpfile()};
    if (!c.out) bench_fail("tmpfile: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fileno(c.out), 1);
    int rc = posix_spawn(&c.pid, self, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) bench_fail("cannot run %s: %s", self, strerror(rc));
    return c;
}

static void finish_child(int k, child c)
{
    int status;
    while (waitpid(c.pid, &status, 0) < 0)
        if (errno != EINTR) bench_fail("waitpid: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_fail("flood %s: the child did not exit with 0 (status 0x%x)", rules[k].title, status);
    flood_result *r = &results[k];
    rewind(c.out);
    if (fscanf(c.out, "%llu %lf %lf %lf %llu %llu %llu %llu %llu %llu %llu %lf %lf", &r->posted, &r->post_seconds,
               &r->heap_before, &r->heap_peak, &r->dropped, &r->delivered, &r->pending, &r->high_water,
               &r->final_dropped, &r->final_delivered, &r->calls, &r->wait_seconds, &r->sample_seconds) != 13)
        bench_fail("flood %s: the child printed no result", rules[k].title);
    fclose(c.out);
    r->done = 1;
}

void case_flood(void)
{
    child c[NFLOOD];
    for (int k = 0; k < NFLOOD; k++) {
        uint64_t events = k == F_BLOCK ? (opt.smoke ? 200 : 3000) : (opt.smoke ? 20000 : 1000000);
        uint64_t every = k == F_BLOCK ? (opt.smoke ? 10 : 500) : (opt.smoke ? 1000 : 50000);
        c[k] = start_child(k, events, every);
        if (!opt.smoke) finish_child(k, c[k]);
    }
    if (opt.smoke)
        for (int k = 0; k < NFLOOD; k++)
            finish_child(k, c[k]);
}

static double rate(const flood_result *r) { return r->post_seconds > 0 ? (double)r->posted / r->post_seconds : 0; }
static double growth_mb(const flood_result *r) { return (r->heap_peak - r->heap_before) / 1e6; }

void print_flood(FILE *f, int markdown)
{
    int any = 0;
    for (int k = 0; k < NFLOOD; k++)
        any |= results[k].done;
    if (!any) return;
    if (markdown)
        fprintf(f,
                "\n## A flood into one queue, per overflow rule (qtbus)\n\n"
                "A created queue bounded to %d deliveries (GROW: unbounded), one handler on it "
                "that sleeps 1 ms per call, and a producer dispatching %d-byte events as fast as "
                "it can, each rule in a fresh process. Heap: mallinfo2 (in use + mmapped), growth "
                "at the highest sample. Dropped, delivered and pending: qtbus_queue_stats_get at "
                "the end of posting. Once idle, every event of the bounded rules was delivered or dropped "
                "(checked); GROW is not waited for (a million 1 ms calls): it disposes its subscription, "
                "which drops the deliveries still waiting. BLOCK posts %d events: its producer goes at the "
                "consumer's pace once the queue is full.\n\n"
                "| rule | events posted | producer rate (events/s) | heap growth at peak (MB) | "
                "dropped | delivered | pending at end of posting |\n|---|---:|---:|---:|---:|---:|---:|\n",
                CAPACITY, EVENT_BYTES, (int)results[F_BLOCK].posted);
    else
        fprintf(f,
                "\nflood: capacity %d (GROW: none), handler sleeps 1 ms, %d-byte events; counts at the end "
                "of posting\n%-18s %10s %14s %12s %10s %10s %8s\n",
                CAPACITY, EVENT_BYTES, "rule", "posted", "events/s", "heap MB", "dropped", "delivered", "pending");
    for (int k = 0; k < NFLOOD; k++) {
        const flood_result *r = &results[k];
        if (!r->done) continue;
        if (markdown)
            fprintf(f, "| %s | %llu | %.0f | %.1f | %llu | %llu | %llu |\n", rules[k].title, r->posted, rate(r),
                    growth_mb(r), r->dropped, r->delivered, r->pending);
        else
            fprintf(f, "%-18s %10llu %14.0f %12.1f %10llu %10llu %8llu\n", rules[k].title, r->posted, rate(r),
                    growth_mb(r), r->dropped, r->delivered, r->pending);
    }
    if (results[F_GROW].done)
        fprintf(f,
                "%sGROW then disposed its subscription with %llu waiting: the bus was idle %.2f s later "
                "(%llu handler calls in all).\n",
                markdown ? "\n" : "", results[F_GROW].pending, results[F_GROW].wait_seconds, results[F_GROW].calls);
}

void write_flood_json(FILE *f)
{
    fprintf(f, "\"flood\": {\"capacity\": %d, \"event_bytes\": %d, \"handler_sleep_ms\": 1, \"rules\": {", CAPACITY,
            EVENT_BYTES);
    for (int k = 0, first = 1; k < NFLOOD; k++) {
        const flood_result *r = &results[k];
        if (!r->done) continue;
        fprintf(f,
                "%s\"%s\": {\"events_posted\": %llu, \"post_seconds\": %.6g, \"producer_events_per_second\": %.6g, "
                "\"heap_growth_peak_bytes\": %.0f, \"dropped\": %llu, \"delivered\": %llu, \"pending\": %llu, "
                "\"high_water\": %llu, \"idle_dropped\": %llu, \"idle_delivered\": %llu, \"handler_calls\": %llu, "
                "\"wait_seconds\": %.6g, \"heap_sample_seconds\": %.6g}",
                first ? "" : ", ", rules[k].key, r->posted, r->post_seconds, rate(r), r->heap_peak - r->heap_before,
                r->dropped, r->delivered, r->pending, r->high_water, r->final_dropped, r->final_delivered, r->calls,
                r->wait_seconds, r->sample_seconds);
        first = 0;
    }
    fprintf(f, "}}");
}
