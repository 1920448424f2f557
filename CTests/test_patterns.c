/* SPDX-License-Identifier: MIT */
/*
 * test_patterns: subscriptions to families of events (QTBUS_SUB_PATTERN), NATS's
 * wildcards over dotted type names.
 *
 * Users rely on: "*" matching one token and ">" the rest, wildcard characters inside a
 * token being literal; invalid patterns refused with QTBUS_EINVAL and a reason,
 * nothing subscribed; REPLAY replaying every matching type's kept events, oldest first
 * across types; the flag being what makes a pattern
 * (the same text without it is a literal type); the delivery order (priority, then the
 * type's subtype list, its whole list, then pattern subscriptions in subscription
 * order), also across many lists whose priorities interleave and at the ends of the
 * range; subscriptions disposed during a dispatch not reached by it, ones made during
 * it reached by the next only; subtypes narrowing a pattern; ONCE, queues, stop,
 * requests, dispose and bus destroy (release exactly once); counts, foreach, no
 * QTNoSubscriberEvent for an event a pattern received; a pattern made after a type was
 * cached reaching it, one made during a dispatch reaching the next; dispatch by type
 * id; threads subscribing and disposing patterns while others dispatch, and adding
 * new pattern texts, each reaching every dispatch that starts after its subscribe
 * returned.
 */
#include "test_util.h"

static qtbus_bus *bus;

/* ---- a log of which subscription saw what ---- */
#define LOG_MAX 256
static char log_text[LOG_MAX][48];
static atomic_int log_count;

static void logger(const qtbus_event *ev, void *userdata)
{
    int i = atomic_fetch_add(&log_count, 1);
    CHECK(i < LOG_MAX);
    const char *subtype = qtbus_event_subtype(ev);
    snprintf(log_text[i], sizeof log_text[i], "%s:%s%s%s", (const char *)userdata, qtbus_event_type(ev),
             subtype ? "/" : "", subtype ? subtype : "");
}

static void log_reset(void) { atomic_store(&log_count, 0); }

#define CHECK_LOG(...)                                                                                                 \
    do {                                                                                                               \
        const char *want_[] = {__VA_ARGS__};                                                                           \
        int n_ = (int)(sizeof want_ / sizeof want_[0]);                                                                \
        CHECK_EQ_INT(atomic_load(&log_count), n_);                                                                     \
        for (int i_ = 0; i_ < n_; i_++)                                                                                \
            CHECK_EQ_STR(log_text[i_], want_[i_]);                                                                     \
    } while (0)

static qtbus_token sub_full(const char *type, const char *tag, uint32_t flags, int32_t priority, const char *subtype)
{
    qtbus_sub_options o = tu_options();
    o.flags = flags;
    o.priority = priority;
    const char *subtypes[1] = {subtype};
    if (subtype) {
        o.subtypes = subtypes;
        o.subtype_count = 1;
    }
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(bus, type, &o, logger, (void *)tag, NULL, &t), QTBUS_OK);
    return t;
}

static qtbus_token pat(const char *pattern, const char *tag)
{
    return sub_full(pattern, tag, QTBUS_SUB_PATTERN, 0, NULL);
}

static int send(const char *type, const char *subtype)
{
    qtbus_event_desc d = tu_event(type, subtype);
    return qtbus_dispatch(bus, &d);
}

static void fresh_bus(void)
{
    if (bus) CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    log_reset();
}

