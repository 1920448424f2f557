/* SPDX-License-Identifier: MIT */
/*
 * count.c -- bench-instructions: the workload whose instructions callgrind counts
 * (scripts/bench-instructions.sh runs it; docs/bench/bench-instructions.md has the results).
 *
 *   count LIB CASE HANDLERS ITERS
 *     LIB       qtbus (qtbus_dispatch, the type as a string), qtbus_id (qtbus_dispatch_id),
 *               qtbus_h1, qtbus_h8 (qtbus_dispatch with 1 and 8 headers),
 *               fnptr (the fn-ptr array), mutex (mutex + refcounted snapshot)
 *     CASE      dispatch: ITERS dispatches to HANDLERS counting handlers;
 *               subdispose: ITERS subscribe + dispose pairs with HANDLERS present
 *
 * The adapters are bench-c's own (lib_qtbus.c, lib_baselines.c: the same loops bench-c
 * times), the handlers bench-c's (handlers.c).  The two baselines are built into a shared
 * library of their own, as libqtbus is one: their calls leave the executable as qtbus's do.
 * Set-up (the handlers' subscriptions, a first round of the same operations, so that
 * a type is learned, lazy bindings resolved and the thread registered) runs before
 * `measured`, which is all that callgrind counts (--toggle-collect=measured); the
 * script runs two lengths and divides their difference, so what `measured` does once
 * cancels too.
 */
#include "../bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What callgrind counts: one call of the adapter's loop. */
BENCH_NOINLINE void measured(const bench_lib *lib, void *ctx, int subdispose, uint64_t iters)
{
    if (subdispose)
        lib->sub_dispose(ctx, iters);
    else
        lib->dispatch(ctx, iters);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr,
                "usage: count qtbus|qtbus_id|qtbus_h1|qtbus_h8|fnptr|mutex dispatch|subdispose HANDLERS ITERS\n");
        return 2;
    }
    const bench_lib *lib = strcmp(argv[1], "qtbus") == 0      ? &bench_qtbus
                           : strcmp(argv[1], "qtbus_id") == 0 ? &bench_qtbus_id
                           : strcmp(argv[1], "qtbus_h1") == 0 ? &bench_qtbus_h1
                           : strcmp(argv[1], "qtbus_h8") == 0 ? &bench_qtbus_h8
                           : strcmp(argv[1], "fnptr") == 0    ? &bench_fnptr
                           : strcmp(argv[1], "mutex") == 0    ? &bench_mutex
                                                              : NULL;
    int subdispose = strcmp(argv[2], "subdispose") == 0;
    if (!lib || (!subdispose && strcmp(argv[2], "dispatch") != 0)) {
        fprintf(stderr, "count: unknown library or case\n");
        return 2;
    }
    size_t handlers = strtoull(argv[3], NULL, 10);
    uint64_t iters = strtoull(argv[4], NULL, 10);

    void *ctx = lib->create();
    lib->reserve(ctx, handlers + 1);
    lib->connect_n(ctx, handlers);
    measured(lib, ctx, subdispose, 1000); /* warm: the same calls, not counted */
    bench_count_reset();
    measured(lib, ctx, subdispose, iters);
    uint64_t expected = subdispose ? 0 : iters * handlers;
    if (bench_count() != expected) {
        fprintf(stderr, "count: %s %s: the handlers ran %llu times, expected %llu\n", argv[1], argv[2],
                (unsigned long long)bench_count(), (unsigned long long)expected);
        return 1;
    }
    lib->destroy(ctx);
    return 0;
}
