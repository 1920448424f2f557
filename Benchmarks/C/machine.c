/* SPDX-License-Identifier: MIT */
/*
 * machine.c -- what bench-c says about the machine it ran on.
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

/* ---- the machine ----------------------------------------------------------------- */

char cpu_model[256] = "unknown", date_utc[64], kernel[256];
double load_start;

/* CPU seconds used by the whole machine (/proc/stat) and by this process and its
 * children: their difference over the run is what other programs took meanwhile.  The
 * probes are Benchmarks/Swift/Sources/BenchSupport's (shared with swift-bench). */
double machine_cpu_seconds(void)
{
    double v = bench_machine_cpu_seconds();
    if (v < 0) bench_fail("cannot read /proc/stat");
    return v;
}

double own_cpu_seconds(void) { return bench_own_cpu_seconds(); }

double other_cpu_share; /* other programs' CPU use during the run, in cores */

void read_machine(void)
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
    if (f) fclose(f);
    time_t t = time(NULL);
    strftime(date_utc, sizeof date_utc, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    struct utsname u;
    if (uname(&u) == 0) snprintf(kernel, sizeof kernel, "%s %s %s", u.sysname, u.release, u.machine);
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    opt.ncpus = CPU_COUNT(&set);
    for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &set)) opt.cpus[k++] = c;
}

double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

const char *cc_version(void)
{
#ifdef __clang__
    return "clang " __clang_version__;
#else
    return "gcc " __VERSION__;
#endif
}
