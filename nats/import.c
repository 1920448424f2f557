/* SPDX-License-Identifier: MIT */
/*
 * NATS -> local dispatches.  nats.c calls on_message on its own delivery thread; that
 * only appends the message to the bridge's queue, and the bridge's thread dispatches
 * the queue in order, each message's headers (but the bridge's own) as the event's.  So a slow handler delays later imported events but never
 * nats.c (whose pending limits would otherwise drop messages as a slow consumer), and
 * the bridge's own bounds make an overflow a reported drop rather than unbounded
 * memory.
 *
 * No loops: while the thread dispatches an event, it notes (thread-locally) the type
 * pointer it passed; the export handler of the same bridge, called inside that
 * dispatch with that very pointer, does not publish it.  A handler dispatching a new
 * event passes its own pointers, so its event is published.
 */
#define _GNU_SOURCE /* SCHED_BATCH, pthread_setname_np */
#include "bridge.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long an import waits for the server to confirm its subscription, and then, when
 * the server's last words may be its refusal, for nats.c to hand that refusal over. */
#define IMPORT_CONFIRM_MS 2000
/* How long unimport lets a subscription drain before nats.c drops what it still holds. */
#define DRAIN_MS 3000

static __thread const qtbus_nats *importing_bridge;
static __thread const char *importing_type;

bool qn_is_imported(const qtbus_nats *bridge, const qtbus_event *event)
{
    return importing_bridge == bridge && qtbus_event_type(event) == importing_type;
}

/* Whether an import older than the one `sub` belongs to takes `subject` too: the server
 * sends the message to each of them, and the oldest dispatches it.  The import being
 * made is not listed yet, and is the newest (imports take turns). */
static bool taken_by_older(qtbus_nats *bridge, natsSubscription *sub, const char *subject)
{
    pthread_mutex_lock(&bridge->lock);
    uint64_t seq = UINT64_MAX;
    for (const qn_imported *i = bridge->imported; i && seq == UINT64_MAX; i = i->next) {
        for (int k = 0; k < i->count; k++) {
            if (i->subs[k] == sub) seq = i->seq;
        }
    }
    bool older = false;
    for (const qn_imported *i = bridge->imported; i && !older; i = i->next) {
        older = i->seq < seq && qn_matches(i->subject, subject);
    }
    pthread_mutex_unlock(&bridge->lock);
    return older;
}

static void on_message(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    qtbus_nats *bridge = closure;
    const char *subject = natsMsg_GetSubject(msg);
    if (qn_is_own(bridge, msg) || (atomic_load_explicit(&bridge->imports_overlap, memory_order_relaxed) &&
                                   taken_by_older(bridge, sub, subject))) {
        natsMsg_Destroy(msg);
        return;
    }
    atomic_fetch_add_explicit(&bridge->received, 1, memory_order_relaxed);
    /* A request is acknowledged at once, before it waits in the queue: a requesting
     * bridge counts who has it (requests.c). */
    char tag = 0;
    if (natsMsg_GetReply(msg) && strlen(subject) > bridge->prefix_len + 2 &&
        subject[bridge->prefix_len + 1] == QN_KIND_REQUEST && subject[bridge->prefix_len + 2] == '.' &&
        qn_request_acknowledge(bridge, msg)) {
        tag = QN_BRIDGE_ASKS;
    }
    qn_handoff_enqueue(bridge, msg, false, tag);
}

