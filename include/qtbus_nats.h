/* SPDX-License-Identifier: MIT */
/*
 * qtbus_nats.h -- libqtbus-nats: buses in several processes and machines joined
 * through a NATS server (https://nats.io; Debian: nats-server, libnats-dev).
 *
 *     cc app.c $(pkg-config --cflags --libs qtbus-nats)
 *
 *     qtbus_nats *bridge;
 *     qtbus_nats_options options = { .url = "nats://127.0.0.1:4222" };
 *     if (qtbus_nats_connect(bus, &options, &bridge) != QTBUS_OK)
 *         fprintf(stderr, "%s\n", qtbus_errmsg());     // which server, and why
 *     qtbus_nats_export(bridge, "Order");   // local dispatches of Order are published
 *     qtbus_nats_import(bridge, "Price");   // Price events from NATS are dispatched here
 *     ...
 *     qtbus_nats_close(bridge);             // before qtbus_bus_destroy(bus)
 *
 * WHAT CROSSES.  An event's type, subtype, data bytes and sticky flag.  Not its
 * object (a pointer, meaningful in its own process only): an exported event with an
 * object is published without it.
 *
 * SUBJECTS.  An event is published on  <prefix>.<kind>.<subtype>.<type>:
 *   prefix   options->prefix, default "qtbus" (one or more tokens: "acme.prod");
 *   kind     "e" an event, "k" a sticky ("kept") event, "q" a request;
 *   subtype  the subtype, encoded as one token, or "_" when the event has none;
 *   type     the type's '.'-separated tokens, one subject token each, each encoded
 *            ("_" for an empty one: "a..b" is a._.b).
 * Encoding: the bytes A-Z a-z 0-9 and '-' stand for themselves; every other byte (UTF-8
 * bytes included, and '.' inside a subtype) is '_' and two upper-case hex digits:
 * "Order.created" with the subtype "eu" is qtbus.e.eu.Order.created, "Prix Δ" is
 * Prix_20_CE_94, a literal "*" token is _2A.  It is one-to-one, so every valid qtbus
 * name crosses and comes back as it was, and the lone "_" is never an encoded name.
 * The subtype comes before the type so that its place is fixed and the type's tokens
 * end the subject: a plain NATS subscriber's own wildcards then select qtbus types as
 * qtbus patterns do (QTBUS_SUB_PATTERN): qtbus.e.*.Order.> takes the events of every
 * type Order.<one or more tokens>, any subtype.  0.x releases may change this layout
 * (CHANGELOG.md says when).
 *   An import of a whole type subscribes to <prefix>.*.*.<type> (the server filters by
 * type); an import of one subtype to <prefix>.*.<subtype>.<type>.
 *
 * PATTERNS.  A type given to qtbus_nats_export(), qtbus_nats_import() or
 * qtbus_nats_import_subtype() that has a whole token "*" or ">" is a pattern, with
 * QTBUS_SUB_PATTERN's rules (qtbus.h): "*" one token, ">" as the last token one or
 * more.  An import of "Order.>" subscribes to <prefix>.*.*.Order.>, so the server sends
 * exactly the events of the types the pattern matches; an export of "Order.>"
 * subscribes to it on the bus with QTBUS_SUB_PATTERN and publishes each event on its
 * own type's subject.  A pattern with an empty token, or a ">" before its last token,
 * is QTBUS_EINVAL (a literal type with those tokens cannot be named alone; a pattern
 * that matches it, "a.*.b" for "a.>.b", takes it).
 *   Exports or imports may overlap (a pattern and a type it matches, two patterns,
 * a whole type and one of its subtypes): each event is still published once, by the
 * oldest export that takes it, and dispatched once, by the oldest import that takes
 * it (a received request is acknowledged and answered once).  Once a bridge has two
 * that overlap, each event they take costs a look at its list of exports or imports
 * under the bridge's lock.
 *
 * DELIVERY.  Core NATS: at most once, in order per publisher and import: the events of
 * one publisher that one import takes are dispatched in the order they were published,
 * but two imports of a bridge ("A" and "B") are two subscriptions, which nats.c hands
 * over on threads of their own, so one publisher's A and B may be dispatched in
 * another order than published (import a pattern that takes both, "*", to keep it).
 * A published event reaches the processes whose bridge imports its type and is
 * connected at that moment;
 * while the connection is down, what is published is kept in nats.c's reconnect buffer
 * (8 MiB) and sent on reconnect; when that is full, the publish fails and is reported
 * (below).  Received events are dispatched on the bridge's own thread, one at a time,
 * in the order they arrived: a slow handler delays later imported events, never
 * nats.c's threads or the publisher.  That thread runs under SCHED_BATCH (its nice
 * value unchanged): waking it does not preempt the thread that received the event, so
 * on a busy machine a stream is dispatched in batches rather than one switch per event.
 *
 * HEADERS.  An exported event's headers (qtbus.h, "Event headers"; inherited ones
 * included) are NATS message headers of the same names and values; a received
 * message's headers become the dispatched event's, all but the bridge's own, whose
 * names start "Qtbus-" (which an event's may not, in any letter case).  So a plain NATS
 * client that publishes with a `traceparent` header on an imported type's subject
 * reaches handlers that read it, and what they dispatch on an exported type reaches
 * NATS with it (inherited): W3C Trace Context crosses both ways.  A request carries its
 * headers to the answering bridge's handlers; replies carry none.  A name received
 * with several values keeps the last; the order of received headers is nats.c's, not
 * necessarily the sender's.  A received message whose headers break qtbus.h's rules
 * (a name that is no token, more than 32, a value with invalid UTF-8...) is dropped and
 * reported (ERRORS, below) with the reason.  Headers need nats-server 2.2 or later.
 * A header with an empty value does not cross: the bridge leaves it out of what it
 * publishes, because nats.c (3.4.1, here and in any receiving C client) writes it as
 * "name: " and its parser then skips the line end as blank, so the receiver would read
 * the next header line as that value and lose that header (or, on the last line, all
 * of them, the bridge's own Qtbus-* with them).  Give a header that must cross a
 * non-empty value.
 *
 * REQUESTS.  Standard NATS request/reply, so that any NATS client can ask a qtbus
 * handler and any NATS service can answer a qtbus request.  qtbus_request() on an
 * exported type also reaches the handlers of the processes that import it: the request
 * (its bytes, on its "q" subject) is published with a reply subject under the bridge's
 * inbox and the header Qtbus-Request, which tells a bridge that a bridge asks.  A
 * bridge that receives a request dispatches it as a request on its bus
 * (qtbus_request) and publishes every qtbus_event_reply() of its handlers to the reply
 * subject as the reply's bytes, with no header.  When a bridge asked, it also
 * acknowledges the request at once and says when its local request has completed:
 * messages with no bytes and the header Qtbus-Answer: ack / done.  So a plain
 * requester (nats req, nats-py's request()) gets the handlers' replies, the first
 * being the first reply; and a plain service that responds to a qtbus request with
 * bytes is a reply like any other.
 *   In the requesting process each reply calls on_reply, on the bridge's thread, with
 * its bytes.  The request's completion (its release) runs when the local handlers are
 * done and the remote ones have answered, which means precisely: every bridge whose
 * acknowledgement arrived has completed, the acknowledgement window (a twentieth of
 * request_timeout_ms, 50 ms by default) has passed since the request was published,
 * and someone answered (an acknowledgement, a reply, or the server's "no responders"
 * when nothing subscribes to the subject); or else when request_timeout_ms has
 * passed.  So a request nobody else subscribes to completes after the window, one
 * that a plain service answers completes at its first reply (after the window), and
 * one that only subscribers which never answer receive completes at the timeout.
 * Answers that come later are dropped.  The remote handlers' count is not in what
 * qtbus_request() returns (the export subscription counts as one handler).
 *   The answering bridge reports each answer it cannot send (ERRORS, below, with the
 * function "qtbus_nats_import"), saying what the requester sees instead: the
 * acknowledgement (the requester then does not count that bridge and may complete
 * before its replies come), a reply (larger than the server's max_payload, no memory
 * to copy it, the server unreachable with the reconnect buffer full...: the requester
 * does not get it), the end (the requester waits for it until its request_timeout_ms),
 * and a received request it could not dispatch.  An answer sent after that bridge was
 * closed (a handler that deferred) is reported too, in qtbus_errmsg() on the thread
 * that answers and by QTBUS_DEBUG=misuse, but to no trace hook: a closed bridge no
 * longer knows whether its bus exists.
 *
 * STICKY EVENTS KEPT BY THE SERVER (options->jetstream).  Without it a sticky event is
 * kept by the buses that receive it, but a process that starts later has missed it.
 * With it, the bridge makes (if missing) a JetStream stream "qtbus-sticky-<prefix,
 * encoded>" on <prefix>.k.> that keeps the last message of each subject, that is the
 * last sticky event of each type and subtype; and an import takes the sticky events
 * from that stream: first the kept one of each subtype, in the order they were
 * dispatched, then new ones as they come, each once.  So a process that imports a
 * type later receives what was kept, its bus keeps it, and its QTBUS_SUB_REPLAY
 * subscribers get it.  Sticky events then come through the stream and plain ones
 * straight from the server: each kind keeps its order, but a plain event may overtake
 * a sticky one dispatched before it.  A bridge without jetstream still feeds the
 * stream (it takes every message on its subjects) but imports without the replay.
 * Connecting with jetstream to a server without JetStream is QTBUS_EIO.
 *
 * NO LOOPS.  The event a bridge dispatches from NATS is not published again by that
 * bridge, even when its type is both exported and imported.  Events that a handler
 * dispatches in reaction are new events and are published as usual.
 *
 * ERRORS.  Calls return qtbus statuses; qtbus_errmsg() says why (which server, what
 * nats.c answered), QTBUS_DEBUG=misuse prints it, and a failed call given a bridge (or,
 * for qtbus_nats_connect, a bus) is a MISUSE record for that bus's trace hook; a NULL
 * bridge has no bus to report to.  A call that fails changes nothing, unless its
 * comment says otherwise.  Failures that happen away from a call (a publish from
 * inside a dispatch, a received message that cannot be dispatched, the server's
 * asynchronous errors) are reported the same way, as qtbus_report() does, with the
 * function "qtbus_nats_export" / "qtbus_nats_import" / "qtbus_nats": on the thread
 * where they happen, and to the bus's trace hook as MISUSE records.  The server's
 * asynchronous errors ("qtbus_nats", on nats.c's callback thread) carry its words,
 * e.g. for a publish its permissions deny:
 *     qtbus_nats: Not Permitted: Permissions Violation for Publish to "qtbus.e._.T"
 * A refusal by the server, of the credentials or of a permission, has the status
 * QTBUS_EACCES wherever it is reported (a record's status; a call's return where the
 * call learns of it: connecting, importing); every other failure of nats.c or the
 * server is QTBUS_EIO (or QTBUS_ENOMEM, QTBUS_EINVAL for what nats.c says is one).
 * Received messages are dropped, with such a report, when their subject is not one
 * this encoding produces (a name in it that is not a qtbus name included: NAMES,
 * below) or when the bridge's backlog of received events holds more than
 * QTBUS_NATS_MAX_PENDING events or QTBUS_NATS_MAX_PENDING_BYTES.
 *
 * NAMES.  Every call that takes a type or a subtype checks it with one rule, qtbus's
 * (qtbus.h, NAMES: NUL-terminated UTF-8 of 1 to 255 bytes), before anything is
 * subscribed on the bus or on the server: NULL, "", 256 bytes or more, and invalid
 * UTF-8 (a stray or missing continuation byte, a sequence cut short, an overlong form,
 * a surrogate, a scalar above U+10FFFF) are QTBUS_EINVAL, with qtbus_errmsg() in the
 * bus's own words under the call's name:
 *     qtbus_nats_import: the type name "\xff" is not valid UTF-8
 * So an import refuses every name an export refuses, and the other way round: a name
 * the bus could not dispatch is never imported only to have its events dropped.
 *
 * THREADS.  Every function may be called from any thread.  A bridge must be closed
 * before its bus is destroyed, and not used after it is closed.
 *   The bridge's own threads are named "qtbus-nats" (what top -H, ps -L and gdb's "info
 * threads" show): the thread that dispatches what it receives, one per bridge, for as
 * long as the bridge is open; and, for a moment after qtbus_nats_close_timeout()
 * returns, the one that ends nats.c's connection.  The threads nats.c makes (per
 * connection its read loop and flusher, and while reconnecting its reconnect thread;
 * one delivery thread per subscription, so per import, unless the options ask for
 * nats.c's shared delivery pool; its timer, asynchronous-callback and garbage-collector
 * threads, once per process) are not named by the bridge: nats.c has no hook for it.
 * Linux gives a new thread its creator's name, so they carry the name of the thread that
 * connected or imported (or of nats.c's own thread that made them).
 */
