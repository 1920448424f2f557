/* SPDX-License-Identifier: MIT */
/*
 * The bridge's parts (libqtbus-nats, include/qtbus_nats.h), one file each, in layers,
 * the bottom one 1: a file calls only files of the layers below its own, never one of
 * its own layer or above.  scripts/nats-layers.py reads this table and fails on any
 * other call.  Below, each file's functions are declared in a section of its own.
 *
 *   layer  file        what it holds
 *   7      bridge.c    the public calls (qtbus_nats_*): connect, the names' checks, close
 *   6      export.c    local dispatches -> NATS publishes (asks import.c's loop guard)
 *   5      import.c    NATS messages -> the bridge's thread -> local dispatches
 *   4      requests.c  requests across processes: published with a reply inbox, answered
 *   4      sticky.c    sticky events kept by JetStream, replayed to bridges that import later
 *   3      lifetime.c  the bridge's references and live subscriptions, and freeing it
 *   2      handoff.c   received messages from nats.c's threads to the bridge's, lock-free
 *   1      subjects.c  qtbus names <-> NATS subject tokens
 *   1      publish.c   what the bridge sends (bytes, and headers when needed); its own
 *   1      report.c    failures told as qtbus's own (qtbus_report), nats.c's in its words
 */
#ifndef QTBUS_NATS_BRIDGE_H
#define QTBUS_NATS_BRIDGE_H

#include <qtbus_nats.h>

#include <nats/nats.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QTBUS_NATS_INTERNAL __attribute__((visibility("hidden")))

/* ---- subjects.c ------------------------------------------------------------------ */

/* The longest qtbus name, in bytes (qtbus.h, NAMES). */
#define QN_NAME_MAX 255
/* The longest encoded name: 255 bytes, each at most 3 characters. */
#define QN_TOKEN_MAX (QN_NAME_MAX * 3)
/* prefix + ".k." + subtype + "." + type + NUL (a type's tokens, encoded, and the dots
 * between them: at most 3 bytes for each byte of the name) */
#define QN_SUBJECT_MAX (256 + 3 + QN_TOKEN_MAX + 1 + QN_TOKEN_MAX + 1)

/* Kinds of published events (the token after the prefix). */
#define QN_KIND_EVENT 'e'
#define QN_KIND_KEPT 'k'
#define QN_KIND_REQUEST 'q'

/* Whether `prefix` is usable: tokens of printable ASCII without wildcards, '.'-separated,
 * none empty, at most 256 bytes. */
QTBUS_NATS_INTERNAL bool qn_prefix_valid(const char *prefix);
/* Why `name` is not a qtbus name (qtbus.h, NAMES: NUL-terminated UTF-8 of 1 to 255
 * bytes), in the engine's words ("is NULL", "is empty", "is longer than 255 bytes",
 * "is not valid UTF-8"); NULL when it is one.  The one rule for every name the bridge
 * takes, from a caller or from a received subject.  The engine has no call that only
 * checks a name: qtbus_type_lookup() makes the type for good, and
 * qtbus_subscriber_count() reports a refusal as its own (a MISUSE record and a
 * QTBUS_DEBUG line naming a call the application did not make).  So the engine's rule
 * is written again here, and test_nats_names compares the two over every lead byte
 * and every kind of byte after it. */
QTBUS_NATS_INTERNAL const char *qn_name_problem(const char *name);
/* Writes the encoding of `name` (NUL-terminated) to out (QN_TOKEN_MAX + 1 bytes);
 * returns its length. */
QTBUS_NATS_INTERNAL size_t qn_encode(const char *name, char *out);
/* The pattern grammar and matching below are the engine's (Primitives/Subjects.swift,
 * qtbus.h QTBUS_SUB_PATTERN), written again: the engine exports no call that only
 * checks or matches a pattern (qtbus_subscribe() makes a subscription, and reports a
 * refusal as its own), the bridge matches NATS subjects with the same rule, and it
 * needs overlap, which the engine never asks.  test_nats_pattern_rule compares the two
 * over thousands of generated patterns and types: validity and the kind of reason,
 * every (pattern, type) match, and overlap both ways.
 *
 * Whether `type` (a qtbus name) is a pattern for the bridge: a whole token of it is "*"
 * or ">". */
