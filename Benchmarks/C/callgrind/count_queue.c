/* SPDX-License-Identifier: MIT */
/*
 * count_queue.c -- bench-instructions: the queued-delivery workload whose instructions
 * callgrind counts, producer and consumer together (scripts/bench-instructions.sh runs
 * it; docs/bench/bench-instructions.md, "Queued delivery", has the results).
 *
 *   count-queue IMPL ITERS
 *     IMPL   qtbus (a subscription on a created queue), qtbus_bounded (the same queue
 *            bounded, QTBUS_OVERFLOW_BLOCK, never full), libdispatch (bare
 *            dispatch_async_f to a serial queue)
 *
 * bench-c's burst rows (cases.c, case_queue): ITERS items posted behind a gate that
 * holds the queue until they are all posted (bounded: in chunks of BENCH_QUEUE_CHUNK),
 * with bench-c's adapters and handlers.  Every thread is counted (the consumer runs on
 * the queue's thread), so the script counts the whole program at two lengths and divides
 * the difference: start-up, the warm-up round and the exit cancel.
 */
#include "../bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: count-queue qtbus|qtbus_bounded|libdispatch ITERS\n");
        return 2;
    }
    const bench_queue_impl *impl = strcmp(argv[1], "qtbus") == 0           ? &bench_queue_qtbus
                                   : strcmp(argv[1], "qtbus_bounded") == 0 ? &bench_queue_qtbus_bounded
                                   : strcmp(argv[1], "libdispatch") == 0   ? &bench_queue_libdispatch
                                                                           : NULL;
    if (!impl) {
        fprintf(stderr, "count-queue: unknown implementation\n");
        return 2;
    }
    uint64_t iters = strtoull(argv[2], NULL, 10);
    uint64_t chunk = impl == &bench_queue_qtbus_bounded ? BENCH_QUEUE_CHUNK : UINT64_MAX;
    void *q = impl->create();
    impl->run(q, 1000, chunk); /* warm: the same items, so that the second length adds only items */
    impl->run(q, iters, chunk);
    if (bench_queued_count() != iters) {
        fprintf(stderr, "count-queue: %s: the handler ran %llu times, expected %llu\n", argv[1],
                (unsigned long long)bench_queued_count(), (unsigned long long)iters);
        return 1;
    }
    impl->destroy(q);
    return 0;
}
