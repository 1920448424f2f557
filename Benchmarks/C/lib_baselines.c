/* SPDX-License-Identifier: MIT */
/*
 * lib_baselines.c -- the two hand-written limits of PERFORMANCE.md.
 *
 *  fn-ptr array ("limit"): a growable array of {function, userdata, id}; dispatch calls
 *    them in order; dispose finds the id by a linear scan and closes the gap.  Nothing
 *    is synchronised: two threads may dispatch at once (it is only read), but nobody may
 *    subscribe meanwhile.
 *
 *  mutex + refcounted snapshot ("limit, safe"): the same array inside a reference-
 *    counted snapshot.  dispatch takes the mutex, bumps the current snapshot's count,
 *    unlocks, calls every entry, drops the count (the last one frees it).  subscribe and
 *    dispose hold the mutex and edit the snapshot in place when no dispatch holds it
 *    (count 1), else publish a copy.  Safe from any thread, and the count is the shared
 *    write that costs scaling.
 */
#include "bench.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    void (*fn)(void *);
    void *userdata;
    uint64_t id;
} entry;

/* ---- fn-ptr array ------------------------------------------------------------- */

typedef struct {
    entry *e;
    size_t n, cap;
    uint64_t next_id;
    uint64_t *ids; /* the caller's handles (kept like every other library's) */
    size_t ids_n, ids_cap;
} fnctx;

static void grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return;
    size_t cap2 = *cap ? *cap : 4;
    while (cap2 < need)
        cap2 *= 2;
    void *q = realloc(*p, cap2 * size);
    if (!q) bench_fail("baseline: out of memory");
    *p = q;
    *cap = cap2;
}

static void *fn_create(void) { return calloc(1, sizeof(fnctx)); }

static void fn_reserve(void *s, size_t n)
{
    fnctx *c = s;
    size_t old = c->ids_cap;
    grow((void **)&c->ids, &c->ids_cap, n, sizeof *c->ids);
    memset(c->ids + old, 0, (c->ids_cap - old) * sizeof *c->ids);
}

static uint64_t fn_add(fnctx *c, void (*fn)(void *), void *userdata)
{
    grow((void **)&c->e, &c->cap, c->n + 1, sizeof *c->e);
    c->e[c->n++] = (entry){fn, userdata, ++c->next_id};
    return c->next_id;
}

static int fn_remove(fnctx *c, uint64_t id)
{
    for (size_t i = 0; i < c->n; i++) {
        if (c->e[i].id == id) {
            memmove(&c->e[i], &c->e[i + 1], (c->n - i - 1) * sizeof *c->e);
            c->n--;
            return 1;
        }
    }
    return 0;
}

static void fn_connect_n(void *s, size_t n)
{
    fnctx *c = s;
    fn_reserve(c, c->ids_n + n);
    for (size_t i = 0; i < n; i++)
        c->ids[c->ids_n++] = fn_add(c, h_plain, NULL);
}

/* One emission, out of line as a library's emit function would be. */
static BENCH_NOINLINE void fn_emit(const fnctx *c)
{
    const entry *e = c->e;
    for (size_t i = 0, n = c->n; i < n; i++)
        e[i].fn(e[i].userdata);
}

static void fn_dispatch(void *s, uint64_t iters)
{
    for (uint64_t it = 0; it < iters; it++)
        fn_emit(s);
}

static void fn_sub_dispose(void *s, uint64_t iters)
{
    fnctx *c = s;
    size_t missed = 0;
    for (uint64_t it = 0; it < iters; it++)
        missed += !fn_remove(c, fn_add(c, h_plain, NULL));
    if (missed) bench_fail("fn-ptr array: dispose did not find its entry");
}

static void fn_destroy(void *s)
{
    fnctx *c = s;
    free(c->e);
    free(c->ids);
    free(c);
}

static const char *no_version(void) { return "-"; }

const bench_lib bench_fnptr = {
    .key = "fnptr",
    .name = "fn-ptr array",
    .thread_safe = 1 /* for dispatch-only use */,
    .create = fn_create,
    .reserve = fn_reserve,
    .connect_n = fn_connect_n,
    .dispatch = fn_dispatch,
    .sub_dispose = fn_sub_dispose,
    .destroy = fn_destroy,
    .version = no_version,
};

/* ---- mutex + refcounted snapshot ------------------------------------------------ */

