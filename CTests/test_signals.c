/* SPDX-License-Identifier: MIT */
/*
 * test_signals: typed signals (qtbus_signal_define / connect / emit / emitv /
 * requestv, qtbus_event_args).
 *
 * Users rely on: a connected C function receiving exactly the values emitted, of every
 * kind and at every boundary, whether the call went through registers or the stack
 * (signatures that fit the argument registers are called directly, the others through
 * libffi: both are exercised with every kind); strings staying valid on a queue after
 * the emitter's buffer is reused; a signal event behaving as any event (ONCE, sticky
 * with REPLAY, re-entrant emits, requests, plain subscribers reading the arguments);
 * bytes that are not a signal's never being read out of bounds; every misuse being a
 * status that changes nothing.
 */
#include "test_util.h"

#include <math.h>

/* ---------------------------------------------------------------------------------
 * What the handlers saw
 * ------------------------------------------------------------------------------- */

static qtbus_value seen[QTBUS_SIGNAL_MAX_ARGS];
static char seen_text[QTBUS_SIGNAL_MAX_ARGS][1200]; /* copies of the strings */
static int seen_null[QTBUS_SIGNAL_MAX_ARGS];
static void *seen_userdata;
static atomic_int calls;

static void keep_string(int i, const char *s)
{
    seen_null[i] = s == NULL;
    seen_text[i][0] = 0;
    if (s) {
        CHECK(strlen(s) < sizeof seen_text[i]);
        strcpy(seen_text[i], s);
    }
}

static void reset_seen(void)
{
    memset(seen, 0, sizeof seen);
    memset(seen_text, 0, sizeof seen_text);
    memset(seen_null, 0, sizeof seen_null);
    seen_userdata = NULL;
    atomic_store(&calls, 0);
}

/* A connection's userdata that counts calls and releases (tu_rec's checks). */
typedef struct counted {
    tu_rec rec;
} counted;

static void on_counted(const char *text, int32_t number, void *userdata)
{
    (void)text;
    (void)number;
    counted *c = userdata;
    tu_rec_handler(NULL, &c->rec);
}

static void counted_release(void *userdata)
{
    tu_rec_release(&((counted *)userdata)->rec);
}

/* (int32, uint32, int64, uint64, double): 5 integer registers with the userdata, 1 vector
 * register: called directly on x86-64 and AArch64. */
static const qtbus_arg numbers_args[] = { QTBUS_ARG_INT32, QTBUS_ARG_UINT32, QTBUS_ARG_INT64, QTBUS_ARG_UINT64,
                                          QTBUS_ARG_DOUBLE };
static void on_numbers(int32_t a, uint32_t b, int64_t c, uint64_t d, double e, void *userdata)
{
    seen[0].i32 = a;
    seen[1].u32 = b;
    seen[2].i64 = c;
    seen[3].u64 = d;
    seen[4].f64 = e;
    seen_userdata = userdata;
    atomic_fetch_add(&calls, 1);
}

/* (double, string, pointer, string): direct as well. */
static const qtbus_arg mixed_args[] = { QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING, QTBUS_ARG_POINTER, QTBUS_ARG_STRING };
static void on_mixed(double a, const char *b, void *c, const char *d, void *userdata)
{
    seen[0].f64 = a;
    keep_string(1, b);
    seen[2].ptr = c;
    keep_string(3, d);
    seen_userdata = userdata;
    atomic_fetch_add(&calls, 1);
}

/* Every kind, 7 arguments: 7 integer-class values with the userdata, more than x86-64's
 * 6 argument registers, so libffi calls it there. */
static const qtbus_arg all_args[] = { QTBUS_ARG_INT32, QTBUS_ARG_UINT32, QTBUS_ARG_INT64, QTBUS_ARG_UINT64,
                                      QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING, QTBUS_ARG_POINTER };
static void on_all(int32_t a, uint32_t b, int64_t c, uint64_t d, double e, const char *f, void *g, void *userdata)
{
    seen[0].i32 = a;
    seen[1].u32 = b;
    seen[2].i64 = c;
    seen[3].u64 = d;
    seen[4].f64 = e;
    keep_string(5, f);
    seen[6].ptr = g;
    seen_userdata = userdata;
    atomic_fetch_add(&calls, 1);
}

/* 9 doubles: one more than the vector argument registers (the ninth goes on the stack). */
static const qtbus_arg nine_doubles_args[] = { QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE,
                                               QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE,
                                               QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE };
static void on_nine_doubles(double a, double b, double c, double d, double e, double f, double g, double h,
                            double i, void *userdata)
{
    double v[9] = { a, b, c, d, e, f, g, h, i };
    for (int k = 0; k < 9; k++) seen[k].f64 = v[k];
    seen_userdata = userdata;
    atomic_fetch_add(&calls, 1);
}

/* 8 doubles and 5 integers interleaved: every argument register of both classes. */
static const qtbus_arg full_registers_args[] = { QTBUS_ARG_DOUBLE, QTBUS_ARG_INT32, QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE,
                                                 QTBUS_ARG_UINT64, QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING, QTBUS_ARG_DOUBLE,
                                                 QTBUS_ARG_DOUBLE, QTBUS_ARG_POINTER, QTBUS_ARG_DOUBLE, QTBUS_ARG_INT64,
                                                 QTBUS_ARG_DOUBLE };
static void on_full_registers(double a, int32_t b, double c, double d, uint64_t e, double f, const char *g, double h,
                              double i, void *j, double k, int64_t l, double m, void *userdata)
{
    seen[0].f64 = a;
    seen[1].i32 = b;
    seen[2].f64 = c;
    seen[3].f64 = d;
    seen[4].u64 = e;
    seen[5].f64 = f;
    keep_string(6, g);
    seen[7].f64 = h;
    seen[8].f64 = i;
    seen[9].ptr = j;
    seen[10].f64 = k;
    seen[11].i64 = l;
    seen[12].f64 = m;
    seen_userdata = userdata;
    atomic_fetch_add(&calls, 1);
}

/* 16 arguments mixing every kind: integer registers and then the stack, vector registers
 * and then the stack, interleaved. */
