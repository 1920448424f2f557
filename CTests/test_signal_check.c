/* SPDX-License-Identifier: MIT */
/*
 * test_signal_check: qtbus_signal_check(), the one reader of typed-signal bytes that
 * C (qtbus_event_args, connected handlers), C++ (qtbus::signal's slots) and Swift
 * (signalArguments) share.
 *
 * Users rely on: a 1 only for bytes of exactly the signature asked about, and then every
 * string offset in them pointing at a NUL-terminated string inside them (any bytes are
 * safe to pass); the same answer as qtbus_event_args gives for the same bytes; a 0 that
 * reports nothing (qtbus_errmsg() unchanged).
 *
 * Compared over generated inputs: bytes the library packed for random signatures
 * (qtbus_signal_emitv, captured by a plain handler), each then truncated, extended, and
 * fuzzed (random bytes overwritten, offsets and counts bent to the edges), plus random
 * bytes behind a valid header.  Each input is copied into a buffer of exactly its size,
 * so that a read past it is an error under ASan and valgrind.  The reference here is
 * the rule as qtbus.h's "Typed signals" states it, written from the layout, not from
 * signals.c.
 */
#include "test_util.h"

#define SIGNATURES 64
#define MUTATIONS 120 /* per captured payload */
#define RANDOM_INPUTS 4000

static const qtbus_arg all_kinds[] = {QTBUS_ARG_INT32,  QTBUS_ARG_UINT32, QTBUS_ARG_INT64,  QTBUS_ARG_UINT64,
                                      QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING, QTBUS_ARG_POINTER};

/* ---------------------------------------------------------------------------------
 * The reference: qtbus.h's layout, read slowly
 * ------------------------------------------------------------------------------- */

static uint64_t slot_u64(const unsigned char *b, size_t at)
{
    uint64_t v;
    memcpy(&v, b + at, sizeof v);
    return v;
}

/* 1 when `b` (n bytes) are arguments of kinds[0..count): magic, version, the count,
 * the kinds, room for the slots; then the non-NULL strings in argument order at
 * strictly increasing offsets past the slots and inside the bytes, each one after the
 * first preceded by a NUL (its predecessor's end), and the bytes ending with a NUL. */
static int reference(const unsigned char *b, size_t n, const qtbus_arg *kinds, size_t count)
{
    if (count > QTBUS_SIGNAL_MAX_ARGS) return 0;
    for (size_t i = 0; i < count; i++)
        if (kinds[i] < QTBUS_ARG_INT32 || kinds[i] > QTBUS_ARG_POINTER) return 0;
    if (b == NULL || n < 8) return 0;
    if (b[0] != 'Q' || b[1] != 'T' || b[2] != 'S' || b[3] != 'G' || b[4] != QTBUS_SIGNAL_LAYOUT_VERSION) return 0;
    if (b[5] != count) return 0;
    size_t slots = 8 + (count + 7) / 8 * 8;
    if (n < slots + 8 * count) return 0;
    for (size_t i = 0; i < count; i++)
        if (b[8 + i] != (unsigned char)kinds[i]) return 0;
    uint64_t previous = 0;
    int strings = 0;
    for (size_t i = 0; i < count; i++) {
        if (kinds[i] != QTBUS_ARG_STRING) continue;
        uint64_t offset = slot_u64(b, slots + 8 * i);
        if (offset == 0) continue;
        if (offset < slots + 8 * count || offset >= n) return 0;
        if (strings > 0 && (offset <= previous || b[offset - 1] != 0)) return 0;
        previous = offset;
        strings++;
    }
    return strings == 0 || b[n - 1] == 0;
}

/* ---------------------------------------------------------------------------------
 * Inputs: what the library packs, captured
 * ------------------------------------------------------------------------------- */

typedef struct sample {
    unsigned char *bytes;
    size_t size;
    qtbus_arg kinds[QTBUS_SIGNAL_MAX_ARGS];
    size_t count;
} sample;

static sample samples[SIGNATURES];
static int capturing = -1;

