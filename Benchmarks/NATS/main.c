/* SPDX-License-Identifier: MIT */
/*
 * bench-nats -- events/s and one-way latency (p50, p99) from one process to another
 * through a local nats-server, for 64 B and 4 KiB events: a raw nats.c pair and the
 * qtbus bridge side by side, interleaved, each figure the median of --reps runs with
 * min and max.
 *
 *   bench-nats [--smoke] [--reps N] [--json FILE] [--md FILE] [--meta KEY=VALUE]...
 *
 * Each run starts a fresh subscriber process (this program again, --subscriber) and
 * publishes from this one, through one nats-server this program started.
 *
 * Throughput: the publisher sends N events as fast as its calls return (raw:
 * natsConnection_Publish; bridge: qtbus_dispatch on a bus exporting the type); the
 * subscriber (raw: an async subscription's callback; bridge: a qtbus handler on a bus
 * importing the type) counts them until all came or none has for 2 s.
 * events/s = received / (last arrival - first publish).  What did not arrive is
 * reported as lost, never hidden: core NATS drops for a slow consumer, and the bridge
 * beyond its backlog bound (QTBUS_NATS_MAX_PENDING).
 *
 * Latency: events sent one at a time, --pace-us apart (not a flood), each carrying its
 * send time (CLOCK_MONOTONIC, one clock for the processes of a machine); the
 * subscriber takes arrival - send for each after a warm-up, and p50 and p99 of those.
 * nats.c 3.4 writes a publish out from its flusher thread, which first waits 1 ms for
 * more: that wait sets most of the latency of both pairs.  So two more pairs publish
 * with natsOptions_SetSendAsap (written at once): raw to raw, what nats.c allows, and
 * raw to the bridge, which shows what the bridge's import path adds (its queue, its
 * thread, the dispatch) without the flusher's wait over it.
 *
 * Order: each rep runs every pair once, raw first in even reps and the bridge first in
 * odd ones, so that a drift of the machine's load falls on both alike.  Every event
 * carries a sequence number: the subscriber counts any that comes after a later one
 * (out of order: neither pair may do that).
 */
#include "bench_nats.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static config cfg = {.reps = 7, .latency_count = 3000, .warmup = 100, .pace_us = 100};
static row rows[SIZES] = {{.size = 64, .throughput_count = 1000000}, {.size = 4096, .throughput_count = 200000}};

typedef struct child {
    pid_t pid;
    int fd;
    enum pair pair;
} child;

static void fail_child(child *c, const char *what)
{
    fprintf(stderr, "bench-nats: the %s subscriber %s\n", pairs[c->pair].name, what);
    kill(c->pid, SIGKILL);
    waitpid(c->pid, NULL, 0);
    exit(1);
}

/* One line from the child, or false when it closed its end or `timeout_ms` passed. */
static bool read_line(child *c, char *line, size_t size, int timeout_ms)
{
    size_t n = 0;
    int64_t deadline = now_ns() + (int64_t)timeout_ms * 1000000;
    while (n + 1 < size) {
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        int left = (int)((deadline - now_ns()) / 1000000);
        if (left <= 0) return false;
        int ready = poll(&p, 1, left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return false;
        ssize_t got = read(c->fd, &line[n], 1);
        if (got <= 0) return false;
        if (line[n] == '\n') break;
        n++;
    }
    line[n] = '\0';
    return true;
}

static child spawn(enum pair pair, const char *url, enum test test, int warmup, int count)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("bench-nats: pipe");
        exit(1);
    }
    char args[4][24];
    snprintf(args[0], sizeof args[0], "%d", (int)pair);
    snprintf(args[1], sizeof args[1], "%d", (int)test);
    snprintf(args[2], sizeof args[2], "%d", warmup);
    snprintf(args[3], sizeof args[3], "%d", count);
    pid_t parent = getpid();
    child c = {.pid = fork(), .fd = fds[0], .pair = pair};
    if (c.pid < 0) {
        perror("bench-nats: fork");
        exit(1);
    }
    if (c.pid == 0) {
        /* A subscriber outlives no failed run. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        /* exec rather than run on: this process may have nats.c's threads, which a
         * fork does not copy. */
        execl("/proc/self/exe", "bench-nats", "--subscriber", args[0], url, args[1], args[2], args[3], (char *)NULL);
        perror("bench-nats: exec /proc/self/exe");
        _exit(127);
    }
    close(fds[1]);
    char line[64];
    if (!read_line(&c, line, sizeof line, 10000) || strcmp(line, "ready") != 0) fail_child(&c, "did not start");
    return c;
}

