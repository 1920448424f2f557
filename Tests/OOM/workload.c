/* SPDX-License-Identifier: MIT */
/*
 * The out-of-memory sweep's workload (scripts/oom-sweep.sh): every call of qtbus.h once
 * or twice, each status checked against what the header documents, with QTBUS_ENOMEM
 * (or NULL from a constructor) accepted from the calls that document it.
 *
 * It runs the scenario (every call) once armed, where the injector fails one
 * allocation, then once more with memory back, where every call must succeed: the
 * process keeps working.  `--warm` runs it once before arming too, so that the failed
 * allocation is one a long-running program makes, not a first use in the process.
 * Every subscription that was made must be released exactly once, and a subscribe
 * that failed must not call its release hook.
 *
 * Exit 0: every call returned a documented status.  Exit 3: a call returned something
 * the header does not document for it, or a release count is wrong (printed).  A
 * signal or a hang is the sweep's to classify.  Without failmalloc.so preloaded it
 * just runs.
 */
#define _POSIX_C_SOURCE 200809L
#include <qtbus.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void oom_arm(void) __attribute__((weak));
void oom_disarm(void) __attribute__((weak));
void oom_call(const char *name) __attribute__((weak));

static const char *current = "";
static void call(const char *name)
{
    current = name;
    if (oom_call) oom_call(name);
}

/* Whether QTBUS_ENOMEM is accepted now (not once memory is back). */
static int memory_may_fail;

/* ok: the status is what the call documents; nomem: QTBUS_ENOMEM is documented. */
static void expect(int rc, int ok_min, int nomem)
{
    if (rc >= ok_min) return;
    if (nomem && memory_may_fail && rc == QTBUS_ENOMEM) return;
    fprintf(stderr, "workload: %s returned %d (%s)\n", current, rc, qtbus_strerror(rc));
    exit(3);
}

static int handled, subscribed;

static void count_info(const qtbus_sub_info *info, void *userdata)
{
    (void)info;
    (void)userdata;
}
static atomic_int released; /* queued releases run on their queues */

/* A trace hook taking every kind of record, so that the records made under memory
 * pressure are too; its release must run once per hook set. */
static atomic_int records, hooks_set, hooks_released;
static void trace(const qtbus_trace_record *r, void *u)
{
    (void)r;
    (void)u;
    records++;
}
static void trace_release(void *u)
{
    (void)u;
    hooks_released++;
}

static void fail(const char *what)
{
    fprintf(stderr, "workload: %s: %s\n", current, what);
    exit(3);
}

/* A subscribe: counted when made; a failed one must not have released. */
static void subscribe(qtbus_bus *bus, const char *type, const qtbus_sub_options *o, qtbus_token *t);
static qtbus_deferred deferred;
static int deferred_rc = 1, completions;
static void handler(const qtbus_event *e, void *u)
{
    (void)u;
    handled++;
    if (qtbus_event_subtype(e) && strcmp(qtbus_event_subtype(e), "reply") == 0) qtbus_event_reply(e, "r", 1);
    if (qtbus_event_subtype(e) && strcmp(qtbus_event_subtype(e), "defer") == 0)
        deferred_rc = qtbus_event_defer(e, &deferred);
}
static void complete(void *u)
{
    (void)u;
    completions++;
}
/* Each subscription's own count of its releases (userdata), so a failed subscribe is
 * checked for its own release: `released` also moves when an earlier subscription's
 * release runs on its queue meanwhile.  A static pool: the workload must not allocate. */
static atomic_int marks[4096];
static atomic_int next_mark;
static atomic_int *new_mark(void)
{
    int i = atomic_fetch_add(&next_mark, 1);
    if (i >= (int)(sizeof marks / sizeof marks[0])) fail("more subscriptions than marks");
    return &marks[i];
}
static void release(void *u)
{
    released++;
    atomic_fetch_add((atomic_int *)u, 1);
}
static void on_reply(const qtbus_event *e, void *u)
{
    (void)e;
    (void)u;
}
static int replayed;
static void count_replay(const qtbus_event *e, void *u)
{
    (void)e;
    (void)u;
    replayed++;
}
static void execute(const qtbus_event *in, qtbus_execution x, void *u)
{
    (void)in;
    (void)u;
    qtbus_execution_send(x, "v", 1);
    qtbus_execution_finish(x, 0, NULL);
}
static void start(qtbus_bus *b, void *u)
{
    (void)b;
    (void)u;
}
static void stop(void *u) { (void)u; }

