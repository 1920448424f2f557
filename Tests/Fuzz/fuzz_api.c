/* SPDX-License-Identifier: MIT */
/*
 * fuzz_api.c -- a libFuzzer harness over qtbus.h (scripts/fuzz.sh builds and runs it
 * against the AddressSanitizer build of the library).
 *
 * Input: a sequence of calls, one byte of opcode followed by the bytes its operands
 * take (names and JSON come from the input itself, so bad UTF-8, empty and over-long
 * names and invalid JSON all occur).  Two buses; tokens, bags, commands and sources are
 * kept in small tables indexed by input bytes, so stale and repeated handles occur too;
 * unknown flag bits pass through.  Dispatches are direct or posted (the bus's queue, the
 * main queue), subscriptions direct or on a serial queue or the main queue, which the
 * input's thread (the process's main thread) drains when the input says and at its
 * end.  Handlers read a "script" byte from their userdata and may dispatch, subscribe
 * or dispose from inside (bounded depth).
 *
 * Checked on every input (abort() on failure, which libFuzzer reports as a crash):
 * every release hook given to a successful subscribe runs exactly once by the end of
 * the input (buses destroyed, the queue drained with a bounded wait), none given to a
 * failed one runs, no handler runs after its release, and every object of a
 * successful dispatch is released exactly once.
 *
 * Typed signals: each bus defines "A" (string, int32: called directly) and "B" (seven
 * arguments, four of them strings: called through libffi), whose typed handlers read
 * every string they get; the input emits them (varargs, values, requests), defines and
 * emits signatures of its own on other names, and dispatches raw input bytes (some
 * behind a valid header) on "A" and "B", which typed handlers must refuse and
 * qtbus_event_args must read within bounds.  Plain handlers read the arguments of
 * what they receive (and the strings, by the kinds the bytes carry).
 */
#include <qtbus.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXSUBS 64
#define MAXH 16

typedef struct sub_rec {
    atomic_int releases;
    atomic_int calls_after_release;
    int script; /* what the handler does from inside */
    int subscribed;
} sub_rec;

static const uint8_t *in;
static size_t left;
static qtbus_bus *buses[2];
static qtbus_queue *queue;
static sub_rec recs[MAXSUBS];
static int nrecs;
static qtbus_token tokens[MAXH];
static qtbus_bag bags[MAXH];
static qtbus_command commands[MAXH];
static qtbus_source sources[MAXH];
static atomic_long objects_made, objects_released;
static int depth;
/* Dispatches handlers may still make in this input: a handler on the main queue that
 * dispatches its own type re-posts itself to every drain, a storm that would grow
 * without end (the program's doing, not the library's). */
static int handler_dispatches;
/* Set on the thread running the input: handlers and execute functions run on the
 * library's queue thread too, and only this thread reads the input. */
static __thread int input_thread;

static uint8_t byte(void)
{
    if (!left) return 0;
    left--;
    return *in++;
}

/* A name from the input: length byte (0..63), then that many bytes; a few fixed ones
 * more often, so calls meet each other. */
static const char *name(char *buf)
{
    static const char *const fixed[] = {"A", "B", "A", "\xc3\xa9", "QTNoSubscriberEvent", "QTJsonEvent"};
    uint8_t n = byte();
    if (n < 192) return fixed[n % 6];
    if (n == 255) return NULL;
    size_t len = n % 64;
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)byte();
    buf[len] = 0;
    return buf;
}

/* A name for the input's own signatures: "Sig." and name()'s, NULL when that is NULL.
 * A handler called with other parameters than its signature's is outside the contract,
 * so the typed connects of typed_a to names other than "A" (case 19) never take one of
 * these: the input cannot give such a name a signature typed_a does not have. */
static const char *sig_name(char *buf, size_t size)
{
    char raw[80];
    const char *n = name(raw);
    if (!n) return NULL;
    snprintf(buf, size, "Sig.%s", n);
    return buf;
}

static void object_release(void *o)
{
    atomic_fetch_add(&objects_released, 1);
    free(o);
}

