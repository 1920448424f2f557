/* SPDX-License-Identifier: MIT */
/*
 * libqtbus-nats: the public calls (qtbus_nats.h) and the connection.  The top layer:
 * it uses every other part, and none uses it.
 */
#define _GNU_SOURCE /* pthread_setname_np */
#include "bridge.h"
/* This file defines the functions behind qtbus_nats.h's size-passing macros. */
#undef qtbus_nats_connect
#undef qtbus_nats_connect_with
#undef qtbus_nats_attach
#undef qtbus_nats_stats_get

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long qtbus_nats_close waits for the server to confirm what was published, and
 * for each import's subscription to drain. */
#define CLOSE_FLUSH_MS 5000
#define CLOSE_DRAIN_MS 3000

/* nats.c's asynchronous errors have no call to return from: they are reported on
 * nats.c's thread, in the server's words when it sent some (nats.c gives them as this
 * thread's last error during the callback): a slow consumer (the server or nats.c
 * dropped messages), a publish or a subscription the server refused by permissions.
 * A refused subscription of an import still waiting for its verdict is that import's
 * failure, and is reported by it instead. */
static void on_async_error(natsConnection *nc, natsSubscription *sub, natsStatus err, void *closure)
{
    (void)nc;
    qtbus_nats *bridge = closure;
    const char *text = nats_GetLastError(NULL);
    if (text && !*text) text = NULL;
    if (text && err == NATS_NOT_PERMITTED && qn_import_claim_refusal(bridge, text)) return;
    const char *subject = sub ? natsSubscription_GetSubject(sub) : NULL;
    qn_report(bridge, "qtbus_nats", qn_status_of(err), "%s%s%.300s%s%.300s", natsStatus_GetText(err), text ? ": " : "",
              text ? text : "", subject ? " on " : "", subject ? subject : "");
}

/* url may be a comma-separated list, of any length; nats.c takes an array (of any
 * length too).  Blanks around an entry and empty entries are skipped. */
static natsStatus set_servers(natsOptions *opts, const char *url)
{
    size_t most = 1;
    for (const char *p = url; *p; p++)
        most += *p == ',';
    if (most > INT_MAX) return NATS_INVALID_ARG;
    char *copy = strdup(url);
    const char **servers = malloc(most * sizeof *servers);
    if (!copy || !servers) {
        free(copy);
        free(servers);
        return NATS_NO_MEMORY;
    }
    int count = 0;
    char *save = NULL;
    for (char *s = strtok_r(copy, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*s))
            s++;
        char *end = s + strlen(s);
        while (end > s && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (*s) servers[count++] = s;
    }
    natsStatus st = count ? natsOptions_SetServers(opts, servers, count) : NATS_INVALID_ARG;
    free(servers);
    free(copy);
    return st;
}

/* Whether `url` has an entry that is not blank. */
static bool lists_server(const char *url)
{
    for (; *url; url++) {
        if (*url != ',' && !isspace((unsigned char)*url)) return true;
    }
    return false;
}

/* Whether `url` lists more than one server (then a message cannot say which one). */
static bool several_servers(const char *url)
{
    int entries = 0;
    bool blank = true;
    for (const char *p = url;; p++) {
        if (*p == ',' || !*p) {
            entries += !blank;
            blank = true;
            if (!*p) break;
        } else if (!isspace((unsigned char)*p)) {
            blank = false;
        }
    }
    return entries > 1;
}

/* `url` as messages show it, since qtbus_errmsg() and the trace hook end up in logs:
 * the secret of each entry's userinfo written "***" (user:***@ for a password, ***@
 * for a token); at most `size` - 1 bytes, ending "..." when cut. */
static void shown_url(char *out, size_t size, const char *url)
{
    size_t n = 0;
    bool cut = false;
    for (const char *p = url; *p && !cut;) {
        const char *end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        const char *scheme = strstr(p, "://");
        const char *host = scheme && scheme < end ? scheme + 3 : p;
        const char *at = memchr(host, '@', (size_t)(end - host));
        const char *colon = at ? memchr(host, ':', (size_t)(at - host)) : NULL;
        const char *secret = colon ? colon + 1 : at ? host : NULL;
        for (const char *q = p; q <= end && *q && !cut;) {
            /* Room for what is written and for "..." after it. */
            size_t adds = q == secret ? 3 : 1;
            if (n + adds + 4 > size) {
                cut = true;
            } else if (q == secret) {
                memcpy(out + n, "***", 3);
                n += 3;
                q = at;
            } else {
                out[n++] = *q++;
            }
        }
        p = *end ? end + 1 : end;
    }
    if (cut) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n] = '\0';
}

