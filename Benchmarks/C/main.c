/* SPDX-License-Identifier: MIT */
/*
 * main.c -- bench-c, the C benchmark: qtbus against GLib's GSignal, libsigc++ 3,
 * Boost.Signals2 and two hand-written limits, side by side in one run.
 *
 *   bench-c [--smoke] [--json FILE] [--md FILE] [--reps N] [--rep-ms MS]
 *           [--case dispatch|subscribe|threads|memory|queue|startup|signals|trace|growth|flood|patterns]... [--meta KEY=VALUE]...
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
 *      (a gate item holds the queue until all items are posted) and as a stream; then
 *      the same with the qtbus queue bounded to 1024 deliveries, QTBUS_OVERFLOW_BLOCK
 *      (queued_bounded, queued_bounded_streaming: its burst goes in chunks of 1023
 *      behind a gate each, the bare column's too, since a producer that blocks on a
 *      full queue would wait forever for a gate it has not opened).  In all four rows
 *      the fn-ptr column is the limit of what a queue can cost: a plain SPSC ring of
 *      1024 slots, batched consumer sleeping on a futex (lib_spsc.c; bursts in chunks)
 *   6. start-up: median wall time of posix_spawn + wait of small programs linking each
 *      library, against a C program linking nothing (start-bare)
 *   7. typed signals: emit of a (const char *, int32_t) signal to 1, 10, 100 typed
 *      handlers, qtbus against GLib's generic and a specific marshaller, and a plain
 *      qtbus handler for the per-handler cost; and in C++, qtbus::signal against
 *      Boost.Signals2 and libsigc++ (case_signals.c; its own two tables)
 *   8. tracing: dispatch to 0, 1, 10 handlers with no trace hook, a DISPATCH hook, and a
 *      DISPATCH + DELIVER hook (case_trace.c; its own table)
 *   9. growth: dispatch and subscribe + dispose against the number of types, subtypes
 *      and subscriptions, 1 to 100,000 (case_growth.c; its own table)
 *  10. flood: per overflow rule (GROW, BLOCK, DROP_NEWEST, DROP_OLDEST, LATEST), a fresh
 *      process floods a queue of capacity 1000 whose handler sleeps 1 ms with 256-byte
 *      events (1,000,000; BLOCK 3,000): producer rate, heap growth at the peak, dropped,
 *      delivered and pending (case_flood.c; its own table; one run per rule)
 *  11. patterns: pattern subscriptions (QTBUS_SUB_PATTERN) against literal ones, qtbus
 *      only: dispatch to 1 literal handler with 0, 10, 1000 patterns matching none;
 *      dispatch reaching 1 literal / 1 pattern / 10 literal / 10 pattern subscriptions;
 *      subscribe + dispose with 100 present (literal, pattern, 100 patterns); the cache
 *      miss (subscribe a new pattern, beside the same + the dispatch it makes stale, and
 *      their difference; a fresh bus every 10 new patterns); RSS and heap per pattern
 *      subscription over 100,000 on one pattern and on 1,000 patterns x 100, a fresh
 *      process each (case_patterns.c; its own table)
 * Files: this one (options, the order of the cases), results.c, timing.c, cases.c,
 * report.c, machine.c (bench_c.h says what each holds); the adapters lib_*.c and the
 * handlers (handlers.c) are unchanged by the split.
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

/* ---- settings ------------------------------------------------------------------ */

bench_options opt;

/* ---- main ---------------------------------------------------------------------- */

/* --case NAME (repeatable) runs only those cases; none given: all. */
static const char *only[16];
static int nonly;

