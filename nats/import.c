/*
 * NATS -> local dispatches.  nats.c calls on_message on its own delivery thread; that
 * only appends the message to the bridge's queue, and the bridge's thread dispatches
 * the queue in order.  So a slow handler delays later imported events but never
 * nats.c (whose pending limits would otherwise drop messages as a slow consumer), and
 * the bridge's own bounds make an overflow a reported drop rather than unbounded
 * memory.
 *
 * No loops: while the thread dispatches an event, it notes (thread-locally) the type
 * pointer it passed; the export handler of the same bridge, called inside that
 * dispatch with that very pointer, does not publish it.  A handler dispatching a new
 * event passes its own pointers, so its event is published.
 */
#define _GNU_SOURCE  /* SCHED_BATCH */
#include "bridge.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread const qtbus_nats *importing_bridge;
static __thread const char *importing_type;

bool qn_is_imported(const qtbus_nats *bridge, const qtbus_event *event)
{
    return importing_bridge == bridge && qtbus_event_type(event) == importing_type;
}

/* Appends `msg` to the bridge's queue (or drops and reports it). */
static void enqueue(qtbus_nats *bridge, natsMsg *msg, bool answer)
{
    size_t bytes = (size_t)natsMsg_GetDataLength(msg);
    const char *subject = natsMsg_GetSubject(msg), *reply = natsMsg_GetReply(msg);
    bool copy = bytes <= QN_COPY_MAX;
    size_t subject_size = strlen(subject) + 1, reply_size = reply ? strlen(reply) + 1 : 0;
    qn_pending *p = qn_node_get(bridge, copy ? bytes + subject_size + reply_size : 0);
    if (!p) {
        qn_report(bridge, "qtbus_nats_import", QTBUS_ENOMEM, "dropped a %zu-byte event on %.300s: no memory to queue it",
                  bytes, subject);
        natsMsg_Destroy(msg);
        return;
    }
    p->answer = answer;
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

static void on_message(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    qtbus_nats *bridge = closure;
    /* A request is acknowledged at once, before it waits in the queue: the requester
     * counts who has it (requests.c). */
    const char *subject = natsMsg_GetSubject(msg);
    if (natsMsg_GetReply(msg) && strlen(subject) > bridge->prefix_len + 2
        && subject[bridge->prefix_len + 1] == QN_KIND_REQUEST && subject[bridge->prefix_len + 2] == '.') {
        qn_request_acknowledge(bridge, msg);
    }
    enqueue(bridge, msg, false);
}

void qn_on_inbox_message(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    enqueue(closure, msg, true);
}

static void dispatch_message(qtbus_nats *bridge, const qn_pending *msg)
{
    const char *subject = msg->subject;
    const qn_parsed *parsed = &bridge->parsed;
    if (strcmp(subject, bridge->parsed_subject) != 0) {
        const char *why = qn_parse(subject, bridge->prefix_len, &bridge->parsed);
        if (why) {
            bridge->parsed_subject[0] = '\0';
            qn_report(bridge, "qtbus_nats_import", QTBUS_EINVAL, "dropped a message on %.300s: its subject has %s",
                      subject, why);
            return;
        }
        snprintf(bridge->parsed_subject, sizeof bridge->parsed_subject, "%s", subject);
    }
    qtbus_event_desc d = {
        .type = parsed->type,
        .subtype = parsed->has_subtype ? parsed->subtype : NULL,
        .data = msg->size ? msg->data : NULL,
        .size = msg->size,
        .flags = parsed->kind == QN_KIND_KEPT ? QTBUS_EVENT_STICKY : 0,
    };
    const char *reply = msg->reply;
    importing_bridge = bridge;
    importing_type = parsed->type;
    int status = parsed->kind == QN_KIND_REQUEST && reply ? qn_request_dispatch(bridge, &d, reply)
                                                         : qtbus_dispatch(bridge->bus, &d);
    importing_bridge = NULL;
    importing_type = NULL;
    if (status < 0) {
        char why_dispatch[400];
        snprintf(why_dispatch, sizeof why_dispatch, "dropped a message on %.200s: %s", subject, qtbus_errmsg());
        qtbus_report(bridge->bus, "qtbus_nats_import", status, why_dispatch);
    }
}

/* The bridge's thread: received messages in order, and the requests' deadlines. */
static void *thread_main(void *arg)
{
    qtbus_nats *bridge = arg;
    /* Woken, it does not preempt nats.c's thread that woke it: on a machine with more
     * runnable threads than CPUs, each wake-up switched to this thread for a few events
     * and back (bench-nats, 64 B: the subscriber process's context switches per million
     * events 30,152 -> 13,363; events/s over raw nats.c's, 8 alternated runs, median
     * 0.825 -> 0.855).  Failing to set it changes nothing else. */
    struct sched_param none = { 0 };
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &none);
    int64_t idle_since = 0;  /* with more than QN_POOL_KEEP nodes pooled; 0: not idle */
    for (;;) {
        /* Read before looking: whatever changes after the look moves it on. */
        uint32_t seen = qn_handoff_seq(bridge);
        qn_pending *batch = qn_handoff_take(bridge);
        if (!batch) {
            pthread_mutex_lock(&bridge->lock);
            bool closing = bridge->closing, requests = bridge->requests != NULL;
            pthread_mutex_unlock(&bridge->lock);
            if (closing) {
                /* Set once nothing can queue any more: this look is the last. */
                if (!(batch = qn_handoff_take(bridge))) break;
            } else {
                /* A request published since the last look may be due first. */
                int64_t deadline = requests ? qn_requests_due(bridge, false) : INT64_MAX;
                if (atomic_load_explicit(&bridge->pool_nodes, memory_order_relaxed) > QN_POOL_KEEP) {
                    int64_t now = qn_now_ns();
                    if (!idle_since) idle_since = now;
                    if (now - idle_since >= QN_POOL_IDLE_NS) {
                        qn_handoff_trim(bridge);
                        idle_since = 0;
                        continue;
                    }
                    if (idle_since + QN_POOL_IDLE_NS < deadline) deadline = idle_since + QN_POOL_IDLE_NS;
                }
                qn_handoff_wait(bridge, seen, deadline);
                continue;
            }
        }
        idle_since = 0;
        size_t count = 0, bytes = 0;
        qn_pending *spare = NULL, *spare_last = NULL;
        while (batch) {
            qn_pending *p = batch;
            batch = p->next;
            count++;
            bytes += p->size;
            if (p->answer) {
                qn_request_answer(bridge, p);
            } else {
                dispatch_message(bridge, p);
            }
            natsMsg_Destroy(p->msg);
            p->msg = NULL;
            if (p->recycled) {
                if (!spare) spare_last = p;
                p->next = spare;
                spare = p;
            } else {
                free(p);
            }
        }
        /* Counted out only now: what the thread holds is still the bridge's backlog. */
        qn_handoff_done(bridge, count, bytes, spare, spare_last);
        /* Deadlines pass during a flood too. */
        pthread_mutex_lock(&bridge->lock);
        bool requests = bridge->requests != NULL;
        pthread_mutex_unlock(&bridge->lock);
        if (requests) qn_requests_due(bridge, false);
    }
    nats_ReleaseThreadMemory();
    return NULL;
}