/* What the bridge sets on the options it connects with, its own or the caller's
 * (qtbus_nats.h, qtbus_nats_connect_with). */
static natsStatus set_bridge_options(qtbus_nats *bridge, natsOptions *opts)
{
    /* A bridge that exports and imports a type must not get its own publications back:
     * the local subscribers had them at dispatch time. */
    natsStatus s = natsOptions_SetNoEcho(opts, true);
    if (s == NATS_OK) s = natsOptions_SetErrorHandler(opts, on_async_error, bridge);
    return s;
}

/* The arguments every way of connecting takes, checked alike; `needs_url`: options->url
 * is used (qtbus_nats_connect), not ignored. */
static int check_connect(const char *fn, qtbus_bus *bus, const qtbus_nats_options *options, qtbus_nats **out,
                         bool needs_url)
{
    if (out) *out = NULL;
    if (!bus) return qtbus_report(NULL, fn, QTBUS_EINVAL, "the bus is NULL");
    if (!options || !out) return qtbus_report(bus, fn, QTBUS_EINVAL, !options ? "options is NULL" : "out is NULL");
    if (needs_url && !options->url) return qtbus_report(bus, fn, QTBUS_EINVAL, "options->url is NULL");
    if (!qn_prefix_valid(options->prefix ? options->prefix : "qtbus"))
        return qtbus_report(bus, fn, QTBUS_EINVAL,
                            "options->prefix is not a NATS subject without wildcards (1 to 256 printable bytes, "
                            "'.'-separated tokens, no '*', '>' or spaces)");
    if (options->request_timeout_ms < 0)
        return qtbus_report(bus, fn, QTBUS_EINVAL, "options->request_timeout_ms is negative");
    if (needs_url && !lists_server(options->url))
        return qtbus_report(bus, fn, QTBUS_EINVAL, "options->url lists no server (only commas and blanks)");
    return QTBUS_OK;
}

/* A bridge with no connection yet, or NULL (no memory). */
static qtbus_nats *bridge_new(qtbus_bus *bus, const qtbus_nats_options *options)
{
    /* Aligned for handoff's cache lines (sizeof is a multiple of the alignment). */
    qtbus_nats *bridge = aligned_alloc(_Alignof(qtbus_nats), sizeof *bridge);
    if (!bridge) return NULL;
    memset(bridge, 0, sizeof *bridge);
    const char *prefix = options->prefix ? options->prefix : "qtbus";
    bridge->bus = bus;
    strcpy(bridge->prefix, prefix);
    bridge->prefix_len = strlen(prefix);
    bridge->request_timeout_ms = options->request_timeout_ms ? options->request_timeout_ms : 1000;
    bridge->refs = 1;
    atomic_init(&bridge->close_deadline, INT64_MAX);
    pthread_mutex_init(&bridge->lock, NULL);
    pthread_mutex_init(&bridge->pool_lock, NULL);
    pthread_mutex_init(&bridge->answer_lock, NULL);
    pthread_cond_init(&bridge->settled, NULL);
    pthread_mutex_init(&bridge->import_lock, NULL);
    pthread_condattr_t monotonic;
    pthread_condattr_init(&monotonic);
    pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
    pthread_cond_init(&bridge->verdict_cond, &monotonic);
    pthread_condattr_destroy(&monotonic);
    return bridge;
}

/* A bridge whose connection is made: the stream, if asked for, and the thread. */
static int bridge_start(const char *fn, qtbus_nats *bridge, const qtbus_nats_options *options, qtbus_nats **out)
{
    int status = options->jetstream ? qn_sticky_open(bridge, fn) : QTBUS_OK;
    if (status != QTBUS_OK) {
        qn_bridge_free(bridge);
        return status;
    }
    status = qn_import_start(bridge);
    if (status != QTBUS_OK) {
        qtbus_bus *bus = bridge->bus;
        qn_bridge_free(bridge);
        return qtbus_report(bus, fn, status, "the bridge's thread could not be started");
    }
    *out = bridge;
    return QTBUS_OK;
}

