/* SPDX-License-Identifier: MIT */
/* probes.c -- what a run reads of the process and the machine: RSS, heap, CPU seconds.
 * Shared by both benchmarks: swift-bench gets it with this target, and bench-c
 * (Benchmarks/C/Makefile) compiles this file by path. */
#define _GNU_SOURCE
#include "bench_support.h"

#include <malloc.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

double bench_rss_bytes(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    int ok = fscanf(f, "%ld %ld", &size, &resident) == 2;
    fclose(f);
    return ok ? (double)resident * (double)sysconf(_SC_PAGESIZE) : -1;
}

double bench_heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (double)(mi.uordblks + mi.hblkhd);
}

double bench_machine_cpu_seconds(void)
{
    unsigned long long v[8] = {0};
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    int ok = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
                    &v[7]) == 8;
    fclose(f);
    if (!ok) return -1;
    /* user nice system idle iowait irq softirq steal: all but idle and iowait */
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

double bench_own_cpu_seconds(void)
{
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) +
           (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec + kids.ru_stime.tv_usec) *
               1e-6;
}
