/*
 * Typed signals (qtbus.h, "Typed signals"): signatures, the packed arguments of a
 * signal event, and the call of a typed handler.
 *
 * A signal is an ordinary event whose bytes hold its arguments, so emit packs them
 * once and then is qtbus_dispatch(), and connect is qtbus_subscribe() of a handler
 * that unpacks the event's bytes and calls the user's function with them.  The engine
 * keeps each type's signature (Signals.swift): set once, read without a lock, freed
 * with its bus.
 *
 * How a typed handler is called.  libffi calls a function of any signature, but
 * ffi_call costs about 25 ns (it classifies the arguments on every call), ten times a
 * plain handler's whole delivery.  Where the C calling convention gives every integer
 * and pointer argument its own general register and every double its own vector
 * register, in order within each class (x86-64 System V, AArch64 AAPCS64), a call
 * through `void (*)(word x N, double x 8)` puts each argument of a signature that fits
 * in registers exactly where the handler reads it, so such signatures are called that
 * way (`direct`); the others (more arguments than registers, other targets) through
 * the ffi_cif prepared once at define.
 */
#include "qtbus_shims.h"

#include <ffi.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__linux__)
#  define DIRECT_WORDS 6   /* rdi rsi rdx rcx r8 r9 */
#elif defined(__aarch64__) && defined(__linux__)
#  define DIRECT_WORDS 8   /* x0-x7 */
#endif
#define DIRECT_DOUBLES 8   /* xmm0-7, v0-7 */

struct qtshim_signature {
    uint32_t refs;                          /* the type entry's, plus one per connection */
    uint8_t  count;
    uint8_t  kinds[QTBUS_SIGNAL_MAX_ARGS];
    bool     direct;
    ffi_type *types[QTBUS_SIGNAL_MAX_ARGS + 1];   /* + userdata */
    ffi_cif  cif;
};

static bool known_kind(unsigned kind) { return kind >= QTBUS_ARG_INT32 && kind <= QTBUS_ARG_POINTER; }

