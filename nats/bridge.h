/*
 * The bridge's parts (libqtbus-nats, include/qtbus_nats.h), one file each:
 *   bridge.c    connect, close, and reporting failures
 *   subjects.c  qtbus names <-> NATS subject tokens
 *   export.c    local dispatches -> NATS publishes
 *   import.c    NATS messages -> the bridge's thread -> local dispatches
 * Layers call downward: bridge.c uses export.c and import.c, which use subjects.c.
 */
#ifndef QTBUS_NATS_BRIDGE_H
#define QTBUS_NATS_BRIDGE_H

#include <qtbus_nats.h>

#include <nats/nats.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define QTBUS_NATS_INTERNAL __attribute__((visibility("hidden")))

/* ---- subjects.c ------------------------------------------------------------------ */

/* The longest encoded name: 255 bytes, each at most 3 characters. */
#define QN_TOKEN_MAX (255 * 3)
/* prefix + ".k." + type + "." + subtype + NUL */
#define QN_SUBJECT_MAX (256 + 3 + QN_TOKEN_MAX + 1 + QN_TOKEN_MAX + 1)

/* Kinds of published events (the token after the prefix). */
#define QN_KIND_EVENT 'e'
#define QN_KIND_KEPT  'k'

/* Whether `prefix` is usable: tokens of printable ASCII without wildcards, '.'-separated,
 * none empty, at most 256 bytes. */
QTBUS_NATS_INTERNAL bool qn_prefix_valid(const char *prefix);
/* Writes the encoding of `name` (NUL-terminated) to out (QN_TOKEN_MAX + 1 bytes);
 * returns its length. */
QTBUS_NATS_INTERNAL size_t qn_encode(const char *name, char *out);
/* <prefix>.<kind>.<type>.<subtype or "_"> into out (QN_SUBJECT_MAX bytes). */
QTBUS_NATS_INTERNAL void qn_subject(char *out, const char *prefix, char kind, const char *type,
                                    const char *subtype);
/* The subscription subject of an import: kind "*", subtype "*" when NULL. */
QTBUS_NATS_INTERNAL void qn_import_subject(char *out, const char *prefix, const char *type, const char *subtype);

typedef struct qn_parsed {
    char kind;
    char type[256];
    char subtype[256];
    bool has_subtype;
} qn_parsed;

/* Parses a received subject (after `prefix_len` bytes of prefix and its '.'); NULL on
 * success, else why it is malformed (static text). */
QTBUS_NATS_INTERNAL const char *qn_parse(const char *subject, size_t prefix_len, qn_parsed *out);

/* ---- the bridge --------------------------------------------------------------------- */

typedef struct qn_exported {
    struct qn_exported *next;
    qtbus_token token;
    char type[];
} qn_exported;

typedef struct qn_imported {
    struct qn_imported *next;
    natsSubscription *sub;
    char subject[];
} qn_imported;

/* A received message waiting for the bridge's thread. */
typedef struct qn_pending {
    struct qn_pending *next;
    natsMsg *msg;
} qn_pending;

struct qtbus_nats {
    qtbus_bus *bus;
    natsConnection *conn;
    char prefix[257];
    size_t prefix_len;
    int request_timeout_ms;

    pthread_mutex_t lock;          /* guards the lists and the pending queue below */
    qn_exported *exported;
    /* Export subscriptions whose release has not run yet: a dispatch on another thread
     * may still be publishing through them (lifetime rule 1). */
    int live_exports;
    /* Import subscriptions whose nats.c completion has not run yet: on_message may
     * still be called for them. */
    int live_imports;
    pthread_cond_t settled;        /* live_exports or live_imports went down */
    qn_imported *imported;

    pthread_cond_t wake;           /* pending work, or closing */
    qn_pending *head, *tail;
    size_t pending_count, pending_bytes;
    bool closing;
    pthread_t thread;
    bool thread_started;
};

/* ---- bridge.c -------------------------------------------------------------------- */

/* Reports a failure that happened away from a call's return (qtbus_report). */
QTBUS_NATS_INTERNAL void qn_report(qtbus_nats *bridge, const char *function, int status, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
/* A nats.c status as a qtbus status, with qtbus_errmsg() saying what nats.c said. */
QTBUS_NATS_INTERNAL int qn_fail_nats(qtbus_nats *bridge, const char *function, natsStatus s, const char *what);

/* ---- export.c -------------------------------------------------------------------- */

QTBUS_NATS_INTERNAL int qn_export(qtbus_nats *bridge, const char *type);
/* Disposes the export subscriptions and waits until no publish is running or can
 * start (their releases have run). */
QTBUS_NATS_INTERNAL void qn_export_stop(qtbus_nats *bridge);

/* ---- import.c -------------------------------------------------------------------- */

QTBUS_NATS_INTERNAL int qn_import(qtbus_nats *bridge, const char *type, const char *subtype);
QTBUS_NATS_INTERNAL int qn_import_start(qtbus_nats *bridge);
/* Unsubscribes, then lets the thread dispatch what it holds and joins it. */
QTBUS_NATS_INTERNAL void qn_import_stop(qtbus_nats *bridge);
/* Whether `event`, seen by the bridge's export handler, is the one this bridge is
 * dispatching from NATS on this thread. */
QTBUS_NATS_INTERNAL bool qn_is_imported(const qtbus_nats *bridge, const qtbus_event *event);

#endif