#ifndef QTBUS_NATS_H
#define QTBUS_NATS_H

#include <qtbus.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define QTBUS_NATS_API __attribute__((visibility("default")))
#else
#define QTBUS_NATS_API
#endif

/* Received events a bridge holds before its thread has dispatched them; beyond either
 * bound, newly received ones are dropped and reported. */
#define QTBUS_NATS_MAX_PENDING 65536
#define QTBUS_NATS_MAX_PENDING_BYTES (64u * 1024 * 1024)

typedef struct qtbus_nats qtbus_nats;

/* nats.c's natsOptions and natsConnection (<nats/nats.h>), named by their struct tags
 * so that this header does not need nats.c's: a program that calls
 * qtbus_nats_connect_with() or qtbus_nats_attach() includes <nats/nats.h> and passes
 * its natsOptions * or natsConnection * as they are. */
struct __natsOptions;
struct __natsConnection;

/* The options of a bridge.  It grows as qtbus.h's STRUCTS THAT GROW say: the functions
 * taking it take its size, which the macros below pass; fields beyond this library's
 * must be zero (a newer header's options this library cannot honour are QTBUS_EINVAL,
 * not ignored). */
typedef struct qtbus_nats_options {
    const char *url;        /* "nats://127.0.0.1:4222"; a comma-separated list for a cluster */
    const char *prefix;     /* subject prefix; NULL: "qtbus" */
    int jetstream;          /* sticky events kept in a JetStream stream (last per subject) */
    int request_timeout_ms; /* how long a bridged request collects remote replies; 0: 1000 */
} qtbus_nats_options;