static void release(void *u)
{
    sub_rec *r = u;
    if (!r->subscribed) abort();                         /* a failed subscribe's release ran */
    if (atomic_fetch_add(&r->releases, 1) != 0) abort(); /* twice */
}

static void step(int budget);

/* Reads a signal event's arguments as a plain subscriber does, and each string by the
 * kinds the bytes carry (at offset 8 once qtbus_event_args accepted them). */
static void read_args(const qtbus_event *e)
{
    qtbus_value v[QTBUS_SIGNAL_MAX_ARGS];
    int n = qtbus_event_args(e, v, QTBUS_SIGNAL_MAX_ARGS);
    if (n < 0) return;
    size_t size = 0;
    const unsigned char *bytes = qtbus_event_data(e, &size);
    if ((size_t)n + 8 > size) abort(); /* accepted bytes too short for their own kinds */
    for (int i = 0; i < n; i++)
        if (bytes[8 + i] == QTBUS_ARG_STRING && v[i].str) (void)strlen(v[i].str);
}

/* Typed handlers of "A" and "B": every string they get is read whole (ASan sees it). */
static void typed_check(void *u, const char *const *texts, int n)
{
    sub_rec *r = u;
    if (atomic_load(&r->releases)) abort(); /* called after its release */
    for (int i = 0; i < n; i++)
        if (texts[i]) (void)strlen(texts[i]);
}
static void typed_a(const char *text, int32_t number, void *u)
{
    (void)number;
    typed_check(u, &text, 1);
}
static void typed_b(double d, const char *s1, void *p, uint64_t x, const char *s2, int64_t y, const char *s3,
                    const char *s4, void *u)
{
    const char *texts[4] = {s1, s2, s3, s4};
    (void)d;
    (void)p;
    (void)x;
    (void)y;
    typed_check(u, texts, 4);
}
static const qtbus_arg sig_a[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32};
static const qtbus_arg sig_b[] = {QTBUS_ARG_DOUBLE, QTBUS_ARG_STRING, QTBUS_ARG_POINTER, QTBUS_ARG_UINT64,
                                  QTBUS_ARG_STRING, QTBUS_ARG_INT64,  QTBUS_ARG_STRING,  QTBUS_ARG_STRING};

static void handler(const qtbus_event *e, void *u)
{
    sub_rec *r = u;
    if (atomic_load(&r->releases)) abort(); /* called after its release */
    if (depth >= 3 || !input_thread) return;
    depth++;
    switch (r->script % 6) {
    case 0: break;
    case 1: qtbus_event_stop(e); break;
    case 2: qtbus_event_reply(e, "r", 1); break;
    case 3: step(1); break; /* one more call from the input, nested */
    case 4: {               /* after the input's end, its buses are gone: a main-queue handler still runs */
        qtbus_event_desc d = {.type = qtbus_event_type(e), .flags = QTBUS_EVENT_STICKY};
        if (buses[0] && handler_dispatches-- > 0) qtbus_dispatch(buses[0], &d);
        break;
    }
    case 5: {
        size_t n = 0;
        (void)qtbus_event_data(e, &n);
        (void)qtbus_event_object(e);
        break;
    }
    }
    depth--;
    read_args(e);
}

static void on_reply(const qtbus_event *e, void *u)
{
    (void)e;
    (void)u;
}
static void execute(const qtbus_event *inp, qtbus_execution x, void *u)
{
    (void)inp;
    (void)u;
    qtbus_execution_send(x, "v", 1);
    qtbus_execution_finish(x, input_thread ? (int)(byte() % 2) : 0, "err");
}
static void start(qtbus_bus *b, void *u)
{
    (void)b;
    (void)u;
}
static void stop(void *u) { (void)u; }

