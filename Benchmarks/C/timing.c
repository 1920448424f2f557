/* SPDX-License-Identifier: MIT */
/*
 * timing.c -- bench-c's clock, calibration, interleaved repetitions and count checks.
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

double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- calibration and interleaved repetitions --------------------------------- */

/* An operation count that was measured to make one repetition last at least
 * opt.rep_seconds (an extrapolated count can fall short when the run it came from was
 * slow: a first run pays for page faults and cold caches, so it is thrown away). */
uint64_t calibrate(measure_fn f, void *arg, uint64_t n)
{
    double target = opt.rep_seconds;
    (void)f(arg, n);
    for (;;) {
        double t = f(arg, n);
        if (t >= target || n >= (UINT64_C(1) << 40)) return n;
        if (t < target * 0.02) {
            n *= 10;
        } else {
            double m = (double)n * target * 1.1 / (t > 1e-9 ? t : 1e-9);
            n = m > (double)n * 1.05 ? (uint64_t)m : n + n / 10 + 1;
        }
    }
}

/* The per-operation cost in ns, for every column that has a subject, libraries
 * interleaved within each repetition. */
void run_interleaved(row *r, subject s[NCOL])
{
    for (int i = 0; i < NCOL; i++)
        if (s[i].f) r->c[i].iters = calibrate(s[i].f, s[i].arg, s[i].start ? s[i].start : 16);
    for (int rep = 0; rep < opt.reps; rep++)
        for (int i = 0; i < NCOL; i++)
            if (s[i].f) {
                double t = s[i].f(s[i].arg, r->c[i].iters);
                r->c[i].rep[r->c[i].nrep++] = t * 1e9 / (double)r->c[i].iters;
            }
    for (int i = 0; i < NCOL; i++)
        if (s[i].f) finish(&r->c[i]);
}

void expect_count(const char *lib, const char *what, uint64_t got, uint64_t want)
{
    if (got != want)
        bench_fail("%s, %s: the handlers ran %llu times, expected %llu", lib, what, (unsigned long long)got,
                   (unsigned long long)want);
}