/* Connects `bus` to the NATS server(s) at options->url.  On success *out is the bridge
 * (exporting and importing nothing yet).  Returns QTBUS_OK; QTBUS_EINVAL (NULL bus,
 * options, url or out; a url that lists no server; a negative timeout; a prefix that
 * is not a NATS subject without wildcards); QTBUS_EIO when no server of the list could
 * be reached (qtbus_errmsg() names the url and nats.c's reason), or, with jetstream,
 * when the server has no JetStream; QTBUS_EACCES when a server was reached and refused
 * access (the credentials in the url are wrong, or it wants some and there are none:
 * nats.c's NATS_CONNECTION_AUTH_FAILED), qtbus_errmsg() saying so, with the url and
 * nats.c's words ("a server at ..." for a list, which does not say which one):
 *     qtbus_nats_connect: the server at nats://orders:***@127.0.0.1:4222 was reached
 *     and refused access: Authentication Violation ((conn.c:1905): Authorization Violation)
 * QTBUS_ENOMEM.  A failed connect leaves *out NULL.
 *
 * The url lists every server, separated by commas, as many as it names (all are
 * used; blanks around an entry and empty entries are skipped): tried in that order at
 * connect, and again in that order after a server is lost.  An entry may carry
 * credentials, nats://user:password@host:port or nats://token@host:port (nats.c takes
 * them from the first entry that has some); qtbus_errmsg() shows the url with each
 * password or token as "***".  A connect the server refuses for authorization is made
 * again with nats.c before 3.11, as qtbus_nats_connect_with() says, so wrong
 * credentials in the url are refused after three round trips.
 *
 * The prefix is not a qtbus name but the first tokens of every subject, written as it
 * is, so it has NATS's rule, made strict: 1 to 256 bytes of printable ASCII (0x21 to
 * 0x7E: no space, no control byte, nothing above 0x7E, so never invalid UTF-8), in
 * '.'-separated tokens none of them empty, and no '*' or '>' anywhere. */
