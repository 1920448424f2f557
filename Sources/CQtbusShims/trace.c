/* SPDX-License-Identifier: MIT */
/* What trace hooks need from C (the hooks themselves: Trace.swift). */
#define _GNU_SOURCE
#include "qtbus_shims.h"
#include <sched.h>
#include <time.h>

QTBUS_INTERNAL uint32_t qtshim_trace_misuse_hooks;

uint64_t qtshim_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A hook call is usually short: yield a few times, then sleep 50 us a round. */
void qtshim_pause(unsigned round)
{
    if (round < 16) {
        sched_yield();
    } else {
        struct timespec ts = {0, 50000};
        nanosleep(&ts, NULL);
    }
}