static const qtbus_arg sixteen_args[] = {
    QTBUS_ARG_INT32,  QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING, QTBUS_ARG_UINT64, QTBUS_ARG_DOUBLE, QTBUS_ARG_UINT32,
    QTBUS_ARG_POINTER, QTBUS_ARG_INT64, QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING, QTBUS_ARG_INT32, QTBUS_ARG_DOUBLE,
    QTBUS_ARG_UINT64, QTBUS_ARG_STRING, QTBUS_ARG_DOUBLE, QTBUS_ARG_INT32
};
static void on_sixteen(int32_t a0, double a1, const char *a2, uint64_t a3, double a4, uint32_t a5, void *a6,
                       int64_t a7, double a8, const char *a9, int32_t a10, double a11, uint64_t a12,
                       const char *a13, double a14, int32_t a15, void *userdata)
{
    seen[0].i32 = a0;
    seen[1].f64 = a1;
    keep_string(2, a2);
    seen[3].u64 = a3;
    seen[4].f64 = a4;
    seen[5].u32 = a5;
    seen[6].ptr = a6;
    seen[7].i64 = a7;
    seen[8].f64 = a8;
    keep_string(9, a9);
    seen[10].i32 = a10;
    seen[11].f64 = a11;
    seen[12].u64 = a12;
    keep_string(13, a13);
    seen[14].f64 = a14;
    seen[15].i32 = a15;
    seen_userdata = userdata;
    atomic_fetch_add(&calls, 1);
}

static int same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* ---------------------------------------------------------------------------------
 * Every kind, every boundary, both calling paths, emit and emitv
 * ------------------------------------------------------------------------------- */

static void test_numbers(qtbus_bus *bus)
{
    int ud;
    CHECK_EQ_INT(qtbus_signal_define(bus, "Numbers", numbers_args, 5), QTBUS_OK);
    qtbus_token token;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Numbers", NULL, QTBUS_CALLBACK(on_numbers), &ud, NULL, &token),
                 QTBUS_OK);

    struct { int32_t a; uint32_t b; int64_t c; uint64_t d; double e; } cases[] = {
        { INT32_MIN, 0, INT64_MIN, 0, -0.0 },
        { INT32_MAX, UINT32_MAX, INT64_MAX, UINT64_MAX, NAN },
        { -1, 1, -1, 1, INFINITY },
        { 0, 0x80000000u, 0, 0x8000000000000000ull, -INFINITY },
        { 7, 42, 1234567890123ll, 9876543210987ull, 5e-324 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        reset_seen();
        CHECK_EQ_INT(qtbus_signal_emit(bus, "Numbers", NULL, cases[i].a, cases[i].b, cases[i].c, cases[i].d,
                                       cases[i].e), 1);
        CHECK_EQ_INT(atomic_load(&calls), 1);
        CHECK_EQ_INT(seen[0].i32, cases[i].a);
        CHECK_EQ_U64(seen[1].u32, cases[i].b);
        CHECK(seen[2].i64 == cases[i].c);
        CHECK_EQ_U64(seen[3].u64, cases[i].d);
        CHECK(same_double(seen[4].f64, cases[i].e));
        CHECK(seen_userdata == &ud);

        qtbus_value v[5];
        v[0].i32 = cases[i].a;
        v[1].u32 = cases[i].b;
        v[2].i64 = cases[i].c;
        v[3].u64 = cases[i].d;
        v[4].f64 = cases[i].e;
        reset_seen();
        CHECK_EQ_INT(qtbus_signal_emitv(bus, "Numbers", "sub", 0, v, 5), 1);
        CHECK_EQ_INT(atomic_load(&calls), 1);
        CHECK_EQ_INT(seen[0].i32, cases[i].a);
        CHECK_EQ_U64(seen[1].u32, cases[i].b);
        CHECK(seen[2].i64 == cases[i].c);
        CHECK_EQ_U64(seen[3].u64, cases[i].d);
        CHECK(same_double(seen[4].f64, cases[i].e));
    }
    CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
}

static void test_strings_and_pointers(qtbus_bus *bus)
{
    static char big[1100]; /* more than the 512 bytes packed without allocating */
    memset(big, 'x', sizeof big - 1);
    big[0] = 'B';
    big[sizeof big - 1] = 0;
    const char *texts[] = { "", NULL, "h\xc3\xa9llo w\xc3\xb6rld", big, "a" };
    int object;

    CHECK_EQ_INT(qtbus_signal_define(bus, "Mixed", mixed_args, 4), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Mixed", NULL, QTBUS_CALLBACK(on_mixed), NULL, NULL, NULL), QTBUS_OK);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        const char *other = texts[(i + 1) % 5];
        reset_seen();
        CHECK_EQ_INT(qtbus_signal_emit(bus, "Mixed", NULL, -2.5, texts[i], (void *)&object, other), 1);
        CHECK_EQ_INT(atomic_load(&calls), 1);
        CHECK(same_double(seen[0].f64, -2.5));
        CHECK_EQ_INT(seen_null[1], texts[i] == NULL);
        if (texts[i]) CHECK_EQ_STR(seen_text[1], texts[i]);
        CHECK(seen[2].ptr == &object);
        CHECK_EQ_INT(seen_null[3], other == NULL);
        if (other) CHECK_EQ_STR(seen_text[3], other);
    }

    /* Every kind in one signature, through libffi on x86-64. */
    CHECK_EQ_INT(qtbus_signal_define(bus, "All", all_args, 7), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "All", NULL, QTBUS_CALLBACK(on_all), &object, NULL, NULL), QTBUS_OK);
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        reset_seen();
        CHECK_EQ_INT(qtbus_signal_emit(bus, "All", NULL, INT32_MIN, UINT32_MAX, INT64_MIN, UINT64_MAX, -0.0,
                                       texts[i], (void *)NULL), 1);
        CHECK_EQ_INT(atomic_load(&calls), 1);
        CHECK_EQ_INT(seen[0].i32, INT32_MIN);
        CHECK_EQ_U64(seen[1].u32, UINT32_MAX);
        CHECK(seen[2].i64 == INT64_MIN);
        CHECK_EQ_U64(seen[3].u64, UINT64_MAX);
        CHECK(same_double(seen[4].f64, -0.0));
        CHECK_EQ_INT(seen_null[5], texts[i] == NULL);
        if (texts[i]) CHECK_EQ_STR(seen_text[5], texts[i]);
        CHECK(seen[6].ptr == NULL);
        CHECK(seen_userdata == &object);

        qtbus_value v[7];
        v[0].i32 = INT32_MAX;
        v[1].u32 = 0;
        v[2].i64 = INT64_MAX;
        v[3].u64 = 0;
        v[4].f64 = NAN;
        v[5].str = texts[i];
        v[6].ptr = &object;
        reset_seen();
        CHECK_EQ_INT(qtbus_signal_emitv(bus, "All", NULL, 0, v, 7), 1);
        CHECK_EQ_INT(seen[0].i32, INT32_MAX);
        CHECK_EQ_U64(seen[1].u32, 0);
        CHECK(seen[2].i64 == INT64_MAX);
        CHECK_EQ_U64(seen[3].u64, 0);
        CHECK(isnan(seen[4].f64));
        CHECK_EQ_INT(seen_null[5], texts[i] == NULL);
        if (texts[i]) CHECK_EQ_STR(seen_text[5], texts[i]);
        CHECK(seen[6].ptr == &object);
    }
}

