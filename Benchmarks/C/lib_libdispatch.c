/* SPDX-License-Identifier: MIT */
/*
 * lib_libdispatch.c -- the bare baseline of queued delivery: dispatch_async_f to one
 * serial libdispatch queue (what DispatchQueue.async is in Swift), from the libdispatch
 * the Swift toolchain ships.  Its header needs clang's __has_feature, so the four
 * functions used are declared here (C ABI of libdispatch on Linux).
 */
#include "bench.h"

#include <stdlib.h>

typedef struct dispatch_queue_s *dispatch_queue_t;
typedef void (*dispatch_function_t)(void *);
extern dispatch_queue_t dispatch_queue_create(const char *label, void *attr); /* NULL attr: serial */
extern void dispatch_async_f(dispatch_queue_t queue, void *context, dispatch_function_t work);
extern void dispatch_release(void *object);

static void *ld_create(void)
{
    dispatch_queue_t q = dispatch_queue_create("bench", NULL);
    if (!q) bench_fail("libdispatch: dispatch_queue_create failed");
    return q;
}

static void ld_run(void *q, uint64_t n, uint64_t chunk)
{
    bench_queued_arm(n);
    if (chunk == 0) {
        for (uint64_t i = 0; i < n; i++)
            dispatch_async_f(q, NULL, h_queued_plain);
        bench_queued_wait();
        return;
    }
    for (uint64_t done = 0; done < n;) {
        uint64_t k = n - done < chunk ? n - done : chunk;
        bench_queued_expect(done + k);
        bench_gate_prepare();
        dispatch_async_f(q, NULL, h_gate_plain);
        for (uint64_t i = 0; i < k; i++)
            dispatch_async_f(q, NULL, h_queued_plain);
        bench_gate_open();
        bench_queued_wait();
        done += k;
    }
}

static void ld_destroy(void *q) { dispatch_release(q); }

const bench_queue_impl bench_queue_libdispatch = {
    .key = "bare",
    .name = "libdispatch",
    .create = ld_create,
    .run = ld_run,
    .destroy = ld_destroy,
};
