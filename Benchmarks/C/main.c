/*
 * main.c -- bench-c, the C benchmark: qtbus against GLib's GSignal, libsigc++ 3,
 * Boost.Signals2 and two hand-written limits, side by side in one run.
 *
 *   bench-c [--smoke] [--json FILE] [--md FILE] [--reps N] [--rep-ms MS]
 *           [--case dispatch|subscribe|threads|memory|queue|startup]... [--meta KEY=VALUE]...
 *
 * Method (PERFORMANCE.md's): every case calibrates an iteration count per library so
 * that one repetition lasts >= 100 ms, then runs the repetitions with the libraries
 * interleaved (round-robin per repetition) and reports the median, min and max of 7
 * repetitions and the ratio qtbus/peer (the median of the per-repetition ratios).
 * After every repetition the handler calls are counted and the run aborts if the count
 * is not the expected one.
 * --smoke: 2 tiny repetitions per case (seconds in all), same checks.
 *
 * The cases:
 *   1. dispatch to 0, 1, 10, 100 handlers (ns per dispatch)
 *   2. subscribe + dispose one handler with 100 others present (ns per pair)
 *   3. two threads dispatching the same signal to 10 handlers: aggregate rate / one
 *      thread's rate (only with >= 2 CPUs in the affinity mask)
 *   4. memory per subscription over 100,000 subscriptions: RSS delta (and heap delta
 *      from mallinfo2, JSON only) in a fresh process per library and repetition
 *   5. queued delivery through one serial queue: qtbus vs bare libdispatch, as a burst
 *      (a gate item holds the queue until all items are posted) and as a stream
 *   6. start-up: median wall time of posix_spawn + wait of small programs linking each
 *      library, against a C program linking nothing (start-bare)
 */
#define _GNU_SOURCE
#include "bench.h"

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

/* ---- columns and rows ------------------------------------------------------------ */

enum { C_QTBUS, C_GLIB, C_SIGC, C_BOOST, C_FNPTR, C_MUTEX, C_BARE, NCOL };
#define NLIB 6 /* the columns with a bench_lib adapter */

static const bench_lib *const libs[NLIB] = {&bench_qtbus, &bench_glib, &bench_sigc,
                                            &bench_boost, &bench_fnptr, &bench_mutex};
static const char *const col_key[NCOL] = {"qtbus", "glib", "sigc", "boost", "fnptr", "mutex", "bare"};
static const char *const col_head[NCOL] = {"qtbus",  "GLib",       "libsigc++", "Boost",
                                           "fn-ptr", "mutex+snap", "bare"};
static const char *const col_long[NCOL] = {
    "qtbus (C ABI)", "GLib GSignal", "libsigc++ 3 (not thread-safe)", "Boost.Signals2",
    "limit: fn-ptr array", "limit, safe: mutex + refcounted snapshot",
    "libdispatch dispatch_async_f to a serial queue (queued rows); a C program linking nothing (start-up rows)"};

#define MAXREP 64

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

static row rows[16];
static int nrows;