static void test_register_limits(qtbus_bus *bus)
{
    CHECK_EQ_INT(qtbus_signal_define(bus, "NineDoubles", nine_doubles_args, 9), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "NineDoubles", NULL, QTBUS_CALLBACK(on_nine_doubles), &calls, NULL, NULL),
                 QTBUS_OK);
    reset_seen();
    CHECK_EQ_INT(qtbus_signal_emit(bus, "NineDoubles", NULL, 1.5, -2.5, 3.25, NAN, -0.0, 6e300, -7e-300, 8.0, 9.75),
                 1);
    double expect[9] = { 1.5, -2.5, 3.25, NAN, -0.0, 6e300, -7e-300, 8.0, 9.75 };
    for (int k = 0; k < 9; k++) CHECK_MSG(same_double(seen[k].f64, expect[k]), "double %d", k);
    CHECK(seen_userdata == &calls);

    CHECK_EQ_INT(qtbus_signal_define(bus, "FullRegisters", full_registers_args, 13), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "FullRegisters", NULL, QTBUS_CALLBACK(on_full_registers), &calls, NULL,
                                      NULL), QTBUS_OK);
    reset_seen();
    CHECK_EQ_INT(qtbus_signal_emit(bus, "FullRegisters", NULL, 0.5, INT32_MIN, 1.5, 2.5, UINT64_MAX, 3.5, "reg",
                                   4.5, 5.5, (void *)&seen, 6.5, INT64_MIN, 7.5), 1);
    CHECK(same_double(seen[0].f64, 0.5));
    CHECK_EQ_INT(seen[1].i32, INT32_MIN);
    CHECK(same_double(seen[2].f64, 1.5));
    CHECK(same_double(seen[3].f64, 2.5));
    CHECK_EQ_U64(seen[4].u64, UINT64_MAX);
    CHECK(same_double(seen[5].f64, 3.5));
    CHECK_EQ_STR(seen_text[6], "reg");
    CHECK(same_double(seen[7].f64, 4.5));
    CHECK(same_double(seen[8].f64, 5.5));
    CHECK(seen[9].ptr == &seen);
    CHECK(same_double(seen[10].f64, 6.5));
    CHECK(seen[11].i64 == INT64_MIN);
    CHECK(same_double(seen[12].f64, 7.5));
    CHECK(seen_userdata == &calls);
}

static void expect_sixteen(const qtbus_value *v, const char *s2, const char *s9, const char *s13)
{
    CHECK_EQ_INT(v[0].i32, INT32_MIN);
    CHECK(same_double(v[1].f64, 1.25));
    CHECK_EQ_U64(v[3].u64, UINT64_MAX);
    CHECK(same_double(v[4].f64, -0.0));
    CHECK_EQ_U64(v[5].u32, UINT32_MAX);
    CHECK(v[6].ptr == (void *)&seen);
    CHECK(v[7].i64 == INT64_MIN);
    CHECK(isnan(v[8].f64));
    CHECK_EQ_INT(v[10].i32, INT32_MAX);
    CHECK(same_double(v[11].f64, 1e308));
    CHECK_EQ_U64(v[12].u64, 0);
    CHECK(same_double(v[14].f64, -3.0));
    CHECK_EQ_INT(v[15].i32, -16);
    CHECK_EQ_STR(s2, "two");
    CHECK(s9 == NULL);
    CHECK_EQ_STR(s13, "");
}

static atomic_int plain_calls;
static qtbus_value plain_seen[QTBUS_SIGNAL_MAX_ARGS];
static int plain_count;
static char plain_text[3][16];
static int plain_null[3];

static void plain_sixteen(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    qtbus_value few[15];
    CHECK_EQ_INT(qtbus_event_args(event, few, 15), QTBUS_EINVAL); /* smaller than the signature */
    plain_count = qtbus_event_args(event, plain_seen, QTBUS_SIGNAL_MAX_ARGS);
    const char *s[3] = { plain_seen[2].str, plain_seen[9].str, plain_seen[13].str };
    for (int i = 0; i < 3; i++) {
        plain_null[i] = s[i] == NULL;
        plain_text[i][0] = 0;
        if (s[i]) {
            CHECK(strlen(s[i]) < sizeof plain_text[i]);
            strcpy(plain_text[i], s[i]);
        }
    }
    atomic_fetch_add(&plain_calls, 1);
}

static void test_sixteen(qtbus_bus *bus)
{
    CHECK_EQ_INT(qtbus_signal_define(bus, "Sixteen", sixteen_args, 16), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Sixteen", NULL, QTBUS_CALLBACK(on_sixteen), &plain_calls, NULL, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Sixteen", NULL, plain_sixteen, NULL, NULL, NULL), QTBUS_OK);
    reset_seen();
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Sixteen", NULL, INT32_MIN, 1.25, "two", UINT64_MAX, -0.0, UINT32_MAX,
                                   (void *)&seen, INT64_MIN, NAN, (const char *)NULL, INT32_MAX, 1e308,
                                   (uint64_t)0, "", -3.0, (int32_t)-16), 2);
    CHECK_EQ_INT(atomic_load(&calls), 1);
    CHECK(seen_userdata == &plain_calls);
    expect_sixteen(seen, seen_null[2] ? NULL : seen_text[2], seen_null[9] ? NULL : seen_text[9],
                   seen_null[13] ? NULL : seen_text[13]);
    CHECK_EQ_INT(atomic_load(&plain_calls), 1);
    CHECK_EQ_INT(plain_count, 16);
    expect_sixteen(plain_seen, plain_null[0] ? NULL : plain_text[0], plain_null[1] ? NULL : plain_text[1],
                   plain_null[2] ? NULL : plain_text[2]);

    /* On a queue: the handler gets its arguments from the engine's copy of the bytes,
     * unpacked there (the other path to libffi). */
    qtbus_queue *queue = qtbus_queue_create("sixteen");
    CHECK(queue != NULL);
    qtbus_bus *other = qtbus_bus_create();
    CHECK(other != NULL);
    CHECK_EQ_INT(qtbus_signal_define(other, "Sixteen", sixteen_args, 16), QTBUS_OK);
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.queue = queue;
    CHECK_EQ_INT(qtbus_signal_connect(other, "Sixteen", &o, QTBUS_CALLBACK(on_sixteen), &plain_calls, NULL, NULL),
                 QTBUS_OK);
    reset_seen();
    char two[8] = "two";
    CHECK_EQ_INT(qtbus_signal_emit(other, "Sixteen", NULL, INT32_MIN, 1.25, two, UINT64_MAX, -0.0, UINT32_MAX,
                                   (void *)&seen, INT64_MIN, NAN, (const char *)NULL, INT32_MAX, 1e308,
                                   (uint64_t)0, "", -3.0, (int32_t)-16), 1);
    strcpy(two, "XXX");
    CHECK_WAIT(atomic_load(&calls) == 1, TU_WAIT_MS);
    CHECK(seen_userdata == &plain_calls);
    expect_sixteen(seen, seen_null[2] ? NULL : seen_text[2], seen_null[9] ? NULL : seen_text[9],
                   seen_null[13] ? NULL : seen_text[13]);
    CHECK_EQ_INT(qtbus_bus_destroy(other), QTBUS_OK);
    qtbus_queue_release(queue);
}