/* nats.c before 3.11 (Debian 12 ships 3.4.1) sends a CONNECT without its signature when
 * the signature of the server's nonce begins with a zero byte: its base64 encoder took a
 * leading NUL for an empty input (fixed in nats.c 3.11).  An NKey or credentials
 * connect is then refused one time in 256, whatever the keys.  The server's next nonce
 * signs differently, so such a refusal is tried again, twice at most: a genuine refusal
 * (wrong keys, an unknown user) is refused each time, and a connect fails for the bug
 * one time in 16.7 million.  Newer nats.c is tried once. */
static int auth_attempts(void) { return nats_GetVersionNumber() < 0x030B00 ? 3 : 1; }

/* Connects with `opts`, which have the bridge's settings; `where` names the servers in
 * a failure's message ("at nats://...", "of nats_options"), `several` when there may be
 * more than one.  A connection that nats.c keeps trying (its retry on failed connect)
 * is one: the bridge works once a server is up.
 *   A server that answered and refused the connection's credentials (nats.c's
 * NATS_CONNECTION_AUTH_FAILED: the server's -ERR 'Authorization Violation', for a wrong
 * password, token, NKey or credentials file, or none) is QTBUS_EACCES, and the message
 * says it was reached: "could not be reached" sent operators after the network when
 * the password was wrong.  Any other failure is QTBUS_EIO, "could not be reached":
 * TLS failures included, since nats.c does not tell a client certificate the server
 * refused from a server that closed the connection ("Expected 'PONG', got ''"). */
static int bridge_connect(const char *fn, qtbus_nats *bridge, natsOptions *opts, const char *where, bool several)
{
    natsStatus s = natsConnection_Connect(&bridge->conn, opts);
    for (int tries = auth_attempts() - 1; s == NATS_CONNECTION_AUTH_FAILED && tries > 0; tries--)
        s = natsConnection_Connect(&bridge->conn, opts);
    if (s == NATS_OK || s == NATS_NOT_YET_CONNECTED) return QTBUS_OK;
    char what[320];
    if (s == NATS_CONNECTION_AUTH_FAILED) {
        snprintf(what, sizeof what, "%s %s was reached and refused access", several ? "a server" : "the server", where);
    } else {
        snprintf(what, sizeof what, "no server %s could be reached", where);
    }
    int status = qn_fail_nats(bridge, fn, s, what);
    qn_bridge_free(bridge);
    return status;
}

int qtbus_nats_connect(qtbus_bus *bus, const qtbus_nats_options *options, qtbus_nats **out)
{
    static const char fn[] = "qtbus_nats_connect";
    int status = check_connect(fn, bus, options, out, true);
    if (status != QTBUS_OK) return status;
    qtbus_nats *bridge = bridge_new(bus, options);
    if (!bridge) return qtbus_report(bus, fn, QTBUS_ENOMEM, NULL);
    natsOptions *opts = NULL;
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK) s = set_servers(opts, options->url);
    /* A cluster is tried in the order given, and a lost server is retried for ever
     * (what was published meanwhile waits in the reconnect buffer). */
    if (s == NATS_OK) s = natsOptions_SetNoRandomize(opts, true);
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);
    if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 100);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 2000);
    if (s == NATS_OK) s = set_bridge_options(bridge, opts);
    if (s != NATS_OK) {
        natsOptions_Destroy(opts);
        status = qn_fail_nats(bridge, fn, s, "options->url");
        qn_bridge_free(bridge);
        return status;
    }
    char url[204], where[208];
    shown_url(url, sizeof url, options->url);
    snprintf(where, sizeof where, "at %s", url);
    status = bridge_connect(fn, bridge, opts, where, several_servers(options->url));
    natsOptions_Destroy(opts);
    return status == QTBUS_OK ? bridge_start(fn, bridge, options, out) : status;
}