static void capture(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    const void *data = qtbus_event_data(event, &size);
    sample *s = &samples[capturing];
    s->bytes = malloc(size);
    CHECK(s->bytes != NULL);
    memcpy(s->bytes, data, size);
    s->size = size;
}

static const char *const texts[] = {"", "a", "alice", "h\xc3\xa9llo", "a longer string of some forty bytes..."};

static void make_samples(qtbus_bus *bus, uint64_t *seed)
{
    for (int k = 0; k < SIGNATURES; k++) {
        sample *s = &samples[k];
        /* Every count from 0 to 16 appears; strings in about a third of the slots. */
        s->count = (size_t)k % (QTBUS_SIGNAL_MAX_ARGS + 1);
        qtbus_value values[QTBUS_SIGNAL_MAX_ARGS];
        for (size_t i = 0; i < s->count; i++) {
            s->kinds[i] = tu_rand(seed) % 3 == 0 ? QTBUS_ARG_STRING : all_kinds[tu_rand(seed) % 7];
            values[i].u64 = tu_rand(seed);
            if (s->kinds[i] == QTBUS_ARG_STRING)
                values[i].str = tu_rand(seed) % 5 == 0 ? NULL : texts[tu_rand(seed) % 5];
        }
        char type[32];
        snprintf(type, sizeof type, "Gen%d", k);
        CHECK_EQ_INT(qtbus_signal_define(bus, type, s->count ? s->kinds : NULL, s->count), QTBUS_OK);
        qtbus_token token;
        CHECK_EQ_INT(qtbus_subscribe(bus, type, NULL, capture, NULL, NULL, &token), QTBUS_OK);
        capturing = k;
        CHECK_EQ_INT(qtbus_signal_emitv(bus, type, NULL, 0, values, s->count), 1);
        CHECK(s->bytes != NULL);
        CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
    }
}

/* ---------------------------------------------------------------------------------
 * One comparison
 * ------------------------------------------------------------------------------- */

static atomic_int args_result;
static void read_args(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    qtbus_value values[QTBUS_SIGNAL_MAX_ARGS];
    atomic_store(&args_result, qtbus_event_args(event, values, QTBUS_SIGNAL_MAX_ARGS));
}

static long compared, accepted;

/* `b` (n bytes) against the signature `kinds`: qtbus_signal_check, the reference and
 * qtbus_event_args agree, and accepted strings end inside the bytes. */
static void compare(qtbus_bus *bus, const unsigned char *b, size_t n, const qtbus_arg *kinds, size_t count)
{
    /* Exactly n bytes, so that ASan and valgrind see a read past them. */
    unsigned char *copy = malloc(n ? n : 1);
    CHECK(copy != NULL);
    if (n) memcpy(copy, b, n);
    int got = qtbus_signal_check(n ? copy : NULL, n, count ? kinds : NULL, count);
    int want = reference(n ? copy : NULL, n, kinds, count);
    CHECK_MSG(got == want, "qtbus_signal_check says %d, the reference %d (%zu bytes, %zu kinds)", got, want, n, count);
    if (got) {
        accepted++;
        size_t slots = 8 + (count + 7) / 8 * 8;
        for (size_t i = 0; i < count; i++) {
            if (kinds[i] != QTBUS_ARG_STRING) continue;
            uint64_t offset = slot_u64(copy, slots + 8 * i);
            CHECK(offset == 0 || memchr(copy + offset, 0, n - offset) != NULL);
        }
    }
    /* qtbus_event_args reads the same bytes as a plain handler of a type without a
     * signature: it accepts them with these kinds exactly when the check does. */
    atomic_store(&args_result, -100);
    qtbus_event_desc d = tu_event("Raw", NULL);
    d.data = n ? copy : NULL;
    d.size = n;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    int args = atomic_load(&args_result);
    int same_kinds = n >= 8 + count && copy[5] == count;
    for (size_t i = 0; same_kinds && i < count; i++)
        same_kinds = copy[8 + i] == (unsigned char)kinds[i];
    CHECK_MSG((args >= 0 && same_kinds) == got, "qtbus_event_args says %d, qtbus_signal_check %d", args, got);
    free(copy);
    compared++;
}

