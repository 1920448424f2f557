/* SPDX-License-Identifier: MIT */
/*
 * What the bridge sends, and knowing its own.  A message is the event's bytes, as
 * dispatched, and the event's headers (qtbus.h, "Event headers") as NATS headers of the
 * same names and values; what the bridge needs besides rides in NATS headers of its own,
 * named Qtbus-* (qtbus_nats.h, REQUESTS), a prefix events may not use: a request's
 * mark, an answer's kind, and the origin of a bridge attached to the application's
 * connection.  That connection may echo (nats.c's default), so such a bridge would
 * receive its own publications: the origin, random per bridge, tells them.  A message
 * that needs no header goes the cheaper way, without a natsMsg.
 */
#include "bridge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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
                      const qtbus_event *event, const char *header, const char *value)
{
    size_t headers = event ? qtbus_event_header_count(event) : 0;
    if (!bridge->attached && !header && headers == 0) {
        return reply ? natsConnection_PublishRequest(bridge->conn, subject, reply, data, size)
                     : natsConnection_Publish(bridge->conn, subject, data, size);
    }
    natsMsg *msg = NULL;
    natsStatus s = natsMsg_Create(&msg, subject, reply, data, size);
    /* An event's names are unique (a dispatch merges a repeated one) and never Qtbus-*:
     * Set, in _at's order, cannot replace one of them or one of the bridge's.  A header
     * with an empty value is left out: nats.c (3.4.1) writes it as "name: " and its
     * parser, at the receiver, skips the line end as blank and takes the next header line
     * for the value, so sending it would lose another header, Qtbus-Origin included
     * (qtbus_nats.h, HEADERS). */
    for (size_t i = 0; i < headers && s == NATS_OK; i++) {
        const char *name = NULL, *text = NULL;
        if (qtbus_event_header_at(event, i, &name, &text) == QTBUS_OK && text[0] != '\0')
            s = natsMsgHeader_Set(msg, name, text);
    }
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

bool qn_is_bridge_header(const char *name)
{
    return strncasecmp(name, QN_HEADER_PREFIX, sizeof QN_HEADER_PREFIX - 1) == 0;
}

bool qn_has_event_headers(natsMsg *msg)
{
    const char **keys = NULL;
    int count = 0;
    if (natsMsgHeader_Keys(msg, &keys, &count) != NATS_OK) return false;
    bool found = false;
    for (int i = 0; i < count && !found; i++)
        found = !qn_is_bridge_header(keys[i]);
    free((void *)keys);
    return found;
}

int qn_event_headers(natsMsg *msg, qtbus_header *out, int max)
{
    const char **keys = NULL;
    int count = 0;
    if (!msg || natsMsgHeader_Keys(msg, &keys, &count) != NATS_OK) return 0;
    int n = 0;
    for (int i = 0; i < count; i++) {
        const char **values = NULL;
        int value_count = 0;
        if (qn_is_bridge_header(keys[i]) || natsMsgHeader_Values(msg, keys[i], &values, &value_count) != NATS_OK)
            continue;
        /* A name sent with several values (natsMsgHeader_Add): the last, as a dispatch
         * given a name twice keeps its last value. */
        if (value_count > 0 && n < max) out[n] = (qtbus_header){keys[i], values[value_count - 1]};
        if (value_count > 0) n++;
        free((void *)values);
    }
    free((void *)keys);
    return n;
}
