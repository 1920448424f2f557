/* SPDX-License-Identifier: MIT */
/* bench_support.c -- see bench_support.h. */
#define _GNU_SOURCE
#include "bench_support.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

__thread uint64_t bench_tls_count __attribute__((tls_model("initial-exec")));

uint64_t bench_count(void) { return bench_tls_count; }
void bench_count_reset(void) { bench_tls_count = 0; }

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int bench_allowed_cpus(int *first, int *second)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    *first = *second = -1;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &set)) *(k++ == 0 ? first : second) = c;
    return CPU_COUNT(&set);
}

int bench_pin_cpu(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void bench_stdout_line_buffered(void) { setvbuf(stdout, NULL, _IOLBF, 0); }