static int wanted(const char *name)
{
    for (int i = 0; i < nonly; i++)
        if (strcmp(only[i], name) == 0) return 1;
    return nonly == 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench-c [--smoke] [--json FILE] [--md FILE] [--reps N] [--rep-ms MS] "
                    "[--case dispatch|subscribe|threads|memory|queue|startup|signals|trace|growth|flood|patterns]... "
                    "[--meta KEY=VALUE]...\n");
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--child-mem") == 0)
        return child_mem(argv[2], (size_t)strtoull(argv[3], NULL, 10));
    if (argc == 5 && strcmp(argv[1], "--child-flood") == 0)
        return child_flood(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10));

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
        else if (strcmp(a, "--case") == 0 && i + 1 < argc && nonly < 16)
            only[nonly++] = argv[++i];
        else if (strcmp(a, "--rep-ms") == 0 && i + 1 < argc)
            opt.rep_seconds = atof(argv[++i]) / 1e3;
        else if (strcmp(a, "--meta") == 0 && i + 1 < argc && opt.nmeta < 16) {
            char *kv = argv[++i], *eq = strchr(kv, '=');
            if (!eq) usage();
            *eq = 0;
            opt.meta_key[opt.nmeta] = kv;
            opt.meta_value[opt.nmeta++] = eq + 1;
        } else
            usage();
    }
    if (opt.reps < 1 || opt.reps > MAXREP || opt.rep_seconds <= 0) usage();

    ssize_t len = readlink("/proc/self/exe", opt.exe_dir, sizeof opt.exe_dir - 1);
    if (len <= 0) bench_fail("readlink /proc/self/exe failed");
    opt.exe_dir[len] = 0;
    *strrchr(opt.exe_dir, '/') = 0;

    read_machine();
    load_start = loadavg();
    double t_start = now(), machine0 = machine_cpu_seconds(), own0 = own_cpu_seconds();
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("bench-c%s: %s, %d CPUs allowed, load %.2f; %s; %s\n", opt.smoke ? " --smoke" : "", cpu_model, opt.ncpus,
           load_start, cc_version(), bench_cxx_compiler());
    printf("libraries: qtbus %s, GLib %s, libsigc++ %s, Boost %s\n", libs[C_QTBUS]->version(), libs[C_GLIB]->version(),
           libs[C_SIGC]->version(), libs[C_BOOST]->version());
    printf("%d repetitions of >= %.0f ms per library and case, interleaved\n\n", opt.reps, opt.rep_seconds * 1e3);

    static const int counts[] = {0, 1, 10, 100};
    if (wanted("dispatch")) {
        for (int k = 0; k < 4; k++) {
            printf("running: dispatch to %d handler%s\n", counts[k], counts[k] == 1 ? "" : "s");
            case_dispatch(counts[k], 0);
        }
        for (int k = 2; k < 4; k++) {
            printf("running: dispatch to %d handlers touching memory\n", counts[k]);
            case_dispatch(counts[k], 1);
        }
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
        printf("running: memory per subscription (%zu subscriptions, fresh process each)\n", opt.mem_subs);
        case_memory();
    }
    if (wanted("queue")) {
        printf("running: queued delivery\n");
        case_queue(1, 0);
        case_queue(0, 0);
        case_queue(1, 1);
        case_queue(0, 1);
    }
    if (wanted("startup")) {
        printf("running: start-up\n");
        case_startup();
    }
    if (wanted("signals")) {
        printf("running: typed signals\n");
        case_signals();
    }
    if (wanted("trace")) {
        printf("running: trace hooks\n");
        case_trace();
    }
    if (wanted("growth")) {
        printf("running: costs against the number of types, subtypes and subscriptions\n");
        case_growth();
    }
    if (wanted("flood")) {
        printf("running: a flood into one queue per overflow rule (fresh process each)\n");
        case_flood();
    }
    if (wanted("patterns")) {
        printf("running: pattern subscriptions against literal ones\n");
        case_patterns();
    }
    double wall = now() - t_start;
    other_cpu_share = ((machine_cpu_seconds() - machine0) - (own_cpu_seconds() - own0)) / wall;
    if (other_cpu_share < 0) other_cpu_share = 0;

    printf("\n");
    print_table(stdout, 0);
    printf("\n");
    print_table(stdout, 1);
    printf("\nColumns:\n");
    for (int i = 0; i < NCOL; i++)
        printf("  %-10s %s\n", col_head[i], col_long[i]);
    printf("q/X = qtbus / X, median of the per-repetition ratios (lower is better, except the "
           "scaling row: higher).\n");
    printf("\n");
    print_signals(stdout, 0);
    print_trace(stdout, 0);
    print_growth(stdout, 0);
    print_flood(stdout, 0);
    print_patterns(stdout, 0);
    printf("\nTargets of PERFORMANCE.md in this run%s:\n", opt.smoke ? " (smoke: not meaningful)" : "");
    print_targets(stdout, 0);
    printf("\nother programs used %.0f%% of one CPU during the run (%.0f s)%s\n", other_cpu_share * 100, wall,
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