typedef struct {
    atomic_long refs;
    size_t n, cap;
    entry e[];
} snapshot;

typedef struct {
    pthread_mutex_t mutex;
    snapshot *current;
    uint64_t next_id;
    uint64_t *ids;
    size_t ids_n, ids_cap;
} mxctx;

static snapshot *snap_new(size_t cap)
{
    snapshot *s = malloc(sizeof *s + cap * sizeof(entry));
    if (!s) bench_fail("baseline: out of memory");
    atomic_init(&s->refs, 1);
    s->n = 0;
    s->cap = cap;
    return s;
}

static void snap_release(snapshot *s)
{
    if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1) free(s);
}

static void *mx_create(void)
{
    mxctx *c = calloc(1, sizeof *c);
    if (!c) bench_fail("baseline: out of memory");
    pthread_mutex_init(&c->mutex, NULL);
    c->current = snap_new(4);
    return c;
}

static void mx_reserve(void *s, size_t n)
{
    mxctx *c = s;
    size_t old = c->ids_cap;
    grow((void **)&c->ids, &c->ids_cap, n, sizeof *c->ids);
    memset(c->ids + old, 0, (c->ids_cap - old) * sizeof *c->ids);
}

/* With the mutex held: a snapshot that may be edited (the current one when no dispatch
 * holds it and it has room for `need` entries, else a fresh copy made current). */
static snapshot *mx_writable(mxctx *c, size_t need)
{
    snapshot *cur = c->current;
    if (atomic_load_explicit(&cur->refs, memory_order_acquire) == 1 && need <= cur->cap) return cur;
    size_t cap = cur->cap;
    while (cap < need)
        cap *= 2;
    snapshot *copy = snap_new(cap);
    memcpy(copy->e, cur->e, cur->n * sizeof(entry));
    copy->n = cur->n;
    c->current = copy;
    snap_release(cur);
    return copy;
}

static uint64_t mx_add(mxctx *c, void (*fn)(void *), void *userdata)
{
    pthread_mutex_lock(&c->mutex);
    snapshot *s = mx_writable(c, c->current->n + 1);
    uint64_t id = ++c->next_id;
    s->e[s->n++] = (entry){fn, userdata, id};
    pthread_mutex_unlock(&c->mutex);
    return id;
}

static int mx_remove(mxctx *c, uint64_t id)
{
    int found = 0;
    pthread_mutex_lock(&c->mutex);
    snapshot *s = mx_writable(c, c->current->n);
    for (size_t i = 0; i < s->n; i++) {
        if (s->e[i].id == id) {
            memmove(&s->e[i], &s->e[i + 1], (s->n - i - 1) * sizeof(entry));
            s->n--;
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&c->mutex);
    return found;
}

static void mx_connect_n(void *s, size_t n)
{
    mxctx *c = s;
    mx_reserve(c, c->ids_n + n);
    for (size_t i = 0; i < n; i++)
        c->ids[c->ids_n++] = mx_add(c, h_plain, NULL);
}

static BENCH_NOINLINE void mx_emit(mxctx *c)
{
    pthread_mutex_lock(&c->mutex);
    snapshot *s = c->current;
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&c->mutex);
    for (size_t i = 0, n = s->n; i < n; i++)
        s->e[i].fn(s->e[i].userdata);
    snap_release(s);
}

static void mx_dispatch(void *p, uint64_t iters)
{
    for (uint64_t it = 0; it < iters; it++)
        mx_emit(p);
}

static void mx_sub_dispose(void *s, uint64_t iters)
{
    mxctx *c = s;
    size_t missed = 0;
    for (uint64_t it = 0; it < iters; it++)
        missed += !mx_remove(c, mx_add(c, h_plain, NULL));
    if (missed) bench_fail("mutex+snapshot: dispose did not find its entry");
}

static void mx_destroy(void *s)
{
    mxctx *c = s;
    snap_release(c->current);
    pthread_mutex_destroy(&c->mutex);
    free(c->ids);
    free(c);
}

const bench_lib bench_mutex = {
    .key = "mutex",
    .name = "mutex+snapshot",
    .thread_safe = 1,
    .create = mx_create,
    .reserve = mx_reserve,
    .connect_n = mx_connect_n,
    .dispatch = mx_dispatch,
    .sub_dispose = mx_sub_dispose,
    .destroy = mx_destroy,
    .version = no_version,
};