int qn_import_start(qtbus_nats *bridge)
{
    if (pthread_create(&bridge->thread, NULL, thread_main, bridge) != 0) return QTBUS_ENOMEM;
    bridge->thread_started = true;
    return QTBUS_OK;
}

/* nats.c: the subscription is closed and its handler has returned for the last time. */
void qn_on_subscription_complete(void *closure)
{
    qtbus_nats *bridge = closure;
    pthread_mutex_lock(&bridge->lock);
    bridge->live_imports--;
    pthread_cond_broadcast(&bridge->settled);
    pthread_mutex_unlock(&bridge->lock);
}

/* Under bridge->lock: one subscription of an import, counted in live_imports. */
static natsStatus subscribe_one(qtbus_nats *bridge, const char *kinds, const char *type, const char *subtype,
                                natsSubscription **out, char *subject)
{
    qn_pattern(subject, bridge, kinds, type, subtype);
    natsStatus s = kinds[0] == QN_KIND_KEPT ? qn_sticky_subscribe(bridge, type, subtype, on_message, out)
                                            : natsConnection_Subscribe(out, bridge->conn, subject, on_message, bridge);
    if (s != NATS_OK) return s;
    /* The bridge's queue is the bound; nats.c's own would drop as a slow consumer first. */
    natsSubscription_SetPendingLimits(*out, -1, -1);
    s = natsSubscription_SetOnCompleteCB(*out, qn_on_subscription_complete, bridge);
    if (s != NATS_OK) {
        natsSubscription_Unsubscribe(*out);
        natsSubscription_Destroy(*out);
        return s;
    }
    bridge->live_imports++;
    return NATS_OK;
}

