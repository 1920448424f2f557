/* SPDX-License-Identifier: MIT */
/*
 * lib_spsc.c -- the limit of what a queue can cost: a plain single-producer
 * single-consumer ring, the fn-ptr column of the queued rows.
 *
 * 1024 preallocated slots of {function, context}; no allocation per item, no lock.
 * Disruptor / Vyukov style: the producer owns `head` (the next slot it writes) and a
 * cached copy of the consumer's `tail`, the consumer owns `tail` and a cached copy of
 * `head`, each pair on its own cache line, so neither side reads the other's line
 * until its cached copy says the ring is full (producer) or empty (consumer).  One
 * consumer thread drains in batches: it takes everything published, calls the items
 * in order, and only then publishes its new tail (one store per batch).  When the ring
 * is empty it sleeps on a futex; the producer wakes it only when it went to sleep (a
 * flag, the futex word), so a consumer that keeps up costs the producer no system call.
 * The same the other way round: a producer that finds the ring full sleeps until the
 * consumer has published room (the stream rows, when the consumer falls behind).
 *
 * Going to sleep and publishing are the two halves of a Dekker handshake (the sleeper
 * sets its flag and looks again; the other side publishes and then reads the flag), so
 * both have a full fence between their store and their load: that fence, once per item
 * on the producer's side, is part of the honest cost of a ring that may sleep.
 *
 * Single producer: only the thread that calls run() pushes.  Burst mode (bench.h):
 * the gate item holds the consumer inside its batch, so the gate's slot is not given
 * back until the gate opens; a gate and 1023 items fill the 1024 slots, and a burst of
 * n items goes in chunks of at most BENCH_QUEUE_CHUNK (gate, post the chunk, open the
 * gate, wait for the chunk), whatever chunk size the caller asks for above that.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOTS ((uint64_t)BENCH_QUEUE_SLOTS)
#define MASK (SLOTS - 1)
#define LINE 64

typedef struct {
    void (*fn)(void *); /* NULL: the consumer thread ends */
    void *context;
} slot;

typedef struct {
    /* the producer's line */
    _Alignas(LINE) _Atomic uint64_t head; /* next slot to write; published with release */
    uint64_t tail_cache;                  /* the consumer's tail as last read */
    /* the consumer's line */
    _Alignas(LINE) _Atomic uint64_t tail; /* next slot to read; published with release */
    uint64_t head_cache;                  /* the producer's head as last read */
    /* sleep flags (futex words), each on its own line: written only around sleeps */
    _Alignas(LINE) _Atomic uint32_t consumer_sleeps;
    _Alignas(LINE) _Atomic uint32_t producer_sleeps;
    _Alignas(LINE) slot slots[SLOTS];
    pthread_t thread;
} ring;

static void futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
    /* EAGAIN (the word changed) and EINTR: the caller looks again. */
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *consumer_main(void *p)
{
    ring *r = p;
    uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    for (;;) {
        if (r->head_cache == t) {
            r->head_cache = atomic_load_explicit(&r->head, memory_order_acquire);
            if (r->head_cache == t) {
                /* Empty: raise the flag, look again (seq_cst: the store is ordered before
                 * the load), sleep while the flag stays up.  The producer lowers it and
                 * wakes us. */
                atomic_store_explicit(&r->consumer_sleeps, 1, memory_order_seq_cst);
                r->head_cache = atomic_load_explicit(&r->head, memory_order_seq_cst);
                if (r->head_cache == t) futex_wait(&r->consumer_sleeps, 1);
                atomic_store_explicit(&r->consumer_sleeps, 0, memory_order_relaxed);
                continue;
            }
        }
        /* A batch: everything published so far, then one store of the tail. */
        uint64_t h = r->head_cache;
        for (; t != h; t++) {
            slot s = r->slots[t & MASK];
            if (!s.fn) return NULL;
            s.fn(s.context);
        }
        atomic_store_explicit(&r->tail, t, memory_order_seq_cst);
        if (atomic_load_explicit(&r->producer_sleeps, memory_order_seq_cst) &&
            atomic_exchange_explicit(&r->producer_sleeps, 0, memory_order_relaxed))
            futex_wake(&r->producer_sleeps);
    }
}

static inline void push(ring *r, void (*fn)(void *), void *context)
{
    uint64_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
    while (h - r->tail_cache == SLOTS) {
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (h - r->tail_cache < SLOTS) break;
        /* Full: the same handshake as the consumer's, on the other flag. */
        atomic_store_explicit(&r->producer_sleeps, 1, memory_order_seq_cst);
        r->tail_cache = atomic_load_explicit(&r->tail, memory_order_seq_cst);
        if (h - r->tail_cache == SLOTS) futex_wait(&r->producer_sleeps, 1);
        atomic_store_explicit(&r->producer_sleeps, 0, memory_order_relaxed);
    }
    r->slots[h & MASK] = (slot){fn, context};
    atomic_store_explicit(&r->head, h + 1, memory_order_seq_cst);
    if (atomic_load_explicit(&r->consumer_sleeps, memory_order_seq_cst) &&
        atomic_exchange_explicit(&r->consumer_sleeps, 0, memory_order_relaxed))
        futex_wake(&r->consumer_sleeps);
}

static void *spsc_create(void)
{
    ring *r;
    if (posix_memalign((void **)&r, LINE, sizeof *r) != 0) bench_fail("spsc: out of memory");
    *r = (ring){0};
    for (unsigned i = 0; i < SLOTS; i++)
        r->slots[i] = (slot){h_queued_plain, NULL}; /* touch the slots now */
    int rc = pthread_create(&r->thread, NULL, consumer_main, r);
    if (rc != 0) bench_fail("spsc: pthread_create: %d", rc);
    return r;
}

static void spsc_run(void *p, uint64_t n, uint64_t chunk)
{
    ring *r = p;
    bench_queued_arm(n);
    if (chunk == 0) {
        for (uint64_t i = 0; i < n; i++)
            push(r, h_queued_plain, NULL);
        bench_queued_wait();
        return;
    }
    if (chunk > BENCH_QUEUE_CHUNK) chunk = BENCH_QUEUE_CHUNK;
    for (uint64_t done = 0; done < n;) {
        uint64_t k = n - done < chunk ? n - done : chunk;
        bench_queued_expect(done + k);
        bench_gate_prepare();
        push(r, h_gate_plain, NULL);
        for (uint64_t i = 0; i < k; i++)
            push(r, h_queued_plain, NULL);
        bench_gate_open();
        bench_queued_wait();
        done += k;
    }
}

static void spsc_destroy(void *p)
{
    ring *r = p;
    push(r, NULL, NULL);
    pthread_join(r->thread, NULL);
    free(r);
}

const bench_queue_impl bench_queue_spsc = {
    .key = "fnptr",
    .name = "SPSC ring",
    .create = spsc_create,
    .run = spsc_run,
    .destroy = spsc_destroy,
};
