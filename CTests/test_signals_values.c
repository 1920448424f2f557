/* SPDX-License-Identifier: MIT */
/*
 * test_signals_values: a connected C function receives exactly the values emitted
 * (qtbus_signal_emit and emitv), of every kind and at every boundary, whether the call
 * went through registers or the stack (signatures that fit the argument registers are
 * called directly, the others through libffi: both are exercised with every kind), and
 * plain handlers read the same values with qtbus_event_args; no arguments too.
 *
 * Moved verbatim from test_signals.c, which tested every behaviour of typed signals in
 * one file; what the files share is in test_signals.h.
 */
#include "test_signals.h"

#include <math.h>

/* ---------------------------------------------------------------------------------
 * What the handlers saw
 * ------------------------------------------------------------------------------- */

static qtbus_value seen[QTBUS_SIGNAL_MAX_ARGS];
static char seen_text[QTBUS_SIGNAL_MAX_ARGS][1200]; /* copies of the strings */
static int seen_null[QTBUS_SIGNAL_MAX_ARGS];
static void *seen_userdata;

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
static const qtbus_arg mixed_args[] = {QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING, QTBUS_ARG_POINTER, QTBUS_ARG_STRING};
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
static const qtbus_arg all_args[] = {QTBUS_ARG_INT32,  QTBUS_ARG_UINT32, QTBUS_ARG_INT64,  QTBUS_ARG_UINT64,
                                     QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING, QTBUS_ARG_POINTER};
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
static const qtbus_arg nine_doubles_args[] = {QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE,
                                              QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE,
                                              QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE};
static void on_nine_doubles(double a, double b, double c, double d, double e, double f, double g, double h, double i,
                            void *userdata)
{
    double v[9] = {a, b, c, d, e, f, g, h, i};
    for (int k = 0; k < 9; k++)
        seen[k].f64 = v[k];
    seen_userdata = userdata;
    atomic_fetch_add(&calls, 1);
}

/* 8 doubles and 5 integers interleaved: every argument register of both classes. */
static const qtbus_arg full_registers_args[] = {QTBUS_ARG_DOUBLE, QTBUS_ARG_INT32,   QTBUS_ARG_DOUBLE, QTBUS_ARG_DOUBLE,
                                                QTBUS_ARG_UINT64, QTBUS_ARG_DOUBLE,  QTBUS_ARG_STRING, QTBUS_ARG_DOUBLE,
                                                QTBUS_ARG_DOUBLE, QTBUS_ARG_POINTER, QTBUS_ARG_DOUBLE, QTBUS_ARG_INT64,
                                                QTBUS_ARG_DOUBLE};
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
static const qtbus_arg sixteen_args[] = {QTBUS_ARG_INT32,  QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING,  QTBUS_ARG_UINT64,
                                         QTBUS_ARG_DOUBLE, QTBUS_ARG_UINT32, QTBUS_ARG_POINTER, QTBUS_ARG_INT64,
                                         QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING, QTBUS_ARG_INT32,   QTBUS_ARG_DOUBLE,
                                         QTBUS_ARG_UINT64, QTBUS_ARG_STRING, QTBUS_ARG_DOUBLE,  QTBUS_ARG_INT32};
static void on_sixteen(int32_t a0, double a1, const char *a2, uint64_t a3, double a4, uint32_t a5, void *a6, int64_t a7,
                       double a8, const char *a9, int32_t a10, double a11, uint64_t a12, const char *a13, double a14,
                       int32_t a15, void *userdata)
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

/* ---------------------------------------------------------------------------------
 * Every kind, every boundary, both calling paths, emit and emitv
 * ------------------------------------------------------------------------------- */

static void test_numbers(qtbus_bus *bus)
{
    int ud;
    CHECK_EQ_INT(qtbus_signal_define(bus, "Numbers", numbers_args, 5), QTBUS_OK);
    qtbus_token token;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Numbers", NULL, QTBUS_CALLBACK(on_numbers), &ud, NULL, &token), QTBUS_OK);

    struct {
        int32_t a;
        uint32_t b;
        int64_t c;
        uint64_t d;
        double e;
    } cases[] = {
        {INT32_MIN, 0, INT64_MIN, 0, -0.0},
        {INT32_MAX, UINT32_MAX, INT64_MAX, UINT64_MAX, NAN},
        {-1, 1, -1, 1, INFINITY},
        {0, 0x80000000u, 0, 0x8000000000000000ull, -INFINITY},
        {7, 42, 1234567890123ll, 9876543210987ull, 5e-324},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        reset_seen();
        CHECK_EQ_INT(
            qtbus_signal_emit(bus, "Numbers", NULL, cases[i].a, cases[i].b, cases[i].c, cases[i].d, cases[i].e), 1);
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
    const char *texts[] = {"", NULL, "h\xc3\xa9llo w\xc3\xb6rld", big, "a"};
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
        CHECK_EQ_INT(qtbus_signal_emit(bus, "All", NULL, INT32_MIN, UINT32_MAX, INT64_MIN, UINT64_MAX, -0.0, texts[i],
                                       (void *)NULL),
                     1);
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
    CHECK_EQ_INT(qtbus_signal_emit(bus, "NineDoubles", NULL, 1.5, -2.5, 3.25, NAN, -0.0, 6e300, -7e-300, 8.0, 9.75), 1);
    double expect[9] = {1.5, -2.5, 3.25, NAN, -0.0, 6e300, -7e-300, 8.0, 9.75};
    for (int k = 0; k < 9; k++)
        CHECK_MSG(same_double(seen[k].f64, expect[k]), "double %d", k);
    CHECK(seen_userdata == &calls);

    CHECK_EQ_INT(qtbus_signal_define(bus, "FullRegisters", full_registers_args, 13), QTBUS_OK);
    CHECK_EQ_INT(
        qtbus_signal_connect(bus, "FullRegisters", NULL, QTBUS_CALLBACK(on_full_registers), &calls, NULL, NULL),
        QTBUS_OK);
    reset_seen();
    CHECK_EQ_INT(qtbus_signal_emit(bus, "FullRegisters", NULL, 0.5, INT32_MIN, 1.5, 2.5, UINT64_MAX, 3.5, "reg", 4.5,
                                   5.5, (void *)&seen, 6.5, INT64_MIN, 7.5),
                 1);
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
    const char *s[3] = {plain_seen[2].str, plain_seen[9].str, plain_seen[13].str};
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
                                   (void *)&seen, INT64_MIN, NAN, (const char *)NULL, INT32_MAX, 1e308, (uint64_t)0, "",
                                   -3.0, (int32_t)-16),
                 2);
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
                                   (void *)&seen, INT64_MIN, NAN, (const char *)NULL, INT32_MAX, 1e308, (uint64_t)0, "",
                                   -3.0, (int32_t)-16),
                 1);
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

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    test_numbers(bus);
    test_strings_and_pointers(bus);
    test_register_limits(bus);
    test_sixteen(bus);
    test_zero_args(bus);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_signals_values: ok\n");
    return 0;
}
