/* SPDX-License-Identifier: MIT */
/*
 * case_patterns.c -- case 11: what pattern subscriptions (QTBUS_SUB_PATTERN, NATS-style
 * "*" and ">" over dotted names) cost, against the literal subscriptions beside them.
 * qtbus only: its own table.  Each row's columns are measured interleaved, as the
 * libraries of every other case are (ns per operation):
 *
 *   unmatched   dispatch of "Tick" to its 1 literal handler on a bus that also has N
 *               pattern subscriptions none of which match ("Other<i>.*", one each),
 *               N = 0 (the literal path: the bus never had a pattern), 10, 1000: what
 *               a bus pays for patterns it does not use;
 *   reach       dispatch reaching 1 literal subscription ("Order.created") beside one
 *               reaching 1 pattern subscription ("Order.*", the only subscription of
 *               the bus), and 10 literal subscriptions of "Order.eu.created" beside 10
 *               different patterns that all match it ("Order.eu.*", "Order.*.created",
 *               "*.eu.created", "Order.*.*", "*.*.created", "*.*.*", "Order.>",
 *               "Order.eu.>", "*.>", ">"; a 3-token type, since at most 7 patterns
 *               match a 2-token one), one subscription each.  The type's kept list of
 *               the patterns it reaches is current: the cache's hit;
 *   subscribe   subscribe + dispose of one subscription: literal, with 100 others on the
 *               type; pattern ("Order.*"), with 100 others on the pattern; pattern
 *               ("Order.*"), with 99 other patterns present ("P<i>.*", one subscription
 *               each);
 *   new         the cache's miss.  A new pattern entry makes the kept list of every
 *               type stale, and the type's next dispatch matches it against every
 *               pattern entry of the bus again.  Measured as: subscribe a pattern of a
 *               new text ("New<j>.*", matching nothing dispatched) beside the same
 *               subscribe followed by a dispatch of "Order.created" (1 handler, on
 *               "Order.*"); the third column is their difference per repetition (the
 *               columns ran back to back): the first dispatch after a new pattern, to
 *               compare with the hit of the reach row's "1 pattern".  A pattern entry
 *               lives as long as its bus, so the entries would pile up (each
 *               subscribe and each miss is linear in them): a fresh bus, holding only
 *               "Order.*" and its dispatched type, takes every 10 new patterns (2 to 11
 *               pattern entries at each dispatch); making and destroying it is not
 *               timed.
 *   new, 1000   the same with 1,000 pattern entries present: the fresh bus also holds
 *               "P<i>.*" (0 < i < 1000, one subscription each), and takes 100 new patterns
 *               (1,001 to 1,100 entries at each dispatch): what a subscribe of a new
 *               pattern text and a miss cost on a bus with many patterns.
 *   memory      bytes per pattern subscription, RSS and heap (mallinfo2) growth over
 *               100,000 (--smoke: 2,000) pattern subscriptions, in a fresh process per
 *               repetition (bench-c --child-mem pattern-same|pattern-distinct N): all on
 *               "Order.*", and on N/100 distinct patterns ("P<k>.*") x 100 (the pattern
 *               entries included).  The caller's token array and first-use allocations
 *               are not counted, as in the memory case.
 *
 * After every repetition the handler calls are counted and the run aborts if the count
 * is not the expected one.
 */
#include "bench_c.h"

#include <qtbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { P_UNMATCHED, P_REACH, P_SUBSCRIBE, P_NEW, P_NEW_1000, P_MEMORY, NPROW };
#define PCOL 4 /* the most columns of a row */
#define NEW_PER_BUS 10
#define NEW_PER_BUS_1000 100
#define PRESENT_1000 1000

typedef struct {
    const char *id, *title;
    int ncol;
    const char *key[PCOL], *head[PCOL];
} prow_desc;

