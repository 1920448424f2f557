/* SPDX-License-Identifier: MIT */
/*
 * Typed signals (qtbus.h, "Typed signals"), the C half: signatures, the packed
 * arguments of a signal event, and the call of a typed handler.
 *
 * A signal is an ordinary event whose bytes hold its arguments, so an emit packs them
 * once and then is a dispatch, and a connect is a subscription of a handler that
 * unpacks the event's bytes and calls the user's function with them.  The C entry
 * points are the engine's (Boundary/CSignals.swift), as every other one is; the engine
 * keeps each type's signature (Features/Signals.swift: set once, read without a lock,
 * freed with its bus) and calls in here for what needs C: libffi, and reading a
 * va_list.  qtbus_signal_emit itself is here, since Swift cannot define a variadic
 * function: it hands its va_list to the engine in one call.  So is qtbus_signal_check,
 * beside the one reader of signal bytes it calls (unpack): a query of bytes with no bus
 * and nothing to report, which C++'s slots call for every delivery they did not pack
 * themselves, so it skips the entry-point frame every other function needs.
 *
 * How a typed handler is called.  libffi calls a function of any signature, but
 * ffi_call classifies the arguments on every call, at many times a plain handler's
 * whole delivery (docs/perf-notes.md, "Typed handlers without ffi_call").  Where the C
 * calling convention gives every integer and pointer argument its own general register
 * and every double its own vector register, in order within each class (x86-64 System
 * V, AArch64 AAPCS64 on Linux),
 * calling through `void (*)(uintptr_t x N, void *userdata, double x 8)` (N integer-class
 * arguments; the doubles only when there are any) puts each argument of a signature
 * that fits in registers exactly where the handler reads it: such signatures get one
 * of those direct callers when they are made (choose_caller).  The others (more
 * arguments than registers, other targets) are called through the ffi_cif prepared then.
 *
 * The per-emit work is packing the arguments once and preparing the call once
 * (emit_frame); each handler the emit reaches synchronously then costs one indirect
 * call more than a plain handler.
 */
#include "qtbus_shims.h"

#include <ffi.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__linux__)
#define DIRECT_WORDS 6 /* rdi rsi rdx rcx r8 r9 */
#elif defined(__aarch64__) && defined(__linux__)
#define DIRECT_WORDS 8 /* x0-x7 */
#endif
#define DIRECT_DOUBLES 8 /* xmm0-7, v0-7 */

struct prepared;

struct qtshim_signature {
    uint32_t refs; /* the type entry's, plus one per connection */
    uint8_t count;
    uint8_t kinds[QTBUS_SIGNAL_MAX_ARGS];
    /* How its handlers are called (choose_caller). */
    void (*caller)(const struct qtshim_signature *, void (*)(void), const struct prepared *, void *);
    /* The first bytes of every event it packs: magic, version, count, kinds (padded). */
    uint8_t head[8 + QTBUS_SIGNAL_MAX_ARGS];
    uint8_t head_size;
    ffi_type *types[QTBUS_SIGNAL_MAX_ARGS + 1]; /* + userdata */
    ffi_cif cif;
};

static bool known_kind(unsigned kind) { return kind >= QTBUS_ARG_INT32 && kind <= QTBUS_ARG_POINTER; }

static ffi_type *ffi_type_of(uint8_t kind)
{
    switch (kind) {
    case QTBUS_ARG_INT32: return &ffi_type_sint32;
    case QTBUS_ARG_UINT32: return &ffi_type_uint32;
    case QTBUS_ARG_INT64: return &ffi_type_sint64;
    case QTBUS_ARG_UINT64: return &ffi_type_uint64;
    case QTBUS_ARG_DOUBLE: return &ffi_type_double;
    default: return &ffi_type_pointer;
    }
}

static void signature_retain(struct qtshim_signature *s) { __atomic_fetch_add(&s->refs, 1, __ATOMIC_RELAXED); }