int qtbus_nats_connect_with(qtbus_bus *bus, struct __natsOptions *nats_options, const qtbus_nats_options *options,
                            qtbus_nats **out)
{
    static const char fn[] = "qtbus_nats_connect_with";
    int status = check_connect(fn, bus, options, out, false);
    if (status != QTBUS_OK) return status;
    if (!nats_options) return qtbus_report(bus, fn, QTBUS_EINVAL, "nats_options is NULL");
    qtbus_nats *bridge = bridge_new(bus, options);
    if (!bridge) return qtbus_report(bus, fn, QTBUS_ENOMEM, NULL);
    natsStatus s = set_bridge_options(bridge, nats_options);
    if (s != NATS_OK) {
        status = qn_fail_nats(bridge, fn, s, "nats_options");
        qn_bridge_free(bridge);
        return status;
    }
    /* nats.c has no call that reads the servers back from its options. */
    status = bridge_connect(fn, bridge, nats_options, "of nats_options", true);
    /* nats.c copied the options: what the bridge set there is taken back, so that the
     * caller's options, used again for a connection of its own, hold no pointer to this
     * bridge. */
    natsOptions_SetErrorHandler(nats_options, NULL, NULL);
    return status == QTBUS_OK ? bridge_start(fn, bridge, options, out) : status;
}

int qtbus_nats_attach(qtbus_bus *bus, struct __natsConnection *conn, const qtbus_nats_options *options,
                      qtbus_nats **out)
{
    static const char fn[] = "qtbus_nats_attach";
    int status = check_connect(fn, bus, options, out, false);
    if (status != QTBUS_OK) return status;
    if (!conn) return qtbus_report(bus, fn, QTBUS_EINVAL, "conn is NULL");
    if (natsConnection_IsClosed(conn)) return qtbus_report(bus, fn, QTBUS_EINVAL, "conn is closed");
    if (natsConnection_HasHeaderSupport(conn) != NATS_OK && natsConnection_Status(conn) == NATS_CONN_STATUS_CONNECTED)
        return qtbus_report(bus, fn, QTBUS_EIO,
                            "the server of conn does not support headers (nats-server 2.2 or later "
                            "does), which an attached bridge needs to know its own messages");
    qtbus_nats *bridge = bridge_new(bus, options);
    if (!bridge) return qtbus_report(bus, fn, QTBUS_ENOMEM, NULL);
    bridge->conn = conn;
    bridge->attached = true;
    qn_origin_init(bridge);
    /* The connection's reconnects before the bridge are not the bridge's. */
    natsStatistics *stats = NULL;
    if (natsStatistics_Create(&stats) == NATS_OK && natsConnection_GetStats(conn, stats) == NATS_OK)
        natsStatistics_GetCounts(stats, NULL, NULL, NULL, NULL, &bridge->reconnects_before);
    natsStatistics_Destroy(stats);
    return bridge_start(fn, bridge, options, out);
}

/* Bytes of a name shown in a message, as the engine shows them. */
#define NAME_SHOWN 48

/* `name` quoted as the engine quotes names in qtbus_errmsg(): printable ASCII as it
 * is, other bytes as \xNN, at most NAME_SHOWN bytes of it. */
static void quote(char *out, size_t size, const char *name)
{
    size_t n = 0, i = 0;
    const unsigned char *p = (const unsigned char *)name;
    out[n++] = '"';
    for (; p[i] && i < NAME_SHOWN && n + 6 < size; i++) {
        if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != '"' && p[i] != '\\') {
            out[n++] = (char)p[i];
        } else {
            n += (size_t)snprintf(out + n, size - n, "\\x%02x", p[i]);
        }
    }
    if (p[i] && n + 5 < size) {
        memcpy(out + n, "...", 3);
        n += 3;
    }
    out[n++] = '"';
    out[n] = '\0';
}

/* QTBUS_OK when `name` is a qtbus name, else QTBUS_EINVAL reported for `fn`, saying
 * which name (`role`) and why in the engine's words. */
static int check_name(qtbus_nats *bridge, const char *fn, const char *role, const char *name)
{
    const char *problem = qn_name_problem(name);
    if (!problem) return QTBUS_OK;
    if (!name) {
        qn_report(bridge, fn, QTBUS_EINVAL, "the %s %s", role, problem);
    } else {
        char quoted[NAME_SHOWN * 4 + 8];
        quote(quoted, sizeof quoted, name);
        qn_report(bridge, fn, QTBUS_EINVAL, "the %s %s %s", role, quoted, problem);
    }
    return QTBUS_EINVAL;
}

/* The arguments of every call that takes names (export, import, import_subtype),
 * checked by this one function before anything is subscribed on the bus or on the
 * server, so that the calls refuse the same names with the same reason.  An import
 * must refuse what the bus refuses: events of a name the bus cannot dispatch would
 * be received only to be dropped.  `subtype` is checked when `with_subtype`. */
