/* SPDX-License-Identifier: MIT */
/*
 * The results three ways: a table on stdout (medians), Markdown for docs/ (medians with
 * min-max), and JSON with every run's figure, so that a reader can recompute anything
 * the tables say.
 */
#include "bench_nats.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TARGET_RATE 0.8 /* bridge events/s at least this times raw's */
#define TARGET_P50 1.2  /* bridge p50 at most this times raw's */

typedef struct stat3 {
    double median, min, max;
} stat3;

typedef double (*field)(const run_result *r);
static double f_rate(const run_result *r) { return r->rate; }
static double f_send_rate(const run_result *r) { return r->send_rate; }
static double f_p50(const run_result *r) { return r->p50_us; }
static double f_p99(const run_result *r) { return r->p99_us; }
static double f_pace(const run_result *r) { return r->pace_us; }
static double f_cpu_pub(const run_result *r) { return r->cpu_pub; }
static double f_cpu_server(const run_result *r) { return r->cpu_server; }
static double f_cpu_sub(const run_result *r) { return r->cpu_sub; }

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stat3 median3(const double *values, int n)
{
    double v[MAX_REPS];
    memcpy(v, values, sizeof v[0] * (size_t)n);
    qsort(v, (size_t)n, sizeof v[0], compare_double);
    /* An even count takes the mean of the middle two. */
    double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return (stat3){median, v[0], v[n - 1]};
}

static stat3 stats(const config *cfg, const row *w, enum pair m, field f)
{
    double v[MAX_REPS];
    for (int i = 0; i < cfg->reps; i++)
        v[i] = f(&w->runs[m][i]);
    return median3(v, cfg->reps);
}

/* Bridge over raw, rep by rep: the two runs of a rep are next to each other in time,
 * so a ratio of those is less exposed to the machine's drift than a ratio of medians. */
static stat3 paired(const config *cfg, const row *w, enum pair bridge, enum pair raw, field f)
{
    double v[MAX_REPS];
    for (int i = 0; i < cfg->reps; i++) {
        double d = f(&w->runs[raw][i]);
        v[i] = d > 0 ? f(&w->runs[bridge][i]) / d : 0;
    }
    return median3(v, cfg->reps);
}

typedef struct totals {
    int lost, unpublished, latency_lost, out_of_order;
} totals;

static totals sum(const config *cfg, const row *w, enum pair m)
{
    totals t = {0};
    for (int i = 0; i < cfg->reps; i++) {
        const run_result *r = &w->runs[m][i];
        t.lost += r->lost;
        t.unpublished += r->unpublished;
        t.latency_lost += r->latency_lost;
        t.out_of_order += r->out_of_order;
    }
    return t;
}

typedef struct summary {
    stat3 rate[PAIR_COUNT], send_rate[PAIR_COUNT], p50[PAIR_COUNT], p99[PAIR_COUNT], pace[PAIR_COUNT];
    stat3 cpu_pub[PAIR_COUNT], cpu_server[PAIR_COUNT], cpu_sub[PAIR_COUNT];
    totals total[PAIR_COUNT];
    double rate_ratio, p50_ratio, asap_p50_ratio;
    stat3 rate_paired, p50_paired, asap_p50_paired;
    bool rate_met, p50_met;
} summary;

static summary summarize(const config *cfg, const row *w)
{
    summary s;
    for (int m = 0; m < PAIR_COUNT; m++) {
        s.rate[m] = stats(cfg, w, (enum pair)m, f_rate);
        s.send_rate[m] = stats(cfg, w, (enum pair)m, f_send_rate);
        s.p50[m] = stats(cfg, w, (enum pair)m, f_p50);
        s.p99[m] = stats(cfg, w, (enum pair)m, f_p99);
        s.pace[m] = stats(cfg, w, (enum pair)m, f_pace);
        s.cpu_pub[m] = stats(cfg, w, (enum pair)m, f_cpu_pub);
        s.cpu_server[m] = stats(cfg, w, (enum pair)m, f_cpu_server);
        s.cpu_sub[m] = stats(cfg, w, (enum pair)m, f_cpu_sub);
        s.total[m] = sum(cfg, w, (enum pair)m);
    }
    s.rate_ratio = s.rate[PAIR_RAW].median > 0 ? s.rate[PAIR_BRIDGE].median / s.rate[PAIR_RAW].median : 0;
    s.p50_ratio = s.p50[PAIR_RAW].median > 0 ? s.p50[PAIR_BRIDGE].median / s.p50[PAIR_RAW].median : 0;
    s.asap_p50_ratio =
        s.p50[PAIR_RAW_ASAP].median > 0 ? s.p50[PAIR_ASAP_BRIDGE].median / s.p50[PAIR_RAW_ASAP].median : 0;
    s.rate_paired = paired(cfg, w, PAIR_BRIDGE, PAIR_RAW, f_rate);
    s.p50_paired = paired(cfg, w, PAIR_BRIDGE, PAIR_RAW, f_p50);
    s.asap_p50_paired = paired(cfg, w, PAIR_ASAP_BRIDGE, PAIR_RAW_ASAP, f_p50);
    s.rate_met = s.rate_ratio >= TARGET_RATE;
    s.p50_met = s.p50_ratio > 0 && s.p50_ratio <= TARGET_P50;
    return s;
}