QTBUS_NATS_INTERNAL bool qn_is_pattern(const char *type);
/* Why the pattern `type` is not one (an empty token, a '>' before the last token), as
 * qtbus_subscribe() with QTBUS_SUB_PATTERN refuses it; NULL when it is one. */
QTBUS_NATS_INTERNAL const char *qn_pattern_problem(const char *type);
/* Whether `pattern` matches `name` token by token, as NATS matches a subject ("*" one
 * token, a last ">" one or more): for qtbus types and for subjects alike. */
QTBUS_NATS_INTERNAL bool qn_matches(const char *pattern, const char *name);
/* Whether some name matches both patterns. */
QTBUS_NATS_INTERNAL bool qn_overlap(const char *a, const char *b);
/* <prefix>.<kind>.<subtype or "_">.<type's tokens> into out (QN_SUBJECT_MAX bytes). */
QTBUS_NATS_INTERNAL void qn_subject(char *out, const qtbus_nats *bridge, char kind, const char *type,
                                    const char *subtype);
/* A subscription subject: <prefix>.<kinds>.<subtype, or * when NULL>.<type's tokens>,
 * a whole "*" or ">" token of the type kept as the server's wildcard; kinds is one kind
 * or "*". */
QTBUS_NATS_INTERNAL void qn_pattern(char *out, const qtbus_nats *bridge, const char *kinds, const char *type,
                                    const char *subtype);

typedef struct qn_parsed {
    char kind;
    char type[256];
    char subtype[256];
    bool has_subtype;
} qn_parsed;

/* Parses a received subject (after `prefix_len` bytes of prefix and its '.'); NULL on
 * success, else why it is malformed (static text). */
QTBUS_NATS_INTERNAL const char *qn_parse(const char *subject, size_t prefix_len, qn_parsed *out);

/* ---- publish.c ------------------------------------------------------------------- */

/* The headers of the bridge's messages (qtbus_nats.h, REQUESTS), all named with the
 * prefix that qtbus.h refuses for an event's headers, in any letter case. */
#define QN_HEADER_PREFIX "Qtbus-"
#define QN_HEADER_ORIGIN "Qtbus-Origin"   /* an attached bridge's id, on what it sends */
#define QN_HEADER_REQUEST "Qtbus-Request" /* a request from a bridge: answer with ack and done */
#define QN_HEADER_ANSWER "Qtbus-Answer"   /* "ack" or "done", on a bridge's answer with no bytes */

/* Gives an attached bridge its origin (16 hex digits, random). */
QTBUS_NATS_INTERNAL void qn_origin_init(qtbus_nats *bridge);
/* Publishes `size` bytes on `subject` (a reply subject or NULL) with the headers of
 * `event` (NULL: none; a reply carries none), the header `header`: `value` (or none:
 * NULL), and the bridge's origin when it is attached. */
QTBUS_NATS_INTERNAL natsStatus qn_publish(qtbus_nats *bridge, const char *subject, const char *reply, const void *data,
                                          int size, const qtbus_event *event, const char *header, const char *value);
/* Whether a header name is the bridge's own: it starts "Qtbus-", in any letter case. */
QTBUS_NATS_INTERNAL bool qn_is_bridge_header(const char *name);
/* Whether `msg` has a header that is not the bridge's own (an event's). */
QTBUS_NATS_INTERNAL bool qn_has_event_headers(natsMsg *msg);
/* The headers of `msg` (NULL: none) that are an event's, all but the bridge's own, into
 * out[0..max): each name once, with its last value; the strings are msg's.  Returns how
 * many there are, which may be more than max (only max written then). */
QTBUS_NATS_INTERNAL int qn_event_headers(natsMsg *msg, qtbus_header *out, int max);
/* Whether `msg` came from this bridge (attached: its connection may echo). */
QTBUS_NATS_INTERNAL bool qn_is_own(const qtbus_nats *bridge, natsMsg *msg);
/* The value of the header `key` of `msg`, or NULL. */
QTBUS_NATS_INTERNAL const char *qn_header(natsMsg *msg, const char *key);

/* ---- the bridge --------------------------------------------------------------------- */

/* One export: the subscription whose handler publishes, given the entry. */
typedef struct qn_exported {
    struct qn_exported *next;
    struct qtbus_nats *bridge;
    qtbus_token token;
    uint64_t seq; /* the bridge's count of exports when it was made */
    char type[];
} qn_exported;