void qtshim_signature_release(void *signature)
{
    struct qtshim_signature *s = signature;
    if (__atomic_fetch_sub(&s->refs, 1, __ATOMIC_ACQ_REL) == 1) free(s);
}

bool qtshim_signature_equal(const void *a, const void *b)
{
    const struct qtshim_signature *x = a, *y = b;
    return x->count == y->count && memcmp(x->kinds, y->kinds, x->count) == 0;
}

size_t qtshim_signature_kinds(const void *signature, uint8_t *kinds_out)
{
    const struct qtshim_signature *s = signature;
    memcpy(kinds_out, s->kinds, s->count);
    return s->count;
}

/* ---- the packed arguments (layout in qtbus.h) ---- */

#define MAGIC "QTSG"
#define HEAD 8u
/* Emits whose packed arguments fit here allocate nothing. */
#define STACK_BYTES 512u

static size_t pad8(size_t n) { return (n + 7u) & ~(size_t)7u; }
static size_t slots_at(size_t count) { return HEAD + pad8(count); }

/* Bytes needed for `values` of signature `s`, with each string's length (NUL
 * included) in lengths[]; 0 when they overflow. */
static size_t packed_size(const struct qtshim_signature *s, const qtbus_value *values, size_t *lengths)
{
    size_t size = s->head_size + 8u * s->count;
    for (size_t i = 0; i < s->count; i++) {
        if (s->kinds[i] != QTBUS_ARG_STRING || values[i].str == NULL) continue;
        size_t n = strlen(values[i].str) + 1u;
        if (n > SIZE_MAX - size) return 0;
        lengths[i] = n;
        size += n;
    }
    return size;
}

/* Writes the bytes, and leaves in packed[] the values a handler receives: strings
 * pointing into `out`. */
static void pack(unsigned char *out, const struct qtshim_signature *s, const qtbus_value *values, const size_t *lengths,
                 qtbus_value *packed)
{
    memcpy(out, s->head, s->head_size);
    unsigned char *slots = out + s->head_size;
    size_t next = s->head_size + 8u * s->count;
    for (size_t i = 0; i < s->count; i++) {
        qtbus_value slot;
        slot.u64 = 0;
        switch (s->kinds[i]) {
        case QTBUS_ARG_INT32: slot.i32 = values[i].i32; break;
        case QTBUS_ARG_UINT32: slot.u32 = values[i].u32; break;
        case QTBUS_ARG_INT64: slot.i64 = values[i].i64; break;
        case QTBUS_ARG_UINT64: slot.u64 = values[i].u64; break;
        case QTBUS_ARG_DOUBLE: slot.f64 = values[i].f64; break;
        case QTBUS_ARG_POINTER: slot.ptr = values[i].ptr; break;
        default: /* a string: its offset in the slot */
            packed[i].str = NULL;
            if (values[i].str) {
                memcpy(out + next, values[i].str, lengths[i]);
                packed[i].str = (const char *)out + next;
                slot.u64 = next;
                next += lengths[i];
            }
            memcpy(slots + 8u * i, &slot, 8);
            continue;
        }
        packed[i] = slot;
        memcpy(slots + 8u * i, &slot, 8);
    }
}

/* Reads packed arguments into values[0..count) (when `values` is not NULL) and returns
 * count, or -1 when `data` is not a well-formed signal payload, or, with an expected
 * signature of `expect_count` kinds (`expect`, a signature's bytes, or `expect_args`, a
 * caller's qtbus_arg values), not one of it.  Everything is bounds-checked, since any
 * dispatch of the type can carry any bytes; read with memcpy, since a plain dispatch's
 * bytes need not be aligned.
 * The one reader of untrusted signal bytes: qtbus_event_args, C's connected handlers,
 * qtbus_signal_check (C++'s slots, qtbus_signal.hpp) and Swift's signalArguments
 * (QTSignalArgument.swift, through qtshim_signal_unpack) all come here.  Inlined into
 * each of them, so that the arguments each passes as constants (no values, one kind of
 * expectation) cost nothing: C++'s slots used to inline a reader of their own. */