/* ---------------------------------------------------------------------------------
 * No arguments
 * ------------------------------------------------------------------------------- */

static void on_nothing(void *userdata)
{
    atomic_fetch_add((atomic_int *)userdata, 1);
}

static atomic_int zero_args_read = -1;
static void plain_nothing(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    atomic_store(&zero_args_read, qtbus_event_args(event, NULL, 0));
}

static void test_zero_args(qtbus_bus *bus)
{
    atomic_int n = 0;
    CHECK_EQ_INT(qtbus_signal_define(bus, "Nothing", NULL, 0), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Nothing", NULL, 0), QTBUS_OK);
    qtbus_token t;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Nothing", NULL, QTBUS_CALLBACK(on_nothing), &n, NULL, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Nothing", NULL, plain_nothing, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Nothing", NULL), 2);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Nothing", NULL, 0, NULL, 0), 2);
    CHECK_EQ_INT(atomic_load(&n), 2);
    CHECK_EQ_INT(atomic_load(&zero_args_read), 0);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
}

/* ---------------------------------------------------------------------------------
 * Queues: the arguments (strings included) travel with the event
 * ------------------------------------------------------------------------------- */

typedef struct queued_seen {
    atomic_int calls;
    atomic_int releases;
    char text[64];
    int32_t number;
} queued_seen;

static const qtbus_arg text_number_args[] = { QTBUS_ARG_STRING, QTBUS_ARG_INT32 };

static void on_queued(const char *text, int32_t number, void *userdata)
{
    queued_seen *q = userdata;
    /* The n-th delivery must see the n-th emit's values (serial queue: in order). */
    char expect[64];
    snprintf(expect, sizeof expect, "message %d", (int)number);
    CHECK_EQ_STR(text, expect);
    CHECK_EQ_INT(number, atomic_load(&q->calls));
    snprintf(q->text, sizeof q->text, "%s", text);
    q->number = number;
    atomic_fetch_add(&q->calls, 1);
}

static void queued_release(void *userdata)
{
    atomic_fetch_add(&((queued_seen *)userdata)->releases, 1);
}

static void hold_queue(const qtbus_event *event, void *userdata)
{
    (void)event;
    tu_gate_pass(userdata);
}

static void test_queued(qtbus_bus *bus)
{
    queued_seen q;
    memset(&q, 0, sizeof q);
    qtbus_queue *queue = qtbus_queue_create("signals");
    CHECK(queue != NULL);
    tu_gate gate = { 0, 0 };
    CHECK_EQ_INT(qtbus_signal_define(bus, "Queued", text_number_args, 2), QTBUS_OK);
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.queue = queue;
    qtbus_token t;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Queued", &o, QTBUS_CALLBACK(on_queued), &q, queued_release, &t),
                 QTBUS_OK);

    /* Hold the queue so every delivery is still pending while the emitter reuses its
     * buffer. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "Hold", &o, hold_queue, &gate, NULL, NULL), QTBUS_OK);
    qtbus_event_desc hold = tu_event("Hold", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &hold), 1);
    char buffer[64];
    for (int i = 0; i < 50; i++) {
        snprintf(buffer, sizeof buffer, "message %d", i);
        CHECK_EQ_INT(qtbus_signal_emit(bus, "Queued", NULL, buffer, (int32_t)i), 1);
        memset(buffer, '#', sizeof buffer - 1);
        buffer[sizeof buffer - 1] = 0;
    }
    CHECK_EQ_INT(atomic_load(&q.calls), 0);
    atomic_store(&gate.open, 1);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&q.calls), 50);
    CHECK_EQ_STR(q.text, "message 49");
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_WAIT(atomic_load(&q.releases) == 1, TU_WAIT_MS);
    qtbus_queue_release(queue);
}

/* ---------------------------------------------------------------------------------
 * ONCE, sticky with REPLAY, re-entrant emit
 * ------------------------------------------------------------------------------- */

static void on_count_text(const char *text, int32_t number, void *userdata)
{
    (void)text;
    (void)number;
    atomic_fetch_add((atomic_int *)userdata, 1);
}

static void test_once(qtbus_bus *bus)
{
    counted c;
    tu_rec_init(&c.rec);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Once", text_number_args, 2), QTBUS_OK);
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.flags = QTBUS_SUB_ONCE;
    qtbus_token t;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Once", &o, QTBUS_CALLBACK(on_counted), &c, counted_release, &t),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Once", NULL, "a", (int32_t)1), 1);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Once", NULL, "b", (int32_t)2), 0);
    CHECK_EQ_INT(atomic_load(&c.rec.calls), 1);
    CHECK_EQ_INT(qtbus_token_is_active(t), 0);
    CHECK_EQ_INT(atomic_load(&c.rec.releases), 1);
    CHECK_REC_SANE(&c.rec);
}

static char replayed_text[32];
static int32_t replayed_number;
static atomic_int replayed;
static void on_replayed(const char *text, int32_t number, void *userdata)
{
    (void)userdata;
    snprintf(replayed_text, sizeof replayed_text, "%s", text);
    replayed_number = number;
    atomic_fetch_add(&replayed, 1);
}