/* One import: one subscription to <prefix>.*.<subtype or *>.<type>, or with JetStream
 * three (events and requests from the server, sticky events from the stream). */
typedef struct qn_imported {
    struct qn_imported *next;
    natsSubscription *subs[3];
    natsStatus drain[3]; /* at close: how starting each one's drain went */
    int count;
    uint64_t seq;   /* the bridge's count of imports when it was made */
    char subject[]; /* <prefix>.*.<subtype or *>.<type>: what it takes */
} qn_imported;

/* An import waiting for the server's verdict on its subscriptions to the server's
 * subjects (import.c; the stream's is made after it).  A refusal by permissions comes
 * as an -ERR before the PONG that ends the import's flush, and nats.c hands it to
 * on_async_error later, on its own thread: there it is given to the verdict (claimed)
 * rather than reported, so that the import reports it once, as its own failure. */
typedef struct qn_verdict {
    const char *subjects[2]; /* the subscriptions' subjects, as sent to the server */
    int count;
    bool refused;
    char why[256];    /* the server's words for the first refusal claimed */
    char latest[256]; /* the last refusal claimed */
} qn_verdict;

/* A received message waiting for the bridge's thread.  A small one is copied, in one
 * allocation, so that nats.c's message is freed on nats.c's thread: freeing it on
 * another costs a lock and a wake-up inside nats.c per message, which for small events
 * is more than the copy.  A large one is kept as it is, since copying it costs more
 * (docs/perf-notes.md, "Small messages are copied, large ones kept"). */
#define QN_COPY_MAX 512
/* A message whose copy (data, subject, reply) fits in QN_NODE_COPY bytes, or that is
 * kept, goes in a node of that size, and the bridge's thread gives the node back to
 * the bridge's pool (at most QN_POOL_MAX such nodes exist) for the next message rather
 * than freeing it: a node allocated on nats.c's thread and freed on the bridge's never
 * returns to the allocating thread's malloc cache, which made malloc and free cost more
 * than qtbus_dispatch (docs/perf-notes.md, "Nodes go back to a pool"). */
#define QN_NODE_COPY 200
/* Enough for a flood's backlog: beyond the pool, nodes were malloc'd on nats.c's thread
 * and freed on the bridge's, and their arena's lock became contended.  After
 * QN_POOL_IDLE_NS without a message the thread frees all but QN_POOL_KEEP, so an idle
 * bridge keeps a fraction of a full pool (docs/perf-notes.md, "Nodes go back to a pool"). */
#define QN_POOL_MAX 4096
#define QN_POOL_KEEP 256
#define QN_POOL_IDLE_NS 1000000000
/* What a received message is, beyond its subject (publish.c's headers, read on nats.c's
 * thread, since the copy keeps none). */
#define QN_ANSWER_REPLY 'r'  /* a reply's bytes */
#define QN_ANSWER_ACK 'a'    /* a bridge has the request */
#define QN_ANSWER_DONE 'd'   /* that bridge's handlers are done */
#define QN_ANSWER_NOBODY 'n' /* the server's "no responders" */
#define QN_BRIDGE_ASKS 'b'   /* a request from a bridge, which wants ack and done */
typedef struct qn_pending {
    struct qn_pending *next;
    bool answer;   /* on the reply inbox: an answer to one of our requests */
    char tag;      /* an answer's QN_ANSWER_*; a request's QN_BRIDGE_ASKS or 0 */
    bool recycled; /* QN_NODE_COPY bytes of copy[]: goes back to the pool */
    natsMsg *msg;  /* kept (large; destroyed and NULL once dispatched), or NULL */
    const char *data;
    size_t size;
    const char *subject;
    const char *reply; /* NULL when none */
    char copy[];       /* copied: size bytes, then subject and reply, NUL-terminated */
} qn_pending;

struct qn_request;

/* handoff.c's shared words, apart from the rest of the bridge: nats.c's threads write
 * them for every message. */
typedef struct qn_handoff {
    _Alignas(64) _Atomic(qn_pending *) incoming; /* pushed by nats.c's threads, newest first */
    _Atomic uint64_t backlog;                    /* events << 40 | bytes, not yet dispatched */
    _Atomic bool sleeping;                       /* the bridge's thread waits on wake_seq */
    _Atomic uint32_t wake_seq;                   /* a futex word: moved on to wake the thread */
    _Alignas(64) _Atomic(qn_pending *) returned; /* nodes the bridge's thread gave back */
} qn_handoff;