static prow_desc pdesc[NPROW] = {
    {"dispatch_unmatched",
     "dispatch to 1 literal handler, N patterns matching none",
     3,
     {"0", "10", "1000"},
     {"N = 0", "N = 10", "N = 1000"}},
    {"dispatch_reach",
     "dispatch reaching literal / pattern subscriptions",
     4,
     {"literal_1", "pattern_1", "literal_10", "patterns_10"},
     {"1 literal", "1 pattern", "10 literal", "10 patterns"}},
    {"subscribe_dispose",
     "subscribe + dispose, 100 present",
     3,
     {"literal", "pattern", "pattern_100_patterns"},
     {"literal, 100 on the type", "pattern, 100 on the pattern", "pattern, 100 patterns"}},
    {"new_pattern",
     "a new pattern, then the first dispatch (miss)",
     3,
     {"subscribe", "subscribe_dispatch", "miss"},
     {"subscribe new", "subscribe new + dispatch", "the miss (difference)"}},
    {"new_pattern_1000",
     "the same, 1,000 patterns present",
     3,
     {"subscribe", "subscribe_dispatch", "miss"},
     {"subscribe new", "subscribe new + dispatch", "the miss (difference)"}},
    {"memory_bytes",
     "memory per pattern subscription",
     4,
     {"same_rss", "same_heap", "distinct_rss", "distinct_heap"},
     {"1 pattern, RSS", "1 pattern, heap", NULL, NULL}}, /* case_patterns() names the last two */
};

static row pt_rows[NPROW];
static int pt_nrows;

/* ---- the measured operations ----------------------------------------------------- */

enum { K_DISPATCH, K_SUB_DISPOSE, K_NEW, K_NEW_DISPATCH };

typedef struct {
    int kind;
    qtbus_bus *bus;    /* K_DISPATCH, K_SUB_DISPOSE */
    const char *type;  /* dispatched; subscribed to by K_SUB_DISPOSE */
    uint32_t flags;    /* K_SUB_DISPOSE: QTBUS_SUB_PATTERN or 0 */
    const char *probe; /* K_SUB_DISPOSE: the type dispatched once after, to count */
    uint64_t reach;    /* handlers per dispatch (of `probe` for K_SUB_DISPOSE) */
    const char *what;
    int present; /* K_NEW, K_NEW_DISPATCH: pattern entries on each fresh bus */
} pt_subject;

static char new_names[NEW_PER_BUS_1000][16]; /* "New<j>.*" */

static void must(int rc, const char *what)
{
    if (rc != QTBUS_OK) bench_fail("patterns: %s: %s", what, qtbus_strerror(rc));
}

static void sub(qtbus_bus *bus, const char *type, uint32_t flags)
{
    const qtbus_sub_options o = {.flags = flags};
    must(qtbus_subscribe(bus, type, &o, h_qtbus, NULL, NULL, NULL), type);
}

static qtbus_bus *new_bus(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    if (!bus) bench_fail("qtbus_bus_create failed");
    return bus;
}

/* n subscribes of new patterns (and dispatches), NEW_PER_BUS (with 1,000 present:
 * NEW_PER_BUS_1000) per fresh bus. */
static double measure_new(pt_subject *s, uint64_t n)
{
    const qtbus_event_desc ev = {.type = "Order.created"};
    const qtbus_sub_options pattern = {.flags = QTBUS_SUB_PATTERN};
    int dispatch = s->kind == K_NEW_DISPATCH, bad = 0;
    uint64_t done = 0, buses = 0, per_bus = s->present > 1 ? NEW_PER_BUS_1000 : NEW_PER_BUS;
    int64_t reached = 0;
    double t = 0;
    char name[32];
    bench_count_reset();
    while (done < n) {
        qtbus_bus *bus = new_bus();
        sub(bus, "Order.*", QTBUS_SUB_PATTERN);
        for (int i = 1; i < s->present; i++) {
            snprintf(name, sizeof name, "P%d.*", i);
            sub(bus, name, QTBUS_SUB_PATTERN);
        }
        if (qtbus_dispatch(bus, &ev) != 1) /* the type's entry and its kept list: current */
            bench_fail("patterns: the warm-up dispatch did not reach 1");
        buses++;
        uint64_t m = n - done < per_bus ? n - done : per_bus;
        double t0 = now();
        if (dispatch)
            for (uint64_t j = 0; j < m; j++) {
                bad |= qtbus_subscribe(bus, new_names[j], &pattern, h_qtbus, NULL, NULL, NULL);
                reached += qtbus_dispatch(bus, &ev);
            }
        else
            for (uint64_t j = 0; j < m; j++)
                bad |= qtbus_subscribe(bus, new_names[j], &pattern, h_qtbus, NULL, NULL, NULL);
        t += now() - t0;
        qtbus_bus_destroy(bus);
        done += m;
    }
    if (bad) bench_fail("patterns: subscribing a new pattern failed");
    if (reached != (int64_t)(dispatch ? n : 0))
        bench_fail("patterns: the dispatches after a new pattern reached %lld, expected %llu", (long long)reached,
                   (unsigned long long)(dispatch ? n : 0));
    expect_count("qtbus", s->what, bench_count(), (dispatch ? n : 0) + buses);
    return t;
}