QTBUS_NATS_API int qtbus_nats_connect_sized(qtbus_bus *bus, const qtbus_nats_options *options, size_t size,
                                            qtbus_nats **out);
/* 0.2.0's entry point, its options of 24 bytes, kept for programs built against it. */
QTBUS_NATS_API int qtbus_nats_connect(qtbus_bus *bus, const qtbus_nats_options *options, qtbus_nats **out);
#define qtbus_nats_connect(bus, options, out)                                                                          \
    qtbus_nats_connect_sized((bus), (options), sizeof(qtbus_nats_options), (out))

/* Connects `bus` with nats.c options the caller configured with nats.c's own setters:
 * servers (natsOptions_SetURL, _SetServers), TLS (natsOptions_SetSecure,
 * _LoadCATrustedCertificates, _LoadCertificatesChain, _SetExpectedHostname), a user and
 * password, a token, an NKey or a credentials file (natsOptions_SetUserInfo, _SetToken,
 * _SetNKeyFromSeed, _SetUserCredentialsFromFiles), a name, reconnect settings, and
 * natsOptions_SetRetryOnFailedConnect.  With retry and a connected callback, a
 * connect while no server is up returns QTBUS_OK at once and the bridge works once
 * one comes up: what is exported meanwhile waits in nats.c's reconnect buffer, and an
 * import returns QTBUS_OK at once, its subscription sent when the connection is made
 * (a refusal by the server's permissions then comes as its asynchronous error).  With
 * retry and no callback, nats.c tries inside the connect call, as often as
 * natsOptions_SetMaxReconnect says (-1: until a server answers).
 * options->url is ignored; prefix, jetstream and request_timeout_ms are used as
 * qtbus_nats_connect() uses them (jetstream needs the server at connect: without one,
 * QTBUS_EIO).  The bridge sets on `nats_options` only: natsOptions_SetNoEcho(true) (a
 * bridge never receives what it published) and natsOptions_SetErrorHandler (the
 * server's asynchronous errors, reported as ERRORS says, above); once connected it sets
 * the error handler back to nats.c's default, so that the options hold nothing of the
 * bridge.  The caller still owns them: reuse or destroy them once this returns, as
 * with natsConnection_Connect.  An error handler of the caller's is replaced, for this
 * connection: the bridge's reports and the trace hook carry the errors instead.
 * Returns what qtbus_nats_connect() returns (QTBUS_EINVAL for a NULL nats_options),
 * qtbus_errmsg() giving nats.c's reason; a failed connect leaves *out NULL and nothing
 * running.  QTBUS_EACCES: a server was reached and refused the user and password, the
 * token, the NKey or the credentials file (wrong, expired, unknown account, or none
 * given), qtbus_errmsg() reading "qtbus_nats_connect_with: a server of nats_options was
 * reached and refused access: " and nats.c's words (nats.c cannot tell the bridge its
 * options' url).  TLS failures are QTBUS_EIO, "no server of nats_options could be
 * reached", with OpenSSL's words when nats.c has them: nats.c reports a client
 * certificate the server refuses as the server closing the connection ("Protocol Error
 * (Expected 'PONG', got '')"), which a server going away reads as too.
 *
 * With nats.c before 3.11 (Debian 12's is 3.4.1), a connect the server refuses for
 * authorization is made again, three connects at most: those versions send no signature
 * when the signature of the server's nonce starts with a zero byte, so an NKey or
 * credentials connect is refused one time in 256 with the right keys.  Wrong ones are
 * refused each time (the call then takes three round trips).  An application's own
 * connection (natsConnection_Connect, before qtbus_nats_attach) has the same odds;
 * nats.c's reconnects retry such a refusal once by themselves. */