/* ---- bad patterns: EINVAL, a reason, nothing subscribed ---- */
static void test_invalid(void)
{
    fresh_bus();
    static const char *const bad[] = {".", ".foo", "foo.", "foo..bar", ">.bar", "foo.>.bar", "a.b..d"};
    qtbus_sub_options o = tu_options();
    o.flags = QTBUS_SUB_PATTERN;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        qtbus_token t = {77};
        CHECK_EQ_INT(qtbus_subscribe(bus, bad[i], &o, logger, "x", NULL, &t), QTBUS_EINVAL);
        CHECK(strstr(qtbus_errmsg(), "pattern") != NULL);
        CHECK_EQ_U64(t.id, 0);
    }
    CHECK(strstr(qtbus_errmsg(), "empty token") != NULL);
    CHECK_EQ_INT(qtbus_subscribe(bus, "foo.>.bar", &o, logger, "x", NULL, NULL), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_subscribe: the pattern \"foo.>.bar\" has \">\" before its last token "
                                 "(\">\" matches the rest: only as the last token)");
    /* Nothing was subscribed: every type reaches nobody. */
    CHECK_EQ_INT(send("foo.bar", NULL), 0);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "foo", NULL), 0);
    /* Without the flag, the same texts are literal types (any name is one). */
    sub_full("foo..bar", "lit", 0, 0, NULL);
    CHECK_EQ_INT(send("foo..bar", NULL), 1);
    CHECK_LOG("lit:foo..bar");
}

/* ---- what matches ---- */
static void test_matching(void)
{
    fresh_bus();
    pat("Order.*", "star");
    pat("Order.>", "rest");
    pat(">", "all");
    pat("*", "one");
    pat("Or*", "lit-star");                     /* a literal token "Or*" */
    sub_full("Order.*", "literal", 0, 0, NULL); /* no flag: the type "Order.*" */
    CHECK_EQ_INT(send("Order.created", NULL), 3);
    CHECK_LOG("star:Order.created", "rest:Order.created", "all:Order.created");
    log_reset();
    CHECK_EQ_INT(send("Order.created.eu", NULL), 2);
    CHECK_LOG("rest:Order.created.eu", "all:Order.created.eu");
    log_reset();
    CHECK_EQ_INT(send("Order", NULL), 2);
    CHECK_LOG("all:Order", "one:Order");
    log_reset();
    CHECK_EQ_INT(send("Or*", NULL), 3); /* "Or*" as a pattern is that literal token */
    CHECK_LOG("all:Or*", "one:Or*", "lit-star:Or*");
    log_reset();
    CHECK_EQ_INT(send("Order.*", NULL), 4); /* the literal one, and the patterns matching "*" as a token */
    CHECK_LOG("literal:Order.*", "star:Order.*", "rest:Order.*", "all:Order.*");
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Order.created", NULL), 3);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Order.*", NULL), 4);
}

/* ---- delivery order ---- */
static void test_order(void)
{
    fresh_bus();
    pat("Order.*", "p1");
    sub_full("Order.created", "whole", 0, 0, NULL);
    sub_full("Order.created", "sub", 0, 0, "eu");
    sub_full("Order.>", "p2-high", QTBUS_SUB_PATTERN, 5, NULL);
    pat(">", "p3");
    sub_full("*.created", "p4-eu", QTBUS_SUB_PATTERN, 0, "eu");
    sub_full("*.created", "p5-us", QTBUS_SUB_PATTERN, 0, "us");
    sub_full("Order.created", "whole-low", 0, -1, NULL);
    CHECK_EQ_INT(send("Order.created", "eu"), 7);
    CHECK_LOG("p2-high:Order.created/eu", "sub:Order.created/eu", "whole:Order.created/eu", "p1:Order.created/eu",
              "p3:Order.created/eu", "p4-eu:Order.created/eu", "whole-low:Order.created/eu");
    log_reset();
    CHECK_EQ_INT(send("Order.created", NULL), 5);
    CHECK_LOG("p2-high:Order.created", "whole:Order.created", "p1:Order.created", "p3:Order.created",
              "whole-low:Order.created");
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Order.created", "eu"), 7);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Order.created", NULL), 8);
}

