/* SPDX-License-Identifier: MIT */
/*
 * bench_c.h -- what the files of bench-c share: the columns, the result rows, the
 * options, and each file's entry points.
 *
 *   main.c     options and the order of the cases
 *   results.c  the columns (libraries) and the result rows, medians
 *   timing.c   the clock, calibration, interleaved repetitions, count checks
 *   cases.c    cases 1 to 6
 *   report.c   the tables, PERFORMANCE.md's targets, JSON and Markdown
 *   machine.c  what the run says about the machine (CPU, kernel, load, compilers)
 *   case_signals.c  the typed-signal case, with its own columns and table
 *   case_trace.c    the trace-hook case, with its own columns and table
 *   case_growth.c   costs against the number of types, subtypes and subscriptions
 *   case_flood.c    a flood into a bounded queue per overflow rule, a child process each
 *   case_patterns.c pattern subscriptions against literal ones, and their memory
 */
#ifndef BENCH_C_H
#define BENCH_C_H

#include "bench.h"
#include "bench_support.h"

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { C_QTBUS, C_QTBUSID, C_QTBUSXX, C_GLIB, C_SIGC, C_BOOST, C_FNPTR, C_MUTEX, C_BARE, NCOL };
#define NLIB 8 /* the columns with a bench_lib adapter */
#define MAXREP 64
#define MAXROW 24 /* rows of the main table */

typedef struct {
    int present;
    const char *na; /* why absent; NULL: the case does not apply to this column */
    double rep[MAXREP];
    int nrep;
    double median, min, max;
    uint64_t iters; /* operations per repetition */
} cell;

typedef struct {
    const char *id, *title, *unit, *better; /* better: "lower" or "higher" */
    int handlers;                           /* dispatch rows: the handler count, else -1 */
    int in_table;                           /* 0: JSON only */
    int peer_row;                           /* a row of PERFORMANCE.md's peer tables */
    cell c[NCOL];
} row;

typedef struct {
    int smoke;
    int reps;
    double rep_seconds;
    size_t mem_subs;
    int startup_runs; /* spawns of each program per repetition */
    const char *json, *md;
    const char *meta_key[16], *meta_value[16];
    int nmeta;
    char exe_dir[PATH_MAX - 64]; /* room for "/start-qtbus" */
    int cpus[2], ncpus;          /* the first two CPUs we may run on; ncpus: how many in the mask */
} bench_options;

/* Runs n operations and returns the seconds they took (checking handler counts). */
typedef double (*measure_fn)(void *arg, uint64_t n);

typedef struct {
    measure_fn f; /* NULL: not measured */
    void *arg;
    uint64_t start; /* first calibration guess */
} subject;

/* main.c */
extern bench_options opt;

/* results.c */
extern const bench_lib *const libs[NLIB];
extern const char *const col_key[NCOL];
extern const char *const col_head[NCOL];
extern const char *const col_long[NCOL];
extern row rows[MAXROW];
extern int nrows;
row *new_row(const char *id, const char *title, const char *unit, const char *better);
row *find_row(const char *id);
/* Cases with their own table and columns (case_signals.c, case_trace.c): a row in ns,
 * lower is better, not in `rows`; and the table as "name": {row id: {key: median}}. */
void init_own_row(row *r, const char *id, const char *title, int handlers);
void write_own_rows_json(FILE *f, const char *name, const row *r, int n, const char *const *keys, int ncol);
double median_of(const double *v, int n);
void finish(cell *c);

/* timing.c */
double now(void);
uint64_t calibrate(measure_fn f, void *arg, uint64_t n);
void run_interleaved(row *r, subject s[NCOL]);
void expect_count(const char *lib, const char *what, uint64_t got, uint64_t want);

/* cases.c */
/* touch: the handlers also touch memory (bench_work), for 10 and 100 handlers. */
void case_dispatch(int handlers, int touch);
void case_sub_dispose(void);
void case_two_threads(void);
int child_mem(const char *key, size_t n);
/* Runs `bench-c --child-mem key opt.mem_subs` in a fresh process: RSS and heap per
 * subscription (`name` for messages). */
void mem_child(const char *key, const char *name, double *rss, double *heap);
void case_memory(void);
/* burst: behind a gate; bounded: the qtbus queue bounded to 1024 with BLOCK. */
void case_queue(int burst, int bounded);
void case_startup(void);

/* case_signals.c */
void case_signals(void);
void print_signals(FILE *f, int markdown);
void write_signals_json(FILE *f);

/* case_trace.c */
void case_trace(void);
void print_trace(FILE *f, int markdown);
void write_trace_json(FILE *f);

/* case_growth.c */
void case_growth(void);
void print_growth(FILE *f, int markdown);
void write_growth_json(FILE *f);

/* case_flood.c */
void case_flood(void);
int child_flood(const char *rule, uint64_t events, uint64_t sample_every);
void print_flood(FILE *f, int markdown);
void write_flood_json(FILE *f);

/* case_patterns.c */
void case_patterns(void);
/* The memory child of the patterns case: key "pattern-same" or "pattern-distinct". */
int child_pattern_mem(const char *key, size_t n, double rss(void));
void print_patterns(FILE *f, int markdown);
void write_patterns_json(FILE *f);

/* report.c */
void print_table(FILE *f, int spread);
void print_targets(FILE *f, int markdown);
void write_json(const char *path);
void write_md(const char *path);

/* machine.c */
extern char cpu_model[256], date_utc[64], kernel[256];
extern double load_start;
extern double other_cpu_share;
double machine_cpu_seconds(void);
double own_cpu_seconds(void);
void read_machine(void);
double loadavg(void);
const char *cc_version(void);

#endif
