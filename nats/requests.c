/* SPDX-License-Identifier: MIT */
/*
 * Requests across processes.
 *
 * The requesting side: the export handler sees a request (QTBUS_EVENT_REQUEST), keeps
 * it open with qtbus_event_defer, and publishes it on <prefix>.q.<subtype>.<type> with
 * a reply subject <inbox>.<id> under the bridge's one inbox subscription, and the
 * header Qtbus-Request, which tells an answering bridge that a bridge asks.  What comes
 * back is standard NATS request/reply, so that any NATS client can answer or ask; it
 * goes through the bridge's queue and thread like any received message:
 *   bytes, no header     one reply: qtbus_deferred_reply, so the requester's on_reply
 *                        runs on the bridge's thread (whoever sent it);
 *   Qtbus-Answer: ack    a bridge received the request (sent at once, from nats.c's
 *                        thread), and will say when it is done;
 *   Qtbus-Answer: done   that bridge's local request completed (its handlers are done);
 *   Status: 503          the server's "no responders": nobody subscribes to the subject.
 * The request completes (qtbus_deferred_finish: the requester's release runs on the
 * bridge's thread) when every bridge that acknowledged it is done, the acknowledgement
 * window (a twentieth of request_timeout_ms) has passed since it was published, and
 * someone has answered (an acknowledgement, a reply, or the server's "no responders");
 * or when request_timeout_ms has passed, whichever is first.  Answers after that are
 * dropped.
 *
 * The answering side: a received request is dispatched with qtbus_request; each local
 * reply is published to the reply subject as its bytes, and, for a bridge that asked,
 * the receipt and the completion are published as answers with no bytes.  A plain NATS
 * requester gets the replies only.
 */
#include "bridge.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct qn_request {
    struct qn_request *next;
    uint64_t id;
    qtbus_deferred deferred;
    int acked, done;
    bool answered; /* a reply came, or the server said nobody listens */
    int64_t ack_deadline_ns, deadline_ns;
} qn_request;

/* ---- the requesting side ------------------------------------------------------------ */

/* nats.c: a message on the reply inbox, an answer to one of our requests. */
static void on_inbox_message(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    char tag = QN_ANSWER_REPLY;
    const char *answer = qn_header(msg, QN_HEADER_ANSWER);
    if (natsMsg_IsNoResponders(msg)) {
        tag = QN_ANSWER_NOBODY;
    } else if (answer && strcmp(answer, "ack") == 0) {
        tag = QN_ANSWER_ACK;
    } else if (answer && strcmp(answer, "done") == 0) {
        tag = QN_ANSWER_DONE;
    }
    qn_handoff_enqueue(closure, msg, true, tag);
}

/* Under bridge->lock (so reporting is the caller's, after the unlock: a trace hook may
 * call the bridge). */
static natsStatus ensure_inbox(qtbus_nats *bridge)
{
    if (bridge->inbox_sub) return NATS_OK;
    natsInbox *inbox = NULL;
    natsStatus s = natsInbox_Create(&inbox);
    if (s != NATS_OK) return s;
    snprintf(bridge->inbox, sizeof bridge->inbox, "%s", (const char *)inbox);
    natsInbox_Destroy(inbox);
    char subject[sizeof bridge->inbox + 2];
    snprintf(subject, sizeof subject, "%s.*", bridge->inbox);
    s = natsConnection_Subscribe(&bridge->inbox_sub, bridge->conn, subject, on_inbox_message, bridge);
    if (s == NATS_OK) {
        natsSubscription_SetPendingLimits(bridge->inbox_sub, -1, -1);
        s = natsSubscription_SetOnCompleteCB(bridge->inbox_sub, qn_on_subscription_complete, bridge);
        if (s != NATS_OK) {
            natsSubscription_Unsubscribe(bridge->inbox_sub);
            natsSubscription_Destroy(bridge->inbox_sub);
            bridge->inbox_sub = NULL;
        } else {
            bridge->live_imports++;
        }
    }
    return s;
}

