/* SPDX-License-Identifier: MIT */
/*
 * handlers.c -- the handlers, alone in their translation unit (see bench.h).
 * Every synchronous handler does the same work: increment this thread's counter.
 */
#include "bench.h"

#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__thread uint64_t bench_counter;
#define count bench_counter

uint64_t bench_count(void) { return count; }
void bench_count_reset(void) { count = 0; }

uint64_t *bench_touch_lines;
uint64_t bench_touch_mask;

void bench_touch_on(int on)
{
    enum { LINES = 256 * 1024 / 64 };
    if (on && !bench_touch_lines && !(bench_touch_lines = calloc(LINES, 64))) bench_fail("out of memory");
    bench_touch_mask = on ? LINES - 1 : 0;
}

BENCH_NOINLINE void h_plain(void *userdata)
{
    (void)userdata;
    bench_work();
}
BENCH_NOINLINE void h_qtbus(const struct qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    bench_work();
}
BENCH_NOINLINE void h_glib(void *instance, void *userdata)
{
    (void)instance;
    (void)userdata;
    bench_work();
}
BENCH_NOINLINE void h_void(void) { bench_work(); }
/* Typed signal handlers of (const char *, int32_t): the same work, the arguments unread
 * (as the other handlers leave their event unread). */
BENCH_NOINLINE void h_signal(const char *text, int32_t number, void *userdata)
{
    (void)text;
    (void)number;
    (void)userdata;
    bench_work();
}
BENCH_NOINLINE void h_slot(const char *text, int32_t number)
{
    (void)text;
    (void)number;
    bench_work();
}
BENCH_NOINLINE void h_glib_signal(void *instance, const char *text, int number, void *userdata)
{
    (void)instance;
    (void)text;
    (void)number;
    (void)userdata;
    bench_work();
}

/* Queued handlers run one at a time on a serial queue; the semaphore orders the
 * queue's writes before the waiter's reads. */
static uint64_t queued_count, queued_target;
static sem_t queued_done;
static int queued_ready;

void bench_queued_arm(uint64_t target)
{
    if (!queued_ready) {
        sem_init(&queued_done, 0, 0);
        queued_ready = 1;
    }
    queued_count = 0;
    queued_target = target;
}

void bench_queued_expect(uint64_t target) { queued_target = target; }

void bench_queued_wait(void)
{
    while (sem_wait(&queued_done) != 0) {
    }
}

uint64_t bench_queued_count(void) { return queued_count; }

static void queued_one(void)
{
    if (++queued_count == queued_target) sem_post(&queued_done);
}

/* The gate: a queued item that blocks its serial queue until bench_gate_open(), so the
 * items posted behind it are all queued before the first one runs. */
static sem_t gate;
static int gate_ready;

void bench_gate_prepare(void)
{
    if (!gate_ready) {
        sem_init(&gate, 0, 0);
        gate_ready = 1;
    }
}

void bench_gate_open(void) { sem_post(&gate); }

static void gate_wait(void)
{
    while (sem_wait(&gate) != 0) {
    }
}

void h_gate_plain(void *context)
{
    (void)context;
    gate_wait();
}

void h_gate_qtbus(const struct qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    gate_wait();
}

BENCH_NOINLINE void h_queued_plain(void *context)
{
    (void)context;
    queued_one();
}

BENCH_NOINLINE void h_queued_qtbus(const struct qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    queued_one();
}

void bench_fail(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("bench-c: FAILED: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    _exit(1); /* not abort(): the Swift runtime's crash report would bury the message */
}