static void test_sticky_replay(qtbus_bus *bus)
{
    CHECK_EQ_INT(qtbus_signal_define(bus, "Status", text_number_args, 2), QTBUS_OK);
    qtbus_value v[2];
    char text[32] = "first";
    v[0].str = text;
    v[1].i32 = 1;
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Status", NULL, QTBUS_EVENT_STICKY, v, 2), 0);
    strcpy(text, "second");
    v[1].i32 = 2;
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Status", NULL, QTBUS_EVENT_STICKY, v, 2), 0);
    strcpy(text, "overwritten");
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.flags = QTBUS_SUB_REPLAY;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Status", &o, QTBUS_CALLBACK(on_replayed), NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&replayed), 1);
    CHECK_EQ_STR(replayed_text, "second");
    CHECK_EQ_INT(replayed_number, 2);
    /* A plain emit reaches it and does not replace the kept event. */
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Status", NULL, "live", (int32_t)3), 1);
    CHECK_EQ_INT(atomic_load(&replayed), 2);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Status", &o, QTBUS_CALLBACK(on_replayed), NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&replayed), 3);
    CHECK_EQ_STR(replayed_text, "second");
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "Status", NULL), 1);
}

typedef struct nest {
    qtbus_bus *bus;
    char order[64];
    int used;
    atomic_int low_calls;
} nest;

static void on_nest(const char *label, int32_t depth, void *userdata)
{
    nest *n = userdata;
    n->order[n->used++] = label[0];
    if (depth < 3) {
        char next[2] = { (char)(label[0] + 1), 0 };
        CHECK_EQ_INT(qtbus_signal_emit(n->bus, "Nest", NULL, next, depth + 1), 2);
    }
    n->order[n->used++] = (char)(label[0] - 'a' + 'A');
}

static void test_reentrant(qtbus_bus *bus)
{
    nest n;
    memset(&n, 0, sizeof n);
    n.bus = bus;
    CHECK_EQ_INT(qtbus_signal_define(bus, "Nest", text_number_args, 2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Nest", NULL, QTBUS_CALLBACK(on_nest), &n, NULL, NULL), QTBUS_OK);
    qtbus_sub_options low;
    memset(&low, 0, sizeof low);
    low.priority = -1;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Nest", &low, QTBUS_CALLBACK(on_count_text), &n.low_calls, NULL, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Nest", NULL, "a", (int32_t)0), 2);
    /* Depth-first: each nested emit is delivered inside the handler that made it. */
    CHECK_EQ_STR(n.order, "abcdDCBA");
    CHECK_EQ_INT(atomic_load(&n.low_calls), 4);
}

/* ---------------------------------------------------------------------------------
 * Subtypes, priorities with stop, QTNoSubscriberEvent
 * ------------------------------------------------------------------------------- */

static void stop_it(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_stop(event), QTBUS_OK);
}

static char lost_subtype[32];
static atomic_int lost_args = -1;
static void on_lost(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    qtbus_value v[2];
    snprintf(lost_subtype, sizeof lost_subtype, "%s", qtbus_event_subtype(event));
    int n = qtbus_event_args(event, v, 2);
    CHECK(n == 2 && strcmp(v[0].str, "nobody") == 0 && v[1].i32 == 5);
    atomic_store(&lost_args, n);
}