static row *new_row(const char *id, const char *title, const char *unit, const char *better)
{
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

static row *find_row(const char *id)
{
    for (int i = 0; i < nrows; i++)
        if (strcmp(rows[i].id, id) == 0)
            return &rows[i];
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(const double *v, int n)
{
    double s[MAXREP * 8];
    memcpy(s, v, (size_t)n * sizeof *v);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void finish(cell *c)
{
    c->present = 1;
    c->median = median_of(c->rep, c->nrep);
    c->min = c->max = c->rep[0];
    for (int i = 1; i < c->nrep; i++) {
        if (c->rep[i] < c->min)
            c->min = c->rep[i];
        if (c->rep[i] > c->max)
            c->max = c->rep[i];
    }
}

/* ---- settings ------------------------------------------------------------------ */

static struct {
    int smoke;
    int reps;
    double rep_seconds;
    size_t mem_subs;
    int startup_runs; /* spawns of each program per repetition */
    const char *json, *md;
    const char *meta_key[16], *meta_value[16];
    int nmeta;
    char exe_dir[PATH_MAX - 64]; /* room for "/start-qtbus" */
    int cpus[2], ncpus; /* the first two CPUs we may run on; ncpus: how many in the mask */
} opt;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- calibration and interleaved repetitions --------------------------------- */

/* Runs n operations and returns the seconds they took (checking handler counts). */
typedef double (*measure_fn)(void *arg, uint64_t n);

/* An operation count that was measured to make one repetition last at least
 * opt.rep_seconds (an extrapolated count can fall short when the run it came from was
 * slow: a first run pays for page faults and cold caches, so it is thrown away). */
static uint64_t calibrate(measure_fn f, void *arg, uint64_t n)
{
    double target = opt.rep_seconds;
    (void)f(arg, n);
    for (;;) {
        double t = f(arg, n);
        if (t >= target || n >= (UINT64_C(1) << 40))
            return n;
        if (t < target * 0.02) {
            n *= 10;
        } else {
            double m = (double)n * target * 1.1 / (t > 1e-9 ? t : 1e-9);
            n = m > (double)n * 1.05 ? (uint64_t)m : n + n / 10 + 1;
        }
    }
}

typedef struct {
    measure_fn f; /* NULL: not measured */
    void *arg;
    uint64_t start; /* first calibration guess */
} subject;

/* The per-operation cost in ns, for every column that has a subject, libraries
 * interleaved within each repetition. */
static void run_interleaved(row *r, subject s[NCOL])
{
    for (int i = 0; i < NCOL; i++)
        if (s[i].f)
            r->c[i].iters = calibrate(s[i].f, s[i].arg, s[i].start ? s[i].start : 16);
    for (int rep = 0; rep < opt.reps; rep++)
        for (int i = 0; i < NCOL; i++)
            if (s[i].f) {
                double t = s[i].f(s[i].arg, r->c[i].iters);
                r->c[i].rep[r->c[i].nrep++] = t * 1e9 / (double)r->c[i].iters;
            }
    for (int i = 0; i < NCOL; i++)
        if (s[i].f)
            finish(&r->c[i]);
}

static void expect_count(const char *lib, const char *what, uint64_t got, uint64_t want)
{
    if (got != want)
        bench_fail("%s, %s: the handlers ran %llu times, expected %llu", lib, what,
                   (unsigned long long)got, (unsigned long long)want);
}

/* ---- case 1: dispatch ---------------------------------------------------------- */

typedef struct {
    const bench_lib *lib;
    void *sig;
    size_t handlers;
} sig_arg;

static double measure_dispatch(void *p, uint64_t n)
{
    sig_arg *a = p;
    bench_count_reset();
    double t0 = now();
    a->lib->dispatch(a->sig, n);
    double t = now() - t0;
    expect_count(a->lib->name, "dispatch", bench_count(), n * a->handlers);
    return t;
}

static void case_dispatch(int handlers)
{
    static const char *ids[] = {"dispatch_0", "dispatch_1", "dispatch_10", "dispatch_100"};
    static const char *titles[] = {"dispatch, 0 handlers", "dispatch, 1 handler",
                                   "dispatch, 10 handlers", "dispatch, 100 handlers"};
    int k = handlers == 0 ? 0 : handlers == 1 ? 1 : handlers == 10 ? 2 : 3;
    row *r = new_row(ids[k], titles[k], "ns", "lower");
    r->handlers = handlers;
    r->peer_row = 1;
    sig_arg args[NLIB];
    subject s[NCOL] = {{0}};
    for (int i = 0; i < NLIB; i++) {
        args[i] = (sig_arg){libs[i], libs[i]->create(), (size_t)handlers};
        libs[i]->connect_n(args[i].sig, (size_t)handlers);
        s[i] = (subject){measure_dispatch, &args[i], 64};
    }
    run_interleaved(r, s);
    for (int i = 0; i < NLIB; i++)
        libs[i]->destroy(args[i].sig);
}

/* ---- case 2: subscribe + dispose with 100 others --------------------------------- */

static double measure_sub_dispose(void *p, uint64_t n)
{
    sig_arg *a = p;
    double t0 = now();
    a->lib->sub_dispose(a->sig, n);
    double t = now() - t0;
    /* Exactly the 100 others are left: the disposed ones are gone. */
    bench_count_reset();
    a->lib->dispatch(a->sig, 1);
    expect_count(a->lib->name, "subscribe + dispose", bench_count(), a->handlers);
    return t;
}

static void case_sub_dispose(void)
{
    row *r = new_row("subscribe_dispose", "subscribe+dispose, 100 present", "ns", "lower");
    r->peer_row = 1;
    sig_arg args[NLIB];
    subject s[NCOL] = {{0}};
    for (int i = 0; i < NLIB; i++) {
        args[i] = (sig_arg){libs[i], libs[i]->create(), 100};
        libs[i]->connect_n(args[i].sig, 100);
        s[i] = (subject){measure_sub_dispose, &args[i], 16};
    }
    run_interleaved(r, s);
    for (int i = 0; i < NLIB; i++)
        libs[i]->destroy(args[i].sig);
}

/* ---- case 3: two threads ------------------------------------------------------- */

typedef struct {
    const bench_lib *lib;
    void *sig;
    uint64_t iters;
    int cpu;
    pthread_barrier_t *barrier;
    double t0, t1;
    uint64_t count;
} worker;

static void *worker_main(void *p)
{
    worker *w = p;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(w->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    bench_count_reset();
    pthread_barrier_wait(w->barrier);
    w->t0 = now();
    w->lib->dispatch(w->sig, w->iters);
    w->t1 = now();
    w->count = bench_count();
    return NULL;
}

/* Wall time from the first thread's start to the last one's end; each thread
 * dispatches n times on its own CPU. */
static double run_threads(sig_arg *a, uint64_t n, int nthreads)
{
    pthread_barrier_t barrier;
    pthread_t tid[2];
    worker w[2];
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++) {
        w[i] = (worker){a->lib, a->sig, n, opt.cpus[i], &barrier, 0, 0, 0};
        if (pthread_create(&tid[i], NULL, worker_main, &w[i]) != 0)
            bench_fail("pthread_create failed");
    }
    double first = 0, last = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(tid[i], NULL);
        expect_count(a->lib->name, nthreads == 1 ? "one thread" : "two threads", w[i].count,
                     n * a->handlers);
        if (i == 0 || w[i].t0 < first)
            first = w[i].t0;
        if (i == 0 || w[i].t1 > last)
            last = w[i].t1;
    }
    pthread_barrier_destroy(&barrier);
    return last - first;
}

static double measure_one_thread(void *p, uint64_t n) { return run_threads(p, n, 1); }

static void case_two_threads(void)
{
    row *r = new_row("two_threads_10", "2 threads, 10 handlers: scaling", "x 1 thread", "higher");
    r->handlers = 10;
    r->peer_row = 1;
    if (opt.ncpus < 2) {
        for (int i = 0; i < NLIB; i++)
            r->c[i].na = "n/a (fewer than 2 CPUs)";
        return;
    }
    sig_arg args[NLIB];
    for (int i = 0; i < NLIB; i++) {
        if (!libs[i]->thread_safe) {
            r->c[i].na = "n/a (not thread-safe)";
            continue;
        }
        args[i] = (sig_arg){libs[i], libs[i]->create(), 10};
        libs[i]->connect_n(args[i].sig, 10);
        r->c[i].iters = calibrate(measure_one_thread, &args[i], 64);
    }
    /* Per repetition and library: one thread, then two, back to back; the figure is
     * (2 n / two-thread wall time) / (n / one-thread wall time). */
    for (int rep = 0; rep < opt.reps; rep++)
        for (int i = 0; i < NLIB; i++) {
            if (!libs[i]->thread_safe)
                continue;
            double t1 = run_threads(&args[i], r->c[i].iters, 1);
            double t2 = run_threads(&args[i], r->c[i].iters, 2);
            r->c[i].rep[r->c[i].nrep++] = 2 * t1 / t2;
        }
    for (int i = 0; i < NLIB; i++)
        if (libs[i]->thread_safe) {
            finish(&r->c[i]);
            libs[i]->destroy(args[i].sig);
        }
}

/* ---- case 4: memory per subscription (fresh process each) ---------------------- */

static double rss_bytes(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2)
        bench_fail("cannot read /proc/self/statm");
    fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

static double heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (double)(mi.uordblks + mi.hblkhd);
}

/* The child: bench-c --child-mem KEY N.  Prints "RSS HEAP" bytes per subscription. */
static int child_mem(const char *key, size_t n)
{
    for (int i = 0; i < NLIB; i++) {
        if (strcmp(libs[i]->key, key) != 0)
            continue;
        const bench_lib *lib = libs[i];
        void *sig = lib->create();
        lib->reserve(sig, n);      /* the handles' storage is the caller's, not counted */
        lib->sub_dispose(sig, 16); /* first-use allocations are not counted either */
        double rss0 = rss_bytes(), heap0 = heap_bytes();
        lib->connect_n(sig, n);
        double rss1 = rss_bytes(), heap1 = heap_bytes();
        bench_count_reset();
        lib->dispatch(sig, 1);
        expect_count(lib->name, "memory", bench_count(), n);
        printf("%.3f %.3f\n", (rss1 - rss0) / (double)n, (heap1 - heap0) / (double)n);
        return 0;
    }
    fprintf(stderr, "bench-c: unknown library %s\n", key);
    return 2;
}

/* Spawns path with argv; stdout to out_fd (or /dev/null when -1).  Returns the
 * seconds from spawn to reaped exit; dies unless the program exited 0. */
static double spawn_wait(const char *path, char *const argv[], int out_fd)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (out_fd >= 0)
        posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
    else
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int status;
    double t0 = now();
    int rc = posix_spawn(&pid, path, &fa, NULL, argv, environ);
    if (rc != 0)
        bench_fail("cannot run %s: %s", path, strerror(rc));
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            bench_fail("waitpid: %s", strerror(errno));
    double t = now() - t0;
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_fail("%s did not exit with 0 (status 0x%x)", path, status);
    return t;
}