static double measure_patterns(void *p, uint64_t n)
{
    pt_subject *s = p;
    if (s->kind == K_NEW || s->kind == K_NEW_DISPATCH) return measure_new(s, n);
    const qtbus_event_desc ev = {.type = s->type};
    const qtbus_sub_options o = {.flags = s->flags};
    int bad = 0;
    int64_t reached = 0;
    bench_count_reset();
    double t0 = now();
    if (s->kind == K_DISPATCH)
        for (uint64_t i = 0; i < n; i++)
            reached += qtbus_dispatch(s->bus, &ev);
    else
        for (uint64_t i = 0; i < n; i++) {
            qtbus_token token;
            bad |= qtbus_subscribe(s->bus, s->type, &o, h_qtbus, NULL, NULL, &token);
            bad |= qtbus_token_dispose(token);
        }
    double t = now() - t0;
    if (bad) bench_fail("patterns, %s: subscribe/dispose failed", s->what);
    if (s->kind == K_SUB_DISPOSE) {
        /* Exactly the others are left: the disposed ones are gone. */
        const qtbus_event_desc probe = {.type = s->probe};
        reached = qtbus_dispatch(s->bus, &probe);
        n = 1;
    }
    if (reached != (int64_t)(n * s->reach))
        bench_fail("patterns, %s: qtbus_dispatch reported %lld deliveries, expected %llu", s->what, (long long)reached,
                   (unsigned long long)(n * s->reach));
    expect_count("qtbus", s->what, bench_count(), n * s->reach);
    return t;
}

/* ---- the buses ---------------------------------------------------------------------- */

static void fill_unmatched(qtbus_bus *bus, int n)
{
    char name[32];
    sub(bus, "Tick", 0);
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "Other%d.*", i);
        sub(bus, name, QTBUS_SUB_PATTERN);
    }
}

static const char *const ten_patterns[10] = {
    "Order.eu.*", "Order.*.created", "*.eu.created", "Order.*.*", "*.*.created",
    "*.*.*",      "Order.>",         "Order.eu.>",   "*.>",       ">"};

static void run_row(int k, pt_subject subj[PCOL])
{
    row *r = &pt_rows[k];
    subject s[NCOL] = {{0}};
    for (int i = 0; i < pdesc[k].ncol; i++)
        if (subj[i].what) s[i] = (subject){measure_patterns, &subj[i], 64};
    run_interleaved(r, s);
}

