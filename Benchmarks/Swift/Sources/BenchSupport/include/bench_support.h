/* SPDX-License-Identifier: MIT */
/*
 * bench_support.h -- what the Swift benchmark needs from C.
 *
 * The handler counter: every closure under test, whatever library calls it, runs
 * bench_count_inc(), which increments this thread's counter.  Per thread, so that two
 * dispatching threads do not share a cache line (the libraries are measured, not the
 * counter); initial-exec TLS, so the increment is one instruction on %fs, as C's
 * __thread counter in Benchmarks/C/handlers.c.  It is static inline: Swift inlines it into
 * each closure's body, which the libraries call through their own closure pointers.
 *
 * The rest: the clock, CPU pinning and the affinity mask, RSS and heap readings, and
 * the machine's CPU time (to tell how busy the other programs were).
 */
#ifndef BENCH_SUPPORT_H
#define BENCH_SUPPORT_H

#include <stdint.h>

extern __thread uint64_t bench_tls_count __attribute__((tls_model("initial-exec")));

static inline __attribute__((always_inline)) void bench_count_inc(void) { bench_tls_count++; }
uint64_t bench_count(void);
void bench_count_reset(void);

/* CLOCK_MONOTONIC, in seconds. */
double bench_now(void);

/* How many CPUs this process may run on; *first and *second get the first two of them
 * (-1 when absent). */
int bench_allowed_cpus(int *first, int *second);
/* Pins the calling thread to one CPU; 0 on success. */
int bench_pin_cpu(int cpu);

/* Resident set size of this process (/proc/self/statm), bytes; -1 on failure. */
double bench_rss_bytes(void);
/* Bytes malloc has handed out (mallinfo2: in-use arena bytes + mmapped blocks). */
double bench_heap_bytes(void);

/* CPU seconds used by the whole machine since boot (/proc/stat: all but idle and
 * iowait), -1 on failure; and by this process and its reaped children. */
double bench_machine_cpu_seconds(void);
double bench_own_cpu_seconds(void);

/* Line-buffers stdout, so progress shows through a pipe. */
void bench_stdout_line_buffered(void);

/* The engine's version string (qtbus_version(), exported by the QTBusEngine linked into
 * this program, as C sees it). */
const char *qtbus_version(void);

#endif
