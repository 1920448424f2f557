/* SPDX-License-Identifier: MIT */
/*
 * test_util.h -- tiny helpers shared by the qtbus C tests.
 *
 * Include it FIRST in every test file: it selects POSIX 2008 (the tests build with
 * -std=c11, no GNU extensions) before any system header is read.
 *
 *   CHECK(cond)            fails the test (file:line, the expression) unless cond holds
 *   CHECK_EQ_INT(a, b)     same, printing both values (and qtbus status names)
 *   CHECK_EQ_STR(a, b)     strings (NULL-safe)
 *   CHECK_WAIT(cond, ms)   bounded wait: polls cond every millisecond, fails after ms
 *   tu_run_threads(...)    runs N threads on one function and joins them
 *   tu_rec                 a subscription's counters: handler calls and releases
 *
 * A failed check ends the process at once with exit status 1 (_Exit: no atexit
 * handler or library destructor can hang a failing test).
 */
#ifndef QTBUS_TEST_UTIL_H
#define QTBUS_TEST_UTIL_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <qtbus.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Generous bound for anything that waits on a queue (ctest's per-test timeout is 60 s). */
#define TU_WAIT_MS 10000

/* ---------------------------------------------------------------------------------
 * Failing
 * ------------------------------------------------------------------------------- */

static inline const char *tu_status_name(long long status)
{
    switch (status) {
#define TU__STATUS_NAME(name, value, text)                                                                             \
    case (value): return "QTBUS_" #name;
        QTBUS_STATUS_MAP(TU__STATUS_NAME)
#undef TU__STATUS_NAME
    default: return "";
    }
}

static inline void tu_fail(const char *file, int line, const char *what)
{
    fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what);
    fflush(stderr);
    _Exit(1);
}

#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) tu_fail(__FILE__, __LINE__, "CHECK(" #cond ")");                                                  \
    } while (0)

#define CHECK_MSG(cond, ...)                                                                                           \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                                            \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fprintf(stderr, "\n");                                                                                     \
            tu_fail(__FILE__, __LINE__, "CHECK(" #cond ")");                                                           \
        }                                                                                                              \
    } while (0)

static inline void tu_check_eq_int(long long a, long long b, const char *sa, const char *sb, const char *file, int line)
{
    if (a == b) return;
    fprintf(stderr, "%s:%d: CHECK_EQ_INT(%s, %s): %lld %s != %lld %s\n", file, line, sa, sb, a, tu_status_name(a), b,
            tu_status_name(b));
    tu_fail(file, line, "values differ");
}
#define CHECK_EQ_INT(a, b) tu_check_eq_int((long long)(a), (long long)(b), #a, #b, __FILE__, __LINE__)

static inline void tu_check_eq_u64(uint64_t a, uint64_t b, const char *sa, const char *sb, const char *file, int line)
{
    if (a == b) return;
    fprintf(stderr, "%s:%d: CHECK_EQ_U64(%s, %s): %llu != %llu\n", file, line, sa, sb, (unsigned long long)a,
            (unsigned long long)b);
    tu_fail(file, line, "values differ");
}
#define CHECK_EQ_U64(a, b) tu_check_eq_u64((uint64_t)(a), (uint64_t)(b), #a, #b, __FILE__, __LINE__)

static inline void tu_check_eq_str(const char *a, const char *b, const char *sa, const char *sb, const char *file,
                                   int line)
{
    if (a == b) return;
    if (a && b && strcmp(a, b) == 0) return;
    fprintf(stderr, "%s:%d: CHECK_EQ_STR(%s, %s): \"%s\" != \"%s\"\n", file, line, sa, sb, a ? a : "(null)",
            b ? b : "(null)");
    tu_fail(file, line, "strings differ");
}
#define CHECK_EQ_STR(a, b) tu_check_eq_str((a), (b), #a, #b, __FILE__, __LINE__)

/* ---------------------------------------------------------------------------------
 * Time and bounded waits
 * ------------------------------------------------------------------------------- */