void qn_request_publish(qtbus_nats *bridge, const qtbus_event *event, const char *subject, const void *data, int size)
{
    qtbus_deferred deferred;
    if (qtbus_event_defer(event, &deferred) != QTBUS_OK) {
        qn_report(bridge, "qtbus_nats_export", QTBUS_ENOMEM,
                  "a request on %.300s is not published: no memory to hold it", subject);
        return;
    }
    qn_request *r = calloc(1, sizeof *r);
    pthread_mutex_lock(&bridge->lock);
    natsStatus inbox = r ? ensure_inbox(bridge) : NATS_NO_MEMORY;
    if (inbox != NATS_OK) {
        pthread_mutex_unlock(&bridge->lock);
        char what[QN_SUBJECT_MAX + 64];
        snprintf(what, sizeof what, "a request on %.300s is not published (no reply inbox)", subject);
        qn_fail_nats(bridge, "qtbus_nats_export", inbox, what);
        free(r);
        qtbus_deferred_finish(deferred);
        return;
    }
    r->id = ++bridge->last_request_id;
    r->deferred = deferred;
    int64_t now = qn_now_ns();
    r->ack_deadline_ns = now + (int64_t)bridge->request_timeout_ms * 1000000 / 20;
    r->deadline_ns = now + (int64_t)bridge->request_timeout_ms * 1000000;
    r->next = bridge->requests;
    bridge->requests = r;
    char reply[sizeof bridge->inbox + 24];
    snprintf(reply, sizeof reply, "%s.%llu", bridge->inbox, (unsigned long long)r->id);
    pthread_mutex_unlock(&bridge->lock);
    /* The bridge's thread times the request out: it must wake for this deadline. */
    qn_handoff_wake(bridge);

    natsStatus s = qn_publish(bridge, subject, reply, data, size, event, QN_HEADER_REQUEST, "1");
    if (s == NATS_OK) atomic_fetch_add_explicit(&bridge->published, 1, memory_order_relaxed);
    if (s != NATS_OK) {
        atomic_fetch_add_explicit(&bridge->dropped, 1, memory_order_relaxed);
        char what[QN_SUBJECT_MAX + 64];
        snprintf(what, sizeof what, "a request of %d bytes on %.300s not published", size, subject);
        qn_fail_nats(bridge, "qtbus_nats_export", s, what);
        /* Nobody can answer it: it completes when the thread next looks (now). */
        pthread_mutex_lock(&bridge->lock);
        r->deadline_ns = 0;
        pthread_mutex_unlock(&bridge->lock);
        qn_handoff_wake(bridge);
    }
}

/* On the bridge's thread: an answer on <inbox>.<id>. */
void qn_request_answer(qtbus_nats *bridge, const qn_pending *msg)
{
    const char *dot = strrchr(msg->subject, '.');
    uint64_t id = dot ? strtoull(dot + 1, NULL, 10) : 0;
    pthread_mutex_lock(&bridge->lock);
    qn_request *r = bridge->requests;
    while (r && r->id != id)
        r = r->next;
    if (!r) {
        /* Completed already (timed out): the answer comes too late. */
        pthread_mutex_unlock(&bridge->lock);
        return;
    }
    if (msg->tag == QN_ANSWER_ACK) r->acked++;
    if (msg->tag == QN_ANSWER_DONE) r->done++;
    if (msg->tag == QN_ANSWER_REPLY || msg->tag == QN_ANSWER_NOBODY) r->answered = true;
    qtbus_deferred deferred = r->deferred;
    pthread_mutex_unlock(&bridge->lock);
    /* Only this thread finishes requests, so the deferred reply is still live. */
    if (msg->tag == QN_ANSWER_REPLY) qtbus_deferred_reply(deferred, msg->size ? msg->data : NULL, msg->size);
}

int64_t qn_requests_due(qtbus_nats *bridge, bool all)
{
    int64_t now = qn_now_ns(), next = INT64_MAX;
    qn_request *finished = NULL;
    pthread_mutex_lock(&bridge->lock);
    for (qn_request **p = &bridge->requests; *p;) {
        qn_request *r = *p;
        bool settled = r->done >= r->acked && (r->acked > 0 || r->answered);
        bool complete = all || now >= r->deadline_ns || (now >= r->ack_deadline_ns && settled);
        if (complete) {
            *p = r->next;
            r->next = finished;
            finished = r;
            continue;
        }
        int64_t due = settled && r->ack_deadline_ns < r->deadline_ns ? r->ack_deadline_ns : r->deadline_ns;
        if (due < next) next = due;
        p = &r->next;
    }
    pthread_mutex_unlock(&bridge->lock);
    while (finished) {
        qn_request *next_r = finished->next;
        qtbus_deferred_finish(finished->deferred);
        free(finished);
        finished = next_r;
    }
    return next;
}

/* ---- the answering side ------------------------------------------------------------- */

/* Holds a reference to the bridge: the local request may complete after close (a
 * queued handler), and its end then meets a closed connection, not a freed one. */
typedef struct answer_to {
    qtbus_nats *bridge;
    bool bridge_asks;    /* the requester is a bridge: it wants ack and done */
    const char *request; /* the request's subject, in subjects[] */
    char subjects[];     /* the reply subject, then the request's */
} answer_to;

/* An answer the requester will not get (tag ack, a reply of `size` bytes, or done, for
 * a request on `request`), reported as the receiving side's failures are
 * ("qtbus_nats_import": this side imports the type), with what the requester sees
 * instead.  `detail` says why when no nats.c call failed; otherwise it is NULL and
 * nats.c's last error on this thread (from the call that just failed) says it. */