static void case_memory(void)
{
    row *r = new_row("memory_per_subscription", "memory per subscription (RSS)", "bytes", "lower");
    r->peer_row = 1;
    row *h = new_row("heap_per_subscription", "memory per subscription (heap)", "bytes", "lower");
    h->in_table = 0;
    char self[PATH_MAX + 64], count[32];
    snprintf(self, sizeof self, "%s/bench-c", opt.exe_dir);
    snprintf(count, sizeof count, "%zu", opt.mem_subs);
    for (int rep = 0; rep < opt.reps; rep++)
        for (int i = 0; i < NLIB; i++) {
            char *argv[] = {self, "--child-mem", (char *)libs[i]->key, count, NULL};
            FILE *out = tmpfile();
            if (!out)
                bench_fail("tmpfile: %s", strerror(errno));
            spawn_wait(self, argv, fileno(out));
            double rss, heap;
            rewind(out);
            if (fscanf(out, "%lf %lf", &rss, &heap) != 2)
                bench_fail("%s: the memory child printed nothing", libs[i]->name);
            fclose(out);
            r->c[i].rep[r->c[i].nrep++] = rss;
            h->c[i].rep[h->c[i].nrep++] = heap;
            r->c[i].iters = h->c[i].iters = opt.mem_subs;
        }
    for (int i = 0; i < NLIB; i++) {
        finish(&r->c[i]);
        finish(&h->c[i]);
    }
}