void case_patterns(void)
{
    pt_nrows = 0;
    for (int k = 0; k < NPROW; k++)
        init_own_row(&pt_rows[k], pdesc[k].id, pdesc[k].title, -1);
    pt_rows[P_MEMORY].unit = "bytes";
    static char distinct_rss[48], distinct_heap[48];
    snprintf(distinct_rss, sizeof distinct_rss, "%zu patterns x 100, RSS", opt.mem_subs / 100);
    snprintf(distinct_heap, sizeof distinct_heap, "%zu patterns x 100, heap", opt.mem_subs / 100);
    pdesc[P_MEMORY].head[2] = distinct_rss;
    pdesc[P_MEMORY].head[3] = distinct_heap;
    for (int j = 0; j < NEW_PER_BUS_1000; j++)
        snprintf(new_names[j], sizeof new_names[j], "New%d.*", j);

    /* 1. Unmatched patterns. */
    {
        static const int counts[3] = {0, 10, 1000};
        pt_subject subj[PCOL] = {{0}};
        for (int i = 0; i < 3; i++) {
            subj[i] = (pt_subject){K_DISPATCH, new_bus(), "Tick", 0, NULL, 1, "dispatch, N unmatched patterns"};
            fill_unmatched(subj[i].bus, counts[i]);
        }
        run_row(P_UNMATCHED, subj);
        for (int i = 0; i < 3; i++)
            qtbus_bus_destroy(subj[i].bus);
    }
    /* 2. Reaching literal or pattern subscriptions. */
    {
        pt_subject subj[PCOL] = {
            {K_DISPATCH, new_bus(), "Order.created", 0, NULL, 1, "dispatch reaching 1 literal"},
            {K_DISPATCH, new_bus(), "Order.created", 0, NULL, 1, "dispatch reaching 1 pattern"},
            {K_DISPATCH, new_bus(), "Order.eu.created", 0, NULL, 10, "dispatch reaching 10 literal"},
            {K_DISPATCH, new_bus(), "Order.eu.created", 0, NULL, 10, "dispatch reaching 10 patterns"},
        };
        sub(subj[0].bus, "Order.created", 0);
        sub(subj[1].bus, "Order.*", QTBUS_SUB_PATTERN);
        for (int i = 0; i < 10; i++) {
            sub(subj[2].bus, "Order.eu.created", 0);
            sub(subj[3].bus, ten_patterns[i], QTBUS_SUB_PATTERN);
        }
        run_row(P_REACH, subj);
        for (int i = 0; i < 4; i++)
            qtbus_bus_destroy(subj[i].bus);
    }
    /* 3. Subscribe + dispose with 100 present. */
    {
        pt_subject subj[PCOL] = {
            {K_SUB_DISPOSE, new_bus(), "Order.created", 0, "Order.created", 100, "literal subscribe + dispose"},
            {K_SUB_DISPOSE, new_bus(), "Order.*", QTBUS_SUB_PATTERN, "Order.created", 100,
             "pattern subscribe + dispose"},
            {K_SUB_DISPOSE, new_bus(), "Order.*", QTBUS_SUB_PATTERN, "Order.created", 1,
             "pattern subscribe + dispose, 100 patterns"},
        };
        char name[32];
        for (int i = 0; i < 100; i++) {
            sub(subj[0].bus, "Order.created", 0);
            sub(subj[1].bus, "Order.*", QTBUS_SUB_PATTERN);
            snprintf(name, sizeof name, "P%d.*", i);
            sub(subj[2].bus, i == 0 ? "Order.*" : name, QTBUS_SUB_PATTERN);
        }
        run_row(P_SUBSCRIBE, subj);
        for (int i = 0; i < 3; i++)
            qtbus_bus_destroy(subj[i].bus);
    }
    /* 4. The miss: a new pattern, then a dispatch; with 1 and with 1,000 present. */
    for (int k = P_NEW; k <= P_NEW_1000; k++) {
        int present = k == P_NEW ? 1 : PRESENT_1000;
        pt_subject subj[PCOL] = {
            {K_NEW, NULL, NULL, 0, NULL, 0, "subscribe a new pattern", present},
            {K_NEW_DISPATCH, NULL, NULL, 0, NULL, 1, "subscribe a new pattern + dispatch", present},
        };
        run_row(k, subj);
        cell *a = &pt_rows[k].c[0], *b = &pt_rows[k].c[1], *d = &pt_rows[k].c[2];
        for (int i = 0; i < a->nrep && i < b->nrep; i++)
            d->rep[d->nrep++] = b->rep[i] - a->rep[i];
        finish(d);
    }
    /* 5. Memory, in a fresh process per repetition. */
    {
        row *r = &pt_rows[P_MEMORY];
        for (int rep = 0; rep < opt.reps; rep++)
            for (int i = 0; i < 2; i++) {
                double rss, heap;
                mem_child(i ? "pattern-distinct" : "pattern-same", "qtbus (patterns)", &rss, &heap);
                r->c[2 * i].rep[r->c[2 * i].nrep++] = rss;
                r->c[2 * i + 1].rep[r->c[2 * i + 1].nrep++] = heap;
                r->c[2 * i].iters = r->c[2 * i + 1].iters = opt.mem_subs;
            }
        for (int i = 0; i < 4; i++)
            finish(&r->c[i]);
    }
    pt_nrows = NPROW;
}

/* ---- the memory child ------------------------------------------------------------- */

