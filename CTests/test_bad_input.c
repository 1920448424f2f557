/* SPDX-License-Identifier: MIT */
/*
 * test_bad_input: every bad input the header names returns its documented code, and
 * changes nothing.
 *
 * Users rely on the error convention: a failed call changes nothing, takes ownership of
 * nothing and never calls the callbacks passed to it -- so the caller still owns (and
 * frees) its userdata and its event object.  Names are 1..255 bytes of valid UTF-8.
 */
#include "test_util.h"

static qtbus_bus *bus;
static tu_rec victim;              /* userdata of every subscribe that must fail */
static atomic_int object_releases; /* object of every dispatch that must fail */
static int failures_checked;

typedef struct named {
    const char *label;
    const char *name;
} named;

static char long255[256], long256[257], euro85[256], euro86[259];

static const named bad_names[] = {
    {"empty", ""},
    {"256 bytes", long256},
    {"258 bytes of 3-byte chars", euro86},
    {"0xff", "\xff"},
    {"lone continuation", "ab\x80"},
    {"bad continuation", "\xc3\x28"},
    {"overlong /", "\xc0\xaf"},
    {"overlong 3-byte", "\xe0\x80\xaf"},
    {"surrogate", "\xed\xa0\x80"},
    {"beyond U+10FFFF", "\xf4\x90\x80\x80"},
    {"5-byte form", "\xf8\x88\x80\x80\x80"},
    {"truncated 3-byte", "abc\xe2\x82"},
    {"truncated at end", "x\xc3"},
};
#define N_BAD ((int)(sizeof bad_names / sizeof bad_names[0]))

static void nop_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
}

/* A subscribe that must fail with `expect`, set *token_out to {0}, call no callback. */
static void sub_fails(qtbus_bus *b, const char *type, const qtbus_sub_options *o, qtbus_handler h, int expect,
                      const char *what)
{
    qtbus_token t;
    t.id = 0x5151515151515151ull;
    int rc = qtbus_subscribe(b, type, o, h, &victim, tu_rec_release, &t);
    CHECK_MSG(rc == expect, "subscribe (%s): %d %s, expected %d %s", what, rc, tu_status_name(rc), expect,
              tu_status_name(expect));
    CHECK_MSG(t.id == 0, "subscribe (%s): token_out not reset", what);
    /* token_out NULL: same result. */
    CHECK_EQ_INT(qtbus_subscribe(b, type, o, h, &victim, tu_rec_release, NULL), expect);
    CHECK_EQ_INT(atomic_load(&victim.releases), 0);
    failures_checked++;
}

