/* SPDX-License-Identifier: MIT */
/*
 * test_signals.h: what the typed-signal tests (test_signals_*.c) share: a call count,
 * a counted connection, two signatures and their handlers.  Each file uses some of
 * them: the functions are static inline and the variables marked unused, so that
 * -Wall -Werror passes in the files that use fewer.
 */
#ifndef QTBUS_TEST_SIGNALS_H
#define QTBUS_TEST_SIGNALS_H

#include "test_util.h"

__attribute__((unused)) static atomic_int calls;

/* A connection's userdata that counts calls and releases (tu_rec's checks). */
typedef struct counted {
    tu_rec rec;
} counted;

static inline void on_counted(const char *text, int32_t number, void *userdata)
{
    (void)text;
    (void)number;
    counted *c = userdata;
    tu_rec_handler(NULL, &c->rec);
}

static inline void counted_release(void *userdata) { tu_rec_release(&((counted *)userdata)->rec); }

/* (int32, uint32, int64, uint64, double): 5 integer registers with the userdata, 1 vector
 * register: called directly on x86-64 and AArch64. */
__attribute__((unused)) static const qtbus_arg numbers_args[] = {QTBUS_ARG_INT32, QTBUS_ARG_UINT32, QTBUS_ARG_INT64,
                                                                 QTBUS_ARG_UINT64, QTBUS_ARG_DOUBLE};

__attribute__((unused)) static const qtbus_arg text_number_args[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32};

static inline void on_count_text(const char *text, int32_t number, void *userdata)
{
    (void)text;
    (void)number;
    atomic_fetch_add((atomic_int *)userdata, 1);
}

static inline void on_nothing(void *userdata) { atomic_fetch_add((atomic_int *)userdata, 1); }

static inline int same_double(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

#endif
