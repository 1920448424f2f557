/* SPDX-License-Identifier: MIT */
/*
 * The bridge's lifetime: the references that keep it (refs: the bridge itself and each
 * request it is answering), the subscriptions nats.c may still call into (live_imports),
 * and freeing it.
 */
#include "bridge.h"

#include <stdlib.h>

/* The connection and JetStream context may be NULL (a connect that failed early). */
void qn_bridge_free(qtbus_nats *bridge)
{
    jsCtx_Destroy(bridge->js);
    if (!bridge->attached) natsConnection_Destroy(bridge->conn);
    pthread_cond_destroy(&bridge->settled);
    pthread_cond_destroy(&bridge->verdict_cond);
    pthread_mutex_destroy(&bridge->import_lock);
    pthread_mutex_destroy(&bridge->answer_lock);
    pthread_mutex_destroy(&bridge->lock);
    qn_handoff_free(bridge);
    pthread_mutex_destroy(&bridge->pool_lock);
    free(bridge);
}

void qn_bridge_unref(qtbus_nats *bridge)
{
    pthread_mutex_lock(&bridge->lock);
    bool last = --bridge->refs == 0;
    pthread_mutex_unlock(&bridge->lock);
    if (last) qn_bridge_free(bridge);
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