static int check_call(const char *fn, qtbus_nats *bridge, const char *type, const char *subtype, bool with_subtype)
{
    if (!bridge) return qtbus_report(NULL, fn, QTBUS_EINVAL, "the bridge is NULL");
    int status = check_name(bridge, fn, "type name", type);
    if (status == QTBUS_OK && qn_is_pattern(type)) {
        const char *problem = qn_pattern_problem(type);
        if (problem) {
            char quoted[NAME_SHOWN * 4 + 8];
            quote(quoted, sizeof quoted, type);
            qn_report(bridge, fn, QTBUS_EINVAL, "the pattern %s %s", quoted, problem);
            return QTBUS_EINVAL;
        }
    }
    if (status == QTBUS_OK && with_subtype) status = check_name(bridge, fn, "subtype", subtype);
    return status;
}

/* QTBUS_ESTALE's reason: nothing of that name was exported or imported. */
static void not_made(qtbus_nats *bridge, const char *fn, const char *what, const char *type, const char *subtype)
{
    char quoted[NAME_SHOWN * 4 + 8], quoted_subtype[NAME_SHOWN * 4 + 8] = "";
    quote(quoted, sizeof quoted, type);
    if (subtype) quote(quoted_subtype, sizeof quoted_subtype, subtype);
    qn_report(bridge, fn, QTBUS_ESTALE, "%s%s%s was not %s by this bridge (or no longer is)", quoted,
              subtype ? " with the subtype " : "", quoted_subtype, what);
}

int qtbus_nats_export(qtbus_nats *bridge, const char *type)
{
    static const char fn[] = "qtbus_nats_export";
    int status = check_call(fn, bridge, type, NULL, false);
    return status == QTBUS_OK ? qn_export(bridge, type) : status;
}

int qtbus_nats_import(qtbus_nats *bridge, const char *type)
{
    static const char fn[] = "qtbus_nats_import";
    int status = check_call(fn, bridge, type, NULL, false);
    return status == QTBUS_OK ? qn_import(bridge, type, NULL) : status;
}

int qtbus_nats_import_subtype(qtbus_nats *bridge, const char *type, const char *subtype)
{
    static const char fn[] = "qtbus_nats_import_subtype";
    int status = check_call(fn, bridge, type, subtype, true);
    return status == QTBUS_OK ? qn_import(bridge, type, subtype) : status;
}

int qtbus_nats_unexport(qtbus_nats *bridge, const char *type)
{
    static const char fn[] = "qtbus_nats_unexport";
    int status = check_call(fn, bridge, type, NULL, false);
    if (status != QTBUS_OK) return status;
    status = qn_unexport(bridge, type);
    if (status == QTBUS_ESTALE) not_made(bridge, fn, "exported", type, NULL);
    return status;
}

int qtbus_nats_unimport(qtbus_nats *bridge, const char *type)
{
    static const char fn[] = "qtbus_nats_unimport";
    int status = check_call(fn, bridge, type, NULL, false);
    if (status != QTBUS_OK) return status;
    status = qn_unimport(bridge, type, NULL);
    if (status == QTBUS_ESTALE) not_made(bridge, fn, "imported", type, NULL);
    return status;
}

int qtbus_nats_unimport_subtype(qtbus_nats *bridge, const char *type, const char *subtype)
{
    static const char fn[] = "qtbus_nats_unimport_subtype";
    int status = check_call(fn, bridge, type, subtype, true);
    if (status != QTBUS_OK) return status;
    status = qn_unimport(bridge, type, subtype);
    if (status == QTBUS_ESTALE) not_made(bridge, fn, "imported", type, subtype);
    return status;
}

/* What 0.2.0's structs measured: a size below is no version of them. */
enum { OPTIONS_0_2_SIZE = 24, STATS_0_2_SIZE = 40 };

/* The caller's options of `size` bytes as this library's struct in *copy: the fields
 * inside the size, defaults (zero) beyond; a newer header's fields must be zero.
 * Returns QTBUS_OK with *options pointing at the copy (NULL stays NULL, refused later
 * as before), or the failure reported. */