/* ---- order across many lists: priorities interleaving, each list's nodes taken in turn ---- */
static void test_order_interleaved(void)
{
    fresh_bus();
    pat("Mix.*", "a0");
    sub_full("Mix.x", "w0", 0, 0, NULL);
    sub_full(">", "b2", QTBUS_SUB_PATTERN, 2, NULL);
    sub_full("Mix.*", "a2", QTBUS_SUB_PATTERN, 2, NULL);
    sub_full("Mix.x", "s2", 0, 2, "k");
    sub_full("Mix.>", "c0", QTBUS_SUB_PATTERN, 0, NULL);
    sub_full(">", "b0", QTBUS_SUB_PATTERN, 0, NULL);
    sub_full("Mix.*", "a-1", QTBUS_SUB_PATTERN, -1, "k");
    sub_full("Mix.x", "w2", 0, 2, NULL);
    sub_full("Mix.>", "c2", QTBUS_SUB_PATTERN, 2, "k");
    sub_full("Mix.*", "a0b", QTBUS_SUB_PATTERN, 0, NULL);
    sub_full("Mix.x", "s0", 0, 0, "k");
    sub_full(">", "b-1", QTBUS_SUB_PATTERN, -1, NULL);
    sub_full("Mix.x", "w-1", 0, -1, NULL);
    sub_full("Mix.>", "c5", QTBUS_SUB_PATTERN, 5, "other");
    /* Each priority in turn: the subtype's list, the whole list, then the patterns' in
     * subscription order, whichever pattern and list each is on. */
    CHECK_EQ_INT(send("Mix.x", "k"), 14);
    CHECK_LOG("s2:Mix.x/k", "w2:Mix.x/k", "b2:Mix.x/k", "a2:Mix.x/k", "c2:Mix.x/k", "s0:Mix.x/k", "w0:Mix.x/k",
              "a0:Mix.x/k", "c0:Mix.x/k", "b0:Mix.x/k", "a0b:Mix.x/k", "w-1:Mix.x/k", "a-1:Mix.x/k", "b-1:Mix.x/k");
    log_reset();
    CHECK_EQ_INT(send("Mix.x", NULL), 10);
    CHECK_LOG("w2:Mix.x", "b2:Mix.x", "a2:Mix.x", "w0:Mix.x", "a0:Mix.x", "c0:Mix.x", "b0:Mix.x", "a0b:Mix.x",
              "w-1:Mix.x", "b-1:Mix.x");
    log_reset();
    CHECK_EQ_INT(send("Mix.x", "other"), 11);
    CHECK_LOG("c5:Mix.x/other", "w2:Mix.x/other", "b2:Mix.x/other", "a2:Mix.x/other", "w0:Mix.x/other",
              "a0:Mix.x/other", "c0:Mix.x/other", "b0:Mix.x/other", "a0b:Mix.x/other", "w-1:Mix.x/other",
              "b-1:Mix.x/other");
    log_reset();
    /* A type with no subscriptions of its own: the patterns' lists alone. */
    CHECK_EQ_INT(send("Mix.y", "k"), 9);
    CHECK_LOG("b2:Mix.y/k", "a2:Mix.y/k", "c2:Mix.y/k", "a0:Mix.y/k", "c0:Mix.y/k", "b0:Mix.y/k", "a0b:Mix.y/k",
              "a-1:Mix.y/k", "b-1:Mix.y/k");
    /* The ends of the range. */
    fresh_bus();
    sub_full("Ext.*", "p-min", QTBUS_SUB_PATTERN, INT32_MIN, NULL);
    sub_full("Ext.>", "p-max", QTBUS_SUB_PATTERN, INT32_MAX, NULL);
    sub_full("Ext.x", "w-1", 0, -1, NULL);
    sub_full("*.x", "p1", QTBUS_SUB_PATTERN, 1, NULL);
    sub_full("Ext.x", "w-min", 0, INT32_MIN, NULL);
    CHECK_EQ_INT(send("Ext.x", NULL), 5);
    CHECK_LOG("p-max:Ext.x", "p1:Ext.x", "w-1:Ext.x", "w-min:Ext.x", "p-min:Ext.x");
}

