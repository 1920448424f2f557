/* SPDX-License-Identifier: MIT */
/*
 * bench.h -- what the C benchmark's pieces share.
 *
 * Every library under test is an adapter (a bench_lib) that owns one "signal": a qtbus
 * bus with one event type, a GObject with one signal, a sigc::signal, a
 * boost::signals2::signal, or one of the two hand-written baselines.  The adapters run
 * their loops themselves, so the driver's indirect call is paid once per batch, not
 * once per dispatch.
 *
 * The handlers live in handlers.c, a separate translation unit, and are noinline: the
 * compiler cannot see what they do and cannot fold the dispatch loops away.  Each one
 * increments a thread-local counter, which the driver checks after every measurement.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BENCH_NOINLINE __attribute__((noinline))

/* ---- handlers.c -------------------------------------------------------------- */

/* The counter the handlers increment: one per thread, so two dispatching threads do
 * not fight over one cache line (the libraries are measured, not the counter). */
uint64_t bench_count(void);
/* This thread's counter, which every synchronous handler increments: a C++ lambda
 * increments it inline, as the C handlers do in their own body. */
extern __thread uint64_t bench_counter __attribute__((tls_model("local-exec")));
void bench_count_reset(void);

/* The work every synchronous handler does: count, and, while bench_touch_on() is in
 * force, also read and write one cache line of a 256 KiB buffer (a different line each
 * call), as a handler with real work touches memory.  Without it a handler is a
 * register increment, and a library's per-handler cost is flattered (its own memory
 * stays in L1).  Inline, so the C++ lambdas do the same work in their own body. */
extern uint64_t *bench_touch_lines;
extern uint64_t bench_touch_mask; /* 0: off; else the line count - 1 */
static inline void bench_work(void)
{
    bench_counter++;
    if (__builtin_expect(bench_touch_mask != 0, 0))
        bench_touch_lines[((bench_counter * 2654435761u) & bench_touch_mask) * 8]++;
}
void bench_touch_on(int on);

struct qtbus_event;
void h_plain(void *userdata);                                    /* fn-ptr array, mutex+snapshot */
void h_qtbus(const struct qtbus_event *event, void *userdata);   /* qtbus_handler */
void h_glib(void *instance, void *userdata);                     /* GCallback of a no-arg signal */
void h_void(void);                                               /* sigc++, Boost.Signals2 */
void h_signal(const char *text, int32_t number, void *userdata); /* qtbus typed signal */
void h_slot(const char *text, int32_t number);                   /* C++ slot of (const char *, int32_t) */
void h_glib_signal(void *instance, const char *text, int number, void *userdata); /* GLib, (gchararray, gint) */

/* Queued delivery: counts on the (serial) queue and wakes bench_queued_wait() when the
 * count reaches the target set by bench_queued_arm(). */
void bench_queued_arm(uint64_t target);
/* A new target with the count kept (a burst posted in chunks waits for each chunk):
 * only while no queued handler runs. */
void bench_queued_expect(uint64_t target);
void bench_queued_wait(void);
uint64_t bench_queued_count(void);
void h_queued_plain(void *context);                                   /* dispatch_function_t */
void h_queued_qtbus(const struct qtbus_event *event, void *userdata); /* qtbus_handler */

/* A gate for the burst variant: h_gate_* (posted first) blocks the serial queue until
 * bench_gate_open(). */
void bench_gate_prepare(void);
void bench_gate_open(void);
void h_gate_plain(void *context);
void h_gate_qtbus(const struct qtbus_event *event, void *userdata);

/* Dies with a message: a handler count that is not what it must be, a failed call. */
void bench_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* ---- adapters ------------------------------------------------------------------ */

typedef struct bench_lib {
    const char *key;                              /* JSON key: "qtbus", "glib", "sigc", "boost", "fnptr", "mutex" */
    const char *name;                             /* for people */
    int thread_safe;                              /* may two threads dispatch the same signal at once? */
    void *(*create)(void);                        /* an empty signal */
    void (*reserve)(void *s, size_t n);           /* room for n handles, memory touched */
    void (*connect_n)(void *s, size_t n);         /* n more counting handlers, handles kept */
    void (*dispatch)(void *s, uint64_t iters);    /* emit iters times */
    void (*sub_dispose)(void *s, uint64_t iters); /* connect + disconnect one handler, iters times */
    void (*destroy)(void *s);
    const char *(*version)(void); /* the library's version, static */
} bench_lib;

/* bench_qtbus_h1, _h8: qtbus_dispatch by name with 1 and 8 headers (bench-instructions). */
extern const bench_lib bench_qtbus_h1, bench_qtbus_h8;
extern const bench_lib bench_qtbus, bench_qtbus_id, bench_qtbus_cxx, bench_glib, bench_sigc, bench_boost, bench_fnptr,
    bench_mutex;

/* Queued delivery through one serial queue: qtbus (subscription on a qtbus_queue,
 * unbounded or bounded), bare libdispatch (dispatch_async_f) and a plain SPSC ring
 * (lib_spsc.c).  run() posts n items and waits until the handler counted n; the driver
 * times it.  chunk 0: stream, the queue runs while the items are posted (producer and
 * consumer race).  chunk > 0: burst, a gate item goes first and is opened once the
 * items behind it are posted (the queue holds them all, no wake-up per item), at most
 * `chunk` items per gate: gate, post the chunk, open the gate, wait for the chunk, and
 * again until n are done.  UINT64_MAX: one gate for all n (an unbounded queue).  A
 * queue of 1024 slots takes BENCH_QUEUE_CHUNK: the gate and the chunk fill it, and a
 * producer that blocks when it is full never waits for a gate it has not opened. */
#define BENCH_QUEUE_CHUNK 1023
#define BENCH_QUEUE_SLOTS 1024
typedef struct bench_queue_impl {
    const char *key, *name;
    void *(*create)(void);
    void (*run)(void *q, uint64_t n, uint64_t chunk);
    void (*destroy)(void *q);
} bench_queue_impl;

extern const bench_queue_impl bench_queue_qtbus, bench_queue_qtbus_bounded, bench_queue_libdispatch, bench_queue_spsc;

/* Memory per qtbus subscription with a subtype (lib_qtbus.c): n subscriptions naming
 * one subtype (distinct = 0) or a subtype each (distinct = 1).  Sets the RSS and heap
 * growth per subscription; the caller's storage and first-use allocations are not
 * counted, as in the memory case. */
void qtbus_subtype_memory(size_t n, int distinct, double rss(void), double heap(void), double *rss_out,
                          double *heap_out);

/* Typed signals of (const char *, int32_t) in C++ (case_signals.c's C++ columns):
 * qtbus::signal (lib_qtbus_cxx.cpp), boost::signals2::signal (lib_boost.cpp) and
 * sigc::signal (lib_sigc.cpp), each with `handlers` slots that are h_slot, connected
 * the way each library connects a function.  emit() emits ("alice", i) n times and
 * returns the handler calls the library reported (qtbus's reached count; the others
 * report none: 0). */
typedef struct bench_sig_impl {
    void *(*create)(size_t handlers);
    uint64_t (*emit)(void *s, uint64_t n);
    void (*destroy)(void *s);
} bench_sig_impl;

extern const bench_sig_impl bench_sig_qtbus_cxx, bench_sig_boost, bench_sig_sigc;

/* The compilers that built the C and the C++ parts (their __VERSION__). */
const char *bench_cxx_compiler(void);

#ifdef __cplusplus
}
#endif

#endif /* BENCH_H */
