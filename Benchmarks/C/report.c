/* SPDX-License-Identifier: MIT */
/*
 * report.c -- bench-c's output: tables, PERFORMANCE.md's targets, JSON, Markdown.
 */
#define _GNU_SOURCE
#include "bench_c.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- targets (PERFORMANCE.md) ---------------------------------------------------- */

typedef struct {
    const char *figure;
    const char *row_id;
    const char *target; /* for people */
    double limit;
    int at_least; /* 1: value >= limit, 0: value <= limit */
    int vs_bare;  /* the value is qtbus / bare */
} target;

static const target targets[] = {
    {"C qtbus_dispatch, 0 handlers", "dispatch_0", "<= 10 ns", 10, 0, 0},
    {"C qtbus_dispatch, 1 handler", "dispatch_1", "<= 20 ns", 20, 0, 0},
    {"C qtbus_dispatch, 10 handlers", "dispatch_10", "<= 45 ns", 45, 0, 0},
    {"C qtbus_dispatch, 100 handlers", "dispatch_100", "<= 300 ns", 300, 0, 0},
    {"C subscribe + dispose, 100 others present", "subscribe_dispose", "<= 100 ns", 100, 0, 0},
    {"2 threads dispatching to 10 handlers", "two_threads_10", ">= 1.6x one thread", 1.6, 1, 0},
    {"memory per subscription", "memory_per_subscription", "<= 96 bytes", 96, 0, 0},
    {"queued delivery through one serial queue", "queued_serial", "<= 1.5x bare libdispatch", 1.5, 0, 1},
    {"C program start-up added by linking libqtbus", "startup_added", "<= 2.6 ms", 2.6, 0, 0},
};
#define NTARGET (sizeof targets / sizeof targets[0])

static double ratio(const row *r, int col);

typedef struct {
    int known; /* 0: not measured (n/a) */
    double value;
    int met;
} target_result;

static target_result check_target(const target *t)
{
    target_result res = {0, 0, 0};
    row *r = find_row(t->row_id);
    if (!r || !r->c[C_QTBUS].present || (t->vs_bare && !r->c[C_BARE].present)) return res;
    res.known = 1;
    res.value = t->vs_bare ? ratio(r, C_BARE) : r->c[C_QTBUS].median;
    res.met = t->at_least ? res.value >= t->limit : res.value <= t->limit;
    return res;
}

/* "beat every thread-safe peer on every row": GLib and Boost.Signals2. */
static int beats(const row *r, int peer)
{
    double x = ratio(r, peer);
    if (x <= 0) return -1;
    return strcmp(r->better, "higher") == 0 ? x > 1 : x < 1;
}

/* ---- output -------------------------------------------------------------------- */

static void fmt_value(char *buf, size_t size, double v)
{
    double a = v < 0 ? -v : v;
    if (a >= 100)
        snprintf(buf, size, "%.0f", v);
    else if (a >= 10)
        snprintf(buf, size, "%.1f", v);
    else
        snprintf(buf, size, "%.2f", v);
}

/* qtbus / peer: the median of the per-repetition ratios.  Within a repetition the
 * libraries ran back to back, so each pair saw the same machine state (a neighbour's
 * load, frequency), which the pairing cancels; the ratio of the two medians would
 * mix repetitions.  0 when there is nothing to compare. */
static double ratio(const row *r, int col)
{
    const cell *q = &r->c[C_QTBUS], *p = &r->c[col];
    if (!q->present || !p->present || q->nrep != p->nrep) return 0;
    double v[MAXREP];
    for (int i = 0; i < q->nrep; i++) {
        if (p->rep[i] <= 0) return 0;
        v[i] = q->rep[i] / p->rep[i];
    }
    return median_of(v, q->nrep);
}

static void fmt_ratio(char *buf, size_t size, const row *r, int col)
{
    double x = ratio(r, col);
    if (x <= 0)
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3gx", x);
}

static const char *na_text(const cell *c) { return c->na && strncmp(c->na, "n/a", 3) == 0 ? "n/a" : "-"; }