QTBUS_NATS_API int qtbus_nats_connect_with_sized(qtbus_bus *bus, struct __natsOptions *nats_options,
                                                 const qtbus_nats_options *options, size_t size, qtbus_nats **out);
/* 0.2.0's entry point, kept for programs built against it. */
QTBUS_NATS_API int qtbus_nats_connect_with(qtbus_bus *bus, struct __natsOptions *nats_options,
                                           const qtbus_nats_options *options, qtbus_nats **out);
#define qtbus_nats_connect_with(bus, nats_options, options, out)                                                       \
    qtbus_nats_connect_with_sized((bus), (nats_options), (options), sizeof(qtbus_nats_options), (out))

/* Bridges `bus` over a connection the application already has (natsConnection *, as
 * nats.c made it; it may echo).  options->url is ignored, the rest used as
 * qtbus_nats_connect() uses it.  The connection stays the application's: the bridge
 * subscribes and publishes on it and never closes or destroys it, not even in
 * qtbus_nats_close(), after which the bridge does nothing more with it (a request it
 * was still answering then loses its late answers, reported).  Close the bridge
 * before the connection.  Its callbacks are the application's: the server's
 * asynchronous errors go to the application's error handler, not to the bridge's
 * reports.  What this bridge publishes carries the header Qtbus-Origin (16 hex digits,
 * this bridge's own), by which it drops what the connection echoes back to it.
 * Returns QTBUS_OK; QTBUS_EINVAL (NULL bus, conn, options or out; a closed conn; the
 * options' rules); QTBUS_EIO (a server without headers, nats-server before 2.2; with
 * jetstream, one without JetStream); QTBUS_ENOMEM. */
