/*
 * libqtbus-nats: the public calls (qtbus_nats.h), the connection, and how failures are
 * told (qtbus_report, so they read as qtbus's own).
 */
#include "bridge.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long close waits for the server to confirm what was published. */
#define CLOSE_FLUSH_MS 5000

void qn_report(qtbus_nats *bridge, const char *function, int status, const char *format, ...)
{
    char reason[512];
    va_list args;
    va_start(args, format);
    vsnprintf(reason, sizeof reason, format, args);
    va_end(args);
    qtbus_report(bridge ? bridge->bus : NULL, function, status, reason);
}

static int status_of(natsStatus s)
{
    switch (s) {
    case NATS_NO_MEMORY: return QTBUS_ENOMEM;
    case NATS_INVALID_ARG:
    case NATS_INVALID_SUBJECT: return QTBUS_EINVAL;
    default: return QTBUS_EIO;
    }
}

int qn_fail_nats(qtbus_nats *bridge, const char *function, natsStatus s, const char *what)
{
    int status = status_of(s);
    const char *detail = nats_GetLastError(NULL);
    /* nats.c's last error repeats the status's text after its source location. */
    if (detail && *detail && !strstr(detail, natsStatus_GetText(s))) {
        qn_report(bridge, function, status, "%s: %s (%s)", what, natsStatus_GetText(s), detail);
    } else {
        qn_report(bridge, function, status, "%s: %s", what, natsStatus_GetText(s));
    }
    return status;
}

/* nats.c's asynchronous errors (a slow consumer: the server or nats.c dropped
 * messages) have no call to return from: they are reported on nats.c's thread. */
static void on_async_error(natsConnection *nc, natsSubscription *sub, natsStatus err, void *closure)
{
    (void)nc;
    qtbus_nats *bridge = closure;
    const char *subject = sub ? natsSubscription_GetSubject(sub) : NULL;
    qn_report(bridge, "qtbus_nats", status_of(err), "%s%s%s", natsStatus_GetText(err),
              subject ? " on " : "", subject ? subject : "");
}

/* url may be a comma-separated list; nats.c takes an array. */
static natsStatus set_servers(natsOptions *opts, const char *url)
{
    char *copy = strdup(url);
    if (!copy) return NATS_NO_MEMORY;
    const char *servers[64];
    int count = 0;
    char *save = NULL;
    for (char *s = strtok_r(copy, ",", &save); s && count < 64; s = strtok_r(NULL, ",", &save)) {
        while (*s == ' ') s++;
        if (*s) servers[count++] = s;
    }
    natsStatus st = count ? natsOptions_SetServers(opts, servers, count) : NATS_INVALID_ARG;
    free(copy);
    return st;
}

static natsStatus make_options(qtbus_nats *bridge, const char *url, natsOptions **out)
{
    natsOptions *opts = NULL;
    natsStatus s = natsOptions_Create(&opts);
    if (s == NATS_OK) s = set_servers(opts, url);
    /* A cluster is tried in the order given, and a lost server is retried for ever
     * (what was published meanwhile waits in the reconnect buffer). */
    if (s == NATS_OK) s = natsOptions_SetNoRandomize(opts, true);
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);
    if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, 100);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, 2000);
    /* A bridge that exports and imports a type must not get its own publications back:
     * the local subscribers had them at dispatch time. */
    if (s == NATS_OK) s = natsOptions_SetNoEcho(opts, true);
    if (s == NATS_OK) s = natsOptions_SetErrorHandler(opts, on_async_error, bridge);
    if (s != NATS_OK) {
        natsOptions_Destroy(opts);
        return s;
    }
    *out = opts;
    return NATS_OK;
}

/* The connection and JetStream context may be NULL (a connect that failed early). */
static void bridge_free(qtbus_nats *bridge)
{
    jsCtx_Destroy(bridge->js);
    natsConnection_Destroy(bridge->conn);
    pthread_cond_destroy(&bridge->settled);
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
    if (last) bridge_free(bridge);
}