/* ---- order across more patterns than the walk's stack room: 63 pattern entries
 * reaching one type, made in another order than the trie finds them, some with a
 * second subscription made last; the matches sorted past 20, the cursors (2 per
 * entry with a subtype) past 1 KB ---- */
static void test_order_many(void)
{
    fresh_bus();
    static const char *const tokens[6] = {"M", "b", "c", "d", "e", "f"};
    enum { ENTRIES = 63, SUBS = ENTRIES + 7 };
    static char tags[SUBS][8];
    int priority[SUBS];
    for (int j = 0; j < SUBS; j++) {
        unsigned mask = j < ENTRIES ? (unsigned)(j * 37 % ENTRIES) + 1 : (unsigned)(j - ENTRIES) * 9 + 1;
        char pattern[32], *w = pattern;
        for (int i = 0; i < 6; i++) {
            if (i) *w++ = '.';
            w += strlen(strcpy(w, mask & (1u << i) ? "*" : tokens[i]));
        }
        snprintf(tags[j], sizeof tags[j], "p%d", j);
        priority[j] = j % 3;
        sub_full(pattern, tags[j], QTBUS_SUB_PATTERN, priority[j], NULL);
        if (j == 10) {
            sub_full("M.b.c.d.e.f", "sub", 0, 1, "k");
            sub_full("M.b.c.d.e.f", "whole", 0, 1, NULL);
        }
    }
    for (int with_subtype = 1; with_subtype >= 0; with_subtype--) {
        for (int round = 0; round < 2; round++) { /* matched, then the kept answer */
            log_reset();
            int lit = with_subtype ? 2 : 1;
            CHECK_EQ_INT(send("M.b.c.d.e.f", with_subtype ? "k" : NULL), SUBS + lit);
            CHECK_EQ_INT(atomic_load(&log_count), SUBS + lit);
            int at = 0;
            for (int prio = 2; prio >= 0; prio--) {
                if (prio == 1) {
                    if (with_subtype) CHECK(strncmp(log_text[at++], "sub:", 4) == 0);
                    CHECK(strncmp(log_text[at++], "whole:", 6) == 0);
                }
                for (int j = 0; j < SUBS; j++) {
                    if (priority[j] != prio) continue;
                    char want[48];
                    snprintf(want, sizeof want, "p%d:M.b.c.d.e.f%s", j, with_subtype ? "/k" : "");
                    CHECK_EQ_STR(log_text[at], want);
                    at++;
                }
            }
        }
    }
}

/* ---- the lists change during a walk: disposed ones are skipped, new ones wait for the next ---- */
static qtbus_token walk_second, walk_third;
static int walk_acted;

static void walk_actor(const qtbus_event *ev, void *userdata)
{
    logger(ev, userdata);
    if (walk_acted++) return;
    /* The current node of another pattern's list, and the next one of this list. */
    CHECK_EQ_INT(qtbus_token_dispose(walk_second), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(walk_third), QTBUS_OK);
    sub_full("W.>", "new-high", QTBUS_SUB_PATTERN, 9, NULL); /* before the node that list's walk is on */
    pat("W.*", "new-low");                                   /* right after this node, now */
    sub_full("W.a", "new-lit", 0, 0, NULL);                  /* the type's list, empty when the walk began */
}

static void test_walk_changes(void)
{
    fresh_bus();
    walk_acted = 0;
    qtbus_sub_options o = tu_options();
    o.flags = QTBUS_SUB_PATTERN;
    CHECK_EQ_INT(qtbus_subscribe(bus, "W.*", &o, walk_actor, "first", NULL, NULL), QTBUS_OK);
    walk_second = pat("W.>", "second");
    walk_third = pat("W.*", "third");
    pat(">", "fourth");
    CHECK_EQ_INT(send("W.a", NULL), 2);
    CHECK_LOG("first:W.a", "fourth:W.a");
    log_reset();
    CHECK_EQ_INT(send("W.a", NULL), 5);
    CHECK_LOG("new-high:W.a", "new-lit:W.a", "first:W.a", "fourth:W.a", "new-low:W.a");
}