static inline __attribute__((always_inline)) int unpack(const unsigned char *data, size_t size, const uint8_t *expect,
                                                        const qtbus_arg *expect_args, size_t expect_count,
                                                        qtbus_value values[QTBUS_SIGNAL_MAX_ARGS])
{
    if (data == NULL || size < HEAD || memcmp(data, MAGIC, 4) != 0 || data[4] != QTBUS_SIGNAL_LAYOUT_VERSION) return -1;
    size_t count = data[5];
    if (count > QTBUS_SIGNAL_MAX_ARGS || size < slots_at(count) + 8u * count) return -1;
    const unsigned char *kinds = data + HEAD;
    if (expect) {
        if (expect_count != count || memcmp(expect, kinds, count) != 0) return -1;
    } else if (expect_args) {
        if (expect_count != count) return -1;
        /* A caller's kinds may be any int: an unknown one matches no bytes. */
        for (size_t i = 0; i < count; i++)
            if (kinds[i] != (unsigned)expect_args[i] || !known_kind(kinds[i])) return -1;
    } else {
        for (size_t i = 0; i < count; i++)
            if (!known_kind(kinds[i])) return -1;
    }
    const unsigned char *slots = data + slots_at(count);
    /* Strings must follow one another after the slots, each ending with a NUL before
     * the next begins (or the bytes end): then every one is within the bytes. */
    size_t floor = slots_at(count) + 8u * count;
    int last_string = -1;
    for (size_t i = 0; i < count; i++) {
        if (values) memcpy(&values[i], slots + 8u * i, 8);
        if (kinds[i] != QTBUS_ARG_STRING) continue;
        uint64_t offset;
        memcpy(&offset, slots + 8u * i, sizeof offset);
        if (offset == 0) {
            if (values) values[i].str = NULL;
            continue;
        }
        if (offset < floor || offset >= size) return -1;
        if (last_string >= 0 && data[offset - 1] != 0) return -1;
        if (values) values[i].str = (const char *)data + offset;
        floor = (size_t)offset + 1u;
        last_string = (int)i;
    }
    if (last_string >= 0 && data[size - 1] != 0) return -1;
    return (int)count;
}

/* ---- calling a typed handler ---- */

/* A call made ready from a signature's values: once per emit for the handlers it reaches
 * synchronously (see emit_frame), once per delivery otherwise. */
struct prepared {
    qtbus_value values[QTBUS_SIGNAL_MAX_ARGS]; /* libffi's avalues point here */
#ifdef DIRECT_WORDS
    uintptr_t words[DIRECT_WORDS - 1]; /* the integer-class arguments, in order */
    double doubles[DIRECT_DOUBLES];    /* the doubles, in order, then zeros */
#endif
};

/* How a signature's handlers are called (chosen when it is made). */
typedef void (*caller_fn)(const struct qtshim_signature *s, void (*fn)(void), const struct prepared *p, void *userdata);

static void call_ffi(const struct qtshim_signature *s, void (*fn)(void), const struct prepared *p, void *userdata);

#ifdef DIRECT_WORDS
/* Direct calls: the handler's real type differs from the one it is called through on
 * purpose (see the top of the file); clang's -fsanitize=function would say so. */
#if defined(__clang__)
#define DIRECT __attribute__((no_sanitize("function"))) static void
#else
#define DIRECT static void
#endif
#define DIRECT_ARGS const struct qtshim_signature *s, void (*fn)(void), const struct prepared *p, void *ud
#define W(i) p->words[i]
#define DT double, double, double, double, double, double, double, double
#define D8                                                                                                             \
    p->doubles[0], p->doubles[1], p->doubles[2], p->doubles[3], p->doubles[4], p->doubles[5], p->doubles[6],           \
        p->doubles[7]
