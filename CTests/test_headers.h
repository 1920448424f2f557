/* SPDX-License-Identifier: MIT */
/*
 * test_headers.h -- what the event-header tests (test_headers_*.c) share.  Include it
 * after test_util.h.
 *
 *   th_desc(type, headers, n)   a desc with QTBUS_EVENT_HEADERS and those headers
 *   th_snap, th_take            a handler's copy of every header of the event it got,
 *                               read through qtbus_event_header_count and _at, and
 *                               checked against qtbus_event_header (one rule: the
 *                               header a name finds is the one _at lists)
 *   th_snap_handler             a subscription handler that takes a th_snap
 *   TH_TP, TH_TP2, TH_TS, TH_BAG  W3C values (traceparent, tracestate, baggage)
 *
 * The limits of qtbus.h ("Event headers") are written here once, as the tests see
 * them; the header states them in words only.
 */
#ifndef QTBUS_TEST_HEADERS_H
#define QTBUS_TEST_HEADERS_H

#include "test_util.h"

#include <stdbool.h>

#define TH_MAX_HEADERS 32
#define TH_MAX_NAME 64
#define TH_MAX_VALUE 4096
#define TH_MAX_TOTAL_BYTES 16384

#define TH_TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
#define TH_TP2 "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
#define TH_TS "congo=t61rcWkgMzE"
#define TH_BAG "userId=alice"

static inline qtbus_event_desc th_desc(const char *type, const qtbus_header *headers, size_t count)
{
    qtbus_event_desc d = tu_event(type, NULL);
    d.flags = QTBUS_EVENT_HEADERS;
    d.headers = headers;
    d.header_count = count;
    return d;
}

/* Room for every header an event can have: the given ones and three inherited. */
#define TH_SNAP_MAX (TH_MAX_HEADERS + 3)

typedef struct th_snap {
    atomic_int taken; /* handler calls that took it */
    size_t count;
    char *name[TH_SNAP_MAX];
    char *value[TH_SNAP_MAX];
    pthread_t thread; /* of the last call */
} th_snap;

static inline void th_snap_clear(th_snap *s)
{
    for (size_t i = 0; i < s->count; i++) {
        free(s->name[i]);
        free(s->value[i]);
    }
    s->count = 0;
    atomic_store(&s->taken, 0);
}

static inline char *th_strdup(const char *text)
{
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    CHECK(copy != NULL);
    return memcpy(copy, text, n);
}

/* Copies every header of `event` into `s` (replacing what it held), and checks that
 * _at and qtbus_event_header agree and that _at ends where the count says. */
static inline void th_take(th_snap *s, const qtbus_event *event)
{
    for (size_t i = 0; i < s->count; i++) {
        free(s->name[i]);
        free(s->value[i]);
    }
    size_t n = qtbus_event_header_count(event);
    CHECK(n <= TH_SNAP_MAX);
    for (size_t i = 0; i < n; i++) {
        const char *name = NULL, *value = NULL;
        CHECK_EQ_INT(qtbus_event_header_at(event, i, &name, &value), QTBUS_OK);
        CHECK(name != NULL && value != NULL);
        CHECK_EQ_STR(qtbus_event_header(event, name), value);
        s->name[i] = th_strdup(name);
        s->value[i] = th_strdup(value);
    }
    const char *name = NULL, *value = NULL;
    CHECK_EQ_INT(qtbus_event_header_at(event, n, &name, &value), QTBUS_EINVAL);
    s->count = n;
    s->thread = pthread_self();
    atomic_fetch_add(&s->taken, 1);
}

static inline void th_snap_handler(const qtbus_event *event, void *userdata) { th_take((th_snap *)userdata, event); }

/* The value `s` holds for `name`, or NULL. */
static inline const char *th_value(const th_snap *s, const char *name)
{
    for (size_t i = 0; i < s->count; i++) {
        if (strcmp(s->name[i], name) == 0) return s->value[i];
    }
    return NULL;
}

/* `s` holds exactly these headers, in this order. */
static inline void th_check_exact(const th_snap *s, const qtbus_header *expected, size_t n, const char *file, int line)
{
    if (s->count != n) {
        fprintf(stderr, "%s:%d: %zu headers, expected %zu\n", file, line, s->count, n);
        tu_fail(file, line, "header count differs");
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(s->name[i], expected[i].name) != 0 || strcmp(s->value[i], expected[i].value) != 0) {
            fprintf(stderr, "%s:%d: header %zu is %s: %s, expected %s: %s\n", file, line, i, s->name[i], s->value[i],
                    expected[i].name, expected[i].value);
            tu_fail(file, line, "header differs");
        }
    }
}
#define TH_CHECK_EXACT(snap, ...)                                                                                      \
    do {                                                                                                               \
        const qtbus_header th_expected_[] = {__VA_ARGS__};                                                             \
        th_check_exact((snap), th_expected_, sizeof th_expected_ / sizeof th_expected_[0], __FILE__, __LINE__);        \
    } while (0)
#define TH_CHECK_NONE(snap) CHECK_EQ_INT((snap)->count, 0)

/* The last failure's message names `function` first and gives a reason after it. */
#define TH_CHECK_ERRMSG(function)                                                                                      \
    do {                                                                                                               \
        const char *th_msg_ = qtbus_errmsg();                                                                          \
        CHECK_MSG(strncmp(th_msg_, function ": ", strlen(function ": ")) == 0 &&                                       \
                      strlen(th_msg_) > strlen(function ": "),                                                         \
                  "errmsg \"%s\" does not name %s and a reason", th_msg_, function);                                   \
    } while (0)

#endif /* QTBUS_TEST_HEADERS_H */
