/*
 * Requests across processes.
 *
 * The requesting side: the export handler sees a request (QTBUS_EVENT_REQUEST), keeps
 * it open with qtbus_event_defer, and publishes it on <prefix>.q.<type>.<subtype> with
 * a reply subject <inbox>.<id> under the bridge's one inbox subscription.  What comes
 * back goes through the bridge's queue and thread like any received message:
 *   'a'          a bridge received the request (sent at once, from nats.c's thread);
 *   'r' + bytes  one reply: qtbus_deferred_reply, so the requester's on_reply runs
 *                on the bridge's thread;
 *   'd'          that bridge's local request completed (its handlers are done).
 * The request completes (qtbus_deferred_finish: the requester's release runs on the
 * bridge's thread) when every bridge that acknowledged it is done and the
 * acknowledgement window (a twentieth of request_timeout_ms) has passed since it was
 * published, or when request_timeout_ms has passed, whichever is first.  Answers after
 * that are dropped.
 *
 * The answering side: a received request is dispatched with qtbus_request; each local
 * reply is published to the reply subject, and the completion publishes 'd'.
 */
#include "bridge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct qn_request {
    struct qn_request *next;
    uint64_t id;
    qtbus_deferred deferred;
    int acked, done;
    int64_t ack_deadline_ns, deadline_ns;
} qn_request;

/* ---- the requesting side ------------------------------------------------------------ */

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
    s = natsConnection_Subscribe(&bridge->inbox_sub, bridge->conn, subject, qn_on_inbox_message, bridge);
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
        qn_report(bridge, "qtbus_nats_export", QTBUS_ENOMEM, "a request on %.300s is not published: no memory to hold it",
                  subject);
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

    natsStatus s = natsConnection_PublishRequest(bridge->conn, subject, reply, data, size);
    if (s != NATS_OK) {
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
    const char *subject = msg->subject;
    const char *dot = strrchr(subject, '.');
    uint64_t id = dot ? strtoull(dot + 1, NULL, 10) : 0;
    const char *data = msg->data;
    int size = (int)msg->size;
    if (size < 1 || (data[0] != 'a' && data[0] != 'r' && data[0] != 'd')) {
        qn_report(bridge, "qtbus_nats_export", QTBUS_EINVAL, "dropped a malformed answer on %.300s", subject);
        return;
    }
    pthread_mutex_lock(&bridge->lock);
    qn_request *r = bridge->requests;
    while (r && r->id != id) r = r->next;
    if (!r) {
        /* Completed already (timed out): the answer comes too late. */
        pthread_mutex_unlock(&bridge->lock);
        return;
    }
    if (data[0] == 'a') r->acked++;
    if (data[0] == 'd') r->done++;
    qtbus_deferred deferred = r->deferred;
    pthread_mutex_unlock(&bridge->lock);
    /* Only this thread finishes requests, so the deferred reply is still live. */
    if (data[0] == 'r') qtbus_deferred_reply(deferred, size > 1 ? data + 1 : NULL, (size_t)(size - 1));
}

int64_t qn_requests_due(qtbus_nats *bridge, bool all)
{
    int64_t now = qn_now_ns(), next = INT64_MAX;
    qn_request *finished = NULL;
    pthread_mutex_lock(&bridge->lock);
    for (qn_request **p = &bridge->requests; *p;) {
        qn_request *r = *p;
        bool complete = all || now >= r->deadline_ns || (now >= r->ack_deadline_ns && r->done >= r->acked);
        if (complete) {
            *p = r->next;
            r->next = finished;
            finished = r;
            continue;
        }
        int64_t due = r->done >= r->acked && r->ack_deadline_ns < r->deadline_ns ? r->ack_deadline_ns : r->deadline_ns;
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
 * queued handler), and its 'd' then meets a closed connection, not a freed one. */
typedef struct answer_to {
    qtbus_nats *bridge;
    char subject[];
} answer_to;

static void publish_answer(answer_to *to, char tag, const void *data, size_t size)
{
    char small[512];
    char *buffer = size + 1 <= sizeof small ? small : malloc(size + 1);
    if (!buffer) return;
    buffer[0] = tag;
    if (size) memcpy(buffer + 1, data, size);
    natsConnection_Publish(to->bridge->conn, to->subject, buffer, (int)(size + 1));
    if (buffer != small) free(buffer);
}

static void send_reply(const qtbus_event *reply, void *userdata)
{
    size_t size = 0;
    const void *data = qtbus_event_data(reply, &size);
    publish_answer(userdata, 'r', data, size);
}

static void send_done(void *userdata)
{
    answer_to *to = userdata;
    publish_answer(to, 'd', NULL, 0);
    qn_bridge_unref(to->bridge);
    free(to);
}

void qn_request_acknowledge(qtbus_nats *bridge, natsMsg *msg)
{
    natsConnection_Publish(bridge->conn, natsMsg_GetReply(msg), "a", 1);
}

int qn_request_dispatch(qtbus_nats *bridge, const qtbus_event_desc *desc, const char *reply)
{
    size_t n = strlen(reply) + 1;
    answer_to *to = malloc(sizeof *to + n);
    if (!to) return QTBUS_ENOMEM;
    to->bridge = bridge;
    memcpy(to->subject, reply, n);
    pthread_mutex_lock(&bridge->lock);
    bridge->refs++;
    pthread_mutex_unlock(&bridge->lock);
    int status = qtbus_request(bridge->bus, desc, send_reply, to, send_done);
    if (status < 0) send_done(to);  /* a failed request takes nothing: the requester must not wait */
    return status;
}
