/* SPDX-License-Identifier: MIT */
/*
 * cases.c -- bench-c's six cases (main.c's comment lists them).
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

void case_dispatch(int handlers, int touch)
{
    static const char *ids[] = {"dispatch_0", "dispatch_1", "dispatch_10", "dispatch_100"};
    static const char *titles[] = {"dispatch, 0 handlers", "dispatch, 1 handler", "dispatch, 10 handlers",
                                   "dispatch, 100 handlers"};
    static const char *touch_ids[] = {"", "", "dispatch_10_touching", "dispatch_100_touching"};
    static const char *touch_titles[] = {"", "", "dispatch, 10 touching memory", "dispatch, 100 touching memory"};
    int k = handlers == 0 ? 0 : handlers == 1 ? 1 : handlers == 10 ? 2 : 3;
    row *r = touch ? new_row(touch_ids[k], touch_titles[k], "ns", "lower") : new_row(ids[k], titles[k], "ns", "lower");
    r->handlers = handlers;
    r->peer_row = 1;
    bench_touch_on(touch);
    sig_arg args[NLIB];
    subject s[NCOL] = {{0}};
    for (int i = 0; i < NLIB; i++) {
        args[i] = (sig_arg){libs[i], libs[i]->create(), (size_t)handlers};
        libs[i]->connect_n(args[i].sig, (size_t)handlers);
        s[i] = (subject){measure_dispatch, &args[i], 64};
    }
    run_interleaved(r, s);
    bench_touch_on(0);
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

void case_sub_dispose(void)
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
        if (pthread_create(&tid[i], NULL, worker_main, &w[i]) != 0) bench_fail("pthread_create failed");
    }
    double first = 0, last = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(tid[i], NULL);
        expect_count(a->lib->name, nthreads == 1 ? "one thread" : "two threads", w[i].count, n * a->handlers);
        if (i == 0 || w[i].t0 < first) first = w[i].t0;
        if (i == 0 || w[i].t1 > last) last = w[i].t1;
    }
    pthread_barrier_destroy(&barrier);
    return last - first;
}

static double measure_one_thread(void *p, uint64_t n) { return run_threads(p, n, 1); }

void case_two_threads(void)
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
            if (!libs[i]->thread_safe) continue;
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

/* The probes are Benchmarks/Swift/Sources/BenchSupport's (shared with swift-bench). */
static double rss_bytes(void)
{
    double v = bench_rss_bytes();
    if (v < 0) bench_fail("cannot read /proc/self/statm");
    return v;
}

/* The child: bench-c --child-mem KEY N.  Prints "RSS HEAP" bytes per subscription. */
int child_mem(const char *key, size_t n)
{
    if (strncmp(key, "pattern-", 8) == 0) return child_pattern_mem(key, n, rss_bytes);
    if (strcmp(key, "qtbus-subtype") == 0 || strcmp(key, "qtbus-subtypes") == 0) {
        double rss, heap;
        qtbus_subtype_memory(n, key[strlen(key) - 1] == 's', rss_bytes, bench_heap_bytes, &rss, &heap);
        printf("%.3f %.3f\n", rss, heap);
        return 0;
    }
    for (int i = 0; i < NLIB; i++) {
        if (strcmp(libs[i]->key, key) != 0) continue;
        const bench_lib *lib = libs[i];
        void *sig = lib->create();
        lib->reserve(sig, n);      /* the handles' storage is the caller's, not counted */
        lib->sub_dispose(sig, 16); /* first-use allocations are not counted either */
        double rss0 = rss_bytes(), heap0 = bench_heap_bytes();
        lib->connect_n(sig, n);
        double rss1 = rss_bytes(), heap1 = bench_heap_bytes();
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
    if (rc != 0) bench_fail("cannot run %s: %s", path, strerror(rc));
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) bench_fail("waitpid: %s", strerror(errno));
    double t = now() - t0;
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_fail("%s did not exit with 0 (status 0x%x)", path, status);
    return t;
}

/* Runs `bench-c --child-mem key N` in a fresh process; its RSS and heap per subscription. */
void mem_child(const char *key, const char *name, double *rss, double *heap)
{
    char self[PATH_MAX + 64], count[32];
    snprintf(self, sizeof self, "%s/bench-c", opt.exe_dir);
    snprintf(count, sizeof count, "%zu", opt.mem_subs);
    char *argv[] = {self, "--child-mem", (char *)key, count, NULL};
    FILE *out = tmpfile();
    if (!out) bench_fail("tmpfile: %s", strerror(errno));
    spawn_wait(self, argv, fileno(out));
    rewind(out);
    if (fscanf(out, "%lf %lf", rss, heap) != 2) bench_fail("%s: the memory child printed nothing", name);
    fclose(out);
}