typedef struct sub_result {
    int received, out_of_order;
    long long first_ns, last_ns, p50_ns, p99_ns, cpu_ns;
} sub_result;

static sub_result finish(child *c)
{
    char line[160];
    sub_result r;
    /* It stops 2 s after the last event it got, then closes its bridge (at most 5 s). */
    if (!read_line(c, line, sizeof line, 60000) ||
        sscanf(line, "result %d %d %lld %lld %lld %lld %lld", &r.received, &r.out_of_order, &r.first_ns, &r.last_ns,
               &r.p50_ns, &r.p99_ns, &r.cpu_ns) != 7) {
        fail_child(c, "gave no result");
    }
    close(c->fd);
    int status = 0;
    waitpid(c->pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench-nats: the %s subscriber ended badly (status %#x)\n", pairs[c->pair].name, status);
        exit(1);
    }
    return r;
}

static void run(row *w, int rep, enum pair pair, const char *url)
{
    run_result *out = &w->runs[pair][rep];
    *out = (run_result){0};
    if (pairs[pair].throughput) {
        int n = w->throughput_count;
        child c = spawn(pair, url, TEST_THROUGHPUT, 0, n);
        int64_t server_cpu = server_cpu_ns();
        pub_result p = publish_events(pair, url, TEST_THROUGHPUT, w->size, n, 0);
        sub_result s = finish(&c);
        server_cpu = server_cpu_ns() - server_cpu;
        out->rate = s.received ? (double)s.received * 1e9 / (double)(s.last_ns - p.start_ns) : 0;
        out->send_rate = (double)n * 1e9 / (double)(p.sent_ns - p.start_ns);
        out->lost = n - s.received;
        out->unpublished = p.unpublished;
        out->out_of_order = s.out_of_order;
        if (s.received > 0) {
            out->cpu_pub = (double)p.cpu_ns / s.received;
            out->cpu_server = (double)server_cpu / s.received;
            out->cpu_sub = (double)s.cpu_ns / s.received;
        }
    }
    int n = cfg.warmup + cfg.latency_count;
    child c = spawn(pair, url, TEST_LATENCY, cfg.warmup, n);
    pub_result p = publish_events(pair, url, TEST_LATENCY, w->size, n, cfg.pace_us);
    sub_result s = finish(&c);
    out->p50_us = (double)s.p50_ns / 1000;
    out->p99_us = (double)s.p99_ns / 1000;
    out->latency_lost = n - s.received;
    out->out_of_order += s.out_of_order;
    out->pace_us = p.pace_us;
}

static int positive(const char *text, int max, const char *option)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || v < 1 || v > max) {
        fprintf(stderr, "bench-nats: %s takes 1 to %d\n", option, max);
        exit(2);
    }
    return (int)v;
}

static const char usage[] = "usage: bench-nats [--smoke] [--reps N] [--latency-count N] [--pace-us N]\n"
                            "                  [--json FILE] [--md FILE] [--meta KEY=VALUE]...\n";