static ffi_type *ffi_type_of(uint8_t kind)
{
    switch (kind) {
    case QTBUS_ARG_INT32:  return &ffi_type_sint32;
    case QTBUS_ARG_UINT32: return &ffi_type_uint32;
    case QTBUS_ARG_INT64:  return &ffi_type_sint64;
    case QTBUS_ARG_UINT64: return &ffi_type_uint64;
    case QTBUS_ARG_DOUBLE: return &ffi_type_double;
    default:               return &ffi_type_pointer;
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

/* ---- the packed arguments (layout in qtbus.h) ---- */

#define MAGIC "QTSG"
#define HEAD 8u
/* Emits whose packed arguments fit here allocate nothing. */
#define STACK_BYTES 512u

static size_t pad8(size_t n) { return (n + 7u) & ~(size_t)7u; }
static size_t slots_at(size_t count) { return HEAD + pad8(count); }

/* Bytes needed for `values` of `kinds`; 0 when the strings' lengths overflow. */
static size_t packed_size(const uint8_t *kinds, size_t count, const qtbus_value *values)
{
    size_t size = slots_at(count) + 8u * count;
    for (size_t i = 0; i < count; i++) {
        if (kinds[i] != QTBUS_ARG_STRING || values[i].str == NULL) continue;
        size_t n = strlen(values[i].str) + 1u;
        if (n > SIZE_MAX - size) return 0;
        size += n;
    }
    return size;
}

static void pack(unsigned char *out, const uint8_t *kinds, size_t count, const qtbus_value *values)
{
    memcpy(out, MAGIC, 4);
    out[4] = QTBUS_SIGNAL_LAYOUT_VERSION;
    out[5] = (unsigned char)count;
    out[6] = out[7] = 0;
    memset(out + HEAD, 0, pad8(count));
    memcpy(out + HEAD, kinds, count);
    unsigned char *slots = out + slots_at(count);
    size_t next = slots_at(count) + 8u * count;
    for (size_t i = 0; i < count; i++) {
        qtbus_value slot;
        memset(&slot, 0, sizeof slot);
        if (kinds[i] == QTBUS_ARG_STRING) {
            uint64_t offset = 0;
            if (values[i].str) {
                size_t n = strlen(values[i].str) + 1u;
                memcpy(out + next, values[i].str, n);
                offset = next;
                next += n;
            }
            memcpy(&slot, &offset, sizeof offset);
        } else {
            switch (kinds[i]) {
            case QTBUS_ARG_INT32:  slot.i32 = values[i].i32; break;
            case QTBUS_ARG_UINT32: slot.u32 = values[i].u32; break;
            case QTBUS_ARG_INT64:  slot.i64 = values[i].i64; break;
            case QTBUS_ARG_UINT64: slot.u64 = values[i].u64; break;
            case QTBUS_ARG_DOUBLE: slot.f64 = values[i].f64; break;
            default:               slot.ptr = values[i].ptr; break;
            }
        }
        memcpy(slots + 8u * i, &slot, 8);
    }
}

/* Reads packed arguments into values[0..count) and returns count, or -1 when `data` is
 * not a well-formed signal payload (or, with `expect`, not one of that signature).
 * Everything is bounds-checked, since any dispatch of the type can carry any bytes;
 * read with memcpy, since a plain dispatch's bytes need not be aligned. */
static int unpack(const unsigned char *data, size_t size, const struct qtshim_signature *expect,
                  qtbus_value values[QTBUS_SIGNAL_MAX_ARGS])
{
    if (data == NULL || size < HEAD || memcmp(data, MAGIC, 4) != 0 || data[4] != QTBUS_SIGNAL_LAYOUT_VERSION)
        return -1;
    size_t count = data[5];
    if (count > QTBUS_SIGNAL_MAX_ARGS || size < slots_at(count) + 8u * count) return -1;
    const unsigned char *kinds = data + HEAD;
    if (expect) {
        if (expect->count != count || memcmp(expect->kinds, kinds, count) != 0) return -1;
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
        memcpy(&values[i], slots + 8u * i, 8);
        if (kinds[i] != QTBUS_ARG_STRING) continue;
        uint64_t offset;
        memcpy(&offset, &values[i], sizeof offset);
        if (offset == 0) {
            values[i].str = NULL;
            continue;
        }
        if (offset < floor || offset >= size) return -1;
        if (last_string >= 0 && data[offset - 1] != 0) return -1;
        values[i].str = (const char *)data + offset;
        floor = (size_t)offset + 1u;
        last_string = (int)i;
    }
    if (last_string >= 0 && data[size - 1] != 0) return -1;
    return (int)count;
}

/* ---- calling a typed handler ---- */

#ifdef DIRECT_WORDS
#  if DIRECT_WORDS == 6
typedef void (*direct_fn)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
                          double, double, double, double, double, double, double, double);
#    define DIRECT_CALL(fn, w, d) \
        ((direct_fn)(fn))(w[0], w[1], w[2], w[3], w[4], w[5], d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7])
#  else
typedef void (*direct_fn)(uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t, uintptr_t,
                          double, double, double, double, double, double, double, double);
#    define DIRECT_CALL(fn, w, d)                                                                  \
        ((direct_fn)(fn))(w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], d[0], d[1], d[2], d[3], \
                          d[4], d[5], d[6], d[7])
#  endif

/* Whether every argument (and the userdata) has a register of its class. */
static bool fits_registers(const uint8_t *kinds, size_t count)
{
    size_t words = 1, doubles = 0;
    for (size_t i = 0; i < count; i++) {
        if (kinds[i] == QTBUS_ARG_DOUBLE) doubles++;
        else words++;
    }
    return words <= DIRECT_WORDS && doubles <= DIRECT_DOUBLES;
}

#  if defined(__clang__)
/* The handler's real type differs from direct_fn on purpose (see the top of the file). */
__attribute__((no_sanitize("function")))
#  endif
static void call_direct(const struct qtshim_signature *s, void (*fn)(void), const qtbus_value *v, void *userdata)
{
    uintptr_t w[DIRECT_WORDS] = {0};
    double d[DIRECT_DOUBLES] = {0};
    size_t nw = 0, nd = 0;
    for (size_t i = 0; i < s->count; i++) {
        switch (s->kinds[i]) {
        /* A 32-bit argument's register is widened as the caller of a real prototype
         * would; the callee reads its low half either way. */
        case QTBUS_ARG_INT32:  w[nw++] = (uintptr_t)(intptr_t)v[i].i32; break;
        case QTBUS_ARG_UINT32: w[nw++] = (uintptr_t)v[i].u32; break;
        case QTBUS_ARG_INT64:  w[nw++] = (uintptr_t)v[i].i64; break;
        case QTBUS_ARG_UINT64: w[nw++] = (uintptr_t)v[i].u64; break;
        case QTBUS_ARG_DOUBLE: d[nd++] = v[i].f64; break;
        case QTBUS_ARG_STRING: w[nw++] = (uintptr_t)v[i].str; break;
        default:               w[nw++] = (uintptr_t)v[i].ptr; break;
        }
    }
    w[nw] = (uintptr_t)userdata;
    DIRECT_CALL(fn, w, d);
}
#else
static bool fits_registers(const uint8_t *kinds, size_t count)
{
    (void)kinds;
    (void)count;
    return false;
}
#endif