/* subscribe() with another handler; returns the status. */
static int subscribe_with(qtbus_bus *bus, const char *type, const qtbus_sub_options *o, qtbus_handler fn,
                          qtbus_token *t)
{
    atomic_int *mark = new_mark();
    int rc = qtbus_subscribe(bus, type, o, fn, mark, release, t);
    expect(rc, 0, 1);
    if (rc == QTBUS_OK)
        subscribed++;
    else if (atomic_load(mark) != 0)
        fail("a failed subscribe called its release hook");
    return rc;
}

static void subscribe(qtbus_bus *bus, const char *type, const qtbus_sub_options *o, qtbus_token *t)
{
    subscribe_with(bus, type, o, handler, t);
}

/* Pattern dispatch with more matching patterns than its stack buffers hold
 * (PatternDispatch.swift): PATTERNS distinct patterns over the 8 tokens of
 * pattern_type ("*" where bit i of 1..PATTERNS is set), all reaching it.  Above 120
 * the matches spill their first buffer, above 20 their sort would need scratch, and
 * the walk's cursors (one per list: 2 per pattern with a subtype) spill above 15
 * with a subtype and 31 without. */
#define PATTERNS 130
static const char *const pattern_tokens[8] = {"p", "b", "c", "d", "e", "f", "g", "h"};
static const char pattern_type[] = "p.b.c.d.e.f.g.h";
static atomic_int pattern_handled;
static void pattern_handler(const qtbus_event *e, void *u)
{
    (void)e;
    (void)u;
    pattern_handled++;
}

/* A dispatch of `d` reaching the `made` pattern subscriptions: all of them, or
 * QTBUS_ENOMEM with none run. */
static void dispatch_patterns(qtbus_bus *bus, const qtbus_event_desc *d, int made)
{
    int before = pattern_handled;
    int rc = qtbus_dispatch(bus, d);
    expect(rc, 0, 1);
    if (rc == QTBUS_ENOMEM && pattern_handled != before) fail("a dispatch that ran out of memory ran handlers");
    if (rc >= 0 && (rc != made || pattern_handled != before + made)) {
        fprintf(stderr, "workload: %s reached %d (%d handlers ran) of %d pattern subscriptions\n", current, rc,
                pattern_handled - before, made);
        exit(3);
    }
}

static void patterns(qtbus_bus *bus)
{
    qtbus_sub_options op = {0};
    op.flags = QTBUS_SUB_PATTERN;
    int made = 0;
    call("qtbus_subscribe (patterns)");
    for (unsigned mask = 1; mask <= PATTERNS; mask++) {
        char pattern[32], *w = pattern;
        for (int i = 0; i < 8; i++) {
            const char *token = mask & (1u << i) ? "*" : pattern_tokens[i];
            if (i) *w++ = '.';
            w += strlen(strcpy(w, token));
        }
        if (subscribe_with(bus, pattern, &op, pattern_handler, NULL) == QTBUS_OK) made++;
    }
    /* The first dispatch of the type finds the patterns it reaches and sorts them; the
     * next ones use the kept answer.  With a subtype, without, then sticky (kept before
     * the walk: it cannot fail past that point, it waits for memory). */
    call("qtbus_dispatch (patterns, subtype)");
    qtbus_event_desc d = {.type = pattern_type, .subtype = "s"};
    dispatch_patterns(bus, &d, made);
    call("qtbus_dispatch (patterns)");
    d.subtype = NULL;
    dispatch_patterns(bus, &d, made);
    call("qtbus_dispatch (patterns, subtype again)");
    d.subtype = "s";
    dispatch_patterns(bus, &d, made);
    call("qtbus_dispatch (patterns, sticky)");
    d.flags = QTBUS_EVENT_STICKY;
    dispatch_patterns(bus, &d, made);
}

static void typed(const char *text, int32_t number, void *u)
{
    (void)text;
    (void)number;
    (void)u;
    handled++;
}

/* A typed connect: counted as a subscribe; a failed one must not have released. */
static void connect_typed(qtbus_bus *bus, const char *type, const qtbus_sub_options *o)
{
    atomic_int *mark = new_mark();
    int rc = qtbus_signal_connect(bus, type, o, QTBUS_CALLBACK(typed), mark, release, NULL);
    expect(rc, 0, 1);
    if (rc == QTBUS_OK)
        subscribed++;
    else if (atomic_load(mark) != 0)
        fail("a failed connect called its release hook");
}