int qtbus_nats_connect(qtbus_bus *bus, const qtbus_nats_options *options, qtbus_nats **out)
{
    static const char fn[] = "qtbus_nats_connect";
    if (out) *out = NULL;
    if (!bus) return qtbus_report(NULL, fn, QTBUS_EINVAL, "the bus is NULL");
    if (!options || !options->url || !out)
        return qtbus_report(bus, fn, QTBUS_EINVAL, !options ? "options is NULL" : !out ? "out is NULL" : "options->url is NULL");
    const char *prefix = options->prefix ? options->prefix : "qtbus";
    if (!qn_prefix_valid(prefix))
        return qtbus_report(bus, fn, QTBUS_EINVAL,
                            "options->prefix is not a NATS subject without wildcards (1 to 256 printable bytes, "
                            "'.'-separated tokens, no '*', '>' or spaces)");
    if (options->request_timeout_ms < 0) return qtbus_report(bus, fn, QTBUS_EINVAL, "options->request_timeout_ms is negative");

    /* Aligned for handoff's cache lines (sizeof is a multiple of the alignment). */
    qtbus_nats *bridge = aligned_alloc(_Alignof(qtbus_nats), sizeof *bridge);
    if (!bridge) return qtbus_report(bus, fn, QTBUS_ENOMEM, NULL);
    memset(bridge, 0, sizeof *bridge);
    bridge->bus = bus;
    strcpy(bridge->prefix, prefix);
    bridge->prefix_len = strlen(prefix);
    bridge->request_timeout_ms = options->request_timeout_ms ? options->request_timeout_ms : 1000;
    bridge->refs = 1;
    pthread_mutex_init(&bridge->lock, NULL);
    pthread_mutex_init(&bridge->pool_lock, NULL);
    pthread_cond_init(&bridge->settled, NULL);

    natsOptions *opts = NULL;
    natsStatus s = make_options(bridge, options->url, &opts);
    if (s != NATS_OK) {
        int status = qn_fail_nats(bridge, fn, s, "options->url");
        bridge_free(bridge);
        return status;
    }
    s = natsConnection_Connect(&bridge->conn, opts);
    natsOptions_Destroy(opts);
    if (s != NATS_OK) {
        char what[300];
        snprintf(what, sizeof what, "no server at %.200s could be reached", options->url);
        int status = qn_fail_nats(bridge, fn, s, what);
        bridge_free(bridge);
        return status;
    }
    int status = options->jetstream ? qn_sticky_open(bridge) : QTBUS_OK;
    if (status != QTBUS_OK) {
        bridge_free(bridge);
        return status;
    }
    status = qn_import_start(bridge);
    if (status != QTBUS_OK) {
        bridge_free(bridge);
        return qtbus_report(bus, fn, status, "the bridge's thread could not be started");
    }
    *out = bridge;
    return QTBUS_OK;
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
    if (status == QTBUS_OK && with_subtype) status = check_name(bridge, fn, "subtype", subtype);
    return status;
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

int qtbus_nats_is_connected(qtbus_nats *bridge)
{
    if (!bridge) return qtbus_report(NULL, "qtbus_nats_is_connected", QTBUS_EINVAL, "the bridge is NULL");
    return natsConnection_Status(bridge->conn) == NATS_CONN_STATUS_CONNECTED;
}

int qtbus_nats_close(qtbus_nats *bridge)
{
    static const char fn[] = "qtbus_nats_close";
    if (!bridge) return qtbus_report(NULL, fn, QTBUS_EINVAL, "the bridge is NULL");
    /* No publish starts after this, so the flush below covers every one. */
    qn_export_stop(bridge);
    natsStatus s = natsConnection_FlushTimeout(bridge->conn, CLOSE_FLUSH_MS);
    int status = QTBUS_OK;
    if (s != NATS_OK) {
        char what[160];
        snprintf(what, sizeof what, "what was published did not reach the server within %d ms (%d bytes unsent)",
                 CLOSE_FLUSH_MS, natsConnection_Buffered(bridge->conn));
        status = qn_fail_nats(bridge, fn, s, what);
    }
    qn_import_stop(bridge);
    /* Requests this bridge is still answering publish their end to a closed connection. */
    natsConnection_Close(bridge->conn);
    qn_bridge_unref(bridge);
    return status;
}