QTBUS_NATS_API int qtbus_nats_attach_sized(qtbus_bus *bus, struct __natsConnection *conn,
                                           const qtbus_nats_options *options, size_t size, qtbus_nats **out);
/* 0.2.0's entry point, kept for programs built against it. */
QTBUS_NATS_API int qtbus_nats_attach(qtbus_bus *bus, struct __natsConnection *conn, const qtbus_nats_options *options,
                                     qtbus_nats **out);
#define qtbus_nats_attach(bus, conn, options, out)                                                                     \
    qtbus_nats_attach_sized((bus), (conn), (options), sizeof(qtbus_nats_options), (out))

/* From now on, every local dispatch of `type` (any subtype), or of any type the pattern
 * `type` matches (PATTERNS, above), on the bridge's bus is published.  The bridge
 * subscribes to `type` for this, at the highest priority (so
 * qtbus_event_stop() in a local handler cannot keep an event from crossing): the
 * subscription counts in what qtbus_dispatch() returns and in
 * qtbus_subscriber_count(), and qtbus_bus_foreach() shows it.  Exporting a type twice
 * is QTBUS_OK and changes nothing.  Refuses: QTBUS_EINVAL for a NULL bridge, a type
 * that is not a qtbus name (NAMES, above) or a pattern that is not one (PATTERNS,
 * above); QTBUS_ECLOSED (the bus is being destroyed);
 * QTBUS_ENOMEM.  A refused export subscribes nothing.  Later failures to publish are
 * reported as they happen (ERRORS, above), not by this call. */
QTBUS_NATS_API int qtbus_nats_export(qtbus_nats *bridge, const char *type);

/* From now on, events of `type` (every subtype), or of every type the pattern `type`
 * matches (PATTERNS, above), published by other bridges with the same prefix are
 * dispatched on the bridge's bus, on the bridge's thread.  Returns
 * once the server has the subscription: what is published after that reaches it.
 * Importing a type twice is QTBUS_OK and changes nothing.  Refuses: QTBUS_EINVAL for
 * a NULL bridge, a type that is not a qtbus name or a pattern that is not one (NAMES
 * and PATTERNS, above: exactly the types qtbus_nats_export refuses), with nothing
 * subscribed; QTBUS_EACCES when the server refused the subscription (below: nothing
 * kept); QTBUS_EIO when nats.c could not subscribe (nothing kept) or when the server did
 * not confirm the subscription within 2 s (then it is kept, and sent again on
 * reconnect); QTBUS_ENOMEM.  While the bridge is
 * not connected (reconnecting, or not yet connected: qtbus_nats_connect_with), an
 * import returns QTBUS_OK at once and its subscription is sent when the connection is
 * made; a refusal by permissions then comes as the server's asynchronous error.  Received messages
 * that cannot be dispatched are reported as they come (ERRORS, above).
 *
 * A server whose permissions deny the connection's user this subscription (with
 * JetStream, one of its subscriptions to <prefix>.e.*.<type> and <prefix>.q.*.<type>)
 * answers with an error before it confirms; the import waits for it and returns
 * QTBUS_EACCES, one MISUSE record, and qtbus_errmsg() in the server's words:
 *     qtbus_nats_import: the server refused the subscription to qtbus.*.*.T:
 *     Permissions Violation for Subscription to "qtbus.*.*.T"
 * Imports of one bridge take turns for this.  Limits, all nats.c's or the server's:
 *   - nats.c keeps only the connection's last error, until a reconnect.  After a
 *     refusal, an import of the same type on that connection, if the server now allows
 *     it (its configuration reloaded), waits 2 s for a refusal that does not come, then
 *     succeeds.  If the server refuses a publish of this bridge at the same instant as
 *     the subscription, the import may return QTBUS_OK: the refusal then comes as the
 *     server's asynchronous error (ERRORS, above: function "qtbus_nats", with the
 *     server's words, on nats.c's thread), and the import imports nothing.
 *   - A deny that covers only part of what the import takes (e.g. "qtbus.e.*.T" for an
 *     import of T, which subscribes to qtbus.*.*.T) is no refusal: the server accepts
 *     the subscription and silently withholds the events it denies; nothing tells the
 *     bridge.  Deny whole types (qtbus.*.*.T, with qtbus.*.*.T.> for the types below
 *     it, or qtbus.>).
 *   - A refusal that comes later (permissions reduced by a reload) is the server's
 *     asynchronous error, as above. */
