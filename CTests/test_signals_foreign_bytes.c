/* SPDX-License-Identifier: MIT */
/*
 * test_signals_foreign_bytes: bytes that are not a signal's (a plain dispatch of the
 * type, hand-made, truncated, with offsets anywhere) are never read out of bounds:
 * connected handlers skip them, qtbus_event_args refuses them.
 *
 * Moved verbatim from test_signals.c, which tested every behaviour of typed signals in
 * one file; what the files share is in test_signals.h.
 */
#include "test_signals.h"

/* ---------------------------------------------------------------------------------
 * qtbus_event_args on bytes that are not a signal's
 * ------------------------------------------------------------------------------- */

static atomic_int args_result;
static qtbus_value args_values[QTBUS_SIGNAL_MAX_ARGS];
static char args_first_text[32]; /* the first argument's string, copied during the call */
static void plain_reader(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    for (int i = 0; i < QTBUS_SIGNAL_MAX_ARGS; i++)
        args_values[i].u64 = 0xA5A5A5A5A5A5A5A5ull;
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
    struct {
        const char *what;
        unsigned char bytes[64];
        size_t size;
    } bad[16];
    int count = 0;
#define BAD(label, len) (bad[count].what = (label), bad[count].size = (len), bad[count++].bytes)
    memcpy(BAD("plain text", 5), "hello", 5);
    BAD("empty", 0);
    memcpy(BAD("magic only", 4), "QTSG", 4);
    {
        unsigned char *p = BAD("header, 7 bytes", 7);
        put_header(p, 0);
    }
    {
        unsigned char *p = BAD("wrong version", 8);
        put_header(p, 0);
        p[4] = 99;
    }
    {
        unsigned char *p = BAD("17 arguments", 64);
        put_header(p, 17);
    }
    {
        unsigned char *p = BAD("slots cut off", 20);
        put_header(p, 2);
        p[8] = QTBUS_ARG_INT32;
        p[9] = QTBUS_ARG_INT32;
    }
    {
        unsigned char *p = BAD("kind 0", 24);
        put_header(p, 1);
        p[8] = 0;
    }
    {
        unsigned char *p = BAD("kind 8", 24);
        put_header(p, 1);
        p[8] = 8;
    }
    /* A string whose offset is past the end, inside the slots, or whose bytes have no NUL. */
    {
        unsigned char *p = BAD("offset past end", 26);
        put_header(p, 1);
        p[8] = QTBUS_ARG_STRING;
        uint64_t o = 1000;
        memcpy(p + 16, &o, 8);
    }
    {
        unsigned char *p = BAD("offset into slots", 26);
        put_header(p, 1);
        p[8] = QTBUS_ARG_STRING;
        uint64_t o = 17;
        memcpy(p + 16, &o, 8);
        p[25] = 0;
    }
    {
        unsigned char *p = BAD("no NUL", 28);
        put_header(p, 1);
        p[8] = QTBUS_ARG_STRING;
        uint64_t o = 24;
        memcpy(p + 16, &o, 8);
        memcpy(p + 24, "abcd", 4);
    }
    {
        unsigned char *p = BAD("offset huge", 26);
        put_header(p, 1);
        p[8] = QTBUS_ARG_STRING;
        uint64_t o = UINT64_MAX;
        memcpy(p + 16, &o, 8);
    }
    {
        unsigned char *p = BAD("strings out of order", 40);
        put_header(p, 2);
        p[8] = QTBUS_ARG_STRING;
        p[9] = QTBUS_ARG_STRING;
        uint64_t o1 = 36, o2 = 32;
        memcpy(p + 16, &o1, 8);
        memcpy(p + 24, &o2, 8);
        memcpy(p + 32, "abc", 4);
        memcpy(p + 36, "xyz", 4);
    }
    {
        unsigned char *p = BAD("first string without NUL", 40);
        put_header(p, 2);
        p[8] = QTBUS_ARG_STRING;
        p[9] = QTBUS_ARG_STRING;
        uint64_t o1 = 32, o2 = 36;
        memcpy(p + 16, &o1, 8);
        memcpy(p + 24, &o2, 8);
        memcpy(p + 32, "abcd", 4);
        memcpy(p + 36, "xyz", 4);
    }
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

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    test_foreign_bytes(bus);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_signals_foreign_bytes: ok\n");
    return 0;
}