/* A dispatch (all three flavours) that must fail with EINVAL and not release the object. */
static void dispatch_fails(qtbus_bus *b, qtbus_event_desc *d, const char *what)
{
    if (d) {
        d->object = &object_releases;
        d->object_release = tu_count_release;
    }
    int rc = qtbus_dispatch(b, d);
    CHECK_MSG(rc == QTBUS_EINVAL, "dispatch (%s): %d %s", what, rc, tu_status_name(rc));
    rc = qtbus_dispatch_on_bus_queue(b, d);
    CHECK_MSG(rc == QTBUS_EINVAL, "dispatch_on_bus_queue (%s): %d %s", what, rc, tu_status_name(rc));
    rc = qtbus_dispatch_on_main(b, d);
    CHECK_MSG(rc == QTBUS_EINVAL, "dispatch_on_main (%s): %d %s", what, rc, tu_status_name(rc));
    CHECK_EQ_INT(atomic_load(&object_releases), 0);
    failures_checked += 3;
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    tu_rec_init(&victim);
    atomic_init(&object_releases, 0);
    memset(long255, 'n', 255);
    memset(long256, 'n', 256);
    for (int i = 0; i < 85; i++)
        memcpy(euro85 + 3 * i, "\xe2\x82\xac", 3);
    for (int i = 0; i < 86; i++)
        memcpy(euro86 + 3 * i, "\xe2\x82\xac", 3);
    CHECK(qtbus_main_drain() >= 0); /* start with an empty main queue */

    /* ---- Buses and bags ---- */
    CHECK_EQ_INT(qtbus_bus_destroy(NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_bus_destroy(qtbus_shared()), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_bag_create(NULL), QTBUS_EINVAL);
    qtbus_bag none_bag = {0};
    qtbus_token none_token = {0};
    CHECK_EQ_INT(qtbus_bag_dispose(none_bag), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_token_dispose(none_token), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_token_is_active(none_token), 0);
    qtbus_bag live_bag;
    CHECK_EQ_INT(qtbus_bag_create(&live_bag), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bag_add(live_bag, none_token), QTBUS_ESTALE);
    qtbus_queue_release(NULL);
    CHECK(qtbus_event_type(NULL) == NULL);
    CHECK_EQ_INT(qtbus_event_stop(NULL), QTBUS_EINVAL);
    failures_checked += 11;

    /* The shared bus survived the destroy attempt. */
    {
        tu_rec r;
        tu_rec_init(&r);
        qtbus_token t;
        CHECK_EQ_INT(tu_sub_rec(qtbus_shared(), "BadInputShared", NULL, &r, &t), QTBUS_OK);
        qtbus_event_desc d = tu_event("BadInputShared", NULL);
        CHECK_EQ_INT(qtbus_dispatch(qtbus_shared(), &d), 1);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&r.releases), 1);
    }

    /* ---- Subscribe ---- */
    qtbus_sub_options o = tu_options();
    sub_fails(NULL, "T", NULL, nop_handler, QTBUS_EINVAL, "NULL bus");
    sub_fails(bus, NULL, NULL, nop_handler, QTBUS_EINVAL, "NULL type");
    sub_fails(bus, "T", NULL, NULL, QTBUS_EINVAL, "NULL handler");
    for (int i = 0; i < N_BAD; i++)
        sub_fails(bus, bad_names[i].name, NULL, nop_handler, QTBUS_EINVAL, bad_names[i].label);
    /* subtypes NULL with a count */
    o = tu_options();
    o.subtype_count = 1;
    sub_fails(bus, "T", &o, nop_handler, QTBUS_EINVAL, "subtypes NULL, count 1");
    /* a NULL or bad name among the subtypes */
    {
        const char *with_null[] = {"ok", NULL};
        o = tu_options();
        o.subtypes = with_null;
        o.subtype_count = 2;
        sub_fails(bus, "T", &o, nop_handler, QTBUS_EINVAL, "NULL subtype name");
        for (int i = 0; i < N_BAD; i++) {
            const char *subs[] = {"ok", bad_names[i].name};
            o.subtypes = subs;
            o.subtype_count = 2;
            sub_fails(bus, "T", &o, nop_handler, QTBUS_EINVAL, bad_names[i].label);
        }
    }
    /* unknown flag bits */
    {
        const uint32_t bad_flags[] = {1u << 3,
                                      1u << 4,
                                      1u << 16,
                                      1u << 31,
                                      QTBUS_SUB_ONCE | (1u << 5),
                                      QTBUS_SUB_ONCE | QTBUS_SUB_REPLAY | (1u << 30)};
        for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
            o = tu_options();
            o.flags = bad_flags[i];
            sub_fails(bus, "T", &o, nop_handler, QTBUS_EINVAL, "unknown flag");
        }
    }
    /* a bag that is not live: disposed, forged */
    {
        qtbus_bag dead;
        CHECK_EQ_INT(qtbus_bag_create(&dead), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_dispose(dead), QTBUS_OK);
        o = tu_options();
        o.bag = dead;
        sub_fails(bus, "T", &o, nop_handler, QTBUS_ESTALE, "disposed bag");
        o.bag.id = live_bag.id ^ (1ull << 40);
        sub_fails(bus, "T", &o, nop_handler, QTBUS_ESTALE, "forged bag");
    }
    /* The QTBUS_SUB* macros, whose bag is the subscription's only handle: a bag never
     * created ({0}) or disposed subscribes nothing on the shared bus, and says why. */
    {
        qtbus_bag zero = {0}, dead;
        CHECK_EQ_INT(qtbus_bag_create(&dead), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bag_dispose(dead), QTBUS_OK);
        int before = qtbus_subscriber_count(qtbus_shared(), "BadInputMacro", NULL);
        int json_before = qtbus_subscriber_count(qtbus_shared(), QTBUS_JSON_TYPE, "BadInputMacro");
        CHECK_EQ_INT(before, 0);
        CHECK_EQ_INT(QTBUS_SUB(zero, "BadInputMacro", nop_handler, NULL), QTBUS_EINVAL);
        CHECK_MSG(strstr(qtbus_errmsg(), "QTBUS_SUB: the bag is {0}") == qtbus_errmsg(), "%s", qtbus_errmsg());
        CHECK_EQ_INT(QTBUS_SUB_MAIN(zero, "BadInputMacro", nop_handler, NULL), QTBUS_EINVAL);
        CHECK_MSG(strstr(qtbus_errmsg(), "QTBUS_SUB_MAIN: the bag is {0}") == qtbus_errmsg(), "%s", qtbus_errmsg());
        CHECK_EQ_INT(QTBUS_SUB_JSON(zero, "BadInputMacro", nop_handler, NULL), QTBUS_EINVAL);
        CHECK_MSG(strstr(qtbus_errmsg(), "QTBUS_SUB_JSON: the bag is {0}") == qtbus_errmsg(), "%s", qtbus_errmsg());
        /* A disposed bag is refused by the qtbus_subscribe() the macro makes: the message
         * still names the macro the caller wrote first, then that call's reason. */
        CHECK_EQ_INT(QTBUS_SUB(dead, "BadInputMacro", nop_handler, NULL), QTBUS_ESTALE);
        CHECK_MSG(strstr(qtbus_errmsg(), "QTBUS_SUB: qtbus_subscribe: the bag") == qtbus_errmsg(), "%s",
                  qtbus_errmsg());
        CHECK_EQ_INT(QTBUS_SUB_MAIN(dead, "BadInputMacro", nop_handler, NULL), QTBUS_ESTALE);
        CHECK_MSG(strstr(qtbus_errmsg(), "QTBUS_SUB_MAIN: qtbus_subscribe: the bag") == qtbus_errmsg(), "%s",
                  qtbus_errmsg());
        CHECK_EQ_INT(QTBUS_SUB_JSON(dead, "BadInputMacro", nop_handler, NULL), QTBUS_ESTALE);
        CHECK_MSG(strstr(qtbus_errmsg(), "QTBUS_SUB_JSON: qtbus_subscribe: the bag") == qtbus_errmsg(), "%s",
                  qtbus_errmsg());
        CHECK_EQ_INT(qtbus_subscriber_count(qtbus_shared(), "BadInputMacro", NULL), 0);
        CHECK_EQ_INT(qtbus_subscriber_count(qtbus_shared(), QTBUS_JSON_TYPE, "BadInputMacro"), json_before);
        /* A live bag works, and disposing it removes what the macros made. */
        qtbus_bag live;
        CHECK_EQ_INT(qtbus_bag_create(&live), QTBUS_OK);
        /* Any other refusal of that qtbus_subscribe() names the macro first too. */
        CHECK_EQ_INT(QTBUS_SUB(live, "BadInputMacro\xff", nop_handler, NULL), QTBUS_EINVAL);
        CHECK_MSG(strstr(qtbus_errmsg(), "QTBUS_SUB: qtbus_subscribe: the type name") == qtbus_errmsg(), "%s",
                  qtbus_errmsg());
        CHECK_EQ_INT(QTBUS_SUB(live, "BadInputMacro", nop_handler, NULL), QTBUS_OK);
        CHECK_EQ_INT(QTBUS_SUB_JSON(live, "BadInputMacro", nop_handler, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscriber_count(qtbus_shared(), "BadInputMacro", NULL), 1);
        CHECK_EQ_INT(qtbus_bag_dispose(live), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscriber_count(qtbus_shared(), "BadInputMacro", NULL), 0);
        CHECK_EQ_INT(qtbus_subscriber_count(qtbus_shared(), QTBUS_JSON_TYPE, "BadInputMacro"), json_before);
        failures_checked += 7;
    }

    /* Nothing was subscribed by any of that. */
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", NULL), 0);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "ok"), 0);
    /* The live bag took nothing: disposing it releases nothing. */
    CHECK_EQ_INT(qtbus_bag_dispose(live_bag), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&victim.releases), 0);

    /* ---- subscriber_count, sticky_clear ---- */
    CHECK_EQ_INT(qtbus_subscriber_count(NULL, "T", NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, NULL, NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_sticky_clear(NULL, "T", NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_sticky_clear(bus, NULL, NULL), QTBUS_EINVAL);
    failures_checked += 4;
    for (int i = 0; i < N_BAD; i++) {
        const char *n = bad_names[i].name;
        CHECK_MSG(qtbus_subscriber_count(bus, n, NULL) == QTBUS_EINVAL, "count type %s", bad_names[i].label);
        CHECK_MSG(qtbus_subscriber_count(bus, "T", n) == QTBUS_EINVAL, "count subtype %s", bad_names[i].label);
        CHECK_MSG(qtbus_sticky_clear(bus, n, NULL) == QTBUS_EINVAL, "clear type %s", bad_names[i].label);
        CHECK_MSG(qtbus_sticky_clear(bus, "T", n) == QTBUS_EINVAL, "clear subtype %s", bad_names[i].label);
        failures_checked += 4;
    }

    /* ---- Dispatch (all three flavours) ---- */
    /* A subscriber that would notice any delivery, and a lost-event subscriber. */
    tu_rec watcher, lost;
    tu_rec_init(&watcher);
    tu_rec_init(&lost);
    qtbus_token tw, tl;
    CHECK_EQ_INT(tu_sub_rec(bus, "T", NULL, &watcher, &tw), QTBUS_OK);
    CHECK_EQ_INT(tu_sub_rec(bus, QTBUS_NO_SUBSCRIBER_TYPE, NULL, &lost, &tl), QTBUS_OK);
    qtbus_event_desc d;
    dispatch_fails(NULL, (d = tu_event("T", NULL), &d), "NULL bus");
    dispatch_fails(bus, NULL, "NULL event");
    dispatch_fails(bus, (d = tu_event(NULL, NULL), &d), "NULL type");
    for (int i = 0; i < N_BAD; i++) {
        dispatch_fails(bus, (d = tu_event(bad_names[i].name, NULL), &d), bad_names[i].label);
        dispatch_fails(bus, (d = tu_event("T", bad_names[i].name), &d), bad_names[i].label);
    }
    d = tu_event("T", NULL);
    d.data = NULL;
    d.size = 1;
    dispatch_fails(bus, &d, "data NULL with size 1");
    d = tu_event("T", NULL);
    d.size = SIZE_MAX;
    dispatch_fails(bus, &d, "data NULL with size SIZE_MAX");
    {
        const uint32_t bad_flags[] = {1u << 1, 1u << 8, 1u << 31, QTBUS_EVENT_STICKY | (1u << 4)};
        for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
            d = tu_event("T", NULL);
            d.data = "x";
            d.size = 1;
            d.flags = bad_flags[i];
            dispatch_fails(bus, &d, "unknown flag");
        }
    }
    /* dispatch_json argument errors */
    CHECK_EQ_INT(qtbus_dispatch_json(NULL, "n", "{}"), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_dispatch_json(bus, NULL, "{}"), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_dispatch_json(bus, "n", NULL), QTBUS_EINVAL);
    for (int i = 0; i < N_BAD; i++)
        CHECK_MSG(qtbus_dispatch_json(bus, bad_names[i].name, "{}") == QTBUS_EINVAL, "dispatch_json name %s",
                  bad_names[i].label);
    failures_checked += 3 + N_BAD;

    /* Nothing was delivered, nothing kept (a REPLAY subscriber gets nothing from the
     * failed STICKY dispatch), nothing posted to the bus queue or the main queue. */
    CHECK_EQ_INT(atomic_load(&watcher.calls), 0);
    CHECK_EQ_INT(atomic_load(&lost.calls), 0);
    {
        tu_rec replay;
        tu_rec_init(&replay);
        o = tu_options();
        o.flags = QTBUS_SUB_REPLAY;
        qtbus_token tr;
        CHECK_EQ_INT(tu_sub_rec(bus, "T", &o, &replay, &tr), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&replay.calls), 0);
        CHECK_EQ_INT(qtbus_token_dispose(tr), QTBUS_OK);
        CHECK_EQ_INT(qtbus_sticky_clear(bus, "T", NULL), 0);
    }
    {
        /* The bus queue is FIFO: once this marker arrives, any failed post would have. */
        atomic_int marker;
        atomic_init(&marker, 0);
        qtbus_event_desc m = tu_event("Marker", NULL);
        m.object = &marker;
        m.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &m), QTBUS_OK);
        CHECK_WAIT(atomic_load(&marker) == 1, TU_WAIT_MS);
    }
    CHECK_EQ_INT(qtbus_main_drain(), 0);
    CHECK_EQ_INT(atomic_load(&watcher.calls), 0);
    CHECK_EQ_INT(atomic_load(&object_releases), 0);

    /* ---- The limits themselves are fine: 255 bytes, 85 x 3-byte chars, any UTF-8 ---- */
    {
        const char *good[] = {long255, euro85, "\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80", "a"};
        for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
            tu_rec r;
            tu_rec_init(&r);
            qtbus_token t1, t2;
            const char *subs[] = {good[i]};
            o = tu_options();
            o.subtypes = subs;
            o.subtype_count = 1;
            CHECK_MSG(tu_sub_rec(bus, good[i], NULL, &r, &t1) == QTBUS_OK, "good name #%zu", i);
            CHECK_EQ_INT(tu_sub_rec(bus, "Good", &o, &r, &t2), QTBUS_OK);
            CHECK_EQ_INT(qtbus_subscriber_count(bus, good[i], NULL), 1);
            CHECK_EQ_INT(qtbus_subscriber_count(bus, "Good", good[i]), 1);
            d = tu_event(good[i], good[i]);
            CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
            d = tu_event("Good", good[i]);
            CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
            CHECK_EQ_INT(atomic_load(&r.calls), 2);
            CHECK_EQ_INT(qtbus_sticky_clear(bus, good[i], good[i]), 0);
            CHECK(qtbus_dispatch_json(bus, good[i], "1") >= 0);
            CHECK_EQ_INT(qtbus_token_dispose(t1), QTBUS_OK);
            CHECK_EQ_INT(qtbus_token_dispose(t2), QTBUS_OK);
            CHECK_EQ_INT(atomic_load(&r.releases), 2);
        }
    }

    CHECK_EQ_INT(qtbus_token_dispose(tw), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(tl), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);

    /* The caller still owns everything it passed to failed calls: never released. */
    CHECK_EQ_INT(atomic_load(&victim.releases), 0);
    CHECK_EQ_INT(atomic_load(&victim.calls), 0);
    CHECK_EQ_INT(atomic_load(&object_releases), 0);
    printf("test_bad_input: %d failing calls checked\n", failures_checked);
    return 0;
}
