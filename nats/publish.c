/* SPDX-License-Identifier: MIT */
/*
 * What the bridge sends, and knowing its own.  A message is the event's bytes, as
 * dispatched; what the bridge needs besides rides in NATS headers (qtbus_nats.h,
 * REQUESTS): a request's mark, an answer's kind, and the origin of a bridge attached to
 * the application's connection.  That connection may echo (nats.c's default), so such
 * a bridge would receive its own publications: the origin, random per bridge, tells
 * them.  A message that needs no header goes the cheaper way, without a natsMsg.
 */
#include "bridge.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

void qn_origin_init(qtbus_nats *bridge)
{
    unsigned char bytes[8] = {0};
    /* Two bridges of one connection must differ; failing that, the address differs. */
    if (getrandom(bytes, sizeof bytes, 0) != (ssize_t)sizeof bytes) memcpy(bytes, &bridge, sizeof bridge);
    for (size_t i = 0; i < sizeof bytes; i++)
        snprintf(bridge->origin + 2 * i, 3, "%02x", bytes[i]);
}

natsStatus qn_publish(qtbus_nats *bridge, const char *subject, const char *reply, const void *data, int size,
                      const char *header, const char *value)
{
    if (!bridge->attached && !header) {
        return reply ? natsConnection_PublishRequest(bridge->conn, subject, reply, data, size)
                     : natsConnection_Publish(bridge->conn, subject, data, size);
    }
    natsMsg *msg = NULL;
    natsStatus s = natsMsg_Create(&msg, subject, reply, data, size);
    if (s == NATS_OK && bridge->attached) s = natsMsgHeader_Set(msg, QN_HEADER_ORIGIN, bridge->origin);
    if (s == NATS_OK && header) s = natsMsgHeader_Set(msg, header, value);
    if (s == NATS_OK) s = natsConnection_PublishMsg(bridge->conn, msg);
    natsMsg_Destroy(msg);
    return s;
}

bool qn_is_own(const qtbus_nats *bridge, natsMsg *msg)
{
    const char *origin = NULL;
    return bridge->attached && natsMsgHeader_Get(msg, QN_HEADER_ORIGIN, &origin) == NATS_OK && origin &&
           strcmp(origin, bridge->origin) == 0;
}

const char *qn_header(natsMsg *msg, const char *key)
{
    const char *value = NULL;
    return natsMsgHeader_Get(msg, key, &value) == NATS_OK ? value : NULL;
}