void print_table(FILE *f, int spread)
{
    static const char *const ratio_head[NCOL] = {"",        "q/id",    "q/hpp",   "q/GLib", "q/sigc",
                                                 "q/Boost", "q/fnptr", "q/mutex", "q/bare"};
    int w = 31; /* the title column: as wide as the longest title */
    for (int k = 0; k < nrows; k++)
        if (rows[k].in_table && (int)strlen(rows[k].title) > w) w = (int)strlen(rows[k].title);
    fprintf(f, "%-*s %-10s", w, spread ? "spread: min..max" : "median of repetitions", "unit");
    for (int i = 0; i < NCOL; i++)
        fprintf(f, spread ? " %15s" : " %9s", col_head[i]);
    if (!spread)
        for (int i = 1; i < NCOL; i++)
            fprintf(f, " %7s", ratio_head[i]);
    fputc('\n', f);
    for (int k = 0; k < nrows; k++) {
        const row *r = &rows[k];
        if (!r->in_table) continue;
        fprintf(f, "%-*s %-10s", w, r->title, r->unit);
        for (int i = 0; i < NCOL; i++) {
            char v[80], lo[32], hi[32];
            if (!r->c[i].present)
                snprintf(v, sizeof v, "%s", na_text(&r->c[i]));
            else if (!spread)
                fmt_value(v, sizeof v, r->c[i].median);
            else {
                fmt_value(lo, sizeof lo, r->c[i].min);
                fmt_value(hi, sizeof hi, r->c[i].max);
                snprintf(v, sizeof v, "%s..%s", lo, hi);
            }
            fprintf(f, spread ? " %15s" : " %9s", v);
        }
        if (!spread)
            for (int i = 1; i < NCOL; i++) {
                char v[32];
                fmt_ratio(v, sizeof v, r, i);
                fprintf(f, " %7s", v);
            }
        fputc('\n', f);
    }
}