int qn_import(qtbus_nats *bridge, const char *type, const char *subtype)
{
    const char *fn = subtype ? "qtbus_nats_import_subtype" : "qtbus_nats_import";
    char key[QN_SUBJECT_MAX];
    qn_pattern(key, bridge, "*", type, subtype);
    pthread_mutex_lock(&bridge->lock);
    for (qn_imported *i = bridge->imported; i; i = i->next) {
        if (strcmp(i->subject, key) == 0) {
            pthread_mutex_unlock(&bridge->lock);
            return QTBUS_OK;
        }
    }
    size_t n = strlen(key) + 1;
    qn_imported *i = malloc(sizeof *i + n);
    if (!i) {
        pthread_mutex_unlock(&bridge->lock);
        return qtbus_report(bridge->bus, fn, QTBUS_ENOMEM, NULL);
    }
    memcpy(i->subject, key, n);
    i->count = 0;
    /* Without JetStream every kind comes from the server; with it the sticky ones come
     * from the stream (sticky.c), so they are not taken twice. */
    static const char *const all[] = { "*" }, *const split[] = { "e", "q", "k" };
    const char *const *kinds = bridge->js ? split : all;
    int wanted = bridge->js ? 3 : 1;
    char subject[QN_SUBJECT_MAX];
    natsStatus s = NATS_OK;
    while (i->count < wanted && s == NATS_OK) {
        s = subscribe_one(bridge, kinds[i->count], type, subtype, &i->subs[i->count], subject);
        if (s == NATS_OK) i->count++;
    }
    if (s != NATS_OK) {
        /* Undone: their completions run (live_imports goes back down) as they close. */
        for (int k = 0; k < i->count; k++) natsSubscription_Unsubscribe(i->subs[k]);
        pthread_mutex_unlock(&bridge->lock);
        for (int k = 0; k < i->count; k++) natsSubscription_Destroy(i->subs[k]);
        free(i);
        char what[QN_SUBJECT_MAX + 32];
        snprintf(what, sizeof what, "subscribing to %.300s", subject);
        return qn_fail_nats(bridge, fn, s, what);
    }
    i->next = bridge->imported;
    bridge->imported = i;
    pthread_mutex_unlock(&bridge->lock);
    /* Once the server has the subscription, every event published after this returns
     * reaches it: a round trip to the server (a publisher elsewhere may still race). */
    s = natsConnection_FlushTimeout(bridge->conn, 2000);
    if (s != NATS_OK) {
        char what[QN_SUBJECT_MAX + 64];
        snprintf(what, sizeof what, "the server did not confirm the subscription to %.300s (kept; it is sent on reconnect)",
                 key);
        return qn_fail_nats(bridge, fn, s, what);
    }
    return QTBUS_OK;
}

void qn_import_stop(qtbus_nats *bridge)
{
    pthread_mutex_lock(&bridge->lock);
    qn_imported *i = bridge->imported;
    bridge->imported = NULL;
    pthread_mutex_unlock(&bridge->lock);
    /* Drained: the server sends no more and what nats.c holds still goes through
     * on_message, for at most 3 s (then nats.c closes it).  Either way its completion
     * callback runs once on_message has returned for the last time. */
    for (qn_imported *d = i; d; d = d->next) {
        for (int k = 0; k < d->count; k++) {
            if (natsSubscription_DrainTimeout(d->subs[k], 3000) != NATS_OK) natsSubscription_Unsubscribe(d->subs[k]);
        }
    }
    pthread_mutex_lock(&bridge->lock);
    natsSubscription *inbox = bridge->inbox_sub;
    bridge->inbox_sub = NULL;
    pthread_mutex_unlock(&bridge->lock);
    if (inbox && natsSubscription_DrainTimeout(inbox, 3000) != NATS_OK) natsSubscription_Unsubscribe(inbox);
    pthread_mutex_lock(&bridge->lock);
    while (bridge->live_imports > 0) pthread_cond_wait(&bridge->settled, &bridge->lock);
    pthread_mutex_unlock(&bridge->lock);
    while (i) {
        qn_imported *next = i->next;
        for (int k = 0; k < i->count; k++) natsSubscription_Destroy(i->subs[k]);
        free(i);
        i = next;
    }
    natsSubscription_Destroy(inbox);
    if (!bridge->thread_started) return;
    pthread_mutex_lock(&bridge->lock);
    bridge->closing = true;
    pthread_mutex_unlock(&bridge->lock);
    qn_handoff_wake(bridge);
    pthread_join(bridge->thread, NULL);
    bridge->thread_started = false;
    /* Our requests still open complete now: no answer can come any more. */
    qn_requests_due(bridge, true);
}
