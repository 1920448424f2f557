/* SPDX-License-Identifier: MIT */
/*
 * case_trace.c -- case 8: what a trace hook costs.  qtbus_dispatch to 0, 1 and 10
 * handlers on three buses, interleaved as every case:
 *
 *   no hook          the bus as every other case measures it (tracing costs nothing
 *                    here: the A/B against a build without tracing is in the issue's
 *                    closing note, this run cannot hold two builds);
 *   DISPATCH hook    qtbus_trace_set(bus, QTBUS_TRACE_DISPATCH, ...): one record and two
 *                    clock reads per dispatch;
 *   + DELIVER hook   QTBUS_TRACE_DISPATCH | QTBUS_TRACE_DELIVER: one more record and two
 *                    more clock reads per handler.
 *
 * The hook counts its records (checked against the dispatches and handlers after every
 * repetition) and does nothing else, so the figures are the library's cost of tracing.
 */
#include "bench_c.h"

#include <qtbus.h>
#include <stdio.h>

enum { T_NONE, T_DISPATCH, T_DELIVER, NTRCOL };
static const char *const tr_head[NTRCOL] = {"no hook", "DISPATCH hook", "+ DELIVER hook"};
static const char *const tr_key[NTRCOL] = {"no_hook", "dispatch_hook", "dispatch_deliver_hook"};
static const uint32_t tr_kinds[NTRCOL] = {0, QTBUS_TRACE_DISPATCH, QTBUS_TRACE_DISPATCH | QTBUS_TRACE_DELIVER};

typedef struct {
    int kind;
    size_t handlers;
    qtbus_bus *bus;
    uint64_t records;
} tr_subject;

static void count_record(const qtbus_trace_record *record, void *userdata)
{
    (void)record;
    ((tr_subject *)userdata)->records++;
}

static double measure_traced(void *p, uint64_t n)
{
    tr_subject *s = p;
    const qtbus_event_desc desc = {.type = "BenchEvent"};
    bench_count_reset();
    s->records = 0;
    double t0 = now();
    for (uint64_t i = 0; i < n; i++)
        qtbus_dispatch(s->bus, &desc);
    double t = now() - t0;
    expect_count(tr_head[s->kind], "traced dispatch", bench_count(), n * s->handlers);
    uint64_t per = s->kind == T_NONE ? 0 : s->kind == T_DISPATCH ? 1 : 1 + s->handlers;
    expect_count(tr_head[s->kind], "trace records", s->records, n * per);
    return t;
}

static const int tr_counts[] = {0, 1, 10};
#define NTRROW 3
static row tr_rows[NTRROW];
static int tr_nrows;

void case_trace(void)
{
    static const char *ids[] = {"traced_0", "traced_1", "traced_10"};
    static const char *titles[] = {"dispatch, 0 handlers", "dispatch, 1 handler", "dispatch, 10 handlers"};
    for (int k = 0; k < NTRROW; k++) {
        row *r = &tr_rows[tr_nrows++];
        init_own_row(r, ids[k], titles[k], tr_counts[k]);
        tr_subject subj[NTRCOL];
        subject s[NCOL] = {{0}};
        for (int i = 0; i < NTRCOL; i++) {
            subj[i] = (tr_subject){.kind = i, .handlers = (size_t)tr_counts[k], .bus = qtbus_bus_create()};
            if (!subj[i].bus) bench_fail("qtbus_bus_create failed");
            for (int h = 0; h < tr_counts[k]; h++)
                if (qtbus_subscribe(subj[i].bus, "BenchEvent", NULL, h_qtbus, NULL, NULL, NULL) != QTBUS_OK)
                    bench_fail("qtbus_subscribe failed");
            if (i != T_NONE && qtbus_trace_set(subj[i].bus, tr_kinds[i], count_record, &subj[i], NULL) != QTBUS_OK)
                bench_fail("qtbus_trace_set failed: %s", qtbus_errmsg());
            s[i] = (subject){measure_traced, &subj[i], 64};
        }
        run_interleaved(r, s);
        for (int i = 0; i < NTRCOL; i++)
            qtbus_bus_destroy(subj[i].bus);
    }
}

/* Column a minus column b, the median of the per-repetition differences. */
static double tr_added(const row *r, int a, int b)
{
    const cell *x = &r->c[a], *y = &r->c[b];
    if (!x->present || !y->present || x->nrep != y->nrep) return 0;
    double v[MAXREP];
    for (int i = 0; i < x->nrep; i++)
        v[i] = x->rep[i] - y->rep[i];
    return median_of(v, x->nrep);
}

void print_trace(FILE *f, int markdown)
{
    if (tr_nrows < NTRROW) return;
    if (markdown)
        fprintf(f, "\n## Tracing: `qtbus_trace_set` hooks\n\n| case | unit |");
    else
        fprintf(f, "trace hook, median ns                             ");
    for (int i = 0; i < NTRCOL; i++)
        fprintf(f, markdown ? " %s |" : " %15s", tr_head[i]);
    if (markdown)
        fprintf(f, " added: DISPATCH | added: + DELIVER |\n|---|---|---:|---:|---:|---:|---:|\n");
    else
        fprintf(f, " %16s %17s\n", "added: DISPATCH", "added: + DELIVER");
    for (int k = 0; k < NTRROW; k++) {
        const row *r = &tr_rows[k];
        fprintf(f, markdown ? "| %s | ns |" : "%-50s", r->title);
        for (int i = 0; i < NTRCOL; i++)
            fprintf(f, markdown ? " %.1f |" : " %15.1f", r->c[i].median);
        double d = tr_added(r, T_DISPATCH, T_NONE), all = tr_added(r, T_DELIVER, T_NONE);
        fprintf(f, markdown ? " %.1f | %.1f |\n" : " %16.1f %17.1f\n", d, all);
    }
}

void write_trace_json(FILE *f) { write_own_rows_json(f, "trace_hook", tr_rows, tr_nrows, tr_key, NTRCOL); }