void print_targets(FILE *f, int markdown)
{
    if (markdown) fprintf(f, "| figure | target | qtbus | met |\n|---|---|---|---|\n");
    for (size_t k = 0; k < NTARGET; k++) {
        const target *t = &targets[k];
        target_result res = check_target(t);
        char v[64] = "n/a";
        if (res.known) {
            fmt_value(v, sizeof v, res.value);
            const row *r = find_row(t->row_id);
            if (t->vs_bare)
                strcat(v, "x bare");
            else
                snprintf(v + strlen(v), sizeof v - strlen(v), " %s", r->unit);
        }
        const char *met = !res.known ? "not measured" : res.met ? "met" : "NOT met";
        if (markdown)
            fprintf(f, "| %s | %s | %s | %s |\n", t->figure, t->target, v, met);
        else
            fprintf(f, "  %-46s %-26s %-16s %s\n", t->figure, t->target, v, met);
    }
    /* Beat every thread-safe peer (GLib, Boost.Signals2) on every row of the peer
     * tables (dispatch, subscribe+dispose, scaling, memory). */
    char lost[1024] = "";
    for (int k = 0; k < nrows; k++) {
        const row *r = &rows[k];
        if (!r->peer_row) continue;
        for (int peer = C_GLIB; peer <= C_BOOST; peer++) {
            if (peer == C_SIGC || beats(r, peer) != 0) continue;
            char q[32], p[32];
            fmt_value(q, sizeof q, r->c[C_QTBUS].median);
            fmt_value(p, sizeof p, r->c[peer].median);
            snprintf(lost + strlen(lost), sizeof lost - strlen(lost), "%s%s: %s vs %s %s %s (%.3gx)",
                     lost[0] ? "; " : "", r->title, q, col_head[peer], p, r->unit, ratio(r, peer));
        }
    }
    if (markdown)
        fprintf(f, "| beat GLib and Boost.Signals2 on every peer row | every row | %s | %s |\n",
                lost[0] ? lost : "beats both everywhere", lost[0] ? "NOT met" : "met");
    else {
        fprintf(f, "  %-46s %-26s %-16s %s\n", "beat GLib and Boost on every peer row", "every row",
                lost[0] ? "lost on" : "all rows", lost[0] ? "NOT met" : "met");
        if (lost[0]) fprintf(f, "      lost on: %s\n", lost);
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

void write_json(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) bench_fail("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "{\n  \"schema\": \"qtbus-bench-c/1\",\n  \"date\": ");
    json_string(f, date_utc);
    fprintf(f, ",\n  \"machine\": {\"cpu\": ");
    json_string(f, cpu_model);
    fprintf(f, ", \"cpus_online\": %ld, \"cpus_allowed\": %d, \"kernel\": ", sysconf(_SC_NPROCESSORS_ONLN), opt.ncpus);
    json_string(f, kernel);
    fprintf(f, ", \"loadavg_start\": %.2f, \"other_cpu_use_cores\": %.3f},\n", load_start, other_cpu_share);
    fprintf(f, "  \"compilers\": {\"cc\": ");
    json_string(f, cc_version());
    fprintf(f, ", \"cxx\": ");
    json_string(f, bench_cxx_compiler());
    fprintf(f, ", \"flags\": \"-O2\"},\n  \"meta\": {");
    for (int i = 0; i < opt.nmeta; i++) {
        fprintf(f, "%s", i ? ", " : "");
        json_string(f, opt.meta_key[i]);
        fprintf(f, ": ");
        json_string(f, opt.meta_value[i]);
    }
    fprintf(f,
            "},\n  \"method\": {\"repetitions\": %d, \"min_repetition_seconds\": %.3f, "
            "\"interleaved\": true, \"statistic\": \"median\", \"memory_subscriptions\": %zu, "
            "\"startup_spawns_per_repetition\": %d, \"smoke\": %s},\n",
            opt.reps, opt.rep_seconds, opt.mem_subs, opt.startup_runs, opt.smoke ? "true" : "false");
    fprintf(f, "  \"libraries\": [\n");
    for (int i = 0; i < NCOL; i++) {
        fprintf(f, "    {\"key\": \"%s\", \"name\": ", col_key[i]);
        json_string(f, col_long[i]);
        fprintf(f, ", \"version\": ");
        json_string(f, i < NLIB ? libs[i]->version() : "-");
        fprintf(f, "}%s\n", i + 1 < NCOL ? "," : "");
    }
    fprintf(f, "  ],\n  \"cases\": [\n");
    for (int k = 0; k < nrows; k++) {
        const row *r = &rows[k];
        fprintf(f, "    {\"id\": \"%s\", \"title\": ", r->id);
        json_string(f, r->title);
        fprintf(f, ", \"unit\": \"%s\", \"better\": \"%s\"", r->unit, r->better);
        if (r->handlers >= 0) fprintf(f, ", \"handlers\": %d", r->handlers);
        fprintf(f, ",\n     \"results\": {");
        for (int i = 0, first = 1; i < NCOL; i++) {
            const cell *c = &r->c[i];
            if (!c->present && !c->na) continue;
            fprintf(f, "%s\n       \"%s\": ", first ? "" : ",", col_key[i]);
            first = 0;
            if (!c->present) {
                fprintf(f, "{\"na\": ");
                json_string(f, c->na);
                fprintf(f, "}");
                continue;
            }
            fprintf(f,
                    "{\"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"operations_per_repetition\": %llu, "
                    "\"repetitions\": [",
                    c->median, c->min, c->max, (unsigned long long)c->iters);
            for (int j = 0; j < c->nrep; j++)
                fprintf(f, "%s%.6g", j ? ", " : "", c->rep[j]);
            fprintf(f, "]}");
        }
        fprintf(f, "},\n     \"ratio_qtbus_over\": {");
        for (int i = 1, first = 1; i < NCOL; i++) {
            double x = ratio(r, i);
            if (x <= 0) continue;
            fprintf(f, "%s\"%s\": %.4g", first ? "" : ", ", col_key[i], x);
            first = 0;
        }
        fprintf(f, "}}%s\n", k + 1 < nrows ? "," : "");
    }
    fprintf(f, "  ],\n  ");
    write_signals_json(f);
    fprintf(f, ",\n  ");
    write_trace_json(f);
    fprintf(f, ",\n  ");
    write_growth_json(f);
    fprintf(f, ",\n  ");
    write_flood_json(f);
    fprintf(f, ",\n  ");
    write_patterns_json(f);
    fprintf(f, ",\n  \"targets\": [\n");
    for (size_t k = 0; k < NTARGET; k++) {
        target_result res = check_target(&targets[k]);
        fprintf(f, "    {\"figure\": ");
        json_string(f, targets[k].figure);
        fprintf(f, ", \"case\": \"%s\", \"target\": ", targets[k].row_id);
        json_string(f, targets[k].target);
        if (res.known)
            fprintf(f, ", \"value\": %.4g, \"met\": %s}", res.value, res.met ? "true" : "false");
        else
            fprintf(f, ", \"value\": null, \"met\": null}");
        fprintf(f, "%s\n", k + 1 < NTARGET ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    if (fclose(f) != 0) bench_fail("cannot write %s", path);
}

void write_md(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) bench_fail("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "# qtbus C benchmark\n\n"
               "Why qtbus and not GLib signals, libsigc++ or Boost.Signals2: the same cases measured "
               "side by side in one run. Reproduce on your machine with `scripts/bench.sh` (about a "
               "minute on an idle machine; installs the peers from Debian packages, rewrites this "
               "file, bench-c.json and bench-c.png); `scripts/bench.sh --smoke` checks every case in "
               "seconds. Method and code: `Benchmarks/C/`.\n\n");
    fprintf(f,
            "Generated by `scripts/bench.sh` on %s. Machine: %s, %d CPUs allowed, %s; "
            "other programs used %.0f%% of one CPU during the run.  \n",
            date_utc, cpu_model, opt.ncpus, kernel, other_cpu_share * 100);
    fprintf(f, "Compilers: %s (C), %s (C++), both `-O2`", cc_version(), bench_cxx_compiler());
    for (int i = 0; i < opt.nmeta; i++)
        fprintf(f, "; %s: %s", opt.meta_key[i], opt.meta_value[i]);
    fprintf(f, ".  \nLibraries: ");
    static const int peers[] = {C_QTBUS, C_GLIB, C_SIGC, C_BOOST};
    for (int i = 0; i < 4; i++)
        fprintf(f, "%s%s %s", i ? ", " : "", col_head[peers[i]], libs[peers[i]]->version());
    fprintf(f, ".\n\n");
    fprintf(f,
            "Median of %d repetitions (each >= %.0f ms, libraries interleaved round-robin), "
            "with min-max in parentheses; `q/X` is qtbus over X: the median of the per-repetition "
            "ratios (each pair ran back to back, so the machine's drift cancels). Lower is better "
            "except on the scaling row (aggregate rate of two threads over one thread's). "
            "Absolute figures move between runs and machines; compare the ratios within one run.\n\n",
            opt.reps, opt.rep_seconds * 1e3);
    fprintf(f, "| case | unit |");
    for (int i = 0; i < NCOL; i++)
        fprintf(f, " %s |", col_head[i]);
    for (int i = 1; i < NCOL; i++)
        fprintf(f, " q/%s |", col_head[i]);
    fprintf(f, "\n|---|---|");
    for (int i = 1; i < NCOL * 2; i++)
        fprintf(f, "---:|");
    fprintf(f, "\n");
    for (int k = 0; k < nrows; k++) {
        const row *r = &rows[k];
        if (!r->in_table) continue;
        fprintf(f, "| %s | %s |", r->title, r->unit);
        for (int i = 0; i < NCOL; i++) {
            const cell *c = &r->c[i];
            char m[32], lo[32], hi[32];
            if (!c->present) {
                fprintf(f, " %s |", na_text(c));
                continue;
            }
            fmt_value(m, sizeof m, c->median);
            fmt_value(lo, sizeof lo, c->min);
            fmt_value(hi, sizeof hi, c->max);
            fprintf(f, " %s%s%s (%s-%s) |", i == C_QTBUS ? "**" : "", m, i == C_QTBUS ? "**" : "", lo, hi);
        }
        for (int i = 1; i < NCOL; i++) {
            char v[32];
            fmt_ratio(v, sizeof v, r, i);
            fprintf(f, " %s |", v);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "\nColumns: ");
    for (int i = 0; i < NCOL; i++)
        fprintf(f, "%s**%s**: %s", i ? "; " : "", col_head[i], col_long[i]);
    fprintf(f,
            ".\n\n"
            "Cases: dispatch = one emission to N handlers that each increment a counter "
            "(qtbus: `qtbus_dispatch` on an isolated bus, type given as a string literal); "
            "subscribe+dispose = connect and disconnect one handler while 100 others stay; "
            "scaling = two threads on two CPUs dispatching the same signal to 10 handlers, "
            "their aggregate rate over one thread's (n/a: not thread-safe, or fewer than 2 CPUs); "
            "memory = RSS growth per subscription over %zu subscriptions, each library in a fresh process "
            "(the heap figure from mallinfo2 is in bench-c.json); with a subtype (qtbus): the same "
            "subscriptions each naming one subtype, the same for all or one of its own each "
            "(then each also adds the subtype's entry); "
            "queued = N dispatches to one handler on a serial queue, until it has counted N "
            "(bare: `dispatch_async_f` to a serial libdispatch queue), as a burst (a gate item "
            "holds the queue until all N are posted: the cost per item without a thread wake-up "
            "per item; PERFORMANCE.md's target is checked on this row) and as a stream (the "
            "queue runs meanwhile; swings with whether its thread sleeps between items); "
            "queued, bounded = the same with the qtbus queue bounded to 1024 deliveries, "
            "`QTBUS_OVERFLOW_BLOCK` (the burst in chunks of 1023 behind a gate each, the bare "
            "column's too); fn-ptr on the queued rows = a plain single-producer single-consumer "
            "ring of 1024 slots (batched consumer sleeping on a futex), the limit of what a "
            "queue can cost, its bursts in chunks of 1023; "
            "start-up = `posix_spawn` + wait of a program that links the library and calls it "
            "once (libsigc++ and Boost: C++ programs), median of %d spawns per repetition.\n\n",
            opt.mem_subs, opt.startup_runs);
    print_signals(f, 1);
    print_trace(f, 1);
    print_growth(f, 1);
    print_flood(f, 1);
    print_patterns(f, 1);
    fprintf(f, "\n");
    fprintf(f, "![ns per dispatch against handler count](bench-c.png)\n\n");
    fprintf(f, "## Targets of PERFORMANCE.md in this run\n\n");
    print_targets(f, 1);
    fprintf(f, "\nMachine-readable results: [bench-c.json](bench-c.json).\n");
    if (fclose(f) != 0) bench_fail("cannot write %s", path);
}