/* ---- case 5: queued delivery --------------------------------------------------- */

typedef struct {
    const bench_queue_impl *impl;
    void *q;
    int burst;
} queue_arg;

static double measure_queue(void *p, uint64_t n)
{
    queue_arg *a = p;
    double t0 = now();
    a->impl->run(a->q, n, a->burst);
    double t = now() - t0;
    expect_count(a->impl->name, "queued delivery", bench_queued_count(), n);
    return t;
}

/* Two variants: burst (the queue is held by a gate item until all n are posted: the
 * enqueue, dequeue and call cost per item, with no wake-up per item; the row the
 * target is checked on) and streaming (the queue runs while the items are posted:
 * what a producer sees, which swings with whether the consumer thread sleeps between
 * items). */
static void case_queue(int burst)
{
    row *r = burst ? new_row("queued_serial", "queued, serial queue (burst)", "ns/event", "lower")
                   : new_row("queued_serial_streaming", "queued, serial queue (stream)", "ns/event",
                             "lower");
    queue_arg qa = {&bench_queue_qtbus, bench_queue_qtbus.create(), burst};
    queue_arg la = {&bench_queue_libdispatch, bench_queue_libdispatch.create(), burst};
    subject s[NCOL] = {{0}};
    s[C_QTBUS] = (subject){measure_queue, &qa, 256};
    s[C_BARE] = (subject){measure_queue, &la, 256};
    for (int i = C_GLIB; i <= C_MUTEX; i++)
        r->c[i].na = "-";
    run_interleaved(r, s);
    qa.impl->destroy(qa.q);
    la.impl->destroy(la.q);
}