void case_memory(void)
{
    row *r = new_row("memory_per_subscription", "memory per subscription (RSS)", "bytes", "lower");
    r->peer_row = 1;
    row *h = new_row("heap_per_subscription", "memory per subscription (heap)", "bytes", "lower");
    h->in_table = 0;
    /* qtbus only: the same with a subtype, shared by all, or one of its own each (a new
     * subtype entry per subscription). */
    row *one = new_row("memory_one_subtype", "memory, one subtype shared (RSS)", "bytes", "lower");
    row *each = new_row("memory_subtype_each", "memory, a subtype each (RSS)", "bytes", "lower");
    for (int rep = 0; rep < opt.reps; rep++) {
        for (int i = 0; i < NLIB; i++) {
            if (i == C_QTBUSID) continue; /* the same subscriptions as qtbus's */
            double rss, heap;
            mem_child(libs[i]->key, libs[i]->name, &rss, &heap);
            r->c[i].rep[r->c[i].nrep++] = rss;
            h->c[i].rep[h->c[i].nrep++] = heap;
            r->c[i].iters = h->c[i].iters = opt.mem_subs;
        }
        row *sub_rows[] = {one, each};
        const char *keys[] = {"qtbus-subtype", "qtbus-subtypes"};
        for (int k = 0; k < 2; k++) {
            double rss, heap;
            mem_child(keys[k], "qtbus", &rss, &heap);
            cell *c = &sub_rows[k]->c[C_QTBUS];
            c->rep[c->nrep++] = rss;
            c->iters = opt.mem_subs;
        }
    }
    for (int i = 0; i < NCOL; i++)
        if (i != C_QTBUS) one->c[i].na = each->c[i].na = "-";
    for (int i = 0; i < NLIB; i++) {
        if (i == C_QTBUSID) {
            r->c[i].na = h->c[i].na = "-";
            continue;
        }
        finish(&r->c[i]);
        finish(&h->c[i]);
    }
    finish(&one->c[C_QTBUS]);
    finish(&each->c[C_QTBUS]);
}

/* ---- case 5: queued delivery --------------------------------------------------- */

typedef struct {
    const bench_queue_impl *impl;
    void *q;
    uint64_t chunk; /* bench.h: 0 stream, else the most items behind one gate */
} queue_arg;

static double measure_queue(void *p, uint64_t n)
{
    queue_arg *a = p;
    double t0 = now();
    a->impl->run(a->q, n, a->chunk);
    double t = now() - t0;
    expect_count(a->impl->name, "queued delivery", bench_queued_count(), n);
    return t;
}

/* Two variants: burst (the queue is held by a gate item until all n are posted: the
 * enqueue, dequeue and call cost per item, with no wake-up per item; the row the
 * target is checked on) and streaming (the queue runs while the items are posted:
 * what a producer sees, which swings with whether the consumer thread sleeps between
 * items).
 *
 * bounded: the qtbus column's queue is bounded to 1024 deliveries with
 * QTBUS_OVERFLOW_BLOCK and no timeout (qtbus_queue_set_limit).  A burst of n behind one
 * gate would leave the producer waiting for room forever (the gate holds the
 * consumer), so the bounded burst row posts in chunks of BENCH_QUEUE_CHUNK (1023: with
 * the gate, the 1024 slots): gate, post the chunk, open the gate, wait for the chunk,
 * and again.  Its bare column is chunked the same way, so q/bare compares like with
 * like (each chunk adds one wake-up of the queue's thread to both).  The stream row
 * needs no chunks: the producer waits for room when the queue is full.
 *
 * The fn-ptr column (the unsafe limit elsewhere) is a plain SPSC ring of 1024 slots
 * (lib_spsc.c) in all four rows, chunked as the bounded rows in burst mode (its gate
 * holds its consumer too). */
void case_queue(int burst, int bounded)
{
    static const char *const ids[2][2] = {{"queued_serial_streaming", "queued_serial"},
                                          {"queued_bounded_streaming", "queued_bounded"}};
    static const char *const titles[2][2] = {
        {"queued, serial queue (stream)", "queued, serial queue (burst)"},
        {"queued, bounded serial queue (stream)", "queued, bounded serial queue (burst)"}};
    row *r = new_row(ids[bounded][burst], titles[bounded][burst], "ns/event", "lower");
    uint64_t chunk = !burst ? 0 : bounded ? BENCH_QUEUE_CHUNK : UINT64_MAX;
    const bench_queue_impl *qimpl = bounded ? &bench_queue_qtbus_bounded : &bench_queue_qtbus;
    queue_arg qa = {qimpl, qimpl->create(), chunk};
    queue_arg la = {&bench_queue_libdispatch, bench_queue_libdispatch.create(), chunk};
    queue_arg sa = {&bench_queue_spsc, bench_queue_spsc.create(), chunk ? BENCH_QUEUE_CHUNK : 0};
    subject s[NCOL] = {{0}};
    s[C_QTBUS] = (subject){measure_queue, &qa, 256};
    s[C_FNPTR] = (subject){measure_queue, &sa, 256};
    s[C_BARE] = (subject){measure_queue, &la, 256};
    for (int i = C_QTBUSID; i <= C_MUTEX; i++)
        if (i != C_FNPTR) r->c[i].na = "-";
    run_interleaved(r, s);
    qa.impl->destroy(qa.q);
    la.impl->destroy(la.q);
    sa.impl->destroy(sa.q);
}

/* ---- case 6: start-up ---------------------------------------------------------- */

void case_startup(void)
{
    static const char *const prog[NCOL] = {
        "start-qtbus", NULL, "start-qtbus-cxx", "start-glib", "start-sigc", "start-boost", NULL, NULL, "start-bare"};
    row *r = new_row("startup", "start-up of a program", "ms", "lower");
    row *added = new_row("startup_added", "start-up added vs bare C", "ms", "lower");
    char path[NCOL][PATH_MAX + 64];
    int runs = opt.startup_runs;
    double t[NCOL][MAXREP * 8];
    for (int i = 0; i < NCOL; i++) {
        if (!prog[i]) continue;
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
            if (i != C_BARE) finish(&added->c[i]);
        }
    r->c[C_FNPTR].na = r->c[C_MUTEX].na = added->c[C_FNPTR].na = added->c[C_MUTEX].na = "-";
    r->c[C_QTBUSID].na = added->c[C_QTBUSID].na = "-"; /* the same library as qtbus */
}
