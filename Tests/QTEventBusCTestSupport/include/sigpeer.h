/* SPDX-License-Identifier: MIT */
/*
 * The signal peer: typed signals of (string, int32) on qtbus_shared(), received and
 * emitted by plain C (sigpeer.c, through qtbus.h) and by C++ (sigpeer_cxx.cpp, through
 * qtbus.hpp's qtbus::signal), for the Swift tests of one emission reaching every
 * language.  Each receiver appends "who(text,number)" to one log, in delivery order.
 */
#ifndef QTBUS_SIGPEER_H
#define QTBUS_SIGPEER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A C handler taking (const char *, int32_t, void *), connected with
 * qtbus_signal_connect; logs "c-typed(...)".  Returns its status. */
int sigpeer_c_connect(const char *type);
/* A plain qtbus_subscribe handler reading the arguments with qtbus_event_args; logs
 * "c-plain(...)", or "c-plain(not a signal: <status>)".  Returns its status. */
int sigpeer_c_listen_args(const char *type);
/* qtbus_signal_emit's result. */
int sigpeer_c_emit(const char *type, const char *subtype, const char *text, int32_t number);

/* A C++ slot taking (std::string_view, int32_t), connected through
 * qtbus::signal<void(std::string_view, int32_t)> (which defines the signature, or checks
 * it); logs "c++(...)".  Returns 0, or the status of the qtbus::error it threw. */
int sigpeer_cxx_connect(const char *type);
/* qtbus::signal::emit_subtype's (or emit's, subtype NULL) result, or the status of the
 * qtbus::error it threw. */
int sigpeer_cxx_emit(const char *type, const char *subtype, const char *text, int32_t number);

/* Appends one entry to the log (the receivers above). */
void sigpeer_record(const char *who, const char *text, int32_t number);
/* The log ("c-typed(alice,1)c-plain(alice,1)..."), NUL-terminated, truncated to size;
 * returns its length. */
size_t sigpeer_log(char *buffer, size_t size);
/* Disposes every subscription made here (C's and C++'s) and empties the log. */
void sigpeer_stop(void);
/* The C++ half of sigpeer_stop. */
void sigpeer_cxx_stop(void);

#ifdef __cplusplus
}
#endif

#endif