/* ---- case 6: start-up ---------------------------------------------------------- */

static void case_startup(void)
{
    static const char *const prog[NCOL] = {"start-qtbus", "start-glib", "start-sigc", "start-boost",
                                           NULL,          NULL,         "start-bare"};
    row *r = new_row("startup", "start-up of a program", "ms", "lower");
    row *added = new_row("startup_added", "start-up added vs bare C", "ms", "lower");
    char path[NCOL][PATH_MAX + 64];
    int runs = opt.startup_runs;
    double t[NCOL][MAXREP * 8];
    for (int i = 0; i < NCOL; i++) {
        if (!prog[i])
            continue;
        snprintf(path[i], sizeof path[i], "%s/%s", opt.exe_dir, prog[i]);
        char *argv[] = {path[i], NULL};
        spawn_wait(path[i], argv, -1); /* warm the page cache */
    }
    for (int rep = 0; rep < opt.reps; rep++) {
        for (int k = 0; k < runs; k++)
            for (int i = 0; i < NCOL; i++)
                if (prog[i]) {
                    char *argv[] = {path[i], NULL};
                    t[i][k] = spawn_wait(path[i], argv, -1) * 1e3;
                }
        double bare = median_of(t[C_BARE], runs);
        for (int i = 0; i < NCOL; i++)
            if (prog[i]) {
                double m = median_of(t[i], runs);
                r->c[i].rep[r->c[i].nrep++] = m;
                r->c[i].iters = (uint64_t)runs;
                if (i != C_BARE) {
                    added->c[i].rep[added->c[i].nrep++] = m - bare;
                    added->c[i].iters = (uint64_t)runs;
                }
            }
    }
    for (int i = 0; i < NCOL; i++)
        if (prog[i]) {
            finish(&r->c[i]);
            if (i != C_BARE)
                finish(&added->c[i]);
        }
    r->c[C_FNPTR].na = r->c[C_MUTEX].na = added->c[C_FNPTR].na = added->c[C_MUTEX].na = "-";
}

/* ---- targets (PERFORMANCE.md) ---------------------------------------------------- */

typedef struct {
    const char *figure;
    const char *row_id;
    const char *target; /* for people */
    double limit;
    int at_least;       /* 1: value >= limit, 0: value <= limit */
    int vs_bare;        /* the value is qtbus / bare */
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
    if (!r || !r->c[C_QTBUS].present || (t->vs_bare && !r->c[C_BARE].present))
        return res;
    res.known = 1;
    res.value = t->vs_bare ? ratio(r, C_BARE) : r->c[C_QTBUS].median;
    res.met = t->at_least ? res.value >= t->limit : res.value <= t->limit;
    return res;
}