static void answer_lost(qtbus_nats *bridge, char tag, size_t size, const char *request, natsStatus s,
                        const char *detail)
{
    char what[300], reason[640];
    const char *then;
    if (tag == QN_ANSWER_ACK) {
        snprintf(what, sizeof what, "the acknowledgement of a request on %.200s was not sent", request);
        then = "; the requester does not count this bridge, and may complete before its answers come";
    } else if (tag == QN_ANSWER_REPLY) {
        snprintf(what, sizeof what, "a reply of %zu bytes to a request on %.200s was not sent", size, request);
        then = "; the requester does not get it";
    } else {
        snprintf(what, sizeof what, "the end of a request on %.200s was not sent", request);
        then = "; the requester waits for it until its request_timeout_ms";
    }
    if (detail) {
        snprintf(reason, sizeof reason, "%s: %s (%s)", what, natsStatus_GetText(s), detail);
    } else {
        qn_nats_reason(reason, sizeof reason, s, what);
    }
    bool closed = atomic_load(&bridge->closed);
    qn_report(bridge, "qtbus_nats_import", qn_status_of(s), "%s%s", reason,
              closed ? " (the bridge was closed before the request was answered)" : then);
}

/* Publishes an answer to the requester: a reply's bytes, or an ack or done with none.
 * After close, an attached bridge's connection is the application's again, which may
 * have destroyed it: the answer is then lost, and told so. */
static void publish_answer(answer_to *to, char tag, const void *data, size_t size)
{
    qtbus_nats *bridge = to->bridge;
    int64_t max = natsConnection_GetMaxPayload(bridge->conn);
    if (size > INT_MAX || (max > 0 && (int64_t)size > max)) {
        char detail[96];
        snprintf(detail, sizeof detail, "%zu bytes, the server takes at most %lld", size, (long long)max);
        answer_lost(bridge, tag, size, to->request, NATS_MAX_PAYLOAD, detail);
        return;
    }
    const char *answer = tag == QN_ANSWER_ACK ? "ack" : tag == QN_ANSWER_DONE ? "done" : NULL;
    pthread_mutex_lock(&bridge->answer_lock);
    bool gone = bridge->attached && atomic_load(&bridge->closed);
    natsStatus s =
        gone ? NATS_CONNECTION_CLOSED
             : qn_publish(bridge, to->subjects, NULL, data, (int)size, NULL, answer ? QN_HEADER_ANSWER : NULL, answer);
    pthread_mutex_unlock(&bridge->answer_lock);
    if (s != NATS_OK)
        answer_lost(bridge, tag, size, to->request, s, gone ? "the connection is the application's again" : NULL);
}

static void send_reply(const qtbus_event *reply, void *userdata)
{
    size_t size = 0;
    const void *data = qtbus_event_data(reply, &size);
    publish_answer(userdata, QN_ANSWER_REPLY, data, size);
}

static void send_done(void *userdata)
{
    answer_to *to = userdata;
    if (to->bridge_asks) publish_answer(to, QN_ANSWER_DONE, NULL, 0);
    qn_bridge_unref(to->bridge);
    free(to);
}

bool qn_request_acknowledge(qtbus_nats *bridge, natsMsg *msg)
{
    if (!qn_header(msg, QN_HEADER_REQUEST)) return false;
    natsStatus s = qn_publish(bridge, natsMsg_GetReply(msg), NULL, NULL, 0, NULL, QN_HEADER_ANSWER, "ack");
    if (s != NATS_OK) answer_lost(bridge, QN_ANSWER_ACK, 0, natsMsg_GetSubject(msg), s, NULL);
    return true;
}

void qn_request_dispatch(qtbus_nats *bridge, const qtbus_event_desc *desc, const char *subject, const char *reply,
                         bool bridge_asks)
{
    static const char fn[] = "qtbus_nats_import";
    size_t reply_size = strlen(reply) + 1, subject_size = strlen(subject) + 1;
    answer_to *to = malloc(sizeof *to + reply_size + subject_size);
    if (!to) {
        /* Its end, at least, so that a requesting bridge does not wait for this one. */
        natsStatus s = bridge_asks ? qn_publish(bridge, reply, NULL, NULL, 0, NULL, QN_HEADER_ANSWER, "done") : NATS_OK;
        qn_report(bridge, fn, QTBUS_ENOMEM, "dropped a request on %.200s: no memory to dispatch it%s", subject,
                  s == NATS_OK ? "" : ", and its end was not sent (the requester waits until its request_timeout_ms)");
        atomic_fetch_add_explicit(&bridge->dropped, 1, memory_order_relaxed);
        return;
    }
    to->bridge = bridge;
    to->bridge_asks = bridge_asks;
    memcpy(to->subjects, reply, reply_size);
    to->request = memcpy(to->subjects + reply_size, subject, subject_size);
    pthread_mutex_lock(&bridge->lock);
    bridge->refs++;
    pthread_mutex_unlock(&bridge->lock);
    int status = qtbus_request(bridge->bus, desc, send_reply, to, send_done);
    if (status < 0) {
        char why[400];
        snprintf(why, sizeof why, "dropped a message on %.200s: %s", subject, qtbus_errmsg());
        qtbus_report(bridge->bus, fn, status, why);
        atomic_fetch_add_explicit(&bridge->dropped, 1, memory_order_relaxed);
        send_done(to); /* a failed request takes nothing: the requester must not wait */
    }
}
