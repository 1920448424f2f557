/* SPDX-License-Identifier: MIT */
/*
 * bench-nats: events from one process to another through NATS, measured side by side
 * in one run: a raw nats.c publisher/subscriber pair (the limit), and qtbus buses
 * joined by libqtbus-nats (qtbus_dispatch -> export -> server -> import -> handler).
 *
 *   main.c     options, the schedule of runs, the subscriber processes
 *   server.c   the nats-server (127.0.0.1, a free port, killed at exit)
 *   pair.c     what both pairs share: the publishing loop and the receiving end's count
 *   raw.c      the raw nats.c ends
 *   bridge.c   the qtbus bridge's ends
 *   report.c   the table, the Markdown and the JSON
 */
#ifndef BENCH_NATS_H
#define BENCH_NATS_H

#define _GNU_SOURCE
#include <nats/nats.h>
#include <qtbus_nats.h>

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* PAIR_RAW_ASAP and PAIR_ASAP_BRIDGE publish with nats.c's SendAsap (each publish
 * written at once), which takes nats.c 3.4's flusher (it waits 1 ms before writing) out
 * of the latency: the first is what nats.c allows, the second shows what the bridge's
 * import path adds to it.  They measure latency only. */
enum pair { PAIR_RAW, PAIR_BRIDGE, PAIR_RAW_ASAP, PAIR_ASAP_BRIDGE, PAIR_COUNT };
enum test { TEST_THROUGHPUT, TEST_LATENCY };

typedef struct pair_info {
    const char *key;        /* in the JSON */
    const char *name;       /* in the tables */
    bool send_asap;         /* the publisher is raw nats.c with SendAsap */
    bool bridge_publisher;  /* qtbus_dispatch on a bus that exports the type */
    bool bridge_subscriber; /* a qtbus handler on a bus that imports the type */
    bool throughput;        /* measured for events/s too */
} pair_info;
extern const pair_info pairs[PAIR_COUNT];

/* The head of every payload: the receiver checks the order and times the latency
 * against the send time (CLOCK_MONOTONIC is one clock for every process of a machine). */
typedef struct stamp {
    int64_t seq;
    int64_t sent_ns;
} stamp;

#define TYPE "Bench"
#define SUBJECT "qtbus.e._.Bench" /* the subject the bridge publishes type TYPE on */

int64_t now_ns(void);
/* Exits (status 1) with `what` and the library's reason when !ok. */
void check(bool ok, const char *what, const char *why);

/* ---- server.c ----------------------------------------------------------------------- */

/* Starts nats-server on 127.0.0.1 on a free port; returns its URL.  Exits on failure. */
const char *server_start(void);
/* The server's version line ("nats-server: v2.9.10"), or "?". */
const char *server_version(void);
/* CPU time the server has used so far (user + system), ns. */
int64_t server_cpu_ns(void);

/* CPU time this process has used so far (user + system, all threads), ns. */
int64_t process_cpu_ns(void);

/* ---- the publishing end: raw.c, bridge.c ------------------------------------------- */

typedef struct sender sender;
struct sender {
    /* 0, or -1 when the event was not published (nats.c or qtbus said so). */
    int (*send)(sender *s, const void *data, size_t size);
    /* Flushes what is buffered to the server, disconnects and frees. */
    void (*close)(sender *s);
    natsConnection *nc;
    qtbus_bus *bus;
    qtbus_nats *bridge;
};
void raw_sender_open(sender *s, const char *url, bool send_asap);
void bridge_sender_open(sender *s, const char *url);

/* ---- the receiving end: raw.c, bridge.c, pair.c ----------------------------------- */

typedef struct receiver {
    enum test test;
    int warmup;   /* latency: the first events are not sampled */
    int expected; /* events to wait for, warm-up included */
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int count;
    int64_t next_seq;
    int out_of_order; /* an event whose seq is below one already seen */
    int64_t first_ns, last_ns;
    int64_t *samples; /* latency: arrival - send, ns */
    int sampled;
} receiver;

/* Both pairs' handlers end here, on the thread that delivers the event. */
void received(receiver *r, const void *data, size_t size);

typedef struct sink sink;
struct sink {
    void (*close)(sink *k);
    natsConnection *nc;
    natsSubscription *sub;
    qtbus_bus *bus;
    qtbus_nats *bridge;
};
/* Subscribed, and confirmed by the server, when these return. */
void raw_sink_open(sink *k, const char *url, receiver *r);
void bridge_sink_open(sink *k, const char *url, receiver *r);

/* ---- pair.c --------------------------------------------------------------------------- */

typedef struct pub_result {
    int64_t start_ns; /* before the first publish */
    int64_t sent_ns;  /* after the last publish returned */
    int64_t end_ns;   /* after the publisher flushed and closed */
    int unpublished;  /* publishes that failed */
    double pace_us;   /* latency: the mean interval between sends */
    int64_t cpu_ns;   /* this process's CPU time from connecting to closing */
} pub_result;

/* The publishing end, in this process, against a subscriber process already ready:
 * throughput sends `count` events of `size` bytes as fast as they go; latency sends
 * `count` events one at a time, `pace_us` apart. */
pub_result publish_events(enum pair pair, const char *url, enum test test, size_t size, int count, int pace_us);

/* The subscriber process's main: prints "ready" once subscribed, then one line
 *   result RECEIVED OUT_OF_ORDER FIRST_NS LAST_NS P50_NS P99_NS CPU_NS
 * when `count` events arrived or none did for 2 s (CPU_NS: the process's CPU time from
 * its start until then). */
int subscriber_main(enum pair pair, const char *url, enum test test, int warmup, int count);

/* ---- main.c and report.c ----------------------------------------------------------- */

enum { MAX_REPS = 15, MAX_META = 16, SIZES = 2 };

typedef struct run_result {
    double rate;      /* events/s received, throughput */
    double send_rate; /* events/s the publisher's calls returned at, throughput */
    int lost;         /* throughput: sent - received */
    int unpublished;  /* of those, publishes the publisher was told failed */
    int latency_lost; /* latency: sent - received */
    int out_of_order; /* both tests */
    double p50_us, p99_us;
    double pace_us;
    /* Throughput: CPU time per event received, ns, of each process.  On a machine with
     * few CPUs their sum bounds the rate more than any one of them. */
    double cpu_pub, cpu_server, cpu_sub;
} run_result;

typedef struct row {
    size_t size;
    int throughput_count;
    run_result runs[PAIR_COUNT][MAX_REPS];
} row;

typedef struct config {
    int reps;
    int latency_count, warmup, pace_us;
    bool smoke;
    const char *meta[MAX_META]; /* "key=value", from --meta */
    int meta_count;
    char started[32];               /* UTC, ISO 8601 */
    double load_before, load_after; /* 1-minute load average: how busy the machine was */
} config;

/* Prints the table; writes the Markdown and the JSON when their FILE is not NULL.
 * Returns whether both targets were met for every size. */
bool report(const config *cfg, const row *rows, int count, FILE *md, FILE *json);

#endif