/* "beat every thread-safe peer on every row": GLib and Boost.Signals2. */
static int beats(const row *r, int peer)
{
    double x = ratio(r, peer);
    if (x <= 0)
        return -1;
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
    if (!q->present || !p->present || q->nrep != p->nrep)
        return 0;
    double v[MAXREP];
    for (int i = 0; i < q->nrep; i++) {
        if (p->rep[i] <= 0)
            return 0;
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

static void print_table(FILE *f, int spread)
{
    static const char *const ratio_head[NCOL] = {"", "q/GLib", "q/sigc", "q/Boost",
                                                 "q/fnptr", "q/mutex", "q/bare"};
    fprintf(f, "%-31s %-10s", spread ? "spread: min..max" : "median of repetitions", "unit");
    for (int i = 0; i < NCOL; i++)
        fprintf(f, spread ? " %15s" : " %9s", col_head[i]);
    if (!spread)
        for (int i = 1; i < NCOL; i++)
            fprintf(f, " %7s", ratio_head[i]);
    fputc('\n', f);
    for (int k = 0; k < nrows; k++) {
        const row *r = &rows[k];
        if (!r->in_table)
            continue;
        fprintf(f, "%-31s %-10s", r->title, r->unit);
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

static void print_targets(FILE *f, int markdown)
{
    if (markdown)
        fprintf(f, "| figure | target | qtbus | met |\n|---|---|---|---|\n");
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
        if (!r->peer_row)
            continue;
        for (int peer = C_GLIB; peer <= C_BOOST; peer++) {
            if (peer == C_SIGC || beats(r, peer) != 0)
                continue;
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
        if (lost[0])
            fprintf(f, "      lost on: %s\n", lost);
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

/* ---- the machine ----------------------------------------------------------------- */

static char cpu_model[256] = "unknown", date_utc[64], kernel[256];
static double load_start;

/* CPU seconds used by the whole machine (/proc/stat) and by this process and its
 * children: their difference over the run is what other programs took meanwhile. */
static double machine_cpu_seconds(void)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                     &v[4], &v[5], &v[6], &v[7]) != 8)
        bench_fail("cannot read /proc/stat");
    fclose(f);
    /* user nice system idle iowait irq softirq steal: all but idle and iowait */
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

static double own_cpu_seconds(void)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
                    kids.ru_stime.tv_sec) +
           (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
                    kids.ru_stime.tv_usec) * 1e-6;
}

static double other_cpu_share; /* other programs' CPU use during the run, in cores */

static void read_machine(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *v = strchr(line, ':');
            if (v) {
                v += strspn(v + 1, " \t") + 1;
                v[strcspn(v, "\n")] = 0;
                snprintf(cpu_model, sizeof cpu_model, "%s", v);
            }
            break;
        }
    }
    if (f)
        fclose(f);
    time_t t = time(NULL);
    strftime(date_utc, sizeof date_utc, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    opt.ncpus = CPU_COUNT(&set);
    for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &set))
            opt.cpus[k++] = c;
}

static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static const char *cc_version(void)
{
#ifdef __clang__
    return "clang " __clang_version__;
#else
    return "gcc " __VERSION__;
#endif
}