static void dispatch_message(qtbus_nats *bridge, const qn_pending *msg)
{
    const char *subject = msg->subject;
    const qn_parsed *parsed = &bridge->parsed;
    if (strcmp(subject, bridge->parsed_subject) != 0) {
        const char *why = qn_parse(subject, bridge->prefix_len, &bridge->parsed);
        if (why) {
            bridge->parsed_subject[0] = '\0';
            atomic_fetch_add_explicit(&bridge->dropped, 1, memory_order_relaxed);
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
    /* The message's headers but the bridge's own become the event's (qtbus_nats.h,
     * HEADERS); the engine judges them as any dispatch's, and a refusal drops the
     * message with its reason, below. */
    qtbus_header few[16], *headers = few;
    int header_count = qn_event_headers(msg->msg, few, 16);
    if (header_count > 16) {
        headers = malloc((size_t)header_count * sizeof *headers);
        if (!headers) {
            atomic_fetch_add_explicit(&bridge->dropped, 1, memory_order_relaxed);
            qn_report(bridge, "qtbus_nats_import", QTBUS_ENOMEM,
                      "dropped a message on %.300s: no memory for its %d headers", subject, header_count);
            return;
        }
        qn_event_headers(msg->msg, headers, header_count);
    }
    if (header_count > 0) {
        d.flags |= QTBUS_EVENT_HEADERS;
        d.headers = headers;
        d.header_count = (size_t)header_count;
    }
    const char *reply = msg->reply;
    importing_bridge = bridge;
    importing_type = parsed->type;
    int status = 0;
    if (parsed->kind == QN_KIND_REQUEST && reply) {
        qn_request_dispatch(bridge, &d, subject, reply, msg->tag == QN_BRIDGE_ASKS);
    } else {
        status = qtbus_dispatch(bridge->bus, &d);
    }
    importing_bridge = NULL;
    importing_type = NULL;
    if (headers != few) free(headers);
    if (status < 0) {
        atomic_fetch_add_explicit(&bridge->dropped, 1, memory_order_relaxed);
        char why_dispatch[400];
        snprintf(why_dispatch, sizeof why_dispatch, "dropped a message on %.200s: %s", subject, qtbus_errmsg());
        qtbus_report(bridge->bus, "qtbus_nats_import", status, why_dispatch);
    }
}

/* The bridge's thread: received messages in order, and the requests' deadlines. */
static void *thread_main(void *arg)
{
    qtbus_nats *bridge = arg;
    pthread_setname_np(pthread_self(), QN_THREAD_NAME);
    /* Woken, it does not preempt nats.c's thread that woke it: on a machine with more
     * runnable threads than CPUs, each wake-up switched to this thread for a few events
     * and back (docs/perf-notes.md, "The bridge's thread runs under SCHED_BATCH").
     * Failing to set it changes nothing else. */
    struct sched_param none = {0};
    pthread_setschedparam(pthread_self(), SCHED_BATCH, &none);
    int64_t idle_since = 0; /* with more than QN_POOL_KEEP nodes pooled; 0: not idle */
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
            /* Read for each message, since a close may begin during a batch: INT64_MAX
             * until one with a timeout does, and then one clock read a message. */
            int64_t deadline = atomic_load_explicit(&bridge->close_deadline, memory_order_relaxed);
            if (deadline != INT64_MAX && qn_now_ns() >= deadline) {
                /* The close's time is up: what is left is dropped, and close says how
                 * much (an answer to a request of ours is no event: its request ends). */
                if (!p->answer) {
                    bridge->close_dropped++;
                    atomic_fetch_add_explicit(&bridge->dropped, 1, memory_order_relaxed);
                }
            } else if (p->answer) {
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

/* Whether `text`, nats.c's words for an -ERR from the server, is the refusal of a
 * subscription to `subject`.  nats-server writes it
 *     Permissions Violation for Subscription to "<subject>"
 * with Go's quoting (\" and \\ escaped), and nats.c keeps at most 255 bytes of it: a
 * long subject may be cut, and then the part that is there must match. */
static bool refuses_subject(const char *text, const char *subject)
{
    static const char head[] = "Permissions Violation for Subscription to \"";
    const char *start = strstr(text, head);
    if (!start) return false;
    const char *p = start + sizeof head - 1, *s = subject;
    for (;;) {
        if (*p == '\0') return p - text >= 200; /* cut short by nats.c */
        if (*p == '"') return *s == '\0';
        char c = *p++;
        if (c == '\\' && (*p == '"' || *p == '\\')) c = *p++;
        if (c != *s++) return false;
    }
}

/* Under bridge->lock: the subject of `v` that `text` refuses, or NULL. */
static const char *refused_subject(const qn_verdict *v, const char *text)
{
    for (int k = 0; k < v->count; k++) {
        if (v->subjects[k] && refuses_subject(text, v->subjects[k])) return v->subjects[k];
    }
    return NULL;
}

bool qn_import_claim_refusal(qtbus_nats *bridge, const char *text)
{
    pthread_mutex_lock(&bridge->lock);
    qn_verdict *v = bridge->verdict;
    bool claimed = v && refused_subject(v, text);
    if (claimed) {
        if (!v->refused) snprintf(v->why, sizeof v->why, "%s", text);
        v->refused = true;
        snprintf(v->latest, sizeof v->latest, "%s", text);
        pthread_cond_broadcast(&bridge->verdict_cond);
    }
    pthread_mutex_unlock(&bridge->lock);
    return claimed;
}

/* After the flush that the server confirmed: whether it refused a subscription of `v`.
 * The server sends its refusal (an -ERR) before the PONG that ended the flush, so
 * nats.c has read it by now, kept it as the connection's last error, and queued it for
 * on_async_error, which claims it for `v` on nats.c's callback thread.  Those
 * callbacks come in the order the errors came: once the one for the last error has
 * been claimed, every earlier refusal of ours has been too.  The last error alone
 * cannot decide, since nats.c keeps it until a reconnect: the same words left by an
 * earlier refused import of the same subject may be all there is.  So when the last
 * error names one of our subjects, wait for its callback (a refusal left from before
 * gets none: the wait then ends at IMPORT_CONFIRM_MS, and the import stands). */
static void await_verdict(qtbus_nats *bridge, qn_verdict *v)
{
    const char *last = NULL;
    char last_text[256] = "";
    if (natsConnection_GetLastError(bridge->conn, &last) == NATS_NOT_PERMITTED && last) {
        snprintf(last_text, sizeof last_text, "%s", last);
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += IMPORT_CONFIRM_MS / 1000;
    deadline.tv_nsec += (long)(IMPORT_CONFIRM_MS % 1000) * 1000000;
    if (deadline.tv_nsec >= 1000000000) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&bridge->lock);
    if (*last_text && refused_subject(v, last_text)) {
        while (strcmp(v->latest, last_text) != 0 &&
               pthread_cond_timedwait(&bridge->verdict_cond, &bridge->lock, &deadline) != ETIMEDOUT) {
        }
    }
    bridge->verdict = NULL;
    pthread_mutex_unlock(&bridge->lock);
}

/* An import that is not kept: its subscriptions end (their completions bring
 * live_imports back down as they close). */
static void import_undo(qn_imported *i)
{
    for (int k = 0; k < i->count; k++)
        natsSubscription_Unsubscribe(i->subs[k]);
    for (int k = 0; k < i->count; k++)
        natsSubscription_Destroy(i->subs[k]);
    free(i);
}

/* nats.c refused a subscription of an import being made: the import is undone, the
 * import lock given back (before reporting: a trace hook may import) and the refusal
 * reported under `fn`. */
static int subscribe_failed(qtbus_nats *bridge, qn_imported *i, const char *fn, natsStatus s, const char *subject)
{
    char what[QN_SUBJECT_MAX + 32], why[QN_SUBJECT_MAX + 128];
    snprintf(what, sizeof what, "subscribing to %.300s", subject);
    qn_nats_reason(why, sizeof why, s, what);
    import_undo(i);
    pthread_mutex_unlock(&bridge->import_lock);
    return qtbus_report(bridge->bus, fn, qn_status_of(s), why);
}

int qn_import(qtbus_nats *bridge, const char *type, const char *subtype)
{
    const char *fn = subtype ? "qtbus_nats_import_subtype" : "qtbus_nats_import";
    char key[QN_SUBJECT_MAX];
    qn_pattern(key, bridge, "*", type, subtype);
    /* One import at a time, so that a refusal the server sends while this one waits
     * for its verdict can only be this one's.  Released before reporting: a trace hook
     * may import. */
    pthread_mutex_lock(&bridge->import_lock);
    pthread_mutex_lock(&bridge->lock);
    for (qn_imported *i = bridge->imported; i; i = i->next) {
        if (strcmp(i->subject, key) == 0) {
            pthread_mutex_unlock(&bridge->lock);
            pthread_mutex_unlock(&bridge->import_lock);
            return QTBUS_OK;
        }
    }
    /* Before the subscription exists, so that no message of it escapes the check. */
    for (qn_imported *i = bridge->imported; i; i = i->next) {
        if (qn_overlap(i->subject, key)) atomic_store(&bridge->imports_overlap, true);
    }
    pthread_mutex_unlock(&bridge->lock);
    size_t n = strlen(key) + 1;
    qn_imported *i = malloc(sizeof *i + n);
    if (!i) {
        pthread_mutex_unlock(&bridge->import_lock);
        return qtbus_report(bridge->bus, fn, QTBUS_ENOMEM, NULL);
    }
    memcpy(i->subject, key, n);
    i->count = 0;
    i->seq = ++bridge->import_seq;
    /* Without JetStream every kind comes from the server; with it the sticky ones come
     * from the stream (sticky.c), so they are not taken twice.  The stream's
     * subscription is made last, once the server has accepted the others: it replays
     * the kept events at once, which an import the server refuses must not do. */
    static const char *const all[] = {"*"}, *const split[] = {"e", "q", "k"};
    const char *const *kinds = bridge->js ? split : all;
    int from_server = bridge->js ? 2 : 1, wanted = bridge->js ? 3 : 1;
    /* The verdict knows the subjects before they are sent, so that no refusal of
     * theirs can come before it is there to claim it. */
    char subjects[2][QN_SUBJECT_MAX];
    qn_verdict verdict = {.count = from_server};
    for (int k = 0; k < from_server; k++) {
        qn_pattern(subjects[k], bridge, kinds[k], type, subtype);
        verdict.subjects[k] = subjects[k];
    }
    char subject[QN_SUBJECT_MAX];
    natsStatus s = NATS_OK;
    pthread_mutex_lock(&bridge->lock);
    bridge->verdict = &verdict;
    while (i->count < from_server && s == NATS_OK) {
        s = subscribe_one(bridge, kinds[i->count], type, subtype, &i->subs[i->count], subject);
        if (s == NATS_OK) i->count++;
    }
    if (s != NATS_OK) bridge->verdict = NULL;
    pthread_mutex_unlock(&bridge->lock);
    char why[QN_SUBJECT_MAX + 128] = "";
    int status = QTBUS_OK;
    if (s != NATS_OK) return subscribe_failed(bridge, i, fn, s, subject);
    /* Once the server has the subscription, every event published after this returns
     * reaches it: a round trip to the server (a publisher elsewhere may still race).
     * With no server now (not yet up, or lost), nats.c sends the subscription when it
     * connects: there is nobody to confirm it, nor to refuse it, until then. */
    bool connected = natsConnection_Status(bridge->conn) == NATS_CONN_STATUS_CONNECTED;
    natsStatus confirmed = connected ? natsConnection_FlushTimeout(bridge->conn, IMPORT_CONFIRM_MS) : NATS_OK;
    if (!connected) {
        pthread_mutex_lock(&bridge->lock);
        bridge->verdict = NULL;
        pthread_mutex_unlock(&bridge->lock);
    } else if (confirmed != NATS_OK) {
        char what[QN_SUBJECT_MAX + 64];
        snprintf(what, sizeof what,
                 "the server did not confirm the subscription to %.300s (kept; it is sent on reconnect)", key);
        qn_nats_reason(why, sizeof why, confirmed, what);
        status = qn_status_of(confirmed);
        pthread_mutex_lock(&bridge->lock);
        bridge->verdict = NULL;
        pthread_mutex_unlock(&bridge->lock);
    } else {
        await_verdict(bridge, &verdict);
    }
    if (verdict.refused) {
        /* Nothing kept: the server has none of them, and the bridge forgets them. */
        import_undo(i);
        pthread_mutex_unlock(&bridge->import_lock);
        snprintf(why, sizeof why, "the server refused the subscription to %.200s: %s", key, verdict.why);
        return qtbus_report(bridge->bus, fn, QTBUS_EACCES, why);
    }
    if (i->count < wanted) {
        pthread_mutex_lock(&bridge->lock);
        s = subscribe_one(bridge, kinds[i->count], type, subtype, &i->subs[i->count], subject);
        if (s == NATS_OK) i->count++;
        pthread_mutex_unlock(&bridge->lock);
        if (s != NATS_OK) return subscribe_failed(bridge, i, fn, s, subject);
    }
    pthread_mutex_lock(&bridge->lock);
    i->next = bridge->imported;
    bridge->imported = i;
    pthread_mutex_unlock(&bridge->lock);
    pthread_mutex_unlock(&bridge->import_lock);
    return status == QTBUS_OK ? QTBUS_OK : qtbus_report(bridge->bus, fn, status, why);
}

int qn_unimport(qtbus_nats *bridge, const char *type, const char *subtype)
{
    char key[QN_SUBJECT_MAX];
    qn_pattern(key, bridge, "*", type, subtype);
    /* Not while an import waits for the server's verdict on its own subscriptions. */
    pthread_mutex_lock(&bridge->import_lock);
    pthread_mutex_lock(&bridge->lock);
    qn_imported **p = &bridge->imported;
    while (*p && strcmp((*p)->subject, key) != 0)
        p = &(*p)->next;
    qn_imported *i = *p;
    /* Unlisted at once: a message it still receives that a newer import also took is
     * that one's to dispatch (taken_by_older), so none is lost or doubled. */
    if (i) *p = i->next;
    pthread_mutex_unlock(&bridge->lock);
    pthread_mutex_unlock(&bridge->import_lock);
    if (!i) return QTBUS_ESTALE;
    for (int k = 0; k < i->count; k++) {
        if (natsSubscription_DrainTimeout(i->subs[k], DRAIN_MS) != NATS_OK) natsSubscription_Unsubscribe(i->subs[k]);
    }
    for (int k = 0; k < i->count; k++) {
        natsSubscription_WaitForDrainCompletion(i->subs[k], DRAIN_MS);
        natsSubscription_Destroy(i->subs[k]);
    }
    free(i);
    return QTBUS_OK;
}

/* Notes a subscription that did not drain: counted, the first one described. */
static void undrained(qn_stopped *out, const char *what, natsStatus s)
{
    if (out->undrained++ == 0) snprintf(out->why, sizeof out->why, "%.100s (%s)", what, natsStatus_GetText(s));
}

/* Ends `sub` for close: drained for at most drain_ms (what the server had sent it still
 * goes through on_message), or, with no time for that, unsubscribed at once, what nats.c
 * held for it counted in out->held.  Returns how starting the drain went: NATS_OK, or
 * why it did not (NATS_TIMEOUT when there was no time), the subscription then
 * unsubscribed.  Either way its completion callback runs once on_message has returned
 * for the last time. */
static natsStatus end_subscription(natsSubscription *sub, int64_t drain_ms, qn_stopped *out)
{
    natsStatus s = NATS_TIMEOUT;
    if (drain_ms > 0) {
        s = natsSubscription_DrainTimeout(sub, drain_ms);
    } else {
        int msgs = 0;
        if (natsSubscription_GetPending(sub, &msgs, NULL) == NATS_OK && msgs > 0) out->held += (uint64_t)msgs;
    }
    if (s != NATS_OK) natsSubscription_Unsubscribe(sub);
    return s;
}

void qn_import_stop(qtbus_nats *bridge, int64_t drain_ms, qn_stopped *out)
{
    *out = (qn_stopped){.undrained = 0};
    /* Listed until every subscription has completed: on_message may still ask which
     * import takes a message. */
    pthread_mutex_lock(&bridge->lock);
    qn_imported *i = bridge->imported;
    pthread_mutex_unlock(&bridge->lock);
    /* Drained: the server sends no more and what nats.c holds still goes through
     * on_message, for at most drain_ms (then nats.c closes it, dropping the rest).
     * Either way its completion callback runs once on_message has returned for the
     * last time, and nats.c has the drain's outcome by then. */
    for (qn_imported *d = i; d; d = d->next) {
        for (int k = 0; k < d->count; k++)
            d->drain[k] = end_subscription(d->subs[k], drain_ms, out);
    }
    pthread_mutex_lock(&bridge->lock);
    natsSubscription *inbox = bridge->inbox_sub;
    bridge->inbox_sub = NULL;
    pthread_mutex_unlock(&bridge->lock);
    natsStatus inbox_drain = inbox ? end_subscription(inbox, drain_ms, out) : NATS_OK;
    /* Not bounded by drain_ms: the completions come once nats.c's threads have left
     * on_message, which only queues (a drop's report calls the bus's trace hook). */
    pthread_mutex_lock(&bridge->lock);
    while (bridge->live_imports > 0)
        pthread_cond_wait(&bridge->settled, &bridge->lock);
    bridge->imported = NULL;
    pthread_mutex_unlock(&bridge->lock);
    /* An import counts once, whichever of its subscriptions did not drain.  One that
     * was not drained for want of time and held nothing lost nothing known. */
    bool skipped = drain_ms <= 0;
    while (i) {
        qn_imported *next = i->next;
        natsStatus worst = NATS_OK;
        for (int k = 0; k < i->count; k++) {
            natsStatus s = i->drain[k] != NATS_OK ? i->drain[k] : natsSubscription_DrainCompletionStatus(i->subs[k]);
            if (worst == NATS_OK) worst = s;
            natsSubscription_Destroy(i->subs[k]);
        }
        if (worst != NATS_OK && !skipped) undrained(out, i->subject, worst);
        free(i);
        i = next;
    }
    if (inbox) {
        natsStatus s = inbox_drain != NATS_OK ? inbox_drain : natsSubscription_DrainCompletionStatus(inbox);
        if (s != NATS_OK && !skipped) undrained(out, "the reply inbox of this bridge's requests", s);
        natsSubscription_Destroy(inbox);
    }
    if (out->undrained > 1) {
        size_t used = strlen(out->why);
        snprintf(out->why + used, sizeof out->why - used, " and %d more", out->undrained - 1);
    }
    if (bridge->thread_started) {
        pthread_mutex_lock(&bridge->lock);
        bridge->closing = true;
        pthread_mutex_unlock(&bridge->lock);
        qn_handoff_wake(bridge);
        pthread_join(bridge->thread, NULL);
        bridge->thread_started = false;
        out->dropped = bridge->close_dropped;
        /* Our requests still open complete now: no answer can come any more. */
        qn_requests_due(bridge, true);
    }
}