typedef uintptr_t U;
DIRECT direct_0(DIRECT_ARGS)
{
    (void)s;
    (void)p;
    ((void (*)(void *))fn)(ud);
}
DIRECT direct_1(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, void *))fn)(W(0), ud);
}
DIRECT direct_2(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, void *))fn)(W(0), W(1), ud);
}
DIRECT direct_3(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, U, void *))fn)(W(0), W(1), W(2), ud);
}
DIRECT direct_4(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, U, U, void *))fn)(W(0), W(1), W(2), W(3), ud);
}
DIRECT direct_5(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, U, U, U, void *))fn)(W(0), W(1), W(2), W(3), W(4), ud);
}
DIRECT direct_0d(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(void *, DT))fn)(ud, D8);
}
DIRECT direct_1d(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, void *, DT))fn)(W(0), ud, D8);
}
DIRECT direct_2d(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, void *, DT))fn)(W(0), W(1), ud, D8);
}
DIRECT direct_3d(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, U, void *, DT))fn)(W(0), W(1), W(2), ud, D8);
}
DIRECT direct_4d(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, U, U, void *, DT))fn)(W(0), W(1), W(2), W(3), ud, D8);
}
DIRECT direct_5d(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, U, U, U, void *, DT))fn)(W(0), W(1), W(2), W(3), W(4), ud, D8);
}
#if DIRECT_WORDS == 8
DIRECT direct_6(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, U, U, U, U, void *))fn)(W(0), W(1), W(2), W(3), W(4), W(5), ud);
}
DIRECT direct_7(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, U, U, U, U, U, void *))fn)(W(0), W(1), W(2), W(3), W(4), W(5), W(6), ud);
}
DIRECT direct_6d(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, U, U, U, U, void *, DT))fn)(W(0), W(1), W(2), W(3), W(4), W(5), ud, D8);
}
DIRECT direct_7d(DIRECT_ARGS)
{
    (void)s;
    ((void (*)(U, U, U, U, U, U, U, void *, DT))fn)(W(0), W(1), W(2), W(3), W(4), W(5), W(6), ud, D8);
}
#endif
/* By the number of integer-class arguments, without and with doubles. */
static const caller_fn direct_callers[2][DIRECT_WORDS] = {
    {
        direct_0,
        direct_1,
        direct_2,
        direct_3,
        direct_4,
        direct_5,
#if DIRECT_WORDS == 8
        direct_6,
        direct_7,
#endif
    },
    {
        direct_0d,
        direct_1d,
        direct_2d,
        direct_3d,
        direct_4d,
        direct_5d,
#if DIRECT_WORDS == 8
        direct_6d,
        direct_7d,
#endif
    },
};
#endif

/* The caller for `kinds`: direct when every argument and the userdata have a register of
 * their class, else libffi. */
static caller_fn choose_caller(const uint8_t *kinds, size_t count)
{
#ifdef DIRECT_WORDS
    size_t words = 0, doubles = 0;
    for (size_t i = 0; i < count; i++) {
        if (kinds[i] == QTBUS_ARG_DOUBLE)
            doubles++;
        else
            words++;
    }
    if (words + 1 <= DIRECT_WORDS && doubles <= DIRECT_DOUBLES) return direct_callers[doubles > 0][words];
#else
    (void)kinds;
    (void)count;
#endif
    return call_ffi;
}

static void call_ffi(const struct qtshim_signature *s, void (*fn)(void), const struct prepared *p, void *userdata)
{
    void *avalues[QTBUS_SIGNAL_MAX_ARGS + 1];
    /* Every member of a qtbus_value starts at its first byte: &values[i] is the argument
     * whatever its kind.  libffi only reads through avalues. */
    for (size_t i = 0; i < s->count; i++)
        avalues[i] = (void *)&p->values[i];
    avalues[s->count] = &userdata;
    ffi_call((ffi_cif *)&s->cif, fn, NULL, avalues);
}