int main(int argc, char **argv)
{
    if (argc == 7 && strcmp(argv[1], "--subscriber") == 0) {
        return subscriber_main((enum pair)atoi(argv[2]), argv[3], (enum test)atoi(argv[4]), atoi(argv[5]),
                               atoi(argv[6]));
    }
    const char *json_path = NULL, *md_path = NULL;
    for (int i = 1; i < argc; i++) {
        bool has_value = i + 1 < argc;
        if (strcmp(argv[i], "--smoke") == 0) {
            cfg.smoke = true;
            cfg.reps = 1;
            rows[0].throughput_count = rows[1].throughput_count = 2000;
            cfg.latency_count = 200;
            cfg.warmup = 20;
        } else if (strcmp(argv[i], "--reps") == 0 && has_value) {
            cfg.reps = positive(argv[++i], MAX_REPS, "--reps");
        } else if (strcmp(argv[i], "--latency-count") == 0 && has_value) {
            cfg.latency_count = positive(argv[++i], 1000000, "--latency-count");
        } else if (strcmp(argv[i], "--pace-us") == 0 && has_value) {
            cfg.pace_us = positive(argv[++i], 999999, "--pace-us");
        } else if (strcmp(argv[i], "--json") == 0 && has_value) {
            json_path = argv[++i];
        } else if (strcmp(argv[i], "--md") == 0 && has_value) {
            md_path = argv[++i];
        } else if (strcmp(argv[i], "--meta") == 0 && has_value && strchr(argv[i + 1], '=') &&
                   cfg.meta_count < MAX_META) {
            cfg.meta[cfg.meta_count++] = argv[++i];
        } else {
            fputs(usage, stderr);
            return 2;
        }
    }
    /* Opened first: a path that cannot be written fails before the run, not after. */
    FILE *md = md_path ? fopen(md_path, "w") : NULL;
    FILE *json = json_path ? fopen(json_path, "w") : NULL;
    if ((md_path && !md) || (json_path && !json)) {
        perror(md_path && !md ? md_path : json_path);
        return 1;
    }

    time_t t = time(NULL);
    strftime(cfg.started, sizeof cfg.started, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    getloadavg(&cfg.load_before, 1);
    const char *url = server_start();
    printf("bench-nats: %s at %s; nats.c %s; qtbus %s\n", server_version(), url, nats_GetVersion(), qtbus_version());
    printf("bench-nats: %d reps; throughput %d / %d events (64 B / 4 KiB); latency %d events (after %d) %d us apart\n",
           cfg.reps, rows[0].throughput_count, rows[1].throughput_count, cfg.latency_count, cfg.warmup, cfg.pace_us);
    fflush(stdout);

    static const enum pair forward[PAIR_COUNT] = {PAIR_RAW, PAIR_BRIDGE, PAIR_RAW_ASAP, PAIR_ASAP_BRIDGE};
    static const enum pair backward[PAIR_COUNT] = {PAIR_BRIDGE, PAIR_RAW, PAIR_ASAP_BRIDGE, PAIR_RAW_ASAP};
    for (int s = 0; s < SIZES; s++) {
        for (int rep = 0; rep < cfg.reps; rep++) {
            const enum pair *order = rep % 2 == 0 ? forward : backward;
            for (int k = 0; k < PAIR_COUNT; k++)
                run(&rows[s], rep, order[k], url);
            fprintf(stderr, ".");
        }
    }
    fprintf(stderr, "\n");
    getloadavg(&cfg.load_after, 1);

    bool met = report(&cfg, rows, SIZES, md, json);
    if ((md && fclose(md) != 0) || (json && fclose(json) != 0)) {
        perror("bench-nats: writing the results");
        return 1;
    }
    printf("\ntargets (bridge >= 0.8x raw events/s, p50 <= 1.2x raw): %s\n", met ? "met" : "NOT met");

    /* Nothing may come out of order, and in a smoke run every event must arrive (a
     * few thousand events cannot overrun anything): either is a bug, not noise. */
    int bad = 0;
    for (int s = 0; s < SIZES; s++) {
        for (int m = 0; m < PAIR_COUNT; m++) {
            for (int rep = 0; rep < cfg.reps; rep++) {
                const run_result *r = &rows[s].runs[m][rep];
                if (r->out_of_order || (cfg.smoke && (r->lost || r->latency_lost))) {
                    fprintf(stderr, "bench-nats: %zu B %s, rep %d: %d out of order, %d + %d lost\n", rows[s].size,
                            pairs[m].name, rep, r->out_of_order, r->lost, r->latency_lost);
                    bad = 1;
                }
            }
        }
    }
    return bad;
}