QTBUS_NATS_API int qtbus_nats_import(qtbus_nats *bridge, const char *type);

/* As qtbus_nats_import(), for the events of `type` with this one `subtype`: the server
 * sends no others.  A type imported whole already receives them.  Refuses as
 * qtbus_nats_import() does, and QTBUS_EINVAL for a subtype that is not a qtbus name
 * (NAMES, above), NULL included (qtbus_nats_import() takes the whole type). */
QTBUS_NATS_API int qtbus_nats_import_subtype(qtbus_nats *bridge, const char *type, const char *subtype);

/* Undoes qtbus_nats_export(bridge, type), exactly that type or pattern: its
 * subscription is disposed, so a dispatch already in progress may still publish
 * (qtbus.h, lifetime rule 2), none that starts after this returns.  QTBUS_ESTALE when
 * `type` is not exported by this bridge (never, or undone already), qtbus_errmsg()
 * saying so; QTBUS_EINVAL as qtbus_nats_export(). */
QTBUS_NATS_API int qtbus_nats_unexport(qtbus_nats *bridge, const char *type);

/* Undoes qtbus_nats_import(bridge, type), exactly that type or pattern: the server
 * sends no more of it, and what it had sent is still dispatched (the subscription
 * drains, at most 3 s) before this returns.  Events that another import of this bridge
 * also takes keep coming through that one.  QTBUS_ESTALE when `type` is not imported
 * whole by this bridge, qtbus_errmsg() saying so; QTBUS_EINVAL as qtbus_nats_import(). */
QTBUS_NATS_API int qtbus_nats_unimport(qtbus_nats *bridge, const char *type);
/* The same for qtbus_nats_import_subtype(bridge, type, subtype). */
QTBUS_NATS_API int qtbus_nats_unimport_subtype(qtbus_nats *bridge, const char *type, const char *subtype);

/* What a bridge has done since it was made (each count only grows, but pending):
 *   published   events and requests published by its exports;
 *   received    events and requests its imports received (an event that two of its
 *               imports take counts once; what an attached connection echoes, none);
 *   dropped     every event the bridge reported and did not deliver, either way: a
 *               publish that failed, a received message it could not dispatch
 *               (malformed, beyond QTBUS_NATS_MAX_PENDING, no memory, refused by the
 *               bus).  A publish the server refuses by its permissions is reported (the
 *               server's asynchronous error) but counted as published: the server's
 *               error does not say which event it was;
 *   reconnects  the connection's reconnects (an attached one's since the bridge came);
 *   pending     received messages not yet dispatched by the bridge's thread (the
 *               answers to its requests included): compare with
 *               QTBUS_NATS_MAX_PENDING to see a slow consumer coming.
 * received = dispatched + dropped on receipt + pending. */
typedef struct qtbus_nats_stats {
    uint64_t published, received, dropped, reconnects, pending;
} qtbus_nats_stats;

/* Fills *out; QTBUS_OK, or QTBUS_EINVAL for NULL or a size below 40 (the struct in
 * 0.2.0).  It grows as qtbus.h's STRUCTS THAT GROW say: fields beyond this library's
 * are left zero. */
QTBUS_NATS_API int qtbus_nats_stats_get_sized(qtbus_nats *bridge, qtbus_nats_stats *out, size_t size);
/* 0.2.0's entry point, its 40 bytes, kept for programs built against it. */
QTBUS_NATS_API int qtbus_nats_stats_get(qtbus_nats *bridge, qtbus_nats_stats *out);
#define qtbus_nats_stats_get(bridge, out) qtbus_nats_stats_get_sized((bridge), (out), sizeof(qtbus_nats_stats))

/* 1 while the bridge is connected to a server, 0 while it is reconnecting (what is
 * published then waits in the reconnect buffer); QTBUS_EINVAL for NULL (qtbus_errmsg()
 * says so; there is no bus to trace it to). */
QTBUS_NATS_API int qtbus_nats_is_connected(qtbus_nats *bridge);