static void call_handler(struct qtshim_signature *s, void (*fn)(void), qtbus_value *v, void *userdata)
{
#ifdef DIRECT_WORDS
    if (s->direct) {
        call_direct(s, fn, v, userdata);
        return;
    }
#endif
    void *avalues[QTBUS_SIGNAL_MAX_ARGS + 1];
    /* Every member of a qtbus_value starts at its first byte: &v[i] is the argument
     * whatever its kind. */
    for (size_t i = 0; i < s->count; i++) avalues[i] = &v[i];
    avalues[s->count] = &userdata;
    ffi_call(&s->cif, fn, NULL, avalues);
}

/* ---- define ---- */

int qtbus_signal_define(qtbus_bus *bus, const char *type, const qtbus_arg *args, size_t count)
{
    if (bus == NULL || type == NULL || count > QTBUS_SIGNAL_MAX_ARGS || (args == NULL && count > 0))
        return QTBUS_EINVAL;
    for (size_t i = 0; i < count; i++)
        if (!known_kind((unsigned)args[i])) return QTBUS_EINVAL;
    struct qtshim_signature *s = calloc(1, sizeof *s);
    if (s == NULL) return QTBUS_ENOMEM;
    s->refs = 1;
    s->count = (uint8_t)count;
    for (size_t i = 0; i < count; i++) {
        s->kinds[i] = (uint8_t)args[i];
        s->types[i] = ffi_type_of(s->kinds[i]);
    }
    s->types[count] = &ffi_type_pointer;
    s->direct = fits_registers(s->kinds, count);
    /* Allocates nothing: the cif and the type array are the signature's. */
    if (ffi_prep_cif(&s->cif, FFI_DEFAULT_ABI, (unsigned)count + 1u, &ffi_type_void, s->types) != FFI_OK) {
        free(s);
        return QTBUS_EINVAL;
    }
    int status = qtshim_signature_publish(bus, type, s);
    if (status != 0) free(s);
    return status == 1 ? QTBUS_OK : status;
}

/* ---- connect ---- */

struct connection {
    void (*fn)(void);
    void *userdata;
    qtbus_release release;
    struct qtshim_signature *signature;
};

static void connection_handler(const qtbus_event *event, void *userdata)
{
    struct connection *c = userdata;
    size_t size;
    const void *data = qtbus_event_data(event, &size);
    qtbus_value values[QTBUS_SIGNAL_MAX_ARGS];
    if (unpack(data, size, c->signature, values) < 0) return;
    call_handler(c->signature, c->fn, values, c->userdata);
}

static void connection_release(void *userdata)
{
    struct connection *c = userdata;
    if (c->release) c->release(c->userdata);
    qtshim_signature_release(c->signature);
    free(c);
}

struct connect_call {
    qtbus_bus *bus;
    const char *type;
    const qtbus_sub_options *options;
    void (*fn)(void);
    void *userdata;
    qtbus_release release;
    qtbus_token *token_out;
};

static int connect_with(void *signature, void *context)
{
    struct connect_call *call = context;
    struct connection *c = malloc(sizeof *c);
    if (c == NULL) return QTBUS_ENOMEM;
    *c = (struct connection){ call->fn, call->userdata, call->release, signature };
    /* Taken before the subscription exists: its release may run on another thread as
     * soon as it does (a racing dispose), and drops this reference. */
    signature_retain(c->signature);
    int status = qtbus_subscribe(call->bus, call->type, call->options, connection_handler, c,
                                 connection_release, call->token_out);
    if (status != QTBUS_OK) {
        qtshim_signature_release(c->signature);
        free(c);
    }
    return status;
}

int qtbus_signal_connect(qtbus_bus *bus, const char *type, const qtbus_sub_options *options,
                         void (*handler)(void), void *userdata, qtbus_release release, qtbus_token *token_out)
{
    if (token_out) token_out->id = 0;
    if (handler == NULL) return QTBUS_EINVAL;
    struct connect_call call = { bus, type, options, handler, userdata, release, token_out };
    return qtshim_signature_use(bus, type, connect_with, &call);
}

