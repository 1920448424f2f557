/* SPDX-License-Identifier: MIT */
/*
 * cxx_signal_cpeer.h -- the C side of cxx_signal_c: a C handler connected with
 * qtbus_signal_connect, a plain qtbus_subscribe handler reading qtbus_event_args, and
 * emits with qtbus_signal_emit and qtbus_signal_emitv, all for signals of
 * (const char *, int32_t, double), written in C and compiled by the C compiler.  Each
 * handler appends "who(text,number,real)" to one log.
 */
#ifndef CXX_SIGNAL_CPEER_H
#define CXX_SIGNAL_CPEER_H

#include <qtbus.h>

#ifdef __cplusplus
extern "C" {
#endif

int cpeer_define(qtbus_bus *bus, const char *type);
int cpeer_connect(qtbus_bus *bus, const char *type);     /* qtbus_signal_connect */
int cpeer_listen_args(qtbus_bus *bus, const char *type); /* qtbus_subscribe + qtbus_event_args */
int cpeer_emit(qtbus_bus *bus, const char *type, const char *subtype, const char *text, int32_t number, double real);
int cpeer_emitv(qtbus_bus *bus, const char *type, const char *subtype, const char *text, int32_t number, double real);
/* The log, and how many handler calls wrote to it; cpeer_reset empties both. */
const char *cpeer_log(void);
void cpeer_append(const char *who, const char *text, int32_t number, double real);
void cpeer_reset(void);

#ifdef __cplusplus
}
#endif

#endif
