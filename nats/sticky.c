/* SPDX-License-Identifier: MIT */
/*
 * Sticky events across processes (options->jetstream).  A JetStream stream listens on
 * <prefix>.k.> and keeps one message per subject, so the server holds the last sticky
 * event of each type and subtype, as a bus does.  The export side needs nothing new:
 * a sticky event is published on its "k" subject and the stream takes it.  An import
 * reads the kept events through an ordered consumer that starts with the last message
 * of each subject (in stream order: the order they were dispatched) and goes on with
 * new ones, so a bridge that imports later is given them first, with no gap and no
 * duplicate, and its bus keeps them for its REPLAY subscribers.
 */
#include "bridge.h"

#include <stdio.h>
#include <string.h>

/* A stream name is a token without '.', '*', '>' or spaces: the prefix, encoded. */
static void stream_name(const qtbus_nats *bridge, char *out)
{
    memcpy(out, "qtbus-sticky-", 13);
    qn_encode(bridge->prefix, out + 13);
}

int qn_sticky_open(qtbus_nats *bridge, const char *fn)
{
    natsStatus s = natsConnection_JetStream(&bridge->js, bridge->conn, NULL);
    if (s != NATS_OK) return qn_fail_nats(bridge, fn, s, "options->jetstream: no JetStream context");
    char name[16 + QN_TOKEN_MAX];
    stream_name(bridge, name);
    char subject[300];
    snprintf(subject, sizeof subject, "%s.k.>", bridge->prefix);

    jsStreamInfo *info = NULL;
    jsErrCode err = 0;
    s = js_GetStreamInfo(&info, bridge->js, name, NULL, &err);
    if (s == NATS_OK) {
        jsStreamInfo_Destroy(info);
        return QTBUS_OK;
    }
    if (s != NATS_NOT_FOUND) {
        char what[400];
        snprintf(what, sizeof what,
                 "options->jetstream: the server did not answer for the stream %.200s "
                 "(is JetStream enabled on it? nats-server -js)",
                 name);
        return qn_fail_nats(bridge, fn, s, what);
    }
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    const char *subjects[] = {subject};
    config.Name = name;
    config.Subjects = subjects;
    config.SubjectsLen = 1;
    config.MaxMsgsPerSubject = 1;
    config.Storage = js_FileStorage;
    s = js_AddStream(NULL, bridge->js, &config, NULL, &err);
    if (s != NATS_OK) {
        char what[400];
        snprintf(what, sizeof what,
                 "options->jetstream: the stream %.200s on %.64s could not be made (JetStream error %d)", name, subject,
                 (int)err);
        return qn_fail_nats(bridge, fn, s, what);
    }
    return QTBUS_OK;
}

natsStatus qn_sticky_subscribe(qtbus_nats *bridge, const char *type, const char *subtype, natsMsgHandler handler,
                               natsSubscription **out)
{
    char subject[QN_SUBJECT_MAX];
    qn_pattern(subject, bridge, "k", type, subtype);
    char name[16 + QN_TOKEN_MAX];
    stream_name(bridge, name);
    jsSubOptions options;
    jsSubOptions_Init(&options);
    options.Stream = name;
    options.Ordered = true;
    options.Config.DeliverPolicy = js_DeliverLastPerSubject;
    return js_Subscribe(out, bridge->js, subject, handler, bridge, NULL, &options, NULL);
}