static const char *size_name(size_t size) { return size == 4096 ? "4 KiB" : size == 64 ? "64 B" : "?"; }

/* ---- stdout ---------------------------------------------------------------------------- */

static void print_table(const config *cfg, const row *rows, const summary *sums, int count)
{
    printf("\n%-6s %15s %15s %6s %17s %17s %9s %11s\n", "size", "raw events/s", "bridge events/s", "ratio",
           "raw p50/p99 us", "bridge p50/p99", "ratio p50", "lost r/b");
    for (int i = 0; i < count; i++) {
        const summary *s = &sums[i];
        char raw[32], bridge[32], lost[24];
        snprintf(raw, sizeof raw, "%.1f/%.1f", s->p50[PAIR_RAW].median, s->p99[PAIR_RAW].median);
        snprintf(bridge, sizeof bridge, "%.1f/%.1f", s->p50[PAIR_BRIDGE].median, s->p99[PAIR_BRIDGE].median);
        snprintf(lost, sizeof lost, "%d/%d", s->total[PAIR_RAW].lost, s->total[PAIR_BRIDGE].lost);
        printf("%-6s %15.0f %15.0f %6.2f %17s %17s %9.2f %11s\n", size_name(rows[i].size), s->rate[PAIR_RAW].median,
               s->rate[PAIR_BRIDGE].median, s->rate_ratio, raw, bridge, s->p50_ratio, lost);
    }
    printf("\npublished with SendAsap (no flusher wait): what the import path adds\n");
    printf("%-6s %17s %22s %9s %12s %20s\n", "size", "raw p50/p99 us", "-> bridge p50/p99 us", "ratio p50", "added p50",
           "publisher calls/s r/b");
    for (int i = 0; i < count; i++) {
        const summary *s = &sums[i];
        char raw[32], bridge[32], calls[40];
        snprintf(raw, sizeof raw, "%.1f/%.1f", s->p50[PAIR_RAW_ASAP].median, s->p99[PAIR_RAW_ASAP].median);
        snprintf(bridge, sizeof bridge, "%.1f/%.1f", s->p50[PAIR_ASAP_BRIDGE].median, s->p99[PAIR_ASAP_BRIDGE].median);
        snprintf(calls, sizeof calls, "%.0f/%.0f", s->send_rate[PAIR_RAW].median, s->send_rate[PAIR_BRIDGE].median);
        printf("%-6s %17s %22s %9.2f %10.1f us %20s\n", size_name(rows[i].size), raw, bridge, s->asap_p50_ratio,
               s->p50[PAIR_ASAP_BRIDGE].median - s->p50[PAIR_RAW_ASAP].median, calls);
    }
    printf("\nthroughput: CPU time per event received, ns (publisher + server + subscriber = total)\n");
    for (int i = 0; i < count; i++) {
        const summary *s = &sums[i];
        for (int m = 0; m < PAIR_COUNT; m++) {
            if (!pairs[m].throughput) continue;
            printf("%-6s %-13s %6.0f + %6.0f + %6.0f = %6.0f\n", size_name(rows[i].size), pairs[m].name,
                   s->cpu_pub[m].median, s->cpu_server[m].median, s->cpu_sub[m].median,
                   s->cpu_pub[m].median + s->cpu_server[m].median + s->cpu_sub[m].median);
        }
    }
    (void)cfg;
}

/* ---- Markdown ------------------------------------------------------------------------- */

static void md_stat(FILE *md, stat3 s, int decimals)
{
    fprintf(md, " %.*f (%.*f-%.*f) |", decimals, s.median, decimals, s.min, decimals, s.max);
}

