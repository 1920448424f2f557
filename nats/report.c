/* SPDX-License-Identifier: MIT */
/*
 * How the bridge's failures are told: through qtbus_report, so that they read as
 * qtbus's own, and nats.c's in its own words.  The bottom layer: every part uses it,
 * and it uses none.
 */
#include "bridge.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void qn_report(qtbus_nats *bridge, const char *function, int status, const char *format, ...)
{
    char reason[512];
    va_list args;
    va_start(args, format);
    vsnprintf(reason, sizeof reason, format, args);
    va_end(args);
    bool open = bridge && !atomic_load(&bridge->closed);
    qtbus_report(open ? bridge->bus : NULL, function, status, reason);
}

int qn_status_of(natsStatus s)
{
    switch (s) {
    case NATS_NO_MEMORY: return QTBUS_ENOMEM;
    case NATS_INVALID_ARG:
    case NATS_INVALID_SUBJECT: return QTBUS_EINVAL;
    /* The server was reached and refused: the credentials (at a connect or a
     * reconnect) or a permission (a subscription, a publish). */
    case NATS_CONNECTION_AUTH_FAILED:
    case NATS_NOT_PERMITTED: return QTBUS_EACCES;
    default: return QTBUS_EIO;
    }
}

void qn_nats_reason(char *out, size_t size, natsStatus s, const char *what)
{
    const char *detail = nats_GetLastError(NULL);
    /* nats.c's last error repeats the status's text after its source location. */
    if (detail && *detail && !strstr(detail, natsStatus_GetText(s))) {
        snprintf(out, size, "%s: %s (%s)", what, natsStatus_GetText(s), detail);
    } else {
        snprintf(out, size, "%s: %s", what, natsStatus_GetText(s));
    }
}

int qn_fail_nats(qtbus_nats *bridge, const char *function, natsStatus s, const char *what)
{
    char reason[512];
    qn_nats_reason(reason, sizeof reason, s, what);
    int status = qn_status_of(s);
    qn_report(bridge, function, status, "%s", reason);
    return status;
}