/* ---------------------------------------------------------------------------------
 * The inputs
 * ------------------------------------------------------------------------------- */

/* A payload bent at random: truncated, extended, bytes overwritten, a slot given an
 * offset at an edge, the count or a kind changed. */
static size_t mutate(const sample *s, unsigned char *out, size_t room, uint64_t *seed)
{
    size_t n = s->size;
    memcpy(out, s->bytes, n);
    int edits = 1 + (int)(tu_rand(seed) % 3);
    for (int e = 0; e < edits; e++) {
        size_t slots = 8 + (s->count + 7) / 8 * 8;
        switch (tu_rand(seed) % 7) {
        case 0: /* truncated */ n = n ? (size_t)(tu_rand(seed) % n) : 0; break;
        case 1: /* extended with random bytes or NULs */
            while (n < room && tu_rand(seed) % 8)
                out[n++] = tu_rand(seed) % 2 ? 0 : (unsigned char)tu_rand(seed);
            break;
        case 2: /* a random byte overwritten */
            if (n) out[tu_rand(seed) % n] = (unsigned char)tu_rand(seed);
            break;
        case 3: /* a NUL taken away or added */
            if (n) {
                size_t at = (size_t)(tu_rand(seed) % n);
                out[at] = out[at] ? 0 : 0x41;
            }
            break;
        case 4: /* a slot's offset at an edge: the slots' end, the size, one either side */
            if (s->count && n >= slots + 8 * s->count) {
                uint64_t edges[] = {0,     1,          slots + 8 * s->count - 1,         slots + 8 * s->count, n - 1, n,
                                    n + 1, UINT64_MAX, (uint64_t)tu_rand(seed) % (n + 8)};
                uint64_t v = edges[tu_rand(seed) % (sizeof edges / sizeof edges[0])];
                memcpy(out + slots + 8 * (tu_rand(seed) % s->count), &v, 8);
            }
            break;
        case 5: /* the count changed */
            if (n > 5) out[5] = (unsigned char)(tu_rand(seed) % 2 ? out[5] + 1u : tu_rand(seed) % 20);
            break;
        default: /* a kind changed */
            if (s->count && n > 8 + s->count) out[8 + tu_rand(seed) % s->count] = (unsigned char)(tu_rand(seed) % 9);
            break;
        }
    }
    return n;
}

static void test_generated(qtbus_bus *bus)
{
    uint64_t seed = 0x51c0ffee;
    make_samples(bus, &seed);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Raw", NULL, read_args, NULL, NULL, NULL), QTBUS_OK);
    unsigned char buffer[2048];
    for (int k = 0; k < SIGNATURES; k++) {
        const sample *s = &samples[k];
        CHECK(s->size + 64 <= sizeof buffer);
        /* As packed: its own signature says 1, every other one 0. */
        compare(bus, s->bytes, s->size, s->kinds, s->count);
        CHECK_EQ_INT(qtbus_signal_check(s->bytes, s->size, s->count ? s->kinds : NULL, s->count), 1);
        const sample *other = &samples[(k + 1) % SIGNATURES];
        compare(bus, s->bytes, s->size, other->kinds, other->count);
        for (int m = 0; m < MUTATIONS; m++) {
            size_t n = mutate(s, buffer, s->size + 64, &seed);
            compare(bus, buffer, n, s->kinds, s->count);
        }
    }
    /* Random bytes behind a well-formed head, for random signatures. */
    for (int r = 0; r < RANDOM_INPUTS; r++) {
        qtbus_arg kinds[QTBUS_SIGNAL_MAX_ARGS];
        size_t count = (size_t)(tu_rand(&seed) % 5);
        for (size_t i = 0; i < count; i++)
            kinds[i] = tu_rand(&seed) % 2 ? QTBUS_ARG_STRING : all_kinds[tu_rand(&seed) % 7];
        size_t slots = 8 + (count + 7) / 8 * 8;
        size_t n = slots + 8 * count + (size_t)(tu_rand(&seed) % 24);
        for (size_t i = 0; i < n; i++)
            buffer[i] = tu_rand(&seed) % 3 ? (unsigned char)tu_rand(&seed) : 0;
        memcpy(buffer, "QTSG", 4);
        buffer[4] = QTBUS_SIGNAL_LAYOUT_VERSION;
        buffer[5] = (unsigned char)count;
        for (size_t i = 0; i < count; i++) {
            buffer[8 + i] = (unsigned char)kinds[i];
            if (kinds[i] == QTBUS_ARG_STRING) {
                uint64_t offset =
                    tu_rand(&seed) % 4 ? slots + 8 * count + tu_rand(&seed) % (n - slots - 8 * count + 2) : 0;
                memcpy(buffer + slots + 8 * i, &offset, 8);
            }
        }
        compare(bus, buffer, n, kinds, count);
    }
    CHECK(compared >= SIGNATURES * (MUTATIONS + 2) + RANDOM_INPUTS);
    CHECK(accepted > compared / 20); /* the inputs reach the accepting side too */
    printf("test_signal_check: %ld inputs compared, %ld accepted\n", compared, accepted);
    for (int k = 0; k < SIGNATURES; k++)
        free(samples[k].bytes);
}