static inline int64_t tu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void tu_sleep_ms(int ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* Waiting for work that runs on a queue: poll `cond` until it holds, fail after `ms`. */
#define CHECK_WAIT(cond, ms)                                                                                           \
    do {                                                                                                               \
        int64_t tu_deadline_ = tu_now_ms() + (ms);                                                                     \
        while (!(cond)) {                                                                                              \
            if (tu_now_ms() > tu_deadline_) tu_fail(__FILE__, __LINE__, "timed out waiting for: " #cond);              \
            tu_sleep_ms(1);                                                                                            \
        }                                                                                                              \
    } while (0)

/* Waiting for a bus's queued work (deliveries on created queues, posted dispatches):
 * when this passes, all of it has run, handlers returned and event objects released
 * (qtbus_bus_wait_idle; not release hooks, which come later). */
#define CHECK_IDLE(bus) CHECK_EQ_INT(qtbus_bus_wait_idle((bus), TU_WAIT_MS), QTBUS_OK)

/* A gate: a handler blocks a serial queue on it until the test opens it. */
typedef struct tu_gate {
    atomic_int open;
    atomic_int entered;
} tu_gate;

static inline void tu_gate_pass(tu_gate *gate)
{
    int64_t deadline = tu_now_ms() + TU_WAIT_MS;
    atomic_fetch_add(&gate->entered, 1);
    while (!atomic_load(&gate->open)) {
        if (tu_now_ms() > deadline) tu_fail(__FILE__, __LINE__, "gate never opened");
        tu_sleep_ms(1);
    }
}

/* A handler that waits at the gate given as its userdata. */
static inline void tu_gate_handler(const qtbus_event *event, void *userdata)
{
    (void)event;
    tu_gate_pass((tu_gate *)userdata);
}

/* ---------------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------------- */

#define TU_MAX_THREADS 16

typedef void (*tu_thread_fn)(int index, void *ctx);

typedef struct tu_thread_arg {
    tu_thread_fn fn;
    void *ctx;
    int index;
} tu_thread_arg;

typedef struct tu_threads {
    pthread_t thread[TU_MAX_THREADS];
    tu_thread_arg arg[TU_MAX_THREADS];
    int count;
} tu_threads;

static inline void *tu__thread_main(void *p)
{
    tu_thread_arg *arg = (tu_thread_arg *)p;
    arg->fn(arg->index, arg->ctx);
    return NULL;
}

/* Starts `n` threads running fn(index, ctx); tu_threads_join() waits for all of them. */
static inline void tu_threads_start(tu_threads *t, int n, tu_thread_fn fn, void *ctx)
{
    if (n < 1 || n > TU_MAX_THREADS) tu_fail(__FILE__, __LINE__, "bad thread count");
    t->count = n;
    for (int i = 0; i < n; i++) {
        t->arg[i].fn = fn;
        t->arg[i].ctx = ctx;
        t->arg[i].index = i;
        if (pthread_create(&t->thread[i], NULL, tu__thread_main, &t->arg[i]) != 0)
            tu_fail(__FILE__, __LINE__, "pthread_create");
    }
}

static inline void tu_threads_join(tu_threads *t)
{
    for (int i = 0; i < t->count; i++)
        pthread_join(t->thread[i], NULL);
    t->count = 0;
}

static inline void tu_run_threads(int n, tu_thread_fn fn, void *ctx)
{
    tu_threads t;
    tu_threads_start(&t, n, fn, ctx);
    tu_threads_join(&t);
}

/* A small per-thread PRNG (xorshift64*), so threads need no shared state. */
static inline uint64_t tu_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* ---------------------------------------------------------------------------------
 * Counting subscriptions
 * ------------------------------------------------------------------------------- */

/* The userdata of a counted subscription.  tu_rec_handler / tu_rec_release count,
 * and notice a handler call after the release (lifetime rule 1) or a second release. */
typedef struct tu_rec {
    atomic_int calls;
    atomic_int releases;
    atomic_int calls_after_release;
    atomic_int running; /* handler invocations in progress */
    atomic_int release_while_running;
} tu_rec;

static inline void tu_rec_init(tu_rec *r)
{
    atomic_init(&r->calls, 0);
    atomic_init(&r->releases, 0);
    atomic_init(&r->calls_after_release, 0);
    atomic_init(&r->running, 0);
    atomic_init(&r->release_while_running, 0);
}

static inline void tu_rec_handler(const qtbus_event *event, void *userdata)
{
    tu_rec *r = (tu_rec *)userdata;
    (void)event;
    atomic_fetch_add(&r->running, 1);
    if (atomic_load(&r->releases) != 0) atomic_fetch_add(&r->calls_after_release, 1);
    atomic_fetch_add(&r->calls, 1);
    atomic_fetch_sub(&r->running, 1);
}

static inline void tu_rec_release(void *userdata)
{
    tu_rec *r = (tu_rec *)userdata;
    if (atomic_load(&r->running) != 0) atomic_fetch_add(&r->release_while_running, 1);
    atomic_fetch_add(&r->releases, 1);
}

/* The invariants every counted subscription must keep, whatever the test did. */
#define CHECK_REC_SANE(r)                                                                                              \
    do {                                                                                                               \
        CHECK_EQ_INT(atomic_load(&(r)->calls_after_release), 0);                                                       \
        CHECK_EQ_INT(atomic_load(&(r)->release_while_running), 0);                                                     \
        CHECK(atomic_load(&(r)->releases) <= 1);                                                                       \
    } while (0)

/* Counts object_release calls: the object is an atomic_int. */
static inline void tu_count_release(void *object) { atomic_fetch_add((atomic_int *)object, 1); }

/* A zeroed event description (every default) with a type and optional subtype. */
static inline qtbus_event_desc tu_event(const char *type, const char *subtype)
{
    qtbus_event_desc d;
    memset(&d, 0, sizeof d);
    d.type = type;
    d.subtype = subtype;
    return d;
}

/* All-zero options: every default. */
static inline qtbus_sub_options tu_options(void)
{
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    return o;
}

/* Subscribes `handler` on `bus`, delivered on `queue`; the token must come back. */
static inline qtbus_token tu_sub_on_queue(qtbus_bus *bus, qtbus_queue *queue, const char *type, qtbus_handler handler,
                                          void *userdata)
{
    qtbus_sub_options o = tu_options();
    o.queue = queue;
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(bus, type, &o, handler, userdata, NULL, &t), QTBUS_OK);
    return t;
}

/* Subscribes a tu_rec with its counting handler and release hook. */
static inline int tu_sub_rec(qtbus_bus *bus, const char *type, const qtbus_sub_options *options, tu_rec *rec,
                             qtbus_token *token_out)
{
    return qtbus_subscribe(bus, type, options, tu_rec_handler, rec, tu_rec_release, token_out);
}

#endif /* QTBUS_TEST_UTIL_H */