struct qtbus_nats {
    qtbus_bus *bus;
    natsConnection *conn;
    /* The bridge itself, and each request it is answering (whose completion may come
     * after close, from a queued handler): the last one destroys the connection and
     * frees the bridge.  Guarded by lock. */
    int refs;
    char prefix[257];
    size_t prefix_len;
    int request_timeout_ms;
    jsCtx *js; /* options->jetstream: sticky events go through the stream */

    pthread_mutex_t lock; /* guards the lists and the pending queue below */
    qn_exported *exported;
    /* Export subscriptions whose release has not run yet: a dispatch on another thread
     * may still be publishing through them (lifetime rule 1). */
    int live_exports;
    /* Import subscriptions whose nats.c completion has not run yet: on_message may
     * still be called for them. */
    int live_imports;
    pthread_cond_t settled; /* live_exports or live_imports went down */
    qn_imported *imported;
    uint64_t export_seq, import_seq;
    /* Some event may be taken by two exports, or two imports (a pattern and a type it
     * matches, say): each is then sent, or dispatched, by the oldest of them only.
     * Set before the second is made, never cleared. */
    _Atomic bool exports_overlap, imports_overlap;
    /* qtbus_nats_attach: the connection is the application's, never closed here. */
    bool attached;
    char origin[17];
    /* Guards answers published after close against an attached connection the
     * application destroys once qtbus_nats_close has returned (requests.c). */
    pthread_mutex_t answer_lock;
    /* Imports take turns (import_lock, taken before lock): while one waits for the
     * server's verdict, a refusal it reads is its own. */
    pthread_mutex_t import_lock;
    qn_verdict *verdict;         /* the import waiting for its verdict, or NULL */
    pthread_cond_t verdict_cond; /* a refusal was claimed (CLOCK_MONOTONIC) */
    /* qtbus_nats_close has run: what still reports (an answer a handler sends later)
     * has no bus it may name, since the bus may be destroyed by now. */
    _Atomic bool closed;

    /* Requests this bridge published and has not completed (requests.c). */
    struct qn_request *requests;
    uint64_t last_request_id;
    natsSubscription *inbox_sub; /* <inbox>.*, made at the first request */
    char inbox[64];

    /* The bridge's thread only: the last subject it parsed, since a stream of one
     * type and subtype repeats it (decoding and checking it again cost as much as the
     * dispatch). */
    char parsed_subject[QN_SUBJECT_MAX];
    qn_parsed parsed;
    qn_handoff handoff;
    pthread_mutex_t pool_lock; /* taken by nats.c's threads only, for pool */
    qn_pending *pool;          /* recycled nodes ready for the next message */
    _Atomic size_t pool_nodes; /* recycled nodes in existence, at most QN_POOL_MAX */
    bool closing;
    pthread_t thread;
    bool thread_started;
    /* qtbus_nats_close_timeout: when the close must be over (CLOCK_MONOTONIC ns;
     * INT64_MAX, as made: none).  From then on the bridge's thread drops what it holds
     * rather than dispatch it, counting in close_dropped (its own; read after the join). */
    _Atomic int64_t close_deadline;
    uint64_t close_dropped;

    /* qtbus_nats_stats_get: written by dispatching threads and by nats.c's. */
    _Alignas(64) _Atomic uint64_t published;
    _Alignas(64) _Atomic uint64_t received;
    _Atomic uint64_t dropped;
    uint64_t reconnects_before; /* an attached connection's, when the bridge came */
};

/* The name of the bridge's own threads (its dispatching thread, and the one that ends
 * a close with a timeout): top -H, ps -L and gdb show it.  nats.c's threads are
 * nats.c's (qtbus_nats.h, THREADS). */
#define QN_THREAD_NAME "qtbus-nats"

/* ---- bridge.c -------------------------------------------------------------------- */

/* Its calls are the public ones, declared in include/qtbus_nats.h. */

/* ---- export.c -------------------------------------------------------------------- */

QTBUS_NATS_INTERNAL int qn_export(qtbus_nats *bridge, const char *type);
/* Undoes the export of exactly `type` (QTBUS_ESTALE when there is none). */
QTBUS_NATS_INTERNAL int qn_unexport(qtbus_nats *bridge, const char *type);
/* Disposes the export subscriptions and waits until no publish is running or can
 * start (their releases have run). */