static void prepare(const struct qtshim_signature *s, const qtbus_value *v, struct prepared *p)
{
    if (s->caller == call_ffi) {
        memcpy(p->values, v, s->count * sizeof *v);
        return;
    }
#ifdef DIRECT_WORDS
    size_t nw = 0, nd = 0;
    for (size_t i = 0; i < s->count; i++) {
        switch (s->kinds[i]) {
        /* A 32-bit argument's register is widened as the caller of a real prototype
         * would; the callee reads its low half either way. */
        case QTBUS_ARG_INT32: p->words[nw++] = (uintptr_t)(intptr_t)v[i].i32; break;
        case QTBUS_ARG_UINT32: p->words[nw++] = (uintptr_t)v[i].u32; break;
        case QTBUS_ARG_INT64: p->words[nw++] = (uintptr_t)v[i].i64; break;
        case QTBUS_ARG_UINT64: p->words[nw++] = (uintptr_t)v[i].u64; break;
        case QTBUS_ARG_DOUBLE: p->doubles[nd++] = v[i].f64; break;
        case QTBUS_ARG_STRING: p->words[nw++] = (uintptr_t)v[i].str; break;
        default: p->words[nw++] = (uintptr_t)v[i].ptr; break;
        }
    }
    /* The doubles callers pass all eight registers. */
    if (nd > 0)
        while (nd < DIRECT_DOUBLES)
            p->doubles[nd++] = 0;
#endif
}

/* The emit running on this thread (innermost), whose bytes its synchronous handlers
 * receive: they use its prepared call instead of unpacking the bytes each.  Events
 * whose bytes are anything else (a queued copy, a plain dispatch, another thread's
 * emit) are unpacked and checked.  It lives in the engine's frame (QTSHIM_EMIT_SIZE
 * bytes), which the emit's dispatch runs in.
 * qtbus_signal.hpp keeps a twin (detail::emit_frame) for C++'s emits, which are packed
 * at compile time and dispatched with qtbus_dispatch_id, never through here, and whose
 * slots want the bytes, not a prepared libffi call: neither frame can serve the other's
 * handlers.  The rule both keep: skip the check only for the very bytes (address and
 * size) of the innermost emit on this thread, of the handler's own signature; every
 * other delivery goes through unpack.  Change one, change the other. */
struct emit_frame {
    const unsigned char *bytes;
    size_t size;
    const struct qtshim_signature *signature;
    struct emit_frame *outer;
    struct prepared call;
    /* The packed bytes, when they fit; 8-aligned, so a handler may read the slots in place. */
    uint64_t stack[STACK_BYTES / 8];
};
_Static_assert(sizeof(struct emit_frame) <= QTSHIM_EMIT_SIZE, "QTSHIM_EMIT_SIZE is too small");
_Static_assert(_Alignof(struct emit_frame) <= 16, "the engine aligns an emit frame to 16");

static QTSHIM_TLS struct emit_frame *current_emit;

void qtshim_signals_forget_emits(void) { current_emit = NULL; }

/* Where the engine's event view keeps the bytes (qtshim_signals_event_layout), so the
 * handler trampoline loads them instead of calling qtbus_event_data for every typed
 * handler.  Set by every define, which every connect follows. */
static size_t event_data_at, event_size_at;

void qtshim_signals_event_layout(size_t data_offset, size_t size_offset)
{
    __atomic_store_n(&event_data_at, data_offset, __ATOMIC_RELAXED);
    __atomic_store_n(&event_size_at, size_offset, __ATOMIC_RELAXED);
}

static int refuse(const char *text)
{
    qtshim_fail_reason(QTBUS_EINVAL, text);
    return QTBUS_EINVAL;
}

/* ---- signatures ---- */