static int sized_options(const char *fn, qtbus_bus *bus, const qtbus_nats_options **options, size_t size,
                         qtbus_nats_options *copy)
{
    if (!*options) return QTBUS_OK;
    if (size < OPTIONS_0_2_SIZE)
        return qtbus_report(bus, fn, QTBUS_EINVAL, "the options' size is smaller than any version of them");
    memset(copy, 0, sizeof *copy);
    memcpy(copy, *options, size < sizeof *copy ? size : sizeof *copy);
    for (size_t i = sizeof *copy; i < size; i++)
        if (((const unsigned char *)*options)[i] != 0)
            return qtbus_report(bus, fn, QTBUS_EINVAL,
                                "the options set fields this library does not know "
                                "(a newer qtbus_nats.h than libqtbus-nats.so)");
    *options = copy;
    return QTBUS_OK;
}

int qtbus_nats_connect_sized(qtbus_bus *bus, const qtbus_nats_options *options, size_t size, qtbus_nats **out)
{
    qtbus_nats_options copy;
    int status = sized_options("qtbus_nats_connect", bus, &options, size, &copy);
    return status == QTBUS_OK ? qtbus_nats_connect(bus, options, out) : status;
}

int qtbus_nats_connect_with_sized(qtbus_bus *bus, struct __natsOptions *nats_options, const qtbus_nats_options *options,
                                  size_t size, qtbus_nats **out)
{
    qtbus_nats_options copy;
    int status = sized_options("qtbus_nats_connect_with", bus, &options, size, &copy);
    return status == QTBUS_OK ? qtbus_nats_connect_with(bus, nats_options, options, out) : status;
}

int qtbus_nats_attach_sized(qtbus_bus *bus, struct __natsConnection *conn, const qtbus_nats_options *options,
                            size_t size, qtbus_nats **out)
{
    qtbus_nats_options copy;
    int status = sized_options("qtbus_nats_attach", bus, &options, size, &copy);
    return status == QTBUS_OK ? qtbus_nats_attach(bus, conn, options, out) : status;
}

int qtbus_nats_stats_get(qtbus_nats *bridge, qtbus_nats_stats *out)
{
    return qtbus_nats_stats_get_sized(bridge, out, STATS_0_2_SIZE);
}

int qtbus_nats_stats_get_sized(qtbus_nats *bridge, qtbus_nats_stats *out, size_t size)
{
    static const char fn[] = "qtbus_nats_stats_get";
    if (!bridge) return qtbus_report(NULL, fn, QTBUS_EINVAL, "the bridge is NULL");
    if (!out) return qtbus_report(bridge->bus, fn, QTBUS_EINVAL, "out is NULL");
    if (size < STATS_0_2_SIZE)
        return qtbus_report(bridge->bus, fn, QTBUS_EINVAL, "the struct's size is smaller than any version of it");
    natsStatistics *stats = NULL;
    uint64_t reconnects = 0;
    if (natsStatistics_Create(&stats) == NATS_OK && natsConnection_GetStats(bridge->conn, stats) == NATS_OK)
        natsStatistics_GetCounts(stats, NULL, NULL, NULL, NULL, &reconnects);
    natsStatistics_Destroy(stats);
    qtbus_nats_stats counts = {
        .published = atomic_load_explicit(&bridge->published, memory_order_relaxed),
        .received = atomic_load_explicit(&bridge->received, memory_order_relaxed),
        .dropped = atomic_load_explicit(&bridge->dropped, memory_order_relaxed),
        .reconnects = reconnects - bridge->reconnects_before,
        .pending = qn_handoff_pending(bridge),
    };
    memcpy(out, &counts, size < sizeof counts ? size : sizeof counts);
    if (size > sizeof counts) memset((char *)out + sizeof counts, 0, size - sizeof counts);
    return QTBUS_OK;
}

int qtbus_nats_is_connected(qtbus_nats *bridge)
{
    if (!bridge) return qtbus_report(NULL, "qtbus_nats_is_connected", QTBUS_EINVAL, "the bridge is NULL");
    return natsConnection_Status(bridge->conn) == NATS_CONN_STATUS_CONNECTED;
}

/* The milliseconds left until `deadline` (CLOCK_MONOTONIC ns), 0 once it has passed. */
static int64_t ms_left(int64_t deadline)
{
    int64_t left = deadline - qn_now_ns();
    return left > 0 ? (left + 999999) / 1000000 : 0;
}