static void step(int budget)
{
    while (budget-- > 0 && left) {
        char n1[80], n2[80], json[64];
        qtbus_bus *bus = buses[byte() % 2];
        if (!bus) continue;
        switch (byte() % 20) {
        case 0:
        case 1: {
            if (nrecs == MAXSUBS) break;
            /* Reserved before the call: a handler run inside it (a replay) may subscribe. */
            sub_rec *r = &recs[nrecs++];
            r->script = byte();
            const char *subs[3] = {name(n1), name(n2), "x"};
            qtbus_sub_options o = {0};
            o.subtypes = subs;
            o.subtype_count = byte() % 4;
            o.flags = byte() % 8; /* unknown bits too */
            switch (byte() % 8) {
            case 0: o.queue = queue; break;
            case 1: o.queue = qtbus_queue_main(); break; /* drained by case 17 and at the end */
            }
            o.priority = (int8_t)byte();
            if (byte() % 4 == 0) o.bag = bags[byte() % MAXH];
            qtbus_token t = {0};
            /* Set before the call: a REPLAY + ONCE subscription fires, and is released,
             * inside its own qtbus_subscribe. */
            r->subscribed = 1;
            int rc = qtbus_subscribe(bus, name(n1), &o, handler, r, release, &t);
            if (rc == QTBUS_OK) {
                tokens[byte() % MAXH] = t;
            } else {
                if (t.id != 0) abort();                      /* the token must be {0} */
                if (atomic_load(&r->releases) != 0) abort(); /* and the release not run */
                memset(r, 0, sizeof *r);
            }
            break;
        }
        case 2: qtbus_token_dispose(tokens[byte() % MAXH]); break;
        case 3: {
            qtbus_bag b;
            if (qtbus_bag_create(&b) == QTBUS_OK) bags[byte() % MAXH] = b;
            break;
        }
        case 4: qtbus_bag_dispose(bags[byte() % MAXH]); break;
        case 5: qtbus_bag_add(bags[byte() % MAXH], tokens[byte() % MAXH]); break;
        case 6:
        case 7: {
            qtbus_event_desc d = {.type = name(n1), .subtype = byte() % 2 ? name(n2) : NULL};
            d.flags = byte() % 4; /* unknown bits too */
            uint8_t size = byte() % 8;
            d.data = size ? "abcdefgh" : NULL;
            d.size = size;
            int *obj = NULL;
            if (byte() % 3 == 0) {
                obj = malloc(sizeof *obj);
                d.object = obj;
                d.object_release = object_release;
            }
            int rc = qtbus_dispatch(bus, &d);
            if (obj && rc >= 0)
                atomic_fetch_add(&objects_made, 1);
            else if (obj)
                free(obj);
            break;
        }
        case 8: {
            size_t len = byte() % 63;
            for (size_t i = 0; i < len; i++)
                json[i] = (char)byte();
            json[len] = 0;
            qtbus_dispatch_json(bus, name(n1), json);
            break;
        }
        case 9: qtbus_subscriber_count(bus, name(n1), byte() % 2 ? name(n2) : NULL); break;
        case 10: qtbus_sticky_clear(bus, name(n1), byte() % 2 ? name(n2) : NULL); break;
        case 11: {
            qtbus_event_desc d = {.type = name(n1)};
            qtbus_request(bus, &d, byte() % 2 ? on_reply : NULL, NULL, NULL);
            break;
        }
        case 12: {
            qtbus_command c;
            if (qtbus_command_create(bus, name(n1), byte() % 4, execute, NULL, NULL, &c) == QTBUS_OK)
                commands[byte() % MAXH] = c;
            break;
        }
        case 13: {
            qtbus_command c = commands[byte() % MAXH];
            switch (byte() % 4) {
            case 0: qtbus_command_execute(c, NULL, byte() % 2 ? queue : NULL); break;
            case 1: qtbus_command_set_enabled(c, byte() % 2); break;
            case 2:
                qtbus_command_is_enabled(c);
                qtbus_command_is_executing(c);
                break;
            case 3: qtbus_command_dispose(c); break;
            }
            break;
        }
        case 14: {
            qtbus_source s;
            if (qtbus_source_create(bus, name(n1), byte() % 4, start, stop, NULL, NULL, &s) == QTBUS_OK)
                sources[byte() % MAXH] = s;
            break;
        }
        case 16: { /* a posted dispatch, on the bus's queue or the main queue */
            qtbus_event_desc d = {.type = name(n1), .subtype = byte() % 2 ? name(n2) : NULL};
            d.flags = byte() % 4;
            d.data = "abcdefgh";
            d.size = byte() % 9;
            int *obj = NULL;
            if (byte() % 3 == 0) {
                obj = malloc(sizeof *obj);
                d.object = obj;
                d.object_release = object_release;
            }
            int rc = byte() % 2 ? qtbus_dispatch_on_bus_queue(bus, &d) : qtbus_dispatch_on_main(bus, &d);
            if (obj && rc >= 0)
                atomic_fetch_add(&objects_made, 1);
            else if (obj)
                free(obj);
            break;
        }
        case 17: /* the main queue (this is the main thread), and token queries */
            switch (byte() % 4) {
            case 0: qtbus_main_drain(); break;
            case 1: qtbus_main_wait(0); break;
            case 2:
                if (qtbus_main_fd() < 0) abort();
                break;
            case 3: qtbus_token_is_active(tokens[byte() % MAXH]); break;
            }
            break;
        case 18: { /* typed signals: emit, emitv, requestv, define, raw bytes */
            char n3[80], n4[80];
            /* Every value a valid string (or NULL), so any kind may read any of them. */
            qtbus_value v[QTBUS_SIGNAL_MAX_ARGS + 1];
            for (int i = 0; i <= QTBUS_SIGNAL_MAX_ARGS; i++)
                v[i].str = i % 4 == 3 ? NULL : "v";
            v[0].str = name(n1);
            v[1].str = name(n2);
            v[4].str = name(n3);
            v[6].str = name(n4);
            const char *sub = byte() % 2 ? name(n2) : NULL;
            const char *type = byte() % 2 ? "A" : "B";
            switch (byte() % 7) {
            case 0: qtbus_signal_emit(bus, "A", sub, v[0].str, (int32_t)(int8_t)byte()); break;
            case 1:
                qtbus_signal_emit(bus, "B", sub, (double)byte(), v[1].str, (void *)v, (uint64_t)byte(), v[4].str,
                                  (int64_t)-1, v[6].str, v[0].str);
                break;
            case 2: qtbus_signal_emitv(bus, type, sub, byte() % 4, v, byte() % 10); break;
            case 3:
                qtbus_signal_requestv(bus, type, sub, v, byte() % 10, byte() % 2 ? on_reply : NULL, NULL, NULL);
                break;
            case 4: { /* a signature of the input's own, on one of its names (sig_name) */
                qtbus_arg kinds[QTBUS_SIGNAL_MAX_ARGS + 2];
                size_t count = byte() % (QTBUS_SIGNAL_MAX_ARGS + 2);
                for (size_t i = 0; i < count; i++)
                    kinds[i] = (qtbus_arg)(byte() % 9);
                char sig[90];
                qtbus_signal_define(bus, sig_name(sig, sizeof sig), kinds, count);
                break;
            }
            case 5: { /* on a name of the input's signatures, or any name */
                char sig[90];
                const char *target = byte() % 2 ? sig_name(sig, sizeof sig) : name(n3);
                qtbus_signal_emitv(bus, target, sub, 0, v, byte() % (QTBUS_SIGNAL_MAX_ARGS + 2));
                break;
            }
            case 6: { /* raw bytes, exactly as long as the input says, half of them behind a header */
                size_t len = byte() % 96;
                unsigned char *raw = malloc(len ? len : 1);
                if (!raw) break;
                for (size_t i = 0; i < len; i++)
                    raw[i] = byte();
                if (len >= 8 && byte() % 2) {
                    memcpy(raw, "QTSG", 4);
                    raw[4] = QTBUS_SIGNAL_LAYOUT_VERSION;
                }
                qtbus_event_desc d = {.type = type, .data = len ? raw : NULL, .size = len};
                qtbus_dispatch(bus, &d);
                free(raw);
                break;
            }
            }
            break;
        }
        case 19: { /* a typed connect to "A" or "B", or to an undefined name */
            if (nrecs == MAXSUBS) break;
            sub_rec *r = &recs[nrecs++];
            qtbus_sub_options o = {0};
            o.flags = byte() % 8;
            switch (byte() % 4) {
            case 0: o.queue = queue; break;
            case 1: o.queue = qtbus_queue_main(); break;
            }
            o.priority = (int8_t)byte();
            uint8_t which = byte() % 3;
            const char *type = which == 0 ? "A" : which == 1 ? "B" : name(n1);
            /* Only "A" gets typed_a's parameters and "B" typed_b's: a handler with
             * other parameters than its signature is outside the contract.  The input's
             * own signatures are on sig_name()s ("Sig." names), which are not taken. */
            if (which == 2 && type &&
                (strcmp(type, "A") == 0 || strcmp(type, "B") == 0 || strncmp(type, "Sig.", 4) == 0))
                type = "Undefined";
            r->subscribed = 1;
            qtbus_token t = {0};
            int rc = qtbus_signal_connect(bus, type, &o, which == 1 ? QTBUS_CALLBACK(typed_b) : QTBUS_CALLBACK(typed_a),
                                          r, release, &t);
            if (rc == QTBUS_OK) {
                tokens[byte() % MAXH] = t;
            } else {
                if (t.id != 0) abort();
                if (atomic_load(&r->releases) != 0) abort();
                memset(r, 0, sizeof *r);
            }
            break;
        }
        case 15: {
            qtbus_source s = sources[byte() % MAXH];
            switch (byte() % 3) {
            case 0: qtbus_source_connect(s); break;
            case 1: qtbus_source_disconnect(s); break;
            case 2: qtbus_source_dispose(s); break;
            }
            break;
        }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input_thread = 1;
    handler_dispatches = 256;
    in = data;
    left = size;
    nrecs = 0;
    memset(recs, 0, sizeof recs);
    memset(tokens, 0, sizeof tokens);
    memset(bags, 0, sizeof bags);
    memset(commands, 0, sizeof commands);
    memset(sources, 0, sizeof sources);
    atomic_store(&objects_made, 0);
    atomic_store(&objects_released, 0);
    if (!queue) queue = qtbus_queue_create("fuzz");
    buses[0] = qtbus_bus_create();
    buses[1] = qtbus_bus_create();
    for (int i = 0; i < 2; i++)
        if (qtbus_signal_define(buses[i], "A", sig_a, 2) != QTBUS_OK ||
            qtbus_signal_define(buses[i], "B", sig_b, 8) != QTBUS_OK)
            abort();
    step(1000);
    for (int i = 0; i < MAXH; i++) {
        qtbus_bag_dispose(bags[i]);
        qtbus_command_dispose(commands[i]);
        qtbus_source_dispose(sources[i]);
    }
    qtbus_bus_destroy(buses[0]);
    qtbus_bus_destroy(buses[1]);
    buses[0] = buses[1] = NULL; /* not to be used again (handlers still to run check) */
    /* Queued deliveries and releases finish on the queue: wait for them, bounded in
     * time rather than in turns (a loaded machine runs the queue late), and below
     * libFuzzer's -timeout, so that a release that never runs is this abort. */
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        qtbus_main_drain(); /* main-queue deliveries, posts and releases run here */
        int done = atomic_load(&objects_released) == atomic_load(&objects_made);
        for (int i = 0; i < nrecs && done; i++)
            done = !recs[i].subscribed || atomic_load(&recs[i].releases) == 1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (done || now.tv_sec - start.tv_sec >= 8) break;
        usleep(50);
    }
    for (int i = 0; i < nrecs; i++)
        if (recs[i].subscribed && atomic_load(&recs[i].releases) != 1) {
            fprintf(stderr, "fuzz_api: subscription %d: %d releases 8 s after its bus was destroyed\n", i,
                    atomic_load(&recs[i].releases));
            abort();
        }
    if (atomic_load(&objects_released) != atomic_load(&objects_made)) {
        fprintf(stderr, "fuzz_api: %ld objects made, %ld released 8 s after the buses were destroyed\n",
                atomic_load(&objects_made), atomic_load(&objects_released));
        abort();
    }
    return 0;
}
