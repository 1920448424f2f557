/* SPDX-License-Identifier: MIT */
/*
 * The hand-off of received messages from nats.c's delivery threads to the bridge's
 * thread, without a lock between them.
 *
 * With a mutex here, the two threads took it once per message and once per batch, and
 * on a machine where more threads run than it has CPUs (the publisher, the server,
 * nats.c's reader and delivery threads, the bridge's) the holder was often preempted
 * inside it, and the futex calls on that mutex rivalled all of nats.c's own
 * (docs/perf-notes.md, "The hand-off without a lock").  Now:
 *   - a producer pushes a node on `incoming` (a stack, one compare-and-swap), and the
 *     thread takes the whole stack at once (one exchange) and reverses it into arrival
 *     order, so no node is ever taken alone and there is no ABA;
 *   - the backlog bound is one 64-bit counter (events in the high bits, bytes in the
 *     low), added to by the producer and taken off by the thread after each batch;
 *   - nodes go back through `returned` (pushed by the thread, or by a producer with a
 *     node it could not queue; taken whole by a producer under pool_lock, which only
 *     producers take: one per import subscription, so it is rarely contended);
 *   - the thread sleeps on a futex word, `wake_seq`, after announcing it in `sleeping`;
 *     the first producer to find it asleep clears `sleeping`, moves the word on and
 *     wakes it, and no lock is taken.  Both sides store, then load the other's word
 *     (sequentially consistent), so either the thread sees the message or the producer
 *     sees the thread asleep.  (With a condition variable, the producer took the
 *     thread's mutex to signal, and the woken thread then waited for that mutex: more
 *     futex calls again, docs/perf-notes.md, "The hand-off without a lock".)
 */
#include "bridge.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BACKLOG_EVENT ((uint64_t)1 << 40)
#define BACKLOG_BYTES (BACKLOG_EVENT - 1)

qn_pending *qn_node_get(qtbus_nats *bridge, size_t need)
{
    qn_pending *p = NULL;
    if (need <= QN_NODE_COPY) {
        pthread_mutex_lock(&bridge->pool_lock);
        p = bridge->pool;
        if (!p) p = atomic_exchange_explicit(&bridge->handoff.returned, NULL, memory_order_acquire);
        if (p) bridge->pool = p->next;
        pthread_mutex_unlock(&bridge->pool_lock);
        if (p) return p;
        /* A pool node stays the bridge's until close, so their number is bounded. */
        if (atomic_fetch_add_explicit(&bridge->pool_nodes, 1, memory_order_relaxed) < QN_POOL_MAX) {
            p = malloc(sizeof *p + QN_NODE_COPY);
            if (p) {
                p->recycled = true;
                return p;
            }
        }
        atomic_fetch_sub_explicit(&bridge->pool_nodes, 1, memory_order_relaxed);
    }
    p = malloc(sizeof *p + need);
    if (p) p->recycled = false;
    return p;
}

bool qn_handoff_push(qtbus_nats *bridge, qn_pending *p, size_t *held_events, size_t *held_bytes)
{
    qn_handoff *h = &bridge->handoff;
    uint64_t add = BACKLOG_EVENT + p->size;
    uint64_t before = atomic_fetch_add_explicit(&h->backlog, add, memory_order_relaxed);
    if ((before >> 40) >= QTBUS_NATS_MAX_PENDING || (before & BACKLOG_BYTES) + p->size > QTBUS_NATS_MAX_PENDING_BYTES) {
        atomic_fetch_sub_explicit(&h->backlog, add, memory_order_relaxed);
        *held_events = (size_t)(before >> 40);
        *held_bytes = (size_t)(before & BACKLOG_BYTES);
        return false;
    }
    qn_pending *top = atomic_load_explicit(&h->incoming, memory_order_relaxed);
    do {
        p->next = top;
    } while (!atomic_compare_exchange_weak_explicit(&h->incoming, &top, p, memory_order_seq_cst, memory_order_relaxed));
    if (atomic_load_explicit(&h->sleeping, memory_order_seq_cst) &&
        atomic_exchange_explicit(&h->sleeping, false, memory_order_relaxed)) {
        qn_handoff_wake(bridge);
    }
    return true;
}

uint64_t qn_handoff_pending(qtbus_nats *bridge)
{
    return atomic_load_explicit(&bridge->handoff.backlog, memory_order_relaxed) / BACKLOG_EVENT;
}