int child_pattern_mem(const char *key, size_t n, double rss(void))
{
    int distinct = strcmp(key, "pattern-distinct") == 0;
    if (!distinct && strcmp(key, "pattern-same") != 0) {
        fprintf(stderr, "bench-c: unknown memory case %s\n", key);
        return 2;
    }
    size_t per = distinct ? 100 : n, npat = distinct ? n / 100 : 1;
    if (distinct && (n % 100 || n == 0)) bench_fail("patterns: %zu subscriptions is not a multiple of 100", n);
    qtbus_bus *bus = new_bus();
    /* The caller's storage, made and touched before measuring. */
    qtbus_token *tokens = calloc(n, sizeof *tokens);
    char(*names)[24] = malloc(npat * sizeof *names);
    if (!tokens || !names) bench_fail("patterns: out of memory");
    for (size_t k = 0; k < npat; k++)
        if (distinct)
            snprintf(names[k], sizeof names[k], "P%zu.*", k);
        else
            snprintf(names[k], sizeof names[k], "Order.*");
    /* First use (a pattern entry, the pattern list, the pool's first chunk) is not counted. */
    const qtbus_sub_options pattern = {.flags = QTBUS_SUB_PATTERN};
    for (int i = 0; i < 16; i++) {
        qtbus_token t;
        must(qtbus_subscribe(bus, "Warm.*", &pattern, h_qtbus, NULL, NULL, &t), "warm-up subscribe");
        must(qtbus_token_dispose(t), "warm-up dispose");
    }
    double rss0 = rss(), heap0 = bench_heap_bytes();
    for (size_t k = 0, i = 0; k < npat; k++)
        for (size_t j = 0; j < per; j++, i++)
            must(qtbus_subscribe(bus, names[k], &pattern, h_qtbus, NULL, NULL, &tokens[i]), "subscribe");
    double rss1 = rss(), heap1 = bench_heap_bytes();
    /* Each subscription is reached once by a type its pattern matches. */
    int64_t reached = 0;
    char type[32];
    bench_count_reset();
    for (size_t k = 0; k < npat; k++) {
        if (distinct) snprintf(type, sizeof type, "P%zu.x", k);
        const qtbus_event_desc ev = {.type = distinct ? type : "Order.created"};
        reached += qtbus_dispatch(bus, &ev);
    }
    if (reached != (int64_t)n)
        bench_fail("patterns: the dispatches reached %lld of %zu pattern subscriptions", (long long)reached, n);
    expect_count("qtbus", "memory per pattern subscription", bench_count(), n);
    printf("%.3f %.3f\n", (rss1 - rss0) / (double)n, (heap1 - heap0) / (double)n);
    qtbus_bus_destroy(bus);
    free(names);
    free(tokens);
    return 0;
}

/* ---- output ----------------------------------------------------------------------- */

void print_patterns(FILE *f, int markdown)
{
    if (pt_nrows < NPROW) return;
    if (markdown) {
        fprintf(f,
                "\n## Pattern subscriptions (qtbus, ns per operation; memory in bytes)\n\n"
                "Each row's columns ran interleaved; median of %d repetitions. "
                "\"a new pattern\": subscribing a pattern of a new text makes every type's kept list of "
                "the patterns it reaches stale, so the next dispatch matches again; the miss is "
                "\"subscribe new + dispatch\" less \"subscribe new\" (per repetition), to compare with "
                "\"1 pattern\" of the row above it (the hit); a fresh bus every %d new patterns (every %d "
                "beside %d present). "
                "Memory: %zu pattern subscriptions in a fresh process, all on one pattern, or on %zu "
                "patterns x 100 (their entries included).\n\n"
                "| operation | | | | |\n|---|---|---|---|---|\n",
                opt.reps, NEW_PER_BUS, NEW_PER_BUS_1000, PRESENT_1000, opt.mem_subs, opt.mem_subs / 100);
    } else {
        fprintf(f,
                "\npatterns (qtbus), median ns per operation, each row's columns interleaved (memory: "
                "bytes per subscription over %zu; the miss: subscribe new + dispatch less subscribe new)\n",
                opt.mem_subs);
    }
    for (int k = 0; k < NPROW; k++) {
        const row *r = &pt_rows[k];
        const char *fmt_md = k == P_MEMORY ? " %s: **%.0f** |" : " %s: **%.1f** |";
        const char *fmt_txt = k == P_MEMORY ? "%s%s %.0f" : "%s%s %.1f";
        fprintf(f, markdown ? "| %s |" : "%-56s", r->title);
        for (int i = 0; i < PCOL; i++) {
            if (i >= pdesc[k].ncol) {
                if (markdown) fprintf(f, " |");
                continue;
            }
            if (markdown)
                fprintf(f, fmt_md, pdesc[k].head[i], r->c[i].median);
            else
                fprintf(f, fmt_txt, i ? " | " : "  ", pdesc[k].head[i], r->c[i].median);
        }
        fputc('\n', f);
    }
}

void write_patterns_json(FILE *f)
{
    fprintf(f, "\"patterns\": {");
    for (int k = 0; k < pt_nrows; k++) {
        fprintf(f, "%s\"%s\": {", k ? ", " : "", pdesc[k].id);
        for (int i = 0; i < pdesc[k].ncol; i++)
            fprintf(f, "%s\"%s\": %.3f", i ? ", " : "", pdesc[k].key[i], pt_rows[k].c[i].median);
        fprintf(f, "}");
    }
    if (pt_nrows)
        fprintf(f, ", \"new_patterns_per_bus\": %d, \"new_patterns_per_bus_1000\": %d, \"memory_subscriptions\": %zu",
                NEW_PER_BUS, NEW_PER_BUS_1000, opt.mem_subs);
    fprintf(f, "}");
}
