/*
 * bench-nats -- events/s and one-way latency (p50, p99) from one process to another
 * through a local nats-server, for 64 B and 4 KiB events: a raw nats.c pair and the
 * qtbus bridge, interleaved (raw, bridge, raw, bridge...) so that both see the same
 * machine, each figure the median of --reps runs with min and max.
 *
 *   bench-nats [--smoke] [--reps N] [--json FILE] [--md FILE]
 *
 * Throughput: the publisher sends N events as fast as it can; the subscriber process
 * notes when each arrives; events/s = received / (last arrival - first publish).
 * What is lost (core NATS drops for slow consumers) is reported, never hidden.
 * Latency: events sent one at a time, 100 us apart, carrying their send time
 * (CLOCK_MONOTONIC, shared by processes on one machine); the subscriber computes
 * arrival - send for each.  nats.c's publish leaves the writing to its flusher thread,
 * which sets most of that latency on loopback: a third row measures the raw pair with
 * natsOptions_SetSendAsap, to show what it allows.  Method and figures:
 * docs/bench-nats.md.
 */
#include "bench_nats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MAX_REPS = 15 };

typedef struct row {
    size_t size;
    double rate[3][MAX_REPS];     /* events/s, per mode (not measured for MODE_RAW_ASAP) */
    int lost[3][MAX_REPS];
    double p50[3][MAX_REPS], p99[3][MAX_REPS];  /* microseconds */
} row;

static int reps = 5, throughput_count[2] = { 1000000, 200000 }, latency_count = 2000;

typedef struct child {
    pid_t pid;
    FILE *out;
} child;

