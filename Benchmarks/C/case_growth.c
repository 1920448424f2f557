/* SPDX-License-Identifier: MIT */
/*
 * case_growth.c -- case 9: costs that grow with the work, so that a user sees nothing
 * is worse than O(handlers reached).  Each row is one operation that reaches at most
 * one handler, measured on buses holding ever more of something else:
 *
 *   N types                 the bus has N types, each with one subscription; dispatch
 *                           to one of them (1 handler), and subscribe + dispose on it;
 *   N subtypes              the type has N subtypes, each with one subscription;
 *                           dispatch with one of them (1 handler), and subscribe +
 *                           dispose with it (the subscribe-with-a-subtype row beside the
 *                           plain one of the first table);
 *   N subscriptions         the type has N subscriptions on one subtype; dispatch with
 *                           another subtype (0 handlers: the N are never walked).
 *
 * N = 1, 10, 100, 1,000, 10,000, 100,000; the columns of one row are interleaved as the
 * libraries of every other case are.  qtbus only: its own table.
 */
#include "bench_c.h"

#include <qtbus.h>
#include <stdio.h>
#include <stdlib.h>

enum { G_TYPES_DISPATCH, G_TYPES_SUBSCRIBE, G_SUBTYPES_DISPATCH, G_SUBTYPES_SUBSCRIBE, G_SUBS_MISS, NGROW };
#define NSIZE 6
static const size_t sizes[NSIZE] = {1, 10, 100, 1000, 10000, 100000};
static const char *const size_key[NSIZE] = {"1", "10", "100", "1000", "10000", "100000"};
static const char *const grow_id[NGROW] = {"types_dispatch", "types_subscribe", "subtypes_dispatch",
                                           "subtypes_subscribe", "subscriptions_miss"};
static const char *const grow_title[NGROW] = {
    "dispatch to 1 handler, N types", "subscribe + dispose, N types", "dispatch with a subtype, N subtypes",
    "subscribe + dispose with a subtype, N subtypes", "dispatch, other subtype: N subscriptions, 0 reached"};

typedef struct {
    int kind;
    qtbus_bus *bus;
} gr_subject;

static double measure_growth(void *p, uint64_t n)
{
    gr_subject *s = p;
    static const char *const s0[1] = {"s0"};
    const qtbus_sub_options with_s0 = {.subtypes = s0, .subtype_count = 1};
    const qtbus_event_desc plain = {.type = "BenchEvent"}, to_s0 = {.type = "BenchEvent", .subtype = "s0"},
                           elsewhere = {.type = "BenchEvent", .subtype = "other"};
    int bad = 0;
    bench_count_reset();
    double t0 = now();
    switch (s->kind) {
    case G_TYPES_DISPATCH:
        for (uint64_t i = 0; i < n; i++)
            qtbus_dispatch(s->bus, &plain);
        break;
    case G_SUBTYPES_DISPATCH:
        for (uint64_t i = 0; i < n; i++)
            qtbus_dispatch(s->bus, &to_s0);
        break;
    case G_SUBS_MISS:
        for (uint64_t i = 0; i < n; i++)
            qtbus_dispatch(s->bus, &elsewhere);
        break;
    default:
        for (uint64_t i = 0; i < n; i++) {
            qtbus_token token;
            bad |= qtbus_subscribe(s->bus, "BenchEvent", s->kind == G_TYPES_SUBSCRIBE ? NULL : &with_s0, h_qtbus, NULL,
                                   NULL, &token);
            bad |= qtbus_token_dispose(token);
        }
    }
    double t = now() - t0;
    if (bad) bench_fail("growth: subscribe/dispose failed");
    uint64_t reached = s->kind == G_TYPES_DISPATCH || s->kind == G_SUBTYPES_DISPATCH ? n : 0;
    expect_count("qtbus", grow_title[s->kind], bench_count(), reached);
    return t;
}

/* A bus holding `size` of what `kind` grows. */
static qtbus_bus *make_bus(int kind, size_t size)
{
    qtbus_bus *bus = qtbus_bus_create();
    if (!bus) bench_fail("qtbus_bus_create failed");
    char name[32];
    int bad = 0;
    for (size_t i = 0; i < size; i++) {
        if (kind == G_TYPES_DISPATCH || kind == G_TYPES_SUBSCRIBE) {
            /* The measured type is one of the N. */
            snprintf(name, sizeof name, i == 0 ? "BenchEvent" : "Type%zu", i);
            if (i > 0 || kind == G_TYPES_DISPATCH) bad |= qtbus_subscribe(bus, name, NULL, h_qtbus, NULL, NULL, NULL);
        } else {
            snprintf(name, sizeof name, kind == G_SUBS_MISS ? "s0" : "s%zu", i);
            const char *const subtype[1] = {name};
            const qtbus_sub_options o = {.subtypes = subtype, .subtype_count = 1};
            if (i > 0 || kind != G_SUBTYPES_SUBSCRIBE)
                bad |= qtbus_subscribe(bus, "BenchEvent", &o, h_qtbus, NULL, NULL, NULL);
        }
    }
    if (bad) bench_fail("growth: qtbus_subscribe failed while filling a bus");
    return bus;
}

static row gr_rows[NGROW];
static int gr_nrows;

void case_growth(void)
{
    for (int k = 0; k < NGROW; k++) {
        row *r = &gr_rows[gr_nrows++];
        init_own_row(r, grow_id[k], grow_title[k], k == G_TYPES_DISPATCH || k == G_SUBTYPES_DISPATCH ? 1 : 0);
        gr_subject subj[NSIZE];
        subject s[NCOL] = {{0}};
        for (int i = 0; i < NSIZE; i++) {
            size_t size = opt.smoke && sizes[i] > 1000 ? 1000 : sizes[i];
            subj[i] = (gr_subject){.kind = k, .bus = make_bus(k, size)};
            s[i] = (subject){measure_growth, &subj[i], 64};
        }
        run_interleaved(r, s);
        for (int i = 0; i < NSIZE; i++)
            qtbus_bus_destroy(subj[i].bus);
    }
}

void print_growth(FILE *f, int markdown)
{
    if (gr_nrows < NGROW) return;
    if (markdown)
        fprintf(f, "\n## Costs that grow with the work (qtbus, ns per operation, N =)\n\n| operation |");
    else
        fprintf(f, "growth, median ns, N =                            ");
    for (int i = 0; i < NSIZE; i++)
        fprintf(f, markdown ? " %s |" : " %9s", size_key[i]);
    if (markdown) {
        fprintf(f, "\n|---|");
        for (int i = 0; i < NSIZE; i++)
            fprintf(f, "---:|");
    }
    fputc('\n', f);
    for (int k = 0; k < NGROW; k++) {
        const row *r = &gr_rows[k];
        fprintf(f, markdown ? "| %s |" : "%-50s", r->title);
        for (int i = 0; i < NSIZE; i++)
            fprintf(f, markdown ? " %.1f |" : " %9.1f", r->c[i].median);
        fputc('\n', f);
    }
}

void write_growth_json(FILE *f) { write_own_rows_json(f, "growth", gr_rows, gr_nrows, size_key, NSIZE); }