static void test_ordinary_event(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Ord", text_number_args, 2), QTBUS_OK);

    /* Subtypes: a connection with subtypes gets only those. */
    atomic_int alice = 0, all = 0;
    const char *subtypes[] = { "alice" };
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.subtypes = subtypes;
    o.subtype_count = 1;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Ord", &o, QTBUS_CALLBACK(on_count_text), &alice, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Ord", NULL, QTBUS_CALLBACK(on_count_text), &all, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Ord", "alice", "a", (int32_t)1), 2);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Ord", "bob", "b", (int32_t)2), 1);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Ord", NULL, "c", (int32_t)3), 1);
    CHECK_EQ_INT(atomic_load(&alice), 1);
    CHECK_EQ_INT(atomic_load(&all), 3);

    /* A plain handler of higher priority stops the event before the typed ones. */
    memset(&o, 0, sizeof o);
    o.priority = 10;
    qtbus_token stopper;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Ord", &o, stop_it, NULL, NULL, &stopper), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Ord", "alice", "d", (int32_t)4), 1);
    CHECK_EQ_INT(atomic_load(&alice), 1);
    CHECK_EQ_INT(atomic_load(&all), 3);
    CHECK_EQ_INT(qtbus_token_dispose(stopper), QTBUS_OK);

    /* Nobody connected: the signal goes to QTNoSubscriberEvent, arguments and all. */
    CHECK_EQ_INT(qtbus_signal_define(bus, "Lonely", text_number_args, 2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, NULL, on_lost, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Lonely", NULL, "nobody", (int32_t)5), 0);
    CHECK_EQ_INT(atomic_load(&lost_args), 2);
    CHECK_EQ_STR(lost_subtype, "Lonely");
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
}

/* ---------------------------------------------------------------------------------
 * qtbus_event_args on bytes that are not a signal's
 * ------------------------------------------------------------------------------- */

static atomic_int args_result;
static qtbus_value args_values[QTBUS_SIGNAL_MAX_ARGS];
static char args_first_text[32]; /* the first argument's string, copied during the call */
static void plain_reader(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    for (int i = 0; i < QTBUS_SIGNAL_MAX_ARGS; i++) args_values[i].u64 = 0xA5A5A5A5A5A5A5A5ull;
    int n = qtbus_event_args(event, args_values, QTBUS_SIGNAL_MAX_ARGS);
    args_first_text[0] = 0;
    /* "Foreign" is (string, int32): its first argument is a string. */
    if (n > 0 && strcmp(qtbus_event_type(event), "Foreign") == 0 && args_values[0].str &&
        strlen(args_values[0].str) < sizeof args_first_text)
        strcpy(args_first_text, args_values[0].str);
    atomic_store(&args_result, n);
}

static int dispatch_bytes(qtbus_bus *bus, const char *type, const void *bytes, size_t size)
{
    /* Copied to a block of exactly `size` bytes: ASan and valgrind see any read past it. */
    void *copy = size ? malloc(size) : NULL;
    if (size) {
        CHECK(copy != NULL);
        memcpy(copy, bytes, size);
    }
    qtbus_event_desc d = tu_event(type, NULL);
    d.data = copy;
    d.size = size;
    int r = qtbus_dispatch(bus, &d);
    free(copy);
    return r;
}

static size_t put_header(unsigned char *b, unsigned count)
{
    memcpy(b, "QTSG", 4);
    b[4] = QTBUS_SIGNAL_LAYOUT_VERSION;
    b[5] = (unsigned char)count;
    b[6] = b[7] = 0;
    return 8;
}

static void test_foreign_bytes(qtbus_bus *bus)
{
    atomic_int typed = 0;
    CHECK_EQ_INT(qtbus_signal_define(bus, "Foreign", text_number_args, 2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Foreign", NULL, QTBUS_CALLBACK(on_count_text), &typed, NULL, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Foreign", NULL, plain_reader, NULL, NULL, NULL), QTBUS_OK);

    /* A well-formed payload built by hand from the documented layout is read. */
    unsigned char b[64];
    memset(b, 0, sizeof b);
    size_t at = put_header(b, 2);
    b[at] = QTBUS_ARG_STRING;
    b[at + 1] = QTBUS_ARG_INT32;
    uint64_t offset = 32;
    memcpy(b + 16, &offset, 8);
    qtbus_value n;
    memset(&n, 0, sizeof n);
    n.i32 = -5;
    memcpy(b + 24, &n, 8);
    memcpy(b + 32, "hand", 5);
    CHECK_EQ_INT(dispatch_bytes(bus, "Foreign", b, 37), 2);
    CHECK_EQ_INT(atomic_load(&args_result), 2);
    CHECK_EQ_STR(args_first_text, "hand");
    CHECK_EQ_INT(args_values[1].i32, -5);
    CHECK_EQ_INT(atomic_load(&typed), 1);

    /* Each of these is not a payload: the plain handler gets EINVAL, the typed one is
     * not called, and nothing is read outside the bytes (ASan/valgrind). */
    struct { const char *what; unsigned char bytes[64]; size_t size; } bad[16];
    int count = 0;
#define BAD(label, len) (bad[count].what = (label), bad[count].size = (len), bad[count++].bytes)
    memcpy(BAD("plain text", 5), "hello", 5);
    BAD("empty", 0);
    memcpy(BAD("magic only", 4), "QTSG", 4);
    { unsigned char *p = BAD("header, 7 bytes", 7); put_header(p, 0); }
    { unsigned char *p = BAD("wrong version", 8); put_header(p, 0); p[4] = 99; }
    { unsigned char *p = BAD("17 arguments", 64); put_header(p, 17); }
    { unsigned char *p = BAD("slots cut off", 20); put_header(p, 2); p[8] = QTBUS_ARG_INT32; p[9] = QTBUS_ARG_INT32; }
    { unsigned char *p = BAD("kind 0", 24); put_header(p, 1); p[8] = 0; }
    { unsigned char *p = BAD("kind 8", 24); put_header(p, 1); p[8] = 8; }
    /* A string whose offset is past the end, inside the slots, or whose bytes have no NUL. */
    { unsigned char *p = BAD("offset past end", 26); put_header(p, 1); p[8] = QTBUS_ARG_STRING;
      uint64_t o = 1000; memcpy(p + 16, &o, 8); }
    { unsigned char *p = BAD("offset into slots", 26); put_header(p, 1); p[8] = QTBUS_ARG_STRING;
      uint64_t o = 17; memcpy(p + 16, &o, 8); p[25] = 0; }
    { unsigned char *p = BAD("no NUL", 28); put_header(p, 1); p[8] = QTBUS_ARG_STRING;
      uint64_t o = 24; memcpy(p + 16, &o, 8); memcpy(p + 24, "abcd", 4); }
    { unsigned char *p = BAD("offset huge", 26); put_header(p, 1); p[8] = QTBUS_ARG_STRING;
      uint64_t o = UINT64_MAX; memcpy(p + 16, &o, 8); }
    { unsigned char *p = BAD("strings out of order", 40); put_header(p, 2); p[8] = QTBUS_ARG_STRING;
      p[9] = QTBUS_ARG_STRING; uint64_t o1 = 36, o2 = 32; memcpy(p + 16, &o1, 8); memcpy(p + 24, &o2, 8);
      memcpy(p + 32, "abc", 4); memcpy(p + 36, "xyz", 4); }
    { unsigned char *p = BAD("first string without NUL", 40); put_header(p, 2); p[8] = QTBUS_ARG_STRING;
      p[9] = QTBUS_ARG_STRING; uint64_t o1 = 32, o2 = 36; memcpy(p + 16, &o1, 8); memcpy(p + 24, &o2, 8);
      memcpy(p + 32, "abcd", 4); memcpy(p + 36, "xyz", 4); }
#undef BAD
    for (int i = 0; i < count; i++) {
        atomic_store(&args_result, 12345);
        CHECK_EQ_INT(dispatch_bytes(bus, "Foreign", bad[i].bytes, bad[i].size), 2);
        CHECK_MSG(atomic_load(&args_result) == QTBUS_EINVAL, "%s: %d", bad[i].what, atomic_load(&args_result));
    }
    CHECK_EQ_INT(atomic_load(&typed), 1);

    /* A payload of another signature: qtbus_event_args reads it, the typed handler (whose
     * signature differs) is not called. */
    CHECK_EQ_INT(qtbus_signal_define(bus, "Numbers2", numbers_args, 5), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Numbers2", NULL, plain_reader, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Numbers2", NULL, 1, 2u, (int64_t)3, (uint64_t)4, 5.0), 1);
    CHECK_EQ_INT(atomic_load(&args_result), 5);
    CHECK_EQ_INT(args_values[0].i32, 1);
    CHECK(same_double(args_values[4].f64, 5.0));

    /* NULL and a non-signal JSON event. */
    CHECK_EQ_INT(qtbus_event_args(NULL, args_values, 16), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_JSON_TYPE, NULL, plain_reader, NULL, NULL, NULL), QTBUS_OK);
    atomic_store(&args_result, 12345);
    CHECK_EQ_INT(qtbus_dispatch_json(bus, "j", "{\"QTSG\":1}"), 1);
    CHECK_EQ_INT(atomic_load(&args_result), QTBUS_EINVAL);
}

/* ---------------------------------------------------------------------------------
 * Bad input: a status, and nothing changed
 * ------------------------------------------------------------------------------- */