static child spawn(enum mode mode, const char *url, enum test test, size_t size, int count)
{
    int fds[2];
    if (pipe(fds) != 0) { perror("pipe"); exit(1); }
    char args[4][32];
    snprintf(args[0], 32, "%d", (int)mode);
    snprintf(args[1], 32, "%d", (int)test);
    snprintf(args[2], 32, "%zu", size);
    snprintf(args[3], 32, "%d", count);
    child c = { .pid = fork() };
    if (c.pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl("/proc/self/exe", "bench-nats", "--subscriber", args[0], url, args[1], args[2], args[3], (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    c.out = fdopen(fds[0], "r");
    char line[64];
    if (!fgets(line, sizeof line, c.out) || strcmp(line, "ready\n") != 0) {
        fprintf(stderr, "bench-nats: the %s subscriber did not start\n", mode_name(mode));
        exit(1);
    }
    return c;
}

static void finish(child *c, long long out[3])
{
    if (fscanf(c->out, "received %lld %lld %lld", &out[0], &out[1], &out[2]) != 3) {
        fprintf(stderr, "bench-nats: a subscriber gave no result\n");
        exit(1);
    }
    fclose(c->out);
    int status;
    waitpid(c->pid, &status, 0);
}

static void run(row *r, int rep, enum mode mode, const char *url, int size_index)
{
    long long res[3];
    child c;
    if (mode != MODE_RAW_ASAP) {
        int n = throughput_count[size_index];
        c = spawn(mode, url, TEST_THROUGHPUT, r->size, n);
        pub_result p = publish_events(mode, url, TEST_THROUGHPUT, r->size, n, 0);
        finish(&c, res);
        r->rate[mode][rep] = res[0] ? (double)res[0] * 1e9 / (double)(res[2] - p.start_ns) : 0;
        r->lost[mode][rep] = n - (int)res[0];
    }

    c = spawn(mode, url, TEST_LATENCY, r->size, latency_count);
    publish_events(mode, url, TEST_LATENCY, r->size, latency_count, 100);
    finish(&c, res);
    r->p50[mode][rep] = (double)res[1] / 1000;
    r->p99[mode][rep] = (double)res[2] / 1000;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct stat3 { double median, min, max; } stat3;

static stat3 stats(const double *values)
{
    double v[MAX_REPS];
    memcpy(v, values, sizeof(double) * (size_t)reps);
    qsort(v, (size_t)reps, sizeof v[0], compare_double);
    return (stat3){ v[reps / 2], v[0], v[reps - 1] };
}

static int total_lost(const row *r, enum mode m)
{
    int n = 0;
    for (int i = 0; i < reps; i++) n += r->lost[m][i];
    return n;
}

static void report(const row *rows, int count, FILE *md, FILE *json)
{
    printf("\n%-6s %-13s %14s %8s %10s %10s %8s %6s\n", "size", "pair", "events/s", "x raw", "p50 us", "p99 us",
           "p50 x", "lost");
    if (md) {
        fprintf(md, "| size | pair | events/s (median, min-max) | x raw | p50 us | p99 us | p50 x raw | lost |\n");
        fprintf(md, "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    }
    if (json) fprintf(json, "{\n  \"reps\": %d,\n  \"rows\": [\n", reps);
    for (int i = 0; i < count; i++) {
        const row *r = &rows[i];
        stat3 raw_rate = stats(r->rate[MODE_RAW]), raw_p50 = stats(r->p50[MODE_RAW]);
        for (int m = 0; m < 3; m++) {
            stat3 rate = stats(r->rate[m]), p50 = stats(r->p50[m]), p99 = stats(r->p99[m]);
            double x_rate = rate.median / raw_rate.median, x_p50 = p50.median / raw_p50.median;
            if (m == MODE_RAW_ASAP) {
                printf("%-6zu %-13s %14s %8s %10.1f %10.1f %8.2f %6s\n", r->size, mode_name((enum mode)m), "-", "-",
                       p50.median, p99.median, x_p50, "-");
            } else {
                printf("%-6zu %-13s %14.0f %8.2f %10.1f %10.1f %8.2f %6d\n", r->size, mode_name((enum mode)m),
                       rate.median, x_rate, p50.median, p99.median, x_p50, total_lost(r, (enum mode)m));
            }
            if (md && m == MODE_RAW_ASAP) {
                fprintf(md, "| %zu B | %s | - | - | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) | %.2f | - |\n", r->size,
                        mode_name((enum mode)m), p50.median, p50.min, p50.max, p99.median, p99.min, p99.max, x_p50);
            } else if (md) {
                fprintf(md, "| %zu B | %s | %.0f (%.0f-%.0f) | %.2f | %.1f (%.1f-%.1f) | %.1f (%.1f-%.1f) | %.2f | %d |\n",
                        r->size, mode_name((enum mode)m), rate.median, rate.min, rate.max, x_rate, p50.median, p50.min,
                        p50.max, p99.median, p99.min, p99.max, x_p50, total_lost(r, (enum mode)m));
            }
            if (json) {
                fprintf(json,
                        "    {\"size\": %zu, \"pair\": \"%s\", \"events_per_s\": {\"median\": %.0f, \"min\": %.0f, \"max\": %.0f}, "
                        "\"p50_us\": {\"median\": %.1f, \"min\": %.1f, \"max\": %.1f}, "
                        "\"p99_us\": {\"median\": %.1f, \"min\": %.1f, \"max\": %.1f}, \"lost\": %d}%s\n",
                        r->size, m == MODE_RAW ? "raw" : m == MODE_BRIDGE ? "bridge" : "raw_send_asap",
                        m == MODE_RAW_ASAP ? 0 : rate.median, m == MODE_RAW_ASAP ? 0 : rate.min,
                        m == MODE_RAW_ASAP ? 0 : rate.max, p50.median, p50.min, p50.max, p99.median, p99.min, p99.max,
                        m == MODE_RAW_ASAP ? 0 : total_lost(r, (enum mode)m), i == count - 1 && m == 2 ? "" : ",");
            }
        }
    }
    if (json) fprintf(json, "  ]\n}\n");
}

int main(int argc, char **argv)
{
    if (argc == 7 && strcmp(argv[1], "--subscriber") == 0) {
        return subscriber_main((enum mode)atoi(argv[2]), argv[3], (enum test)atoi(argv[4]), (size_t)atol(argv[5]),
                               atoi(argv[6]));
    }
    const char *json_path = NULL, *md_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--smoke") == 0) {
            reps = 1;
            throughput_count[0] = throughput_count[1] = 1000;
            latency_count = 100;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
            if (reps < 1 || reps > MAX_REPS) { fprintf(stderr, "bench-nats: --reps 1 to %d\n", MAX_REPS); return 2; }
        } else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc) {
            json_path = argv[++i];
        } else if (strcmp(argv[i], "--md") == 0 && i + 1 < argc) {
            md_path = argv[++i];
        } else {
            fprintf(stderr, "usage: bench-nats [--smoke] [--reps N] [--json FILE] [--md FILE]\n");
            return 2;
        }
    }
    const char *url = server_start();
    printf("bench-nats: nats-server at %s; %d reps, throughput %d / %d events (64 B / 4 KiB), latency %d events\n", url,
           reps, throughput_count[0], throughput_count[1], latency_count);
    row rows[2] = { { .size = 64 }, { .size = 4096 } };
    for (int s = 0; s < 2; s++) {
        for (int rep = 0; rep < reps; rep++) {
            run(&rows[s], rep, MODE_RAW, url, s);
            run(&rows[s], rep, MODE_BRIDGE, url, s);
            run(&rows[s], rep, MODE_RAW_ASAP, url, s);
            fprintf(stderr, ".");
        }
    }
    fprintf(stderr, "\n");
    FILE *md = md_path ? fopen(md_path, "w") : NULL;
    FILE *json = json_path ? fopen(json_path, "w") : NULL;
    if (md) {
        fprintf(md, "# bench-nats: one process to another through a local nats-server\n\n"
                    "`Benchmarks/NATS/bench-nats --reps %d` (method: Benchmarks/NATS/main.c). Throughput: %d events of "
                    "64 B, %d of 4 KiB, sent as fast as they go; latency: %d events 100 us apart, one way. "
                    "Medians of %d interleaved runs (min-max). Targets: bridge >= 0.8x raw events/s, p50 <= 1.2x raw.\n\n"
                    "Both pairs use nats.c's default options, as libqtbus-nats does: a publish is written out by "
                    "nats.c's flusher thread, which sets most of the latency on loopback. The \"raw, SendAsap\" row "
                    "(latency only) is the raw pair with natsOptions_SetSendAsap, each publish written at once: what "
                    "nats.c allows when latency matters more than throughput.\n\n"
                    "Lost: events the receiving side did not get, over all runs. The raw subscriber has no bound "
                    "(nats.c's pending limits off, as the bridge sets them); the bridge's backlog is bounded "
                    "(QTBUS_NATS_MAX_PENDING events), and in a burst that outruns its thread it drops what is "
                    "beyond that, reporting each one (qtbus_nats.h, ERRORS). events/s counts what arrived.\n\n",
                reps, throughput_count[0], throughput_count[1], latency_count, reps);
    }
    report(rows, 2, md, json);
    if (md) fclose(md);
    if (json) fclose(json);
    return 0;
}