/* ---- stop ends the walk across groups ---- */
static void stopper(const qtbus_event *ev, void *userdata)
{
    logger(ev, userdata);
    CHECK_EQ_INT(qtbus_event_stop(ev), QTBUS_OK);
}

static void test_stop(void)
{
    fresh_bus();
    pat("A.*", "first");
    qtbus_sub_options o = tu_options();
    o.flags = QTBUS_SUB_PATTERN;
    CHECK_EQ_INT(qtbus_subscribe(bus, "A.>", &o, stopper, "stops", NULL, NULL), QTBUS_OK);
    pat(">", "never");
    CHECK_EQ_INT(send("A.b", NULL), 2);
    CHECK_LOG("first:A.b", "stops:A.b");
}

/* ---- lifetimes: dispose, ONCE, destroy, release exactly once ---- */
static void test_lifetime(void)
{
    fresh_bus();
    tu_rec r;
    tu_rec_init(&r);
    qtbus_sub_options o = tu_options();
    o.flags = QTBUS_SUB_PATTERN;
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(bus, "L.*", &o, tu_rec_handler, &r, tu_rec_release, &t), QTBUS_OK);
    CHECK_EQ_INT(send("L.a", NULL), 1);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&r.releases), 1);
    CHECK_EQ_INT(send("L.a", NULL), 0);
    CHECK_EQ_INT(atomic_load(&r.calls), 1);

    tu_rec once;
    tu_rec_init(&once);
    o.flags = QTBUS_SUB_PATTERN | QTBUS_SUB_ONCE;
    CHECK_EQ_INT(qtbus_subscribe(bus, "L.>", &o, tu_rec_handler, &once, tu_rec_release, NULL), QTBUS_OK);
    CHECK_EQ_INT(send("L.a.b", NULL), 1);
    CHECK_EQ_INT(send("L.a.b", NULL), 0);
    CHECK_EQ_INT(atomic_load(&once.calls), 1);
    CHECK_EQ_INT(atomic_load(&once.releases), 1);

    tu_rec kept;
    tu_rec_init(&kept);
    o.flags = QTBUS_SUB_PATTERN;
    CHECK_EQ_INT(qtbus_subscribe(bus, ">", &o, tu_rec_handler, &kept, tu_rec_release, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    bus = NULL;
    CHECK_EQ_INT(atomic_load(&kept.releases), 1);
}

/* ---- no QTNoSubscriberEvent for an event a pattern received ---- */
static void test_no_subscriber(void)
{
    fresh_bus();
    sub_full(QTBUS_NO_SUBSCRIBER_TYPE, "nobody", 0, 0, NULL);
    pat("Seen.*", "pattern");
    CHECK_EQ_INT(send("Seen.x", NULL), 1);
    CHECK_EQ_INT(send("Unseen.x", NULL), 0);
    CHECK_LOG("pattern:Seen.x", "nobody:QTNoSubscriberEvent/Unseen.x");
}

/* ---- REPLAY: the kept events of every matching type, oldest first ---- */
static void keep(const char *type, const char *subtype)
{
    qtbus_event_desc d = tu_event(type, subtype);
    d.flags = QTBUS_EVENT_STICKY;
    CHECK(qtbus_dispatch(bus, &d) >= 0);
}

static void test_replay(void)
{
    fresh_bus();
    keep("R.b", NULL);
    keep("R.a", "x");
    keep("Q.c", NULL);
    keep("R.a.deep", NULL);
    keep("R.a", "y");
    keep("R.b", NULL); /* replaces the first: now the newest */
    sub_full("R.*", "replay", QTBUS_SUB_PATTERN | QTBUS_SUB_REPLAY, 0, NULL);
    CHECK_LOG("replay:R.a/x", "replay:R.a/y", "replay:R.b");
    log_reset();
    sub_full("R.>", "replay-y", QTBUS_SUB_PATTERN | QTBUS_SUB_REPLAY, 0, "y");
    CHECK_LOG("replay-y:R.a/y");
    log_reset();
    /* Then live, as any replaying subscription. */
    CHECK_EQ_INT(send("R.z", NULL), 1);
    CHECK_LOG("replay:R.z");
    log_reset();
    CHECK_EQ_INT(send("R.z", "y"), 2);
    CHECK_LOG("replay:R.z/y", "replay-y:R.z/y");
}

/* ---- the cache: a pattern made later reaches a type dispatched before ---- */
static void resubscriber(const qtbus_event *ev, void *userdata)
{
    logger(ev, userdata);
    static int done;
    if (!done) {
        done = 1;
        pat("Dyn.*", "made-inside");
    }
}

static void test_cache(void)
{
    fresh_bus();
    pat("Other.*", "other");
    CHECK_EQ_INT(send("Dyn.a", NULL), 0); /* cached: no pattern matches */
    pat("Dyn.>", "later");
    CHECK_EQ_INT(send("Dyn.a", NULL), 1);
    CHECK_LOG("later:Dyn.a");
    log_reset();
    /* Made during a dispatch: not in that one, in the next. */
    qtbus_sub_options o = tu_options();
    o.flags = QTBUS_SUB_PATTERN;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Dyn.a", &o, resubscriber, "resub", NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(send("Dyn.a", NULL), 2);
    CHECK_LOG("later:Dyn.a", "resub:Dyn.a");
    log_reset();
    CHECK_EQ_INT(send("Dyn.a", NULL), 3);
    CHECK_LOG("later:Dyn.a", "resub:Dyn.a", "made-inside:Dyn.a");
    /* By type id too. */
    log_reset();
    qtbus_type_id id;
    CHECK_EQ_INT(qtbus_type_lookup(bus, "Dyn.b", &id), QTBUS_OK);
    qtbus_event_desc d = tu_event("Dyn.b", NULL);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, id, &d), 2);
    CHECK_LOG("later:Dyn.b", "made-inside:Dyn.b");
}