static void test_bad_input(qtbus_bus *bus)
{
    atomic_int n = 0;
    counted c;
    tu_rec_init(&c.rec);
    tu_rec rec;
    tu_rec_init(&rec);
    const qtbus_arg bad_kind0[] = { QTBUS_ARG_INT32, (qtbus_arg)0 };
    const qtbus_arg bad_kind8[] = { (qtbus_arg)8 };
    qtbus_arg seventeen[17];
    for (int i = 0; i < 17; i++) seventeen[i] = QTBUS_ARG_INT32;
    char long_name[300];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;

    /* define */
    CHECK_EQ_INT(qtbus_signal_define(NULL, "Bad", text_number_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, NULL, text_number_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "", text_number_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, long_name, text_number_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad\xff", text_number_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad", NULL, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad", seventeen, 17), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad", bad_kind0, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad", bad_kind8, 1), QTBUS_EINVAL);
    /* None of those defined "Bad". */
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Bad", NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Bad", NULL, QTBUS_CALLBACK(on_nothing), &n, NULL, NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad", seventeen, 16), QTBUS_OK);

    /* A different definition changes nothing; the same one is fine. */
    CHECK_EQ_INT(qtbus_signal_define(bus, "Def", text_number_args, 2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Def", text_number_args, 1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Def", numbers_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Def", NULL, 0), QTBUS_EINVAL);
    qtbus_arg copy[2] = { QTBUS_ARG_STRING, QTBUS_ARG_INT32 };
    CHECK_EQ_INT(qtbus_signal_define(bus, "Def", copy, 2), QTBUS_OK);
    copy[1] = QTBUS_ARG_INT64; /* the signature was copied */
    qtbus_token t;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Def", NULL, QTBUS_CALLBACK(on_counted), &c, counted_release, &t),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Def", NULL, "x", (int32_t)1), 1);
    CHECK_EQ_INT(atomic_load(&c.rec.calls), 1);
    /* Signatures are per bus: another bus has none for "Def". */
    qtbus_bus *other = qtbus_bus_create();
    CHECK(other != NULL);
    CHECK_EQ_INT(qtbus_signal_emit(other, "Def", NULL, "x", (int32_t)1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(other, "Def", numbers_args, 5), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(other), QTBUS_OK);

    /* connect */
    int count = qtbus_subscriber_count(bus, "Def", NULL);
    CHECK_EQ_INT(count, 1);
    qtbus_token out = { 77 };
    CHECK_EQ_INT(qtbus_signal_connect(NULL, "Def", NULL, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_EINVAL);
    CHECK_EQ_U64(out.id, 0);
    out.id = 77;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Def", NULL, NULL, &n, tu_rec_release, &out), QTBUS_EINVAL);
    CHECK_EQ_U64(out.id, 0);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Undefined", NULL, QTBUS_CALLBACK(on_counted), &c, counted_release,
                                      &out), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_connect(bus, NULL, NULL, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "", NULL, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_EINVAL);
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.flags = 1u << 7;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Def", &o, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_EINVAL);
    memset(&o, 0, sizeof o);
    o.bag.id = 12345;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Def", &o, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_ESTALE);
    CHECK_EQ_U64(out.id, 0);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Def", NULL), count);
    CHECK_EQ_INT(atomic_load(&c.rec.releases), 0); /* a failed call takes nothing */

    /* emit / emitv */
    qtbus_value v[3];
    v[0].str = "x";
    v[1].i32 = 2;
    v[2].i32 = 3;
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", NULL, 0, v, 1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", NULL, 0, v, 3), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", NULL, 0, NULL, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", NULL, 1u << 5, v, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", "", 0, v, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Undefined", NULL, 0, v, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(NULL, "Def", NULL, 0, v, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, NULL, NULL, 0, v, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Undefined", NULL, "x", (int32_t)1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Def", long_name, "x", (int32_t)1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emit(NULL, "Def", NULL, "x", (int32_t)1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_requestv(bus, "Def", NULL, v, 3, NULL, &rec, tu_rec_release), QTBUS_EINVAL);
    CHECK_EQ_INT(atomic_load(&c.rec.calls), 1);
    CHECK_EQ_INT(atomic_load(&rec.releases), 0);

    /* The signature is unchanged by all of the above. */
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", NULL, 0, v, 2), 1);
    CHECK_EQ_INT(atomic_load(&c.rec.calls), 2);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&c.rec.releases), 1);
    CHECK_REC_SANE(&c.rec);
}

/* ---------------------------------------------------------------------------------
 * A typed request: plain handlers read the arguments and reply
 * ------------------------------------------------------------------------------- */

static void answer(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    qtbus_value v[2];
    CHECK_EQ_INT(qtbus_event_args(event, v, 2), 2);
    char reply[64];
    int n = snprintf(reply, sizeof reply, "%s x%d", v[0].str, (int)v[1].i32);
    CHECK_EQ_INT(qtbus_event_reply(event, reply, (size_t)n), QTBUS_OK);
}

typedef struct replies {
    char text[4][64];
    int count;
    atomic_int done;
} replies;

static void on_reply(const qtbus_event *reply, void *userdata)
{
    replies *r = userdata;
    size_t size;
    const char *data = qtbus_event_data(reply, &size);
    CHECK(r->count < 4 && size < 64);
    memcpy(r->text[r->count], data, size);
    r->text[r->count][size] = 0;
    r->count++;
}

static void on_replies_done(void *userdata)
{
    atomic_fetch_add(&((replies *)userdata)->done, 1);
}

static void test_request(qtbus_bus *bus)
{
    replies r;
    memset(&r, 0, sizeof r);
    atomic_int typed = 0;
    CHECK_EQ_INT(qtbus_signal_define(bus, "Ask", text_number_args, 2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Ask", NULL, answer, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Ask", NULL, answer, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Ask", NULL, QTBUS_CALLBACK(on_count_text), &typed, NULL, NULL),
                 QTBUS_OK);
    qtbus_value v[2];
    v[0].str = "ping";
    v[1].i32 = 3;
    CHECK_EQ_INT(qtbus_signal_requestv(bus, "Ask", NULL, v, 2, on_reply, &r, on_replies_done), 3);
    CHECK_EQ_INT(r.count, 2);
    CHECK_EQ_STR(r.text[0], "ping x3");
    CHECK_EQ_STR(r.text[1], "ping x3");
    CHECK_EQ_INT(atomic_load(&r.done), 1);
    CHECK_EQ_INT(atomic_load(&typed), 1);
}

/* ---------------------------------------------------------------------------------
 * Release hooks: once, by dispose, bag and bus destroy
 * ------------------------------------------------------------------------------- */

static void test_release_once(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    counted by_token, by_bag, by_destroy;
    tu_rec_init(&by_token.rec);
    tu_rec_init(&by_bag.rec);
    tu_rec_init(&by_destroy.rec);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Rel", text_number_args, 2), QTBUS_OK);
    qtbus_token t;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Rel", NULL, QTBUS_CALLBACK(on_counted), &by_token, counted_release, &t),
                 QTBUS_OK);
    qtbus_bag bag;
    CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.bag = bag;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Rel", &o, QTBUS_CALLBACK(on_counted), &by_bag, counted_release, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Rel", NULL, QTBUS_CALLBACK(on_counted), &by_destroy, counted_release,
                                      NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Rel", NULL, "r", (int32_t)0), 3);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&by_token.rec.releases), 1);
    CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&by_bag.rec.releases), 1);
    CHECK_EQ_INT(atomic_load(&by_destroy.rec.releases), 0);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&by_destroy.rec.releases), 1);
    CHECK_EQ_INT(atomic_load(&by_token.rec.calls), 1);
    CHECK_EQ_INT(atomic_load(&by_bag.rec.calls), 1);
    CHECK_EQ_INT(atomic_load(&by_destroy.rec.calls), 1);
    CHECK_EQ_INT(atomic_load(&by_token.rec.releases), 1);
    CHECK_EQ_INT(atomic_load(&by_bag.rec.releases), 1);
}