static void write_md(FILE *md, const config *cfg, const row *rows, const summary *sums, int count, bool met)
{
    fprintf(md, "# bench-nats: one process to another through a local nats-server\n\n");
    fprintf(md,
            "`scripts/bench.sh --only nats` (Benchmarks/NATS/, method in Benchmarks/NATS/README.md), run %s on %ld "
            "CPUs (1-minute load average %.2f before, %.2f after). %s; nats.c %s; qtbus %s.",
            cfg->started, sysconf(_SC_NPROCESSORS_ONLN), cfg->load_before, cfg->load_after, server_version(),
            nats_GetVersion(), qtbus_version());
    for (int i = 0; i < cfg->meta_count; i++) {
        const char *eq = strchr(cfg->meta[i], '=');
        fprintf(md, " %.*s: %s.", (int)(eq - cfg->meta[i]), cfg->meta[i], eq + 1);
    }
    fprintf(md,
            "\n\nEach figure is the median of %d interleaved runs, with min-max. Throughput: %d events of 64 B, %d of "
            "4 KiB, published as fast as the calls return; events/s = received / (last arrival - first publish). "
            "Latency: %d events one at a time, %d us apart (%.0f us measured), after %d not counted; one way, "
            "arrival - send time.\n\n",
            cfg->reps, rows[0].throughput_count, rows[1].throughput_count, cfg->latency_count, cfg->pace_us,
            sums[0].pace[PAIR_RAW].median, cfg->warmup);

    fprintf(md,
            "Target: the bridge at least %.1fx raw nats.c's events/s and at most %.1fx its p50 latency: "
            "**%s**. A ratio is the bridge's median over raw's (in bold: what the target is judged on), then "
            "the median and range of the ratios rep by rep (the two runs of a rep are next to each other in "
            "time, so those ratios show how much of a difference is the machine's drift).\n\n",
            TARGET_RATE, TARGET_P50, met ? "met" : "not met");
    fprintf(md,
            "| size | raw events/s | bridge events/s | ratio | raw p50 / p99 us | bridge p50 / p99 us | ratio p50 |\n");
    fprintf(md, "| --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < count; i++) {
        const summary *s = &sums[i];
        fprintf(md, "| %s |", size_name(rows[i].size));
        md_stat(md, s->rate[PAIR_RAW], 0);
        md_stat(md, s->rate[PAIR_BRIDGE], 0);
        fprintf(md, " **%.2f**%s; %.2f (%.2f-%.2f) |", s->rate_ratio, s->rate_met ? "" : " (missed)",
                s->rate_paired.median, s->rate_paired.min, s->rate_paired.max);
        fprintf(md, " %.1f / %.1f | %.1f / %.1f |", s->p50[PAIR_RAW].median, s->p99[PAIR_RAW].median,
                s->p50[PAIR_BRIDGE].median, s->p99[PAIR_BRIDGE].median);
        fprintf(md, " **%.2f**%s; %.2f (%.2f-%.2f) |\n", s->p50_ratio, s->p50_met ? "" : " (missed)",
                s->p50_paired.median, s->p50_paired.min, s->p50_paired.max);
    }

    fprintf(md,
            "\nBoth pairs use nats.c's default options, as libqtbus-nats does. nats.c 3.4 writes a publish out from "
            "its flusher thread, which first waits 1 ms for more to send with it: that wait, not the bridge, is most "
            "of both pairs' latency (an event waits from 0 to 1 ms, by when it comes in the window). Published with "
            "natsOptions_SetSendAsap, written at once, the same events show what nats.c allows and what the bridge's "
            "import path (nats.c's callback, the bridge's queue and thread, a dispatch) adds to it:\n\n");
    fprintf(md, "| size | raw, SendAsap p50 / p99 us | SendAsap -> bridge p50 / p99 us | ratio p50 | added p50 |\n");
    fprintf(md, "| --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < count; i++) {
        const summary *s = &sums[i];
        fprintf(md, "| %s | %.1f / %.1f | %.1f / %.1f | %.2f | %.1f us |\n", size_name(rows[i].size),
                s->p50[PAIR_RAW_ASAP].median, s->p99[PAIR_RAW_ASAP].median, s->p50[PAIR_ASAP_BRIDGE].median,
                s->p99[PAIR_ASAP_BRIDGE].median, s->asap_p50_ratio,
                s->p50[PAIR_ASAP_BRIDGE].median - s->p50[PAIR_RAW_ASAP].median);
    }

    fprintf(md,
            "\nEvery run, median (min-max). Publisher calls/s: how fast the publishing calls returned "
            "(natsConnection_Publish; qtbus_dispatch with the export's publish in it), the cost the export path adds. "
            "Lost: events sent and not received, over all runs (throughput + latency); core NATS drops for a slow "
            "consumer, and the bridge drops (and reports) what exceeds its backlog bound, QTBUS_NATS_MAX_PENDING "
            "events. Out of order: events that came after a later one, which neither pair may do.\n\n");
    fprintf(md, "| size | pair | events/s | publisher calls/s | p50 us | p99 us | lost | out of order |\n");
    fprintf(md, "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < count; i++) {
        const summary *s = &sums[i];
        for (int m = 0; m < PAIR_COUNT; m++) {
            fprintf(md, "| %s | %s |", size_name(rows[i].size), pairs[m].name);
            if (pairs[m].throughput) {
                md_stat(md, s->rate[m], 0);
                md_stat(md, s->send_rate[m], 0);
            } else {
                fprintf(md, " - | - |");
            }
            md_stat(md, s->p50[m], 1);
            md_stat(md, s->p99[m], 1);
            fprintf(md, " %d + %d | %d |\n", s->total[m].lost, s->total[m].latency_lost, s->total[m].out_of_order);
        }
    }

    fprintf(md,
            "\nCPU time per event received in the throughput runs, ns, median (min-max): each process's user + "
            "system time (the publisher's from its connect to its close, the subscriber's whole life, the server's "
            "over the run). Three processes share %ld CPUs here, so the total bounds the rate as much as any one "
            "thread does.\n\n",
            sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(md, "| size | pair | publisher | server | subscriber | total |\n");
    fprintf(md, "| --- | --- | --- | --- | --- | --- |\n");
    for (int i = 0; i < count; i++) {
        const summary *s = &sums[i];
        for (int m = 0; m < PAIR_COUNT; m++) {
            if (!pairs[m].throughput) continue;
            fprintf(md, "| %s | %s |", size_name(rows[i].size), pairs[m].name);
            md_stat(md, s->cpu_pub[m], 0);
            md_stat(md, s->cpu_server[m], 0);
            md_stat(md, s->cpu_sub[m], 0);
            fprintf(md, " %.0f |\n", s->cpu_pub[m].median + s->cpu_server[m].median + s->cpu_sub[m].median);
        }
    }
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n && s[i]; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            fprintf(f, "\\%c", c);
        } else if (c < 0x20) {
            fprintf(f, "\\u%04x", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

static void json_stat(FILE *f, const char *name, stat3 s, const config *cfg, const row *w, enum pair m, field fn,
                      int decimals)
{
    fprintf(f, "\"%s\": {\"median\": %.*f, \"min\": %.*f, \"max\": %.*f, \"runs\": [", name, decimals, s.median,
            decimals, s.min, decimals, s.max);
    for (int i = 0; i < cfg->reps; i++)
        fprintf(f, "%s%.*f", i ? ", " : "", decimals, fn(&w->runs[m][i]));
    fprintf(f, "]}");
}

static void json_ratio(FILE *f, const char *name, double ratio, stat3 paired)
{
    fprintf(f, "\"%s\": %.3f, \"%s_paired\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f}", name, ratio, name,
            paired.median, paired.min, paired.max);
}

static void write_json(FILE *f, const config *cfg, const row *rows, const summary *sums, int count, bool met)
{
    fprintf(f, "{\n  \"benchmark\": \"bench-nats\",\n  \"started\": \"%s\",\n  \"smoke\": %s,\n  \"reps\": %d,\n",
            cfg->started, cfg->smoke ? "true" : "false", cfg->reps);
    fprintf(f, "  \"throughput_events\": {\"64\": %d, \"4096\": %d},\n", rows[0].throughput_count,
            rows[1].throughput_count);
    fprintf(f, "  \"latency_events\": %d, \"latency_warmup\": %d, \"latency_pace_us\": %d,\n", cfg->latency_count,
            cfg->warmup, cfg->pace_us);
    fprintf(f, "  \"targets\": {\"events_per_s_ratio_min\": %.1f, \"p50_ratio_max\": %.1f, \"met\": %s},\n",
            TARGET_RATE, TARGET_P50, met ? "true" : "false");
    fprintf(f, "  \"environment\": {\"nats_server\": ");
    json_string(f, server_version(), SIZE_MAX);
    fprintf(f, ", \"nats_c\": ");
    json_string(f, nats_GetVersion(), SIZE_MAX);
    fprintf(f, ", \"qtbus\": ");
    json_string(f, qtbus_version(), SIZE_MAX);
    fprintf(f, ", \"cpus\": %ld, \"load_1min_before\": %.2f, \"load_1min_after\": %.2f},\n",
            sysconf(_SC_NPROCESSORS_ONLN), cfg->load_before, cfg->load_after);
    fprintf(f, "  \"meta\": {");
    for (int i = 0; i < cfg->meta_count; i++) {
        const char *eq = strchr(cfg->meta[i], '=');
        fprintf(f, "%s", i ? ", " : "");
        json_string(f, cfg->meta[i], (size_t)(eq - cfg->meta[i]));
        fprintf(f, ": ");
        json_string(f, eq + 1, SIZE_MAX);
    }
    fprintf(f, "},\n  \"summary\": [\n");
    for (int i = 0; i < count; i++) {
        const summary *s = &sums[i];
        fprintf(f, "    {\"size\": %zu, ", rows[i].size);
        json_ratio(f, "events_per_s_ratio", s->rate_ratio, s->rate_paired);
        fprintf(f, ", ");
        json_ratio(f, "p50_ratio", s->p50_ratio, s->p50_paired);
        fprintf(f, ", ");
        json_ratio(f, "send_asap_p50_ratio", s->asap_p50_ratio, s->asap_p50_paired);
        fprintf(f, ", \"events_per_s_met\": %s, \"p50_met\": %s}%s\n", s->rate_met ? "true" : "false",
                s->p50_met ? "true" : "false", i + 1 < count ? "," : "");
    }
    fprintf(f, "  ],\n  \"rows\": [\n");
    for (int i = 0; i < count; i++) {
        const summary *s = &sums[i];
        const row *w = &rows[i];
        for (int m = 0; m < PAIR_COUNT; m++) {
            fprintf(f, "    {\"size\": %zu, \"pair\": \"%s\", ", w->size, pairs[m].key);
            if (pairs[m].throughput) {
                json_stat(f, "events_per_s", s->rate[m], cfg, w, (enum pair)m, f_rate, 0);
                fprintf(f, ", ");
                json_stat(f, "publisher_calls_per_s", s->send_rate[m], cfg, w, (enum pair)m, f_send_rate, 0);
                fprintf(f, ", \"cpu_ns_per_event\": {");
                json_stat(f, "publisher", s->cpu_pub[m], cfg, w, (enum pair)m, f_cpu_pub, 0);
                fprintf(f, ", ");
                json_stat(f, "server", s->cpu_server[m], cfg, w, (enum pair)m, f_cpu_server, 0);
                fprintf(f, ", ");
                json_stat(f, "subscriber", s->cpu_sub[m], cfg, w, (enum pair)m, f_cpu_sub, 0);
                fprintf(f, "}");
            } else {
                fprintf(f, "\"events_per_s\": null, \"publisher_calls_per_s\": null, \"cpu_ns_per_event\": null");
            }
            fprintf(f, ", ");
            json_stat(f, "p50_us", s->p50[m], cfg, w, (enum pair)m, f_p50, 1);
            fprintf(f, ", ");
            json_stat(f, "p99_us", s->p99[m], cfg, w, (enum pair)m, f_p99, 1);
            const totals *t = &s->total[m];
            if (pairs[m].throughput) {
                fprintf(f, ", \"lost\": %d, \"unpublished\": %d", t->lost, t->unpublished);
            } else {
                fprintf(f, ", \"lost\": null, \"unpublished\": null");
            }
            fprintf(f, ", \"latency_lost\": %d, \"out_of_order\": %d, \"pace_us\": %.1f}%s\n", t->latency_lost,
                    t->out_of_order, s->pace[m].median, i + 1 < count || m + 1 < PAIR_COUNT ? "," : "");
        }
    }
    fprintf(f, "  ]\n}\n");
}

bool report(const config *cfg, const row *rows, int count, FILE *md, FILE *json)
{
    summary sums[SIZES];
    bool met = true;
    for (int i = 0; i < count; i++) {
        sums[i] = summarize(cfg, &rows[i]);
        met = met && sums[i].rate_met && sums[i].p50_met;
    }
    print_table(cfg, rows, sums, count);
    if (md) write_md(md, cfg, rows, sums, count, met);
    if (json) write_json(json, cfg, rows, sums, count, met);
    return met;
}