/* ---------------------------------------------------------------------------------
 * The edges of the call itself
 * ------------------------------------------------------------------------------- */

static void test_arguments(void)
{
    static const qtbus_arg text_number[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32};
    static const qtbus_arg unknown[] = {QTBUS_ARG_STRING, (qtbus_arg)8};
    unsigned char b[40];
    memset(b, 0, sizeof b);
    memcpy(b, "QTSG", 4);
    b[4] = QTBUS_SIGNAL_LAYOUT_VERSION;
    b[5] = 2;
    b[8] = QTBUS_ARG_STRING;
    b[9] = QTBUS_ARG_INT32;
    uint64_t offset = 32;
    memcpy(b + 16, &offset, 8);
    memcpy(b + 32, "abcdefg", 8);
    CHECK_EQ_INT(qtbus_signal_check(b, sizeof b, text_number, 2), 1);

    /* A 0 is an answer: the reason a failed call left is still there. */
    CHECK_EQ_INT(qtbus_bus_destroy(NULL), QTBUS_EINVAL);
    char before[256];
    snprintf(before, sizeof before, "%s", qtbus_errmsg());
    CHECK(before[0] != 0);
    CHECK_EQ_INT(qtbus_signal_check(NULL, 0, NULL, 0), 0);
    CHECK_EQ_INT(qtbus_signal_check(b, sizeof b, NULL, 2), 0);        /* kinds NULL with a count */
    CHECK_EQ_INT(qtbus_signal_check(b, sizeof b, text_number, 1), 0); /* another count */
    CHECK_EQ_INT(qtbus_signal_check(b, sizeof b, unknown, 2), 0);     /* an unknown kind */
    CHECK_EQ_INT(qtbus_signal_check(b, sizeof b, text_number, QTBUS_SIGNAL_MAX_ARGS + 1), 0);
    CHECK_EQ_INT(qtbus_signal_check(b, sizeof b - 1, text_number, 2), 0); /* the last NUL cut */
    CHECK_EQ_STR(qtbus_errmsg(), before);

    /* No arguments: the head alone, and NULL kinds. */
    unsigned char empty[8] = {'Q', 'T', 'S', 'G', QTBUS_SIGNAL_LAYOUT_VERSION, 0, 0, 0};
    CHECK_EQ_INT(qtbus_signal_check(empty, sizeof empty, NULL, 0), 1);
    CHECK_EQ_INT(qtbus_signal_check(empty, sizeof empty - 1, NULL, 0), 0);
}

int main(void)
{
    test_arguments();
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    test_generated(bus);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_signal_check: ok\n");
    return 0;
}