void qn_handoff_enqueue(qtbus_nats *bridge, natsMsg *msg, bool answer, char tag)
{
    size_t bytes = (size_t)natsMsg_GetDataLength(msg);
    const char *subject = natsMsg_GetSubject(msg), *reply = natsMsg_GetReply(msg);
    /* An event's headers stay in its natsMsg, kept until the event is dispatched rather
     * than copied: a message without them (an answer never has any for us) copies as
     * before. */
    bool copy = bytes <= QN_COPY_MAX && (answer || !qn_has_event_headers(msg));
    size_t subject_size = strlen(subject) + 1, reply_size = reply ? strlen(reply) + 1 : 0;
    qn_pending *p = qn_node_get(bridge, copy ? bytes + subject_size + reply_size : 0);
    if (!p) {
        if (!answer) atomic_fetch_add_explicit(&bridge->dropped, 1, memory_order_relaxed);
        qn_report(bridge, "qtbus_nats_import", QTBUS_ENOMEM,
                  "dropped a %zu-byte event on %.300s: no memory to queue it", bytes, subject);
        natsMsg_Destroy(msg);
        return;
    }
    p->answer = answer;
    p->tag = tag;
    p->size = bytes;
    if (copy) {
        p->msg = NULL;
        if (bytes) memcpy(p->copy, natsMsg_GetData(msg), bytes);
        p->data = p->copy;
        p->subject = memcpy(p->copy + bytes, subject, subject_size);
        p->reply = reply ? memcpy(p->copy + bytes + subject_size, reply, reply_size) : NULL;
    } else {
        p->msg = msg;
        p->data = natsMsg_GetData(msg);
        p->subject = subject;
        p->reply = reply;
    }
    size_t held_events, held_bytes;
    if (qn_handoff_push(bridge, p, &held_events, &held_bytes)) {
        if (copy) natsMsg_Destroy(msg);
        return;
    }
    if (!answer) atomic_fetch_add_explicit(&bridge->dropped, 1, memory_order_relaxed);
    qn_report(bridge, "qtbus_nats_import", QTBUS_EIO,
              "dropped a %zu-byte event on %.300s: the bridge already holds %zu events (%zu bytes) not yet "
              "dispatched, its bound (QTBUS_NATS_MAX_PENDING, QTBUS_NATS_MAX_PENDING_BYTES)",
              bytes, subject, held_events, held_bytes);
    p->msg = NULL;
    natsMsg_Destroy(msg);
    /* Not queued: a pooled node goes back as a dispatched one would. */
    if (p->recycled) {
        qn_handoff_done(bridge, 0, 0, p, p);
    } else {
        free(p);
    }
}

void qn_handoff_wake(qtbus_nats *bridge)
{
    atomic_fetch_add_explicit(&bridge->handoff.wake_seq, 1, memory_order_seq_cst);
    syscall(SYS_futex, &bridge->handoff.wake_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

uint32_t qn_handoff_seq(qtbus_nats *bridge)
{
    return atomic_load_explicit(&bridge->handoff.wake_seq, memory_order_seq_cst);
}

void qn_handoff_wait(qtbus_nats *bridge, uint32_t seen, int64_t deadline_ns)
{
    qn_handoff *h = &bridge->handoff;
    atomic_store_explicit(&h->sleeping, true, memory_order_seq_cst);
    /* The last look, after the announcement: a message pushed after it wakes us. */
    if (!atomic_load_explicit(&h->incoming, memory_order_seq_cst)) {
        struct timespec until = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
        /* FUTEX_WAIT_BITSET: an absolute CLOCK_MONOTONIC deadline, as the requests'. */
        syscall(SYS_futex, &h->wake_seq, FUTEX_WAIT_BITSET_PRIVATE, seen, deadline_ns == INT64_MAX ? NULL : &until,
                NULL, FUTEX_BITSET_MATCH_ANY);
    }
    atomic_store_explicit(&h->sleeping, false, memory_order_relaxed);
}

qn_pending *qn_handoff_take(qtbus_nats *bridge)
{
    qn_pending *p = atomic_exchange_explicit(&bridge->handoff.incoming, NULL, memory_order_seq_cst);
    /* Newest first as pushed: reversed into arrival order. */
    qn_pending *ordered = NULL;
    while (p) {
        qn_pending *next = p->next;
        p->next = ordered;
        ordered = p;
        p = next;
    }
    return ordered;
}

void qn_handoff_done(qtbus_nats *bridge, size_t events, size_t bytes, qn_pending *spare, qn_pending *spare_last)
{
    atomic_fetch_sub_explicit(&bridge->handoff.backlog, events * BACKLOG_EVENT + bytes, memory_order_relaxed);
    if (!spare) return;
    qn_pending *top = atomic_load_explicit(&bridge->handoff.returned, memory_order_relaxed);
    do {
        spare_last->next = top;
    } while (!atomic_compare_exchange_weak_explicit(&bridge->handoff.returned, &top, spare, memory_order_release,
                                                    memory_order_relaxed));
}

/* Frees a list of nodes (and the messages they still hold); how many there were. */
static size_t free_list(qn_pending *p)
{
    size_t n = 0;
    while (p) {
        qn_pending *next = p->next;
        natsMsg_Destroy(p->msg);
        free(p);
        p = next;
        n++;
    }
    return n;
}

void qn_handoff_trim(qtbus_nats *bridge)
{
    pthread_mutex_lock(&bridge->pool_lock);
    /* The nodes given back join the pool's end; the first QN_POOL_KEEP stay. */
    qn_pending **link = &bridge->pool;
    while (*link)
        link = &(*link)->next;
    *link = atomic_exchange_explicit(&bridge->handoff.returned, NULL, memory_order_acquire);
    link = &bridge->pool;
    for (size_t kept = 0; *link && kept < QN_POOL_KEEP; kept++)
        link = &(*link)->next;
    qn_pending *beyond = *link;
    *link = NULL;
    pthread_mutex_unlock(&bridge->pool_lock);
    atomic_fetch_sub_explicit(&bridge->pool_nodes, free_list(beyond), memory_order_relaxed);
}

int64_t qn_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void qn_handoff_free(qtbus_nats *bridge)
{
    free_list(atomic_exchange(&bridge->handoff.incoming, NULL));
    free_list(atomic_exchange(&bridge->handoff.returned, NULL));
    free_list(bridge->pool);
    bridge->pool = NULL;
}