int qtshim_signature_make(const qtbus_arg *kinds, size_t count, void **signature_out)
{
    struct qtshim_signature *s = calloc(1, sizeof *s);
    if (s == NULL) return QTBUS_ENOMEM;
    s->refs = 1;
    s->count = (uint8_t)count;
    for (size_t i = 0; i < count; i++) {
        s->kinds[i] = (uint8_t)kinds[i];
        s->types[i] = ffi_type_of(s->kinds[i]);
    }
    s->types[count] = &ffi_type_pointer;
    memcpy(s->head, MAGIC, 4);
    s->head[4] = QTBUS_SIGNAL_LAYOUT_VERSION;
    s->head[5] = (uint8_t)count;
    memcpy(s->head + HEAD, s->kinds, count); /* calloc'd: the padding is zero */
    s->head_size = (uint8_t)slots_at(count);
    s->caller = choose_caller(s->kinds, count);
    /* Allocates nothing: the cif and the type array are the signature's. */
    if (ffi_prep_cif(&s->cif, FFI_DEFAULT_ABI, (unsigned)count + 1u, &ffi_type_void, s->types) != FFI_OK) {
        free(s);
        return QTBUS_EINVAL;
    }
    *signature_out = s;
    return QTBUS_OK;
}

/* ---- connections ---- */

struct connection {
    void (*fn)(void);
    void *userdata;
    qtbus_release release;
    struct qtshim_signature *signature;
};

void *qtshim_connection_make(void *signature, void (*fn)(void), void *userdata, qtbus_release release)
{
    struct connection *c = malloc(sizeof *c);
    if (c == NULL) return NULL;
    *c = (struct connection){fn, userdata, release, signature};
    /* Taken before the subscription exists: its release may run on another thread as
     * soon as it does (a racing dispose), and drops this reference. */
    signature_retain(c->signature);
    return c;
}

void qtshim_connection_discard(void *connection)
{
    struct connection *c = connection;
    qtshim_signature_release(c->signature);
    free(c);
}

/* Bytes that are not the running emit's: checked and unpacked.  Out of line, so the
 * common path above keeps a small frame. */
__attribute__((noinline)) static void call_unpacked(const struct connection *c, const unsigned char *data, size_t size)
{
    qtbus_value values[QTBUS_SIGNAL_MAX_ARGS];
    if (unpack(data, size, c->signature->kinds, NULL, c->signature->count, values) < 0) return;
    struct prepared call;
    prepare(c->signature, values, &call);
    c->signature->caller(c->signature, c->fn, &call, c->userdata);
}

void qtshim_connection_handler(const qtbus_event *event, void *connection)
{
    const struct connection *c = connection;
    const char *view = (const char *)event;
    const unsigned char *data;
    size_t size;
    memcpy(&data, view + __atomic_load_n(&event_data_at, __ATOMIC_RELAXED), sizeof data);
    memcpy(&size, view + __atomic_load_n(&event_size_at, __ATOMIC_RELAXED), sizeof size);
    /* The bytes of the emit running here are alive and unchanged until it returns, and
     * were packed for this very signature: its prepared call is theirs. */
    const struct emit_frame *f = current_emit;
    if (f && f->bytes == data && f->size == size && f->signature == c->signature) {
        f->signature->caller(f->signature, c->fn, &f->call, c->userdata);
        return;
    }
    call_unpacked(c, data, size);
}

void qtshim_connection_release(void *connection)
{
    struct connection *c = connection;
    if (c->release) c->release(c->userdata);
    qtshim_signature_release(c->signature);
    free(c);
}

/* ---- emit ---- */

/* qtbus_signal_emit's arguments, as the engine hands them back (qtshim_emit_begin). */
struct varargs {
    va_list list;
};

int qtbus_signal_emit(qtbus_bus *bus, const char *type, const char *subtype, ...)
{
    struct varargs args;
    va_start(args.list, subtype);
    int status = qtshim_signal_emit_va(bus, type, subtype, &args);
    va_end(args.list);
    return status;
}