static void scenario(void)
{
    /* The process-wide bus and the main queue: never NULL, so their first use cannot
     * fail (it may wait for memory). */
    call("qtbus_shared");
    qtbus_bus *shared = qtbus_shared();
    if (!shared) fail("qtbus_shared returned NULL");
    call("qtbus_subscriber_count (shared)");
    expect(qtbus_subscriber_count(shared, "E", NULL), 0, 1);
    call("qtbus_queue_main");
    if (!qtbus_queue_main()) fail("qtbus_queue_main returned NULL");
    call("qtbus_bus_create");
    qtbus_bus *bus = qtbus_bus_create();
    if (!bus) { /* documented: NULL only when out of memory */
        if (!memory_may_fail) fail("NULL with memory back");
        return;
    }
    call("qtbus_trace_set");
    int traced = qtbus_trace_set(bus, QTBUS_TRACE_ALL, trace, NULL, trace_release);
    expect(traced, 0, 1);
    if (traced == QTBUS_OK) hooks_set++;
    call("qtbus_queue_create");
    qtbus_queue *q = qtbus_queue_create("oom");
    call("qtbus_bag_create");
    qtbus_bag bag = {0};
    expect(qtbus_bag_create(&bag), 0, 1);

    const char *subs[] = {"a", "b"};
    qtbus_sub_options o = {0};
    o.subtypes = subs;
    o.subtype_count = 2;
    o.bag = bag;
    qtbus_token t1 = {0}, t2 = {0}, t3 = {0};
    call("qtbus_subscribe (subtypes, bag)");
    subscribe(bus, "E", bag.id ? &o : NULL, &t1);
    qtbus_sub_options oq = {0};
    oq.queue = q;
    call("qtbus_subscribe (queue)");
    subscribe(bus, "E", q ? &oq : NULL, &t2);
    qtbus_sub_options orp = {0};
    orp.flags = QTBUS_SUB_REPLAY;
    call("qtbus_dispatch (sticky)");
    qtbus_event_desc sticky = {.type = "S", .data = "x", .size = 1, .flags = QTBUS_EVENT_STICKY};
    expect(qtbus_dispatch(bus, &sticky), 0, 1);
    call("qtbus_subscribe (replay)");
    subscribe(bus, "S", &orp, &t3);

    call("qtbus_dispatch");
    qtbus_event_desc d = {.type = "E", .subtype = "a", .data = "12345678", .size = 8};
    expect(qtbus_dispatch(bus, &d), 0, 1);
    call("qtbus_dispatch_json");
    expect(qtbus_dispatch_json(bus, "cfg", "{\"a\":[1,2,3]}"), 0, 1);
    call("qtbus_dispatch_on_bus_queue");
    expect(qtbus_dispatch_on_bus_queue(bus, &d), 0, 1);
    /* A posted sticky event was accepted when the post returned QTBUS_OK: keeping it
     * when the bus queue runs cannot fail, so a replaying subscription gets it. */
    call("qtbus_dispatch_on_bus_queue (sticky)");
    qtbus_event_desc ps = {.type = "PS", .data = "y", .size = 1, .flags = QTBUS_EVENT_STICKY};
    if (qtbus_dispatch_on_bus_queue(bus, &ps) == QTBUS_OK) {
        expect(qtbus_bus_wait_idle(bus, -1), 0, 0);
        qtbus_token tps = {0};
        int before_replay = replayed;
        call("qtbus_subscribe (replay of a posted sticky event)");
        if (subscribe_with(bus, "PS", &orp, count_replay, &tps) == QTBUS_OK) {
            if (replayed != before_replay + 1) fail("a posted sticky event was accepted but not kept");
            qtbus_token_dispose(tps);
        }
    }
    call("qtbus_request");
    qtbus_event_desc r = {.type = "E", .subtype = "reply"};
    expect(qtbus_request(bus, &r, on_reply, NULL, NULL), 0, 1);
    /* A deferred reply: the request completes once, when it is finished (or at once
     * when the defer or the request itself ran out of memory). */
    qtbus_token td = {0};
    call("qtbus_subscribe (deferring)");
    subscribe(bus, "D", NULL, &td);
    call("qtbus_event_defer");
    qtbus_event_desc dr = {.type = "D", .subtype = "defer"};
    int before = completions;
    deferred_rc = 1;
    int reached = qtbus_request(bus, &dr, on_reply, NULL, complete);
    expect(reached, 0, 1);
    if (reached > 0 && deferred_rc == QTBUS_OK) {
        if (completions != before) fail("a deferred request completed before it was finished");
        call("qtbus_deferred_reply");
        expect(qtbus_deferred_reply(deferred, "x", 1), 0, 0);
        call("qtbus_deferred_finish");
        expect(qtbus_deferred_finish(deferred), 0, 0);
    } else if (reached > 0) {
        expect(deferred_rc, 0, 1);
    }
    if (reached >= 0 && completions != before + 1) fail("a request did not complete exactly once");
    if (td.id) qtbus_token_dispose(td);
    static const qtbus_arg text_int[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32};
    call("qtbus_signal_define");
    int defined = qtbus_signal_define(bus, "G", text_int, 2);
    expect(defined, 0, 1);
    if (defined == QTBUS_OK) {
        call("qtbus_signal_connect");
        connect_typed(bus, "G", NULL);
        call("qtbus_signal_connect (queue)");
        connect_typed(bus, "G", q ? &oq : NULL);
        call("qtbus_signal_emit");
        expect(qtbus_signal_emit(bus, "G", NULL, "text", (int32_t)1), 0, 1);
        /* More than emit packs without allocating. */
        static char large[700];
        memset(large, 'l', sizeof large - 1);
        qtbus_value v[2] = {{.str = large}, {.i32 = 2}};
        call("qtbus_signal_emitv (large)");
        expect(qtbus_signal_emitv(bus, "G", "a", 0, v, 2), 0, 1);
        call("qtbus_signal_requestv");
        expect(qtbus_signal_requestv(bus, "G", NULL, v, 2, on_reply, NULL, NULL), 0, 1);
    }
    patterns(bus);
    call("qtbus_subscriber_count");
    expect(qtbus_subscriber_count(bus, "E", NULL), 0, 1);
    call("qtbus_bus_foreach");
    expect(qtbus_bus_foreach(bus, count_info, NULL), 0, 1);
    call("qtbus_errmsg");
    if (qtbus_errmsg() == NULL) fail("qtbus_errmsg returned NULL");

    qtbus_command c = {0};
    call("qtbus_command_create");
    expect(qtbus_command_create(bus, "cmd", 0, execute, NULL, NULL, &c), 0, 1);
    if (c.id) {
        call("qtbus_command_execute");
        expect(qtbus_command_execute(c, NULL, NULL), 0, 1);
        call("qtbus_command_dispose");
        expect(qtbus_command_dispose(c), 0, 0);
    }
    qtbus_source s = {0};
    call("qtbus_source_create");
    expect(qtbus_source_create(bus, "F", 0, start, stop, NULL, NULL, &s), 0, 1);
    if (s.id) {
        call("qtbus_source_connect");
        expect(qtbus_source_connect(s), 0, 1);
        call("qtbus_source_dispose");
        expect(qtbus_source_dispose(s), 0, 0);
    }

    call("qtbus_sticky_clear");
    expect(qtbus_sticky_clear(bus, "S", NULL), 0, 1);
    call("qtbus_token_dispose");
    if (t2.id) expect(qtbus_token_dispose(t2), 0, 0);
    call("qtbus_bag_dispose");
    if (bag.id) expect(qtbus_bag_dispose(bag), 0, 0);
    call("qtbus_bus_destroy");
    expect(qtbus_bus_destroy(bus), 0, 0);
    if (hooks_released != hooks_set) fail("a trace hook's release did not run with its bus's destroy");
    if (q) {
        call("qtbus_queue_release");
        qtbus_queue_release(q);
    }
}

/* Queued releases run on their queues: waits for them. */
static void settle(void)
{
    for (int i = 0; i < 2000 && released != subscribed; i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

int main(int argc, char **argv)
{
    memory_may_fail = 0;
    if (argc > 1 && strcmp(argv[1], "--warm") == 0) {
        scenario();
        settle();
    }
    memory_may_fail = 1;
    if (oom_arm) oom_arm();
    scenario();
    if (oom_disarm) oom_disarm();
    call("with memory back");
    memory_may_fail = 0;
    scenario();
    settle();
    if (released != subscribed) {
        fprintf(stderr, "workload: %d subscriptions made, %d released\n", subscribed, released);
        exit(3);
    }
    call("done");
    return 0;
}