/* ---------------------------------------------------------------------------------
 * Four threads: emit, connect and dispose at once; every delivery counted
 * ------------------------------------------------------------------------------- */

#define STRESS_THREADS 4
#define STRESS_EMITS 3000

typedef struct stress {
    qtbus_bus *bus;
    pthread_barrier_t start;
    atomic_llong sum;           /* of the numbers the fixed handler received */
    atomic_int fixed_calls;
    atomic_int bad_strings;
    atomic_int errors;
    atomic_int churn_calls;
    tu_rec churn_rec;
} stress;

static const qtbus_arg stress_args[] = { QTBUS_ARG_STRING, QTBUS_ARG_INT64, QTBUS_ARG_DOUBLE };

static void stress_fixed(const char *text, int64_t number, double half, void *userdata)
{
    stress *s = userdata;
    char expect[32];
    snprintf(expect, sizeof expect, "n%lld", (long long)number);
    if (strcmp(text, expect) != 0 || half != (double)number / 2) atomic_fetch_add(&s->bad_strings, 1);
    atomic_fetch_add(&s->sum, number);
    atomic_fetch_add(&s->fixed_calls, 1);
}

/* One per churned connection: a handler call after its release would read freed
 * memory (ASan, valgrind); a release while a call runs is counted. */
typedef struct churned {
    tu_rec rec;
    stress *s;
} churned;

static void stress_churn(const char *text, int64_t number, double half, void *userdata)
{
    (void)text;
    (void)number;
    (void)half;
    churned *c = userdata;
    tu_rec_handler(NULL, &c->rec);
    atomic_fetch_add(&c->s->churn_calls, 1);
}

static void stress_release(void *userdata)
{
    churned *c = userdata;
    tu_rec_release(&c->rec);
    if (atomic_load(&c->rec.release_while_running) != 0) atomic_fetch_add(&c->s->errors, 1);
    atomic_fetch_add(&c->s->churn_rec.releases, 1);
    free(c);
}

static void stress_thread(int index, void *ctx)
{
    stress *s = ctx;
    pthread_barrier_wait(&s->start);
    for (int i = 0; i < STRESS_EMITS; i++) {
        int64_t number = (int64_t)index * STRESS_EMITS + i;
        char text[32];
        snprintf(text, sizeof text, "n%lld", (long long)number);
        if (qtbus_signal_emit(s->bus, "Stress", NULL, text, number, (double)number / 2) < 1)
            atomic_fetch_add(&s->errors, 1);
        if (i % 16 == 0) {
            churned *c = malloc(sizeof *c);
            CHECK(c != NULL);
            tu_rec_init(&c->rec);
            c->s = s;
            qtbus_token t;
            if (qtbus_signal_connect(s->bus, "Stress", NULL, QTBUS_CALLBACK(stress_churn), c, stress_release, &t) !=
                    QTBUS_OK ||
                qtbus_token_dispose(t) != QTBUS_OK)
                atomic_fetch_add(&s->errors, 1);
        }
    }
}

static void test_stress(void)
{
    stress s;
    memset(&s, 0, sizeof s);
    tu_rec_init(&s.churn_rec);
    s.bus = qtbus_bus_create();
    CHECK(s.bus != NULL);
    pthread_barrier_init(&s.start, NULL, STRESS_THREADS);
    CHECK_EQ_INT(qtbus_signal_define(s.bus, "Stress", stress_args, 3), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(s.bus, "Stress", NULL, QTBUS_CALLBACK(stress_fixed), &s, NULL, NULL),
                 QTBUS_OK);
    tu_run_threads(STRESS_THREADS, stress_thread, &s);
    pthread_barrier_destroy(&s.start);
    long long n = (long long)STRESS_THREADS * STRESS_EMITS;
    CHECK_EQ_INT(atomic_load(&s.errors), 0);
    CHECK_EQ_INT(atomic_load(&s.bad_strings), 0);
    CHECK_EQ_INT(atomic_load(&s.fixed_calls), n);
    CHECK(atomic_load(&s.sum) == n * (n - 1) / 2);
    int connects = STRESS_THREADS * ((STRESS_EMITS + 15) / 16);
    CHECK_EQ_INT(atomic_load(&s.churn_rec.releases), connects);
    CHECK_EQ_INT(qtbus_bus_destroy(s.bus), QTBUS_OK);
}

/* Four threads define one type at once, two with one signature and two with another:
 * exactly one signature wins, so exactly two calls succeed. */
typedef struct define_race {
    qtbus_bus *bus;
    pthread_barrier_t start;
    atomic_int ok, einval, other;
} define_race;

static void definer(int index, void *ctx)
{
    define_race *r = ctx;
    pthread_barrier_wait(&r->start);
    int rc = index % 2 ? qtbus_signal_define(r->bus, "Race", text_number_args, 2)
                       : qtbus_signal_define(r->bus, "Race", numbers_args, 5);
    atomic_fetch_add(rc == QTBUS_OK ? &r->ok : rc == QTBUS_EINVAL ? &r->einval : &r->other, 1);
}

static void test_define_race(void)
{
    for (int round = 0; round < 50; round++) {
        define_race r;
        memset(&r, 0, sizeof r);
        r.bus = qtbus_bus_create();
        CHECK(r.bus != NULL);
        pthread_barrier_init(&r.start, NULL, 4);
        tu_run_threads(4, definer, &r);
        pthread_barrier_destroy(&r.start);
        CHECK_EQ_INT(atomic_load(&r.ok), 2);
        CHECK_EQ_INT(atomic_load(&r.einval), 2);
        CHECK_EQ_INT(atomic_load(&r.other), 0);
        CHECK_EQ_INT(qtbus_bus_destroy(r.bus), QTBUS_OK);
    }
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    test_numbers(bus);
    test_strings_and_pointers(bus);
    test_register_limits(bus);
    test_sixteen(bus);
    test_zero_args(bus);
    test_queued(bus);
    test_once(bus);
    test_sticky_replay(bus);
    test_reentrant(bus);
    test_ordinary_event();
    test_foreign_bytes(bus);
    test_bad_input(bus);
    test_request(bus);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    test_release_once();
    test_stress();
    test_define_race();
    printf("test_signals: ok\n");
    return 0;
}
