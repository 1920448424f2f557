/* SPDX-License-Identifier: MIT */
/*
 * Local dispatches -> NATS.  Each exported type is one subscription on the bus, at the
 * highest priority so that no local handler can stop an event before it crosses; its
 * handler publishes on the dispatching thread.  nats.c's publish only appends to the
 * connection's buffer (its flusher thread writes it out), so a slow or absent remote
 * costs the dispatch nothing beyond that copy.
 */
#include "bridge.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether an export older than `e` takes `type` too, and so publishes it. */
static bool taken_by_older(const qn_exported *e, const char *type)
{
    qtbus_nats *bridge = e->bridge;
    bool older = false;
    pthread_mutex_lock(&bridge->lock);
    for (const qn_exported *f = bridge->exported; f && !older; f = f->next) {
        older = f->seq < e->seq && qn_matches(f->type, type);
    }
    pthread_mutex_unlock(&bridge->lock);
    return older;
}

static void publish(const qtbus_event *event, void *userdata)
{
    const qn_exported *e = userdata;
    qtbus_nats *bridge = e->bridge;
    if (qn_is_imported(bridge, event)) return;
    if (atomic_load_explicit(&bridge->exports_overlap, memory_order_relaxed) &&
        taken_by_older(e, qtbus_event_type(event)))
        return;
    char subject[QN_SUBJECT_MAX];
    uint32_t flags = qtbus_event_flags(event);
    char kind = flags & QTBUS_EVENT_REQUEST  ? QN_KIND_REQUEST
                : flags & QTBUS_EVENT_STICKY ? QN_KIND_KEPT
                                             : QN_KIND_EVENT;
    qn_subject(subject, bridge, kind, qtbus_event_type(event), qtbus_event_subtype(event));
    size_t size = 0;
    const void *data = qtbus_event_data(event, &size);
    if (kind == QN_KIND_REQUEST && size <= INT_MAX) {
        qn_request_publish(bridge, event, subject, data, (int)size);
        return;
    }
    natsStatus s =
        size > INT_MAX ? NATS_MAX_PAYLOAD : qn_publish(bridge, subject, NULL, data, (int)size, event, NULL, NULL);
    atomic_fetch_add_explicit(s == NATS_OK ? &bridge->published : &bridge->dropped, 1, memory_order_relaxed);
    if (s != NATS_OK) {
        char what[QN_SUBJECT_MAX + 128];
        snprintf(what, sizeof what, "%zu bytes on %.300s not published%s", size, subject,
                 s == NATS_INSUFFICIENT_BUFFER ? " (the server is unreachable and the reconnect buffer is full)" : "");
        qn_fail_nats(bridge, "qtbus_nats_export", s, what);
    }
}

/* The export's subscription is gone and no dispatch is in publish() with its entry. */
static void released(void *userdata)
{
    qn_exported *e = userdata;
    qtbus_nats *bridge = e->bridge;
    free(e);
    pthread_mutex_lock(&bridge->lock);
    if (--bridge->live_exports == 0) pthread_cond_broadcast(&bridge->settled);
    pthread_mutex_unlock(&bridge->lock);
}

int qn_export(qtbus_nats *bridge, const char *type)
{
    pthread_mutex_lock(&bridge->lock);
    for (qn_exported *e = bridge->exported; e; e = e->next) {
        if (strcmp(e->type, type) == 0) {
            pthread_mutex_unlock(&bridge->lock);
            return QTBUS_OK;
        }
    }
    size_t n = strlen(type) + 1;
    qn_exported *e = malloc(sizeof *e + n);
    if (!e) {
        pthread_mutex_unlock(&bridge->lock);
        return qtbus_report(bridge->bus, "qtbus_nats_export", QTBUS_ENOMEM, NULL);
    }
    memcpy(e->type, type, n);
    e->bridge = bridge;
    e->seq = ++bridge->export_seq;
    for (qn_exported *f = bridge->exported; f; f = f->next) {
        if (qn_overlap(f->type, type)) atomic_store(&bridge->exports_overlap, true);
    }
    /* A pattern's subscription reaches each event of the types it matches, and publish()
     * sends each on its own type's subject. */
    qtbus_sub_options options = {.priority = INT_MAX, .flags = qn_is_pattern(type) ? QTBUS_SUB_PATTERN : 0};
    int status = qtbus_subscribe(bridge->bus, type, &options, publish, e, released, &e->token);
    if (status != QTBUS_OK) {
        pthread_mutex_unlock(&bridge->lock);
        free(e);
        /* qtbus_errmsg() tells qtbus_subscribe's reason; say it is the export's. */
        char why[400];
        snprintf(why, sizeof why, "%s", qtbus_errmsg());
        return qtbus_report(bridge->bus, "qtbus_nats_export", status, why);
    }
    e->next = bridge->exported;
    bridge->exported = e;
    bridge->live_exports++;
    pthread_mutex_unlock(&bridge->lock);
    return QTBUS_OK;
}

int qn_unexport(qtbus_nats *bridge, const char *type)
{
    pthread_mutex_lock(&bridge->lock);
    qn_exported **p = &bridge->exported;
    while (*p && strcmp((*p)->type, type) != 0)
        p = &(*p)->next;
    qn_exported *e = *p;
    if (e) *p = e->next;
    pthread_mutex_unlock(&bridge->lock);
    if (!e) return QTBUS_ESTALE;
    /* Its entry goes with the subscription's release (a dispatch in progress may still
     * publish through it). */
    qtbus_token_dispose(e->token);
    return QTBUS_OK;
}

void qn_export_stop(qtbus_nats *bridge)
{
    pthread_mutex_lock(&bridge->lock);
    qn_exported *e = bridge->exported;
    bridge->exported = NULL;
    pthread_mutex_unlock(&bridge->lock);
    while (e) {
        qn_exported *next = e->next;
        qtbus_token_dispose(e->token);
        e = next;
    }
    /* A dispatch that found a subscription live may still be in publish(); each
     * release runs once it has returned. */
    pthread_mutex_lock(&bridge->lock);
    while (bridge->live_exports > 0)
        pthread_cond_wait(&bridge->settled, &bridge->lock);
    pthread_mutex_unlock(&bridge->lock);
}
