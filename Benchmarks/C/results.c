/* SPDX-License-Identifier: MIT */
/*
 * results.c -- bench-c's columns (the libraries) and result rows (see bench_c.h).
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

const bench_lib *const libs[NLIB] = {&bench_qtbus, &bench_qtbus_id, &bench_qtbus_cxx, &bench_glib,
                                     &bench_sigc,  &bench_boost,    &bench_fnptr,     &bench_mutex};
const char *const col_key[NCOL] = {"qtbus", "qtbus_id", "qtbus_cxx", "glib", "sigc", "boost", "fnptr", "mutex", "bare"};
const char *const col_head[NCOL] = {"qtbus", "qtbus id", "qtbus.hpp",  "GLib", "libsigc++",
                                    "Boost", "fn-ptr",   "mutex+snap", "bare"};
const char *const col_long[NCOL] = {
    "qtbus (C ABI)",
    "qtbus by type id (qtbus_type_lookup once, qtbus_dispatch_id)",
    "qtbus.hpp (C++ API: lambdas, qtbus::subscription)",
    "GLib GSignal",
    "libsigc++ 3 (not thread-safe)",
    "Boost.Signals2",
    "limit: fn-ptr array; a plain SPSC ring of 1024 slots, batched consumer sleeping on a futex (queued rows)",
    "limit, safe: mutex + refcounted snapshot",
    "libdispatch dispatch_async_f to a serial queue (queued rows); a C program linking nothing (start-up rows)"};

row rows[MAXROW];
int nrows;

row *new_row(const char *id, const char *title, const char *unit, const char *better)
{
    if (nrows == MAXROW) bench_fail("more than %d rows: raise MAXROW", MAXROW);
    row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    r->id = id;
    r->title = title;
    r->unit = unit;
    r->better = better;
    r->handlers = -1;
    r->in_table = 1;
    r->peer_row = 0;
    return r;
}

void init_own_row(row *r, const char *id, const char *title, int handlers)
{
    memset(r, 0, sizeof *r);
    r->id = id;
    r->title = title;
    r->unit = "ns";
    r->better = "lower";
    r->handlers = handlers;
}

void write_own_rows_json(FILE *f, const char *name, const row *r, int n, const char *const *keys, int ncol)
{
    fprintf(f, "\"%s\": {", name);
    for (int k = 0; k < n; k++) {
        fprintf(f, "%s\"%s\": {", k ? ", " : "", r[k].id);
        for (int i = 0; i < ncol; i++)
            fprintf(f, "%s\"%s\": %.3f", i ? ", " : "", keys[i], r[k].c[i].median);
        fprintf(f, "}");
    }
    fprintf(f, "}");
}

row *find_row(const char *id)
{
    for (int i = 0; i < nrows; i++)
        if (strcmp(rows[i].id, id) == 0) return &rows[i];
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double median_of(const double *v, int n)
{
    double s[MAXREP * 8];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void finish(cell *c)
{
    c->present = 1;
    c->median = median_of(c->rep, c->nrep);
    c->min = c->max = c->rep[0];
    for (int i = 1; i < c->nrep; i++) {
        if (c->rep[i] < c->min) c->min = c->rep[i];
        if (c->rep[i] > c->max) c->max = c->rep[i];
    }
}