static void write_json(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        bench_fail("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "{\n  \"schema\": \"qtbus-bench-c/1\",\n  \"date\": ");
    json_string(f, date_utc);
    fprintf(f, ",\n  \"machine\": {\"cpu\": ");
    json_string(f, cpu_model);
    fprintf(f, ", \"cpus_online\": %ld, \"cpus_allowed\": %d, \"kernel\": ", sysconf(_SC_NPROCESSORS_ONLN),
            opt.ncpus);
    json_string(f, kernel);
    fprintf(f, ", \"loadavg_start\": %.2f, \"other_cpu_use_cores\": %.3f},\n", load_start,
            other_cpu_share);
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
    fprintf(f, "},\n  \"method\": {\"repetitions\": %d, \"min_repetition_seconds\": %.3f, "
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
        if (r->handlers >= 0)
            fprintf(f, ", \"handlers\": %d", r->handlers);
        fprintf(f, ",\n     \"results\": {");
        for (int i = 0, first = 1; i < NCOL; i++) {
            const cell *c = &r->c[i];
            if (!c->present && !c->na)
                continue;
            fprintf(f, "%s\n       \"%s\": ", first ? "" : ",", col_key[i]);
            first = 0;
            if (!c->present) {
                fprintf(f, "{\"na\": ");
                json_string(f, c->na);
                fprintf(f, "}");
                continue;
            }
            fprintf(f, "{\"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"operations_per_repetition\": %llu, \"repetitions\": [",
                    c->median, c->min, c->max, (unsigned long long)c->iters);
            for (int j = 0; j < c->nrep; j++)
                fprintf(f, "%s%.6g", j ? ", " : "", c->rep[j]);
            fprintf(f, "]}");
        }
        fprintf(f, "},\n     \"ratio_qtbus_over\": {");
        for (int i = 1, first = 1; i < NCOL; i++) {
            double x = ratio(r, i);
            if (x <= 0)
                continue;
            fprintf(f, "%s\"%s\": %.4g", first ? "" : ", ", col_key[i], x);
            first = 0;
        }
        fprintf(f, "}}%s\n", k + 1 < nrows ? "," : "");
    }
    fprintf(f, "  ],\n  \"targets\": [\n");
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
    if (fclose(f) != 0)
        bench_fail("cannot write %s", path);
}

static void write_md(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        bench_fail("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "# qtbus C benchmark\n\n"
               "Why qtbus and not GLib signals, libsigc++ or Boost.Signals2: the same cases measured "
               "side by side in one run. Reproduce on your machine with `scripts/bench.sh` (about a "
               "minute on an idle machine; installs the peers from Debian packages, rewrites this "
               "file, bench-c.json and bench-c.png); `scripts/bench.sh --smoke` checks every case in "
               "seconds. Method and code: `Benchmarks/C/`.\n\n");
    fprintf(f, "Generated by `scripts/bench.sh` on %s. Machine: %s, %d CPUs allowed, %s; "
               "other programs used %.0f%% of one CPU during the run.  \n",
            date_utc, cpu_model, opt.ncpus, kernel, other_cpu_share * 100);
    fprintf(f, "Compilers: %s (C), %s (C++), both `-O2`", cc_version(), bench_cxx_compiler());
    for (int i = 0; i < opt.nmeta; i++)
        fprintf(f, "; %s: %s", opt.meta_key[i], opt.meta_value[i]);
    fprintf(f, ".  \nLibraries: ");
    for (int i = 0; i < 4; i++)
        fprintf(f, "%s%s %s", i ? ", " : "", col_head[i], libs[i]->version());
    fprintf(f, ".\n\n");
    fprintf(f, "Median of %d repetitions (each >= %.0f ms, libraries interleaved round-robin), "
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
        if (!r->in_table)
            continue;
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
    fprintf(f, ".\n\n"
               "Cases: dispatch = one emission to N handlers that each increment a counter "
               "(qtbus: `qtbus_dispatch` on an isolated bus, type given as a string literal); "
               "subscribe+dispose = connect and disconnect one handler while 100 others stay; "
               "scaling = two threads on two CPUs dispatching the same signal to 10 handlers, "
               "their aggregate rate over one thread's (n/a: not thread-safe, or fewer than 2 CPUs); "
               "memory = RSS growth per subscription over %zu subscriptions, each library in a fresh process "
               "(the heap figure from mallinfo2 is in bench-c.json); "
               "queued = N dispatches to one handler on a serial queue, until it has counted N "
               "(bare: `dispatch_async_f` to a serial libdispatch queue), as a burst (a gate item "
               "holds the queue until all N are posted: the cost per item without a thread wake-up "
               "per item; PERFORMANCE.md's target is checked on this row) and as a stream (the "
               "queue runs meanwhile; swings with whether its thread sleeps between items); "
               "start-up = `posix_spawn` + wait of a program that links the library and calls it "
               "once (libsigc++ and Boost: C++ programs), median of %d spawns per repetition.\n\n",
            opt.mem_subs, opt.startup_runs);
    fprintf(f, "![ns per dispatch against handler count](bench-c.png)\n\n");
    fprintf(f, "## Targets of PERFORMANCE.md in this run\n\n");
    print_targets(f, 1);
    fprintf(f, "\nMachine-readable results: [bench-c.json](bench-c.json).\n");
    if (fclose(f) != 0)
        bench_fail("cannot write %s", path);
}

/* ---- main ---------------------------------------------------------------------- */

/* --case NAME (repeatable) runs only those cases; none given: all. */
static const char *only[8];
static int nonly;

static int wanted(const char *name)
{
    for (int i = 0; i < nonly; i++)
        if (strcmp(only[i], name) == 0)
            return 1;
    return nonly == 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench-c [--smoke] [--json FILE] [--md FILE] [--reps N] [--rep-ms MS] "
                    "[--case dispatch|subscribe|threads|memory|queue|startup]... "
                    "[--meta KEY=VALUE]...\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child-mem") == 0)
        return child_mem(argv[2], (size_t)strtoull(argv[3], NULL, 10));

    opt.reps = 7;
    opt.rep_seconds = 0.1;
    opt.mem_subs = 100000;
    opt.startup_runs = 30;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--smoke") == 0) {
            opt.smoke = 1;
            opt.reps = 2;
            opt.rep_seconds = 0.002;
            opt.mem_subs = 2000;
            opt.startup_runs = 3;
        } else if (strcmp(a, "--json") == 0 && i + 1 < argc)
            opt.json = argv[++i];
        else if (strcmp(a, "--md") == 0 && i + 1 < argc)
            opt.md = argv[++i];
        else if (strcmp(a, "--reps") == 0 && i + 1 < argc)
            opt.reps = atoi(argv[++i]);
        else if (strcmp(a, "--case") == 0 && i + 1 < argc && nonly < 8)
            only[nonly++] = argv[++i];
        else if (strcmp(a, "--rep-ms") == 0 && i + 1 < argc)
            opt.rep_seconds = atof(argv[++i]) / 1e3;
        else if (strcmp(a, "--meta") == 0 && i + 1 < argc && opt.nmeta < 16) {
            char *kv = argv[++i], *eq = strchr(kv, '=');
            if (!eq)
                usage();
            *eq = 0;
            opt.meta_key[opt.nmeta] = kv;
            opt.meta_value[opt.nmeta++] = eq + 1;
        } else
            usage();
    }
    if (opt.reps < 1 || opt.reps > MAXREP || opt.rep_seconds <= 0)
        usage();

    ssize_t len = readlink("/proc/self/exe", opt.exe_dir, sizeof opt.exe_dir - 1);
    if (len <= 0)
        bench_fail("readlink /proc/self/exe failed");
    opt.exe_dir[len] = 0;
    *strrchr(opt.exe_dir, '/') = 0;

    read_machine();
    load_start = loadavg();
    double t_start = now(), machine0 = machine_cpu_seconds(), own0 = own_cpu_seconds();
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("bench-c%s: %s, %d CPUs allowed, load %.2f; %s; %s\n", opt.smoke ? " --smoke" : "",
           cpu_model, opt.ncpus, load_start, cc_version(), bench_cxx_compiler());
    printf("libraries: qtbus %s, GLib %s, libsigc++ %s, Boost %s\n", libs[0]->version(),
           libs[1]->version(), libs[2]->version(), libs[3]->version());
    printf("%d repetitions of >= %.0f ms per library and case, interleaved\n\n", opt.reps,
           opt.rep_seconds * 1e3);

    static const int counts[] = {0, 1, 10, 100};
    if (wanted("dispatch"))
        for (int k = 0; k < 4; k++) {
            printf("running: dispatch to %d handler%s\n", counts[k], counts[k] == 1 ? "" : "s");
            case_dispatch(counts[k]);
        }
    if (wanted("subscribe")) {
        printf("running: subscribe + dispose\n");
        case_sub_dispose();
    }
    if (wanted("threads")) {
        printf("running: two threads\n");
        case_two_threads();
    }
    if (wanted("memory")) {
        printf("running: memory per subscription (%zu subscriptions, fresh process each)\n",
               opt.mem_subs);
        case_memory();
    }
    if (wanted("queue")) {
        printf("running: queued delivery\n");
        case_queue(1);
        case_queue(0);
    }
    if (wanted("startup")) {
        printf("running: start-up\n");
        case_startup();
    }
    double wall = now() - t_start;
    other_cpu_share = ((machine_cpu_seconds() - machine0) - (own_cpu_seconds() - own0)) / wall;
    if (other_cpu_share < 0)
        other_cpu_share = 0;

    printf("\n");
    print_table(stdout, 0);
    printf("\n");
    print_table(stdout, 1);
    printf("\nColumns:\n");
    for (int i = 0; i < NCOL; i++)
        printf("  %-10s %s\n", col_head[i], col_long[i]);
    printf("q/X = qtbus / X, median of the per-repetition ratios (lower is better, except the "
           "scaling row: higher).\n");
    printf("\nTargets of PERFORMANCE.md in this run%s:\n", opt.smoke ? " (smoke: not meaningful)" : "");
    print_targets(stdout, 0);
    printf("\nother programs used %.0f%% of one CPU during the run (%.0f s)%s\n",
           other_cpu_share * 100, wall,
           other_cpu_share > 0.1 ? ": the machine was not idle, figures may be noisy" : "");

    if (opt.json) {
        write_json(opt.json);
        printf("\nwrote %s\n", opt.json);
    }
    if (opt.md) {
        write_md(opt.md);
        printf("wrote %s\n", opt.md);
    }
    printf("bench-c: all handler counts checked%s\n", opt.smoke ? " (smoke run)" : "");
    return 0;
}
