/* SPDX-License-Identifier: MIT */
/*
 * Why a call failed: the per-thread text qtbus_errmsg() returns, and QTBUS_DEBUG=misuse.
 *
 * The status codes stay coarse (the contract fixes them); the text says which of the
 * reasons a status had.  Composing it must work when memory has run out, so it is
 * written into a fixed per-thread buffer with snprintf (no allocation for these
 * formats), and the engine hands over only static texts and the caller's own names.
 *
 * How a failure is told: the engine code that finds the reason records it as pending
 * (qtshim_fail_*), with the status it is about to return; the C boundary, which knows
 * the function's name, finishes the text when its call returns that status
 * (qtshim_failed).  A pending reason whose status differs (an inner failure that was
 * handled) is not used: the text is then the status's own.
 */
#include "qtbus_shims.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MESSAGE_SIZE 320
#define NAME_SHOWN 48 /* bytes of a name quoted in a message */

static __thread char message[MESSAGE_SIZE];
static __thread char reason[MESSAGE_SIZE - 64];
static __thread int reason_status;
static __thread unsigned failures;

QTBUS_INTERNAL bool qtshim_debug_misuse;

const char *qtshim_errmsg(void) { return message; }

unsigned qtshim_failures(void) { return failures; }

void qtshim_failed_outer(const char *function)
{
    char inner[MESSAGE_SIZE];
    memcpy(inner, message, sizeof inner);
    /* Cut at the end of the buffer if it must be: a message, not data. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-truncation"
    snprintf(message, sizeof message, "%s: %s", function, inner);
#pragma GCC diagnostic pop
}

void qtshim_fail_reason(int status, const char *text)
{
    snprintf(reason, sizeof reason, "%s", text);
    reason_status = status;
}

void qtshim_fail_value(int status, const char *format, unsigned long long value)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(reason, sizeof reason, format, value);
#pragma GCC diagnostic pop
    reason_status = status;
}

/* `name` quoted: printable ASCII as is, other bytes as \xNN, at most NAME_SHOWN bytes. */
static void quote(char *out, size_t size, const char *name)
{
    size_t n = 0;
    out[n++] = '"';
    const unsigned char *p = (const unsigned char *)name;
    size_t i = 0;
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

void qtshim_fail_name(int status, const char *what, const char *name, const char *problem)
{
    if (name == NULL) {
        snprintf(reason, sizeof reason, "the %s is NULL", what);
    } else {
        char quoted[NAME_SHOWN * 4 + 8];
        quote(quoted, sizeof quoted, name);
        snprintf(reason, sizeof reason, "the %s %s %s", what, quoted, problem);
    }
    reason_status = status;
}

void qtshim_note(const char *text) { snprintf(message, sizeof message, "%s", text); }

void qtshim_failed(const char *function, int status)
{
    if (reason_status == status && reason[0]) {
        snprintf(message, sizeof message, "%s: %s", function, reason);
    } else {
        snprintf(message, sizeof message, "%s: %s", function, qtshim_status_text(status));
    }
    reason[0] = '\0';
    reason_status = 0;
    failures++;
    if (qtshim_debug_misuse) fprintf(stderr, "qtbus: %s\n", message);
}