/* ---- queues and requests ---- */
static atomic_int completed;
static void on_done(void *u)
{
    (void)u;
    atomic_fetch_add(&completed, 1);
}
static void answer(const qtbus_event *ev, void *u)
{
    (void)u;
    qtbus_event_reply(ev, "ok", 2);
}
static atomic_int replies;
static void on_reply(const qtbus_event *ev, void *u)
{
    (void)ev;
    (void)u;
    atomic_fetch_add(&replies, 1);
}

static void test_queue_and_request(void)
{
    fresh_bus();
    qtbus_queue *q = qtbus_queue_create("patterns");
    qtbus_sub_options o = tu_options();
    o.flags = QTBUS_SUB_PATTERN;
    o.queue = q;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Q.*", &o, logger, "queued", NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(send("Q.a", NULL), 1);
    CHECK_IDLE(bus);
    CHECK_LOG("queued:Q.a");
    o.queue = NULL;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Ask.>", &o, answer, NULL, NULL, NULL), QTBUS_OK);
    qtbus_event_desc d = tu_event("Ask.login", NULL);
    atomic_store(&completed, 0);
    atomic_store(&replies, 0);
    CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, NULL, on_done), 1);
    CHECK_EQ_INT(atomic_load(&replies), 1);
    CHECK_EQ_INT(atomic_load(&completed), 1);
    qtbus_queue_release(q);
}

/* ---- foreach ---- */
static int foreach_patterns;
static void count_patterns(const qtbus_sub_info *info, void *u)
{
    (void)u;
    if (info->flags & QTBUS_SUB_PATTERN) {
        CHECK_EQ_STR(info->type, "F.*");
        foreach_patterns++;
    }
}