int qtshim_emit_begin(void *emit, const void *signature, const qtbus_value *values, size_t count, void *varargs,
                      const void **bytes_out, size_t *size_out)
{
    const struct qtshim_signature *s = signature;
    qtbus_value read[QTBUS_SIGNAL_MAX_ARGS];
    if (varargs) {
        va_list *args = &((struct varargs *)varargs)->list;
        for (size_t i = 0; i < s->count; i++) {
            switch (s->kinds[i]) {
            case QTBUS_ARG_INT32: read[i].i32 = va_arg(*args, int32_t); break;
            case QTBUS_ARG_UINT32: read[i].u32 = va_arg(*args, uint32_t); break;
            case QTBUS_ARG_INT64: read[i].i64 = va_arg(*args, int64_t); break;
            case QTBUS_ARG_UINT64: read[i].u64 = va_arg(*args, uint64_t); break;
            case QTBUS_ARG_DOUBLE: read[i].f64 = va_arg(*args, double); break;
            case QTBUS_ARG_STRING: read[i].str = va_arg(*args, const char *); break;
            default: read[i].ptr = va_arg(*args, void *); break;
            }
        }
        values = read;
    } else if (count != s->count) {
        qtshim_fail_value(QTBUS_EINVAL, "count does not match the type's signature (%llu arguments)", s->count);
        return QTBUS_EINVAL;
    } else if (values == NULL && s->count > 0) {
        return refuse("args is NULL with a count");
    }
    size_t lengths[QTBUS_SIGNAL_MAX_ARGS];
    size_t size = packed_size(s, values, lengths);
    if (size == 0) return QTBUS_ENOMEM;
    struct emit_frame *frame = emit;
    unsigned char *bytes = (unsigned char *)frame->stack;
    if (size > sizeof frame->stack) {
        bytes = malloc(size);
        if (bytes == NULL) return QTBUS_ENOMEM;
    }
    frame->bytes = bytes;
    frame->size = size;
    frame->signature = s;
    frame->outer = current_emit;
    qtbus_value packed[QTBUS_SIGNAL_MAX_ARGS];
    pack(bytes, s, values, lengths, packed);
    prepare(s, packed, &frame->call);
    current_emit = frame;
    *bytes_out = bytes;
    *size_out = size;
    return QTBUS_OK;
}

void qtshim_emit_end(void *emit)
{
    struct emit_frame *frame = emit;
    current_emit = frame->outer;
    if (frame->bytes != (const unsigned char *)frame->stack) free((void *)frame->bytes);
}

/* ---- reading the arguments ---- */

int qtshim_event_args(const void *data, size_t size, qtbus_value *args_out, size_t count)
{
    /* Unpacked into a copy first: args_out stays untouched when count is too small. */
    qtbus_value values[QTBUS_SIGNAL_MAX_ARGS];
    int n = unpack(data, size, NULL, NULL, 0, values);
    if (n < 0) return refuse("the event's bytes are not a typed signal's arguments");
    if ((size_t)n > count) {
        qtshim_fail_value(QTBUS_EINVAL, "the event has %llu arguments, more than count", (unsigned long long)n);
        return QTBUS_EINVAL;
    }
    if (n > 0) memcpy(args_out, values, (size_t)n * sizeof *values);
    return n;
}

int qtshim_signal_unpack(const void *data, size_t size, qtbus_value values_out[QTBUS_SIGNAL_MAX_ARGS])
{
    return unpack(data, size, NULL, NULL, 0, values_out);
}

int qtbus_signal_check(const void *data, size_t size, const qtbus_arg *kinds, size_t count)
{
    /* NULL kinds is the signature of no arguments, not "any signature". */
    static const qtbus_arg none[1] = {QTBUS_ARG_INT32};
    if (kinds == NULL) {
        if (count > 0) return 0;
        kinds = none;
    }
    return unpack(data, size, NULL, kinds, count, NULL) >= 0;
}
