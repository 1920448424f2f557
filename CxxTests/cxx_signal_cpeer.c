/* SPDX-License-Identifier: MIT */
/* See cxx_signal_cpeer.h.  The handlers run on the dispatching thread (the test emits
 * from one thread), so the log needs no lock. */
#include "cxx_signal_cpeer.h"

#include <stdio.h>
#include <string.h>

static char log_text[4096];

static const qtbus_arg kinds[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32, QTBUS_ARG_DOUBLE};
static const unsigned char kind_bytes[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32, QTBUS_ARG_DOUBLE};

void cpeer_append(const char *who, const char *text, int32_t number, double real)
{
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s(%s,%d,%g)", who, text ? text : "NULL", (int)number, real);
}

const char *cpeer_log(void) { return log_text; }
void cpeer_reset(void) { log_text[0] = 0; }

int cpeer_define(qtbus_bus *bus, const char *type) { return qtbus_signal_define(bus, type, kinds, 3); }

static void on_typed(const char *text, int32_t number, double real, void *userdata)
{
    (void)userdata;
    cpeer_append("c-typed", text, number, real);
}

int cpeer_connect(qtbus_bus *bus, const char *type)
{
    return qtbus_signal_connect(bus, type, NULL, QTBUS_CALLBACK(on_typed), NULL, NULL, NULL);
}

static void on_plain(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    qtbus_value args[QTBUS_SIGNAL_MAX_ARGS];
    const unsigned char *bytes = qtbus_event_data(event, NULL);
    int n = qtbus_event_args(event, args, QTBUS_SIGNAL_MAX_ARGS);
    /* Check the kinds (bytes 8 to 10 of the layout) before reading the string. */
    if (n == 3 && memcmp(bytes + 8, kind_bytes, 3) == 0)
        cpeer_append("c-plain", args[0].str, args[1].i32, args[2].f64);
    else
        cpeer_append("c-plain", "not this signature", n, 0);
}

int cpeer_listen_args(qtbus_bus *bus, const char *type)
{
    return qtbus_subscribe(bus, type, NULL, on_plain, NULL, NULL, NULL);
}

int cpeer_emit(qtbus_bus *bus, const char *type, const char *subtype, const char *text, int32_t number, double real)
{
    return qtbus_signal_emit(bus, type, subtype, text, number, real);
}

int cpeer_emitv(qtbus_bus *bus, const char *type, const char *subtype, const char *text, int32_t number, double real)
{
    qtbus_value args[3];
    args[0].str = text;
    args[1].i32 = number;
    args[2].f64 = real;
    return qtbus_signal_emitv(bus, type, subtype, 0, args, 3);
}