static void test_foreach(void)
{
    fresh_bus();
    pat("F.*", "a");
    pat("F.*", "b");
    sub_full("F.x", "c", 0, 0, NULL);
    foreach_patterns = 0;
    CHECK_EQ_INT(qtbus_bus_foreach(bus, count_patterns, NULL), 3);
    CHECK_EQ_INT(foreach_patterns, 2);
}

/* ---- threads: patterns come and go while others dispatch ---- */
static atomic_int stress_stop;
/* How many new pattern texts each subscribing worker has subscribed (never disposed). */
static atomic_int stress_new[2];
static void quiet(const qtbus_event *ev, void *u)
{
    (void)ev;
    (void)u;
}

/* Worker w's new text k, and a type it matches: "N<w>_<k>.*" and "N<w>_<k>.x" for an
 * even k (the root's table grows), "S.a.n<w>_<k>" for an odd one (a deeper table). */
static void stress_new_name(char *out, size_t size, int w, int k, int type)
{
    if (k % 2 == 0)
        snprintf(out, size, type ? "N%d_%d.x" : "N%d_%d.*", w, k);
    else
        snprintf(out, size, "S.a.n%d_%d", w, k);
}

static void stress_worker(int index, void *ctx)
{
    (void)ctx;
    char type[32];
    uint64_t rng = (uint64_t)index * 7919 + 1;
    if (index < 2) {
        static const char *const patterns[] = {"S.*", "S.>", ">", "*.b", "S.*.c", "S.a"};
        for (int i = 0; i < 3000; i++) {
            qtbus_sub_options o = tu_options();
            o.flags = QTBUS_SUB_PATTERN;
            qtbus_token t;
            CHECK_EQ_INT(qtbus_subscribe(bus, patterns[tu_rand(&rng) % 6], &o, quiet, NULL, NULL, &t), QTBUS_OK);
            if (tu_rand(&rng) % 4) CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
            if (i % 10 == 0) {
                int k = atomic_load(&stress_new[index]);
                stress_new_name(type, sizeof type, index, k, 0);
                CHECK_EQ_INT(qtbus_subscribe(bus, type, &o, quiet, NULL, NULL, NULL), QTBUS_OK);
                atomic_store(&stress_new[index], k + 1);
            }
        }
        atomic_fetch_add(&stress_stop, 1);
    } else {
        while (atomic_load(&stress_stop) < 2) {
            snprintf(type, sizeof type, "S.%c.%c", 'a' + (int)(tu_rand(&rng) % 3), 'a' + (int)(tu_rand(&rng) % 3));
            CHECK(send(type, NULL) >= 0);
            int w = (int)(tu_rand(&rng) % 2), made = atomic_load(&stress_new[w]);
            if (made > 0) {
                stress_new_name(type, sizeof type, w, (int)(tu_rand(&rng) % (uint64_t)made), 1);
                CHECK(send(type, NULL) >= 1);
            }
        }
    }
}

static void test_stress(void)
{
    fresh_bus();
    atomic_store(&stress_stop, 0);
    atomic_store(&stress_new[0], 0);
    atomic_store(&stress_new[1], 0);
    tu_run_threads(4, stress_worker, NULL);
    /* Afterwards every new text reaches its type, by a count as by a dispatch. */
    char type[32];
    for (int w = 0; w < 2; w++)
        for (int k = 0; k < atomic_load(&stress_new[w]); k++) {
            stress_new_name(type, sizeof type, w, k, 1);
            CHECK(send(type, NULL) >= 1);
            CHECK(qtbus_subscriber_count(bus, type, NULL) >= 1);
        }
}

int main(void)
{
    test_invalid();
    test_matching();
    test_order();
    test_order_interleaved();
    test_order_many();
    test_walk_changes();
    test_stop();
    test_lifetime();
    test_no_subscriber();
    test_replay();
    test_cache();
    test_queue_and_request();
    test_foreach();
    test_stress();
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_patterns: ok\n");
    return 0;
}