/* Stops exporting and importing, waits until what was published has reached the
 * server (at most 5 s), drains each import's subscription (at most 3 s: what the
 * server had sent it is still dispatched), waits until the bridge's thread has
 * dispatched the events it had received, then disconnects and frees the bridge.
 * Returns QTBUS_OK; QTBUS_EIO when what it was asked to deliver may be lost: the flush
 * did not complete, or a subscription did not drain (nats.c then dropped what it
 * still held for it; with the server unreachable, what the server meant to send it).
 * The bridge is closed and freed all the same, and the failure is one MISUSE record,
 * qtbus_errmsg() naming each kind of loss, which subscription (the first, and how many
 * more) and nats.c's reason:
 *     qtbus_nats_close: 1 subscription did not drain, so messages for it may be lost:
 *     qtbus.*.*.T (Timeout)
 * QTBUS_EINVAL for NULL.  With the server gone this takes the 8 s of its two waits:
 * qtbus_nats_close_timeout() closes within a time of the caller's. */
QTBUS_NATS_API int qtbus_nats_close(qtbus_nats *bridge);

/* Closes the bridge as qtbus_nats_close() does, but within timeout_ms milliseconds in
 * all (one deadline for the flush, the drains and the bridge's thread, rather than
 * close's 5 s and 3 s), and frees it, whatever it returns but QTBUS_EINVAL.  What was
 * not done when the time is up is dropped:
 *   - the flush: what nats.c still held of what was published (with no server
 *     reachable, its reconnect buffer) is not sent;
 *   - the drains: each import's subscription is drained for the time left; with none
 *     left it is unsubscribed at once, and what nats.c held for it is dropped;
 *   - the bridge's thread stops dispatching what it received: the rest is dropped
 *     (counted in qtbus_nats_stats_get's dropped until the bridge is freed).
 * timeout_ms 0 closes at once: no flush, no drain, nothing more dispatched.  Then
 * "flushed" means that nothing waited in nats.c's buffer of a connection that was up
 * (written to the socket; the server's receipt takes a round trip, which needs time).
 *   Returns QTBUS_OK when nothing was dropped: everything published reached the server
 * (or, at 0, the socket), every import drained, every received event was dispatched.
 * QTBUS_ETIMEDOUT when the time cut any of it short: the bridge is closed and freed
 * all the same, and qtbus_errmsg() says what was dropped, as exactly as nats.c lets
 * the bridge know (bytes unsent on a connection that is up; of a reconnect buffer,
 * nats.c says nothing; messages nats.c held for an import not drained; events the
 * bridge's thread had not dispatched), in one MISUSE record:
 *     qtbus_nats_close_timeout: the timeout (500 ms) cut the close short: what was
 *     published did not reach the server within 500 ms (none is reachable; the
 *     reconnect buffer is lost): Timeout; 1 subscription did not drain, so messages
 *     for it may be lost: qtbus.*.*.T (Timeout)
 * Messages the server had sent an import that was not drained, still on their way, are
 * lost unseen (as with any unsubscribe).  QTBUS_EIO (closed and freed too) when a
 * failure that is not the time's cut it short (nats.c closed the connection under the
 * flush).  QTBUS_EINVAL for a NULL bridge, or a negative timeout_ms: then nothing is
 * closed, and the bridge stays usable (qtbus_nats_close() has the default waits).
 *   What the timeout cannot cut: a handler of an imported event that is running is not
 * interrupted (close waits for it to return); nor nats.c's threads leaving the bridge's
 * callbacks (which only queue; but a received message the bridge drops is reported to
 * the bus's trace hook, on nats.c's thread: a hook that blocks holds close).  nats.c's
 * own close of the connection (not of an attached one) may wait too: it joins its
 * threads, the reconnect thread perhaps asleep for its reconnect wait or in a connect
 * attempt (up to natsOptions_SetTimeout, 2 s for qtbus_nats_connect()), and while the
 * connection is up with data in its buffer it waits up to 500 ms for the server.  So it
 * runs on a thread of the bridge's, after this returns (on the caller's only if no
 * thread can be made): by then nothing of the bridge calls the bus or the
 * application's code, the bus may be destroyed, and the bridge's memory is freed once
 * nats.c is done.  qtbus_nats_close() does that on the caller's thread, as it did. */
QTBUS_NATS_API int qtbus_nats_close_timeout(qtbus_nats *bridge, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* QTBUS_NATS_H */