QTBUS_NATS_INTERNAL void qn_export_stop(qtbus_nats *bridge);

/* ---- import.c -------------------------------------------------------------------- */

QTBUS_NATS_INTERNAL int qn_import(qtbus_nats *bridge, const char *type, const char *subtype);
/* Undoes the import of exactly `type` and `subtype` (QTBUS_ESTALE when there is none):
 * the server sends no more, and what it had sent is still dispatched. */
QTBUS_NATS_INTERNAL int qn_unimport(qtbus_nats *bridge, const char *type, const char *subtype);
QTBUS_NATS_INTERNAL int qn_import_start(qtbus_nats *bridge);
/* What qn_import_stop lost. */
typedef struct qn_stopped {
    int undrained;    /* imports (and the reply inbox) that did not drain */
    char why[160];    /* the first of them and nats.c's reason, " and N more" */
    uint64_t held;    /* messages nats.c held for subscriptions not drained */
    uint64_t dropped; /* received events the thread dropped (close_deadline) */
} qn_stopped;
/* Drains the subscriptions, each for at most drain_ms (0: none is drained, each is
 * unsubscribed at once, what nats.c held for it counted in held), then lets the thread
 * dispatch what it holds (until bridge->close_deadline) and joins it. */
QTBUS_NATS_INTERNAL void qn_import_stop(qtbus_nats *bridge, int64_t drain_ms, qn_stopped *out);
/* From on_async_error: true when `text` (nats.c's words for an -ERR) is the refusal of
 * a subscription of the import waiting for its verdict, which then has it. */
QTBUS_NATS_INTERNAL bool qn_import_claim_refusal(qtbus_nats *bridge, const char *text);
/* Whether `event`, seen by the bridge's export handler, is the one this bridge is
 * dispatching from NATS on this thread. */
QTBUS_NATS_INTERNAL bool qn_is_imported(const qtbus_nats *bridge, const qtbus_event *event);

/* ---- requests.c ------------------------------------------------------------------ */

/* From the export handler: publishes a request on `subject`, keeping it open. */
QTBUS_NATS_INTERNAL void qn_request_publish(qtbus_nats *bridge, const qtbus_event *event, const char *subject,
                                            const void *data, int size);
/* On the bridge's thread: an answer (its tag: QN_ANSWER_*) to one of our requests. */
QTBUS_NATS_INTERNAL void qn_request_answer(qtbus_nats *bridge, const qn_pending *msg);
/* On the bridge's thread: completes the requests that are due (all of them when
 * `all`); returns the next deadline (CLOCK_MONOTONIC ns), INT64_MAX when none. */
QTBUS_NATS_INTERNAL int64_t qn_requests_due(qtbus_nats *bridge, bool all);
/* From nats.c's thread, at once: tells a requesting bridge that this bridge has its
 * request; false (nothing sent) when the requester is not a bridge. */
QTBUS_NATS_INTERNAL bool qn_request_acknowledge(qtbus_nats *bridge, natsMsg *msg);
/* On the bridge's thread: dispatches a request received on `subject`; its answers go
 * to `reply` (with its end, when `bridge_asks`).  Reports its failures itself, as every
 * answer it cannot send. */
QTBUS_NATS_INTERNAL void qn_request_dispatch(qtbus_nats *bridge, const qtbus_event_desc *desc, const char *subject,
                                             const char *reply, bool bridge_asks);

/* ---- sticky.c -------------------------------------------------------------------- */

/* At connect, with options->jetstream: the JetStream context and the stream that keeps
 * the last sticky event of each subject (made if missing).  QTBUS_OK or a reported
 * failure. */
QTBUS_NATS_INTERNAL int qn_sticky_open(qtbus_nats *bridge, const char *fn);
/* Subscribes `handler` to the kept events of <prefix>.k.<subtype or *>.<type>: the last
 * of each subject first, in the order they were published, then new ones as they come. */
QTBUS_NATS_INTERNAL natsStatus qn_sticky_subscribe(qtbus_nats *bridge, const char *type, const char *subtype,
                                                   natsMsgHandler handler, natsSubscription **out);

/* ---- lifetime.c ------------------------------------------------------------------ */

/* Frees the bridge: its connection and JetStream context (either may be NULL, after a
 * connect that failed early), its locks, and the nodes handoff.c holds. */
