/*
 * bench-nats: events from one process to another through NATS, two ways side by side
 * in one run: a raw nats.c publisher/subscriber pair (the limit), and qtbus buses
 * joined by libqtbus-nats (qtbus_dispatch -> export -> server -> import -> handler).
 * main.c runs and reports; server.c starts the nats-server; pair.c is both ends of
 * either pair (the subscriber is this program again, in a child process).
 */
#ifndef BENCH_NATS_H
#define BENCH_NATS_H

#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* MODE_RAW_ASAP: the raw pair with natsOptions_SetSendAsap (each publish written out
 * at once instead of by nats.c's flusher thread), for the latency it allows. */
enum mode { MODE_RAW, MODE_BRIDGE, MODE_RAW_ASAP };
enum test { TEST_THROUGHPUT, TEST_LATENCY };

static inline const char *mode_name(enum mode m)
{
    return m == MODE_RAW ? "raw nats.c" : m == MODE_BRIDGE ? "qtbus bridge" : "raw, SendAsap";
}

int64_t now_ns(void);

/* server.c: nats-server on 127.0.0.1, a free port; stopped at exit. */
const char *server_start(void);
void server_stop(void);

/* pair.c.  The publishing end, in this process, against a subscriber process already
 * ready: throughput sends `count` events of `size` bytes as fast as they go; latency
 * sends `count` events one at a time, `pace_us` apart. */
typedef struct pub_result {
    int64_t start_ns;    /* before the first publish */
    int64_t end_ns;      /* after the last, flushed */
} pub_result;
pub_result publish_events(enum mode mode, const char *url, enum test test, size_t size, int count, int pace_us);

/* The subscribing end (the child process's main): prints "ready", then for
 * throughput "received first_ns last_ns", for latency "received p50_ns p99_ns". */
int subscriber_main(enum mode mode, const char *url, enum test test, size_t size, int count);

#endif
