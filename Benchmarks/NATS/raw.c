/* SPDX-License-Identifier: MIT */
/*
 * The raw nats.c pair: what nats.c alone does with the same subject, payload and
 * subscription settings as the bridge.  The subscriber's pending limits are off, as
 * the bridge sets them (its own queue is its bound), so nats.c never drops on this
 * side; a loss can only be the server's (a slow consumer).
 */
#include "bench_nats.h"

#include <stdlib.h>

static int raw_send(sender *s, const void *data, size_t size)
{
    return natsConnection_Publish(s->nc, SUBJECT, data, (int)size) == NATS_OK ? 0 : -1;
}

static void raw_send_close(sender *s)
{
    check(natsConnection_Flush(s->nc) == NATS_OK, "raw publisher: flush", nats_GetLastError(NULL));
    natsConnection_Destroy(s->nc);
    s->nc = NULL;
}

void raw_sender_open(sender *s, const char *url, bool send_asap)
{
    natsOptions *o = NULL;
    check(natsOptions_Create(&o) == NATS_OK && natsOptions_SetURL(o, url) == NATS_OK &&
              natsOptions_SetSendAsap(o, send_asap) == NATS_OK,
          "raw publisher: options", nats_GetLastError(NULL));
    *s = (sender){.send = raw_send, .close = raw_send_close};
    check(natsConnection_Connect(&s->nc, o) == NATS_OK, "raw publisher: connect", nats_GetLastError(NULL));
    natsOptions_Destroy(o);
}

static void on_message(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    received(closure, natsMsg_GetData(msg), (size_t)natsMsg_GetDataLength(msg));
    natsMsg_Destroy(msg);
}

static void raw_sink_close(sink *k)
{
    natsSubscription_Destroy(k->sub);
    natsConnection_Destroy(k->nc);
}

void raw_sink_open(sink *k, const char *url, receiver *r)
{
    *k = (sink){.close = raw_sink_close};
    check(natsConnection_ConnectTo(&k->nc, url) == NATS_OK, "raw subscriber: connect", nats_GetLastError(NULL));
    check(natsConnection_Subscribe(&k->sub, k->nc, SUBJECT, on_message, r) == NATS_OK, "raw subscriber: subscribe",
          nats_GetLastError(NULL));
    check(natsSubscription_SetPendingLimits(k->sub, -1, -1) == NATS_OK, "raw subscriber: pending limits",
          nats_GetLastError(NULL));
    /* A round trip: the server has the subscription when the publisher starts. */
    check(natsConnection_Flush(k->nc) == NATS_OK, "raw subscriber: flush", nats_GetLastError(NULL));
}