QTBUS_NATS_INTERNAL void qn_bridge_free(qtbus_nats *bridge);
/* Drops a reference (refs); the last one disconnects and frees. */
QTBUS_NATS_INTERNAL void qn_bridge_unref(qtbus_nats *bridge);
/* nats.c callback: a subscription (an import's, or the reply inbox) is closed and its
 * handler has returned for the last time; counted out of live_imports. */
QTBUS_NATS_INTERNAL void qn_on_subscription_complete(void *closure);

/* ---- handoff.c ------------------------------------------------------------------- */

/* A node with `need` bytes of copy[] (0 for a kept message): pooled when it fits
 * QN_NODE_COPY, else allocated; NULL when out of memory. */
QTBUS_NATS_INTERNAL qn_pending *qn_node_get(qtbus_nats *bridge, size_t need);
/* From nats.c's threads: queues `p` for the bridge's thread and wakes it if it sleeps;
 * false (nothing queued) when the backlog bound is reached, with what it holds. */
QTBUS_NATS_INTERNAL bool qn_handoff_push(qtbus_nats *bridge, qn_pending *p, size_t *held_events, size_t *held_bytes);
/* From nats.c's threads: a received message queued for the bridge's thread (copied when
 * small, else kept), as an answer to one of our requests when `answer`, with its
 * `tag`; dropped, reported and counted when out of memory or beyond the backlog bound. */
QTBUS_NATS_INTERNAL void qn_handoff_enqueue(qtbus_nats *bridge, natsMsg *msg, bool answer, char tag);
/* Received messages not yet dispatched (answers to our requests included). */
QTBUS_NATS_INTERNAL uint64_t qn_handoff_pending(qtbus_nats *bridge);
/* The bridge's thread: everything queued, in arrival order (NULL when none). */
QTBUS_NATS_INTERNAL qn_pending *qn_handoff_take(qtbus_nats *bridge);
/* Wakes the bridge's thread: after a change it must see (a request, closing). */
QTBUS_NATS_INTERNAL void qn_handoff_wake(qtbus_nats *bridge);
/* The bridge's thread: the wake count, read before it looks at what there is to do... */
QTBUS_NATS_INTERNAL uint32_t qn_handoff_seq(qtbus_nats *bridge);
/* ...and, having found nothing, sleeps until a message comes, the count moves on from
 * `seen`, or deadline_ns (CLOCK_MONOTONIC; INT64_MAX: none). */
QTBUS_NATS_INTERNAL void qn_handoff_wait(qtbus_nats *bridge, uint32_t seen, int64_t deadline_ns);
/* The bridge's thread, after a batch: takes `events` and `bytes` off the backlog and
 * gives the recycled nodes spare...spare_last back to the pool. */
QTBUS_NATS_INTERNAL void qn_handoff_done(qtbus_nats *bridge, size_t events, size_t bytes, qn_pending *spare,
                                         qn_pending *spare_last);
/* The bridge's thread, idle: frees the pooled nodes beyond QN_POOL_KEEP. */
QTBUS_NATS_INTERNAL void qn_handoff_trim(qtbus_nats *bridge);
/* CLOCK_MONOTONIC in ns (the clock of every deadline here). */
QTBUS_NATS_INTERNAL int64_t qn_now_ns(void);
/* At the bridge's end: frees every node left. */
QTBUS_NATS_INTERNAL void qn_handoff_free(qtbus_nats *bridge);

/* ---- report.c -------------------------------------------------------------------- */

/* Reports a failure that happened away from a call's return (qtbus_report): to the
 * bridge's bus, or to none once the bridge is closed. */
QTBUS_NATS_INTERNAL void qn_report(qtbus_nats *bridge, const char *function, int status, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
/* A nats.c status as a qtbus status. */
QTBUS_NATS_INTERNAL int qn_status_of(natsStatus s);
/* "<what>: <nats.c's text for s> (<its last error on this thread, when it adds to
 * that>)" into out: read at once after the failed call, before another nats.c call. */
QTBUS_NATS_INTERNAL void qn_nats_reason(char *out, size_t size, natsStatus s, const char *what);
/* A nats.c status as a qtbus status, with qtbus_errmsg() saying what nats.c said. */
QTBUS_NATS_INTERNAL int qn_fail_nats(qtbus_nats *bridge, const char *function, natsStatus s, const char *what);

#endif