/* ---- emit ---- */

struct emit_call {
    qtbus_bus *bus;
    const char *type;
    const char *subtype;
    uint32_t flags;
    const qtbus_value *values;   /* NULL: read them from `args` */
    size_t count;
    va_list *args;
    /* qtbus_request() instead of qtbus_dispatch(), with the three below. */
    bool request;
    qtbus_reply_handler on_reply;
    void *userdata;
    qtbus_release release;
};

static int emit_with(void *signature, void *context)
{
    const struct qtshim_signature *s = signature;
    struct emit_call *call = context;
    qtbus_value read[QTBUS_SIGNAL_MAX_ARGS];
    const qtbus_value *values = call->values;
    if (values == NULL && call->args) {
        for (size_t i = 0; i < s->count; i++) {
            switch (s->kinds[i]) {
            case QTBUS_ARG_INT32:  read[i].i32 = va_arg(*call->args, int32_t); break;
            case QTBUS_ARG_UINT32: read[i].u32 = va_arg(*call->args, uint32_t); break;
            case QTBUS_ARG_INT64:  read[i].i64 = va_arg(*call->args, int64_t); break;
            case QTBUS_ARG_UINT64: read[i].u64 = va_arg(*call->args, uint64_t); break;
            case QTBUS_ARG_DOUBLE: read[i].f64 = va_arg(*call->args, double); break;
            case QTBUS_ARG_STRING: read[i].str = va_arg(*call->args, const char *); break;
            default:               read[i].ptr = va_arg(*call->args, void *); break;
            }
        }
        values = read;
    } else if (call->count != s->count || (values == NULL && s->count > 0)) {
        return QTBUS_EINVAL;
    }
    size_t size = packed_size(s->kinds, s->count, values);
    if (size == 0) return QTBUS_ENOMEM;
    /* 8-aligned, so handlers of synchronous deliveries could read slots in place. */
    uint64_t stack[STACK_BYTES / 8];
    unsigned char *bytes = (unsigned char *)stack;
    if (size > sizeof stack) {
        bytes = malloc(size);
        if (bytes == NULL) return QTBUS_ENOMEM;
    }
    pack(bytes, s->kinds, s->count, values);
    qtbus_event_desc desc = { .type = call->type, .subtype = call->subtype, .data = bytes, .size = size,
                              .flags = call->flags };
    int status = call->request ? qtbus_request(call->bus, &desc, call->on_reply, call->userdata, call->release)
                               : qtbus_dispatch(call->bus, &desc);
    if (bytes != (unsigned char *)stack) free(bytes);
    return status;
}

int qtbus_signal_emit(qtbus_bus *bus, const char *type, const char *subtype, ...)
{
    va_list args;
    va_start(args, subtype);
    struct emit_call call = { .bus = bus, .type = type, .subtype = subtype, .args = &args };
    int status = qtshim_signature_use(bus, type, emit_with, &call);
    va_end(args);
    return status;
}

int qtbus_signal_emitv(qtbus_bus *bus, const char *type, const char *subtype, uint32_t flags,
                       const qtbus_value *args, size_t count)
{
    struct emit_call call = { .bus = bus, .type = type, .subtype = subtype, .flags = flags,
                              .values = args, .count = count };
    return qtshim_signature_use(bus, type, emit_with, &call);
}

int qtbus_signal_requestv(qtbus_bus *bus, const char *type, const char *subtype, const qtbus_value *args,
                          size_t count, qtbus_reply_handler on_reply, void *userdata, qtbus_release release)
{
    struct emit_call call = { .bus = bus, .type = type, .subtype = subtype, .values = args, .count = count,
                              .request = true, .on_reply = on_reply, .userdata = userdata, .release = release };
    return qtshim_signature_use(bus, type, emit_with, &call);
}

/* ---- reading the arguments ---- */

int qtbus_event_args(const qtbus_event *event, qtbus_value *args_out, size_t count)
{
    if (event == NULL || (args_out == NULL && count > 0)) return QTBUS_EINVAL;
    size_t size;
    const void *data = qtbus_event_data(event, &size);
    /* Unpacked into a copy first: args_out stays untouched when count is too small. */
    qtbus_value values[QTBUS_SIGNAL_MAX_ARGS];
    int n = unpack(data, size, NULL, values);
    if (n < 0 || (size_t)n > count) return QTBUS_EINVAL;
    if (n > 0) memcpy(args_out, values, (size_t)n * sizeof *values);
    return n;
}