/* Why the flush did not complete, into out (empty when it did): `bounded` by a close
 * timeout of timeout_ms (0: none was tried), else by close's CLOSE_FLUSH_MS. */
static void flush_failure(char *out, size_t size, qtbus_nats *bridge, natsStatus s, bool bounded, int timeout_ms,
                          bool tried)
{
    out[0] = '\0';
    if (s == NATS_OK) return;
    /* nats.c counts only what waits for the socket, not its reconnect buffer. */
    bool connected = natsConnection_Status(bridge->conn) == NATS_CONN_STATUS_CONNECTED;
    int unsent = connected ? natsConnection_Buffered(bridge->conn) : 0;
    char what[200];
    if (!tried) {
        const char *when = timeout_ms == 0 ? "closed at once" : "no time was left to flush";
        if (connected) {
            snprintf(what, sizeof what, "%s: %d bytes of what was published were still unsent, dropped", when, unsent);
        } else {
            snprintf(what, sizeof what,
                     "%s with no server reachable: what nats.c's reconnect buffer held is dropped "
                     "(nats.c does not say how much)",
                     when);
        }
        snprintf(out, size, "%s", what);
        return;
    }
    int ms = bounded ? timeout_ms : CLOSE_FLUSH_MS;
    if (connected) {
        snprintf(what, sizeof what, "what was published did not reach the server within %d ms (%d bytes unsent)", ms,
                 unsent);
    } else {
        snprintf(what, sizeof what,
                 "what was published did not reach the server within %d ms (none is reachable; "
                 "the reconnect buffer is lost)",
                 ms);
    }
    qn_nats_reason(out, size, s, what);
}

/* The end of a close: nats.c's close of the connection (not an attached one: the
 * application's), then the bridge's reference (the last, unless a request it answers
 * holds it). */
static void finish(qtbus_nats *bridge)
{
    if (!bridge->attached) natsConnection_Close(bridge->conn);
    qn_bridge_unref(bridge);
}

static void *finishing(void *arg)
{
    pthread_setname_np(pthread_self(), QN_THREAD_NAME);
    finish(arg);
    nats_ReleaseThreadMemory();
    return NULL;
}

/* finish() on a thread of its own, so that a close with a timeout returns without
 * waiting for nats.c's close: it joins its reconnect thread, which may be sleeping its
 * reconnect wait (it looks for a close only before it sleeps, so a close that comes
 * while it tries a server waits for the whole ReconnectWait and jitter, 100 to 200 ms
 * with qtbus_nats_connect's settings), and, while the connection is up with data in
 * its buffer, waits up to 500 ms for the server.  By now nothing of the bridge calls the bus or the caller's
 * code (its thread is joined, its subscriptions complete); what is left is nats.c's
 * and the bridge's memory.  False when no thread could be made (finish() then runs on
 * the caller's). */
static bool finish_later(qtbus_nats *bridge)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0) return false;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    bool made = pthread_create(&thread, &attr, finishing, bridge) == 0;
    pthread_attr_destroy(&attr);
    return made;
}

/* qtbus_nats_close (timeout_ms < 0: its own waits, CLOSE_FLUSH_MS and CLOSE_DRAIN_MS,
 * failures QTBUS_EIO as it always returned) and qtbus_nats_close_timeout (one deadline
 * for it all; what the time cut is QTBUS_ETIMEDOUT). */
static int bridge_close(const char *fn, qtbus_nats *bridge, int timeout_ms)
{
    bool bounded = timeout_ms >= 0;
    int64_t deadline = bounded ? qn_now_ns() + (int64_t)timeout_ms * 1000000 : INT64_MAX;
    /* From now on the bridge's thread checks it for every message it holds. */
    if (bounded) atomic_store(&bridge->close_deadline, deadline);
    /* No publish starts after this, so the flush below covers every one. */
    qn_export_stop(bridge);
    int64_t flush_ms = bounded ? ms_left(deadline) : CLOSE_FLUSH_MS;
    natsStatus s;
    if (flush_ms > 0) {
        s = natsConnection_FlushTimeout(bridge->conn, flush_ms);
    } else {
        /* No time for a round trip: flushed, as far as the client knows, when nothing
         * waits in nats.c's buffer of a connection that is up. */
        bool connected = natsConnection_Status(bridge->conn) == NATS_CONN_STATUS_CONNECTED;
        s = connected && natsConnection_Buffered(bridge->conn) <= 0 ? NATS_OK : NATS_TIMEOUT;
    }
    char flush_why[240];
    flush_failure(flush_why, sizeof flush_why, bridge, s, bounded, timeout_ms, flush_ms > 0);
    /* A subscription that did not drain may have lost messages the server had sent
     * it: as much a failure to deliver as the flush, told the same way. */
    qn_stopped stopped;
    qn_import_stop(bridge, bounded ? ms_left(deadline) : CLOSE_DRAIN_MS, &stopped);
    int status = QTBUS_OK;
    if (s != NATS_OK || stopped.undrained || stopped.held || stopped.dropped) {
        /* A failure that is not the time's (a connection closed under the flush) keeps
         * its own status; qtbus_nats_close's losses are QTBUS_EIO, as they were. */
        if (s != NATS_OK && s != NATS_TIMEOUT) {
            status = qn_status_of(s);
        } else {
            status = bounded ? QTBUS_ETIMEDOUT : s != NATS_OK ? qn_status_of(s) : QTBUS_EIO;
        }
        char undrained_why[240] = "", held_why[120] = "", dropped_why[120] = "";
        if (stopped.undrained) {
            snprintf(undrained_why, sizeof undrained_why,
                     "%d subscription%s did not drain, so messages for %s may be lost: %s", stopped.undrained,
                     stopped.undrained > 1 ? "s" : "", stopped.undrained > 1 ? "them" : "it", stopped.why);
        }
        if (stopped.held) {
            snprintf(held_why, sizeof held_why, "%llu received message%s nats.c held for the imports %s dropped",
                     (unsigned long long)stopped.held, stopped.held > 1 ? "s" : "", stopped.held > 1 ? "were" : "was");
        }
        if (stopped.dropped) {
            snprintf(dropped_why, sizeof dropped_why, "%llu received event%s not yet dispatched %s dropped",
                     (unsigned long long)stopped.dropped, stopped.dropped > 1 ? "s" : "",
                     stopped.dropped > 1 ? "were" : "was");
        }
        const char *parts[] = {flush_why, undrained_why, held_why, dropped_why};
        char why[512] = "";
        size_t n = 0;
        if (bounded) n = (size_t)snprintf(why, sizeof why, "the timeout (%d ms) cut the close short: ", timeout_ms);
        bool first = true;
        for (size_t k = 0; k < sizeof parts / sizeof parts[0] && n < sizeof why; k++) {
            if (!*parts[k]) continue;
            n += (size_t)snprintf(why + n, sizeof why - n, "%s%s", first ? "" : "; ", parts[k]);
            first = false;
        }
        /* One record for the call, as for any failed call; the bridge is freed all the
         * same (a bridge that cannot flush could not be closed otherwise). */
        qn_report(bridge, fn, status, "%s", why);
    }
    /* Requests this bridge is still answering publish their end to a closed
     * connection, and report it without the bus; an attached connection is left to
     * the application, and they publish nothing more on it. */
    pthread_mutex_lock(&bridge->answer_lock);
    atomic_store(&bridge->closed, true);
    pthread_mutex_unlock(&bridge->answer_lock);
    if (!bounded || bridge->attached || !finish_later(bridge)) finish(bridge);
    return status;
}

int qtbus_nats_close(qtbus_nats *bridge)
{
    static const char fn[] = "qtbus_nats_close";
    if (!bridge) return qtbus_report(NULL, fn, QTBUS_EINVAL, "the bridge is NULL");
    return bridge_close(fn, bridge, -1);
}

int qtbus_nats_close_timeout(qtbus_nats *bridge, int timeout_ms)
{
    static const char fn[] = "qtbus_nats_close_timeout";
    if (!bridge) return qtbus_report(NULL, fn, QTBUS_EINVAL, "the bridge is NULL");
    if (timeout_ms < 0) {
        /* Nothing is closed: a bad argument changes nothing (qtbus_nats_close has the
         * default waits). */
        qn_report(bridge, fn, QTBUS_EINVAL, "timeout_ms is negative (%d); the bridge is still open", timeout_ms);
        return QTBUS_EINVAL;
    }
    return bridge_close(fn, bridge, timeout_ms);
}
