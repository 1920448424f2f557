/* SPDX-License-Identifier: MIT */
/*
 * test_nats_names.c -- every libqtbus-nats call that takes a name refuses exactly the
 * names the bus refuses (qtbus.h, NAMES: UTF-8 of 1 to 255 bytes), all alike:
 *   - the prefix, a NATS subject rather than a name, has its own rule (printable ASCII
 *     tokens): what breaks it, invalid UTF-8 included, is refused by qtbus_nats_connect;
 *   - each invalid name (NULL, "", 256 bytes, invalid UTF-8 of every kind), as the type
 *     of qtbus_nats_export, qtbus_nats_import and qtbus_nats_import_subtype and as the
 *     subtype of the latter, is QTBUS_EINVAL; qtbus_errmsg() is "<the call>: <the
 *     engine's own reason for that name>"; the bus's trace hook gets one MISUSE record,
 *     the call's;
 *   - nothing changed: no subscription on the bus, none on the server (a raw publish on
 *     the subject each refused import would have taken reaches nobody), and valid
 *     exports and imports made afterwards work;
 *   - the bridge's rule is the engine's over names made of every lead byte and every
 *     kind of second byte (qtbus_subscriber_count gives the engine's verdict), valid
 *     names at the edges of UTF-8 are accepted by every call and cross, and a received
 *     subject whose name is not UTF-8 is dropped by the same rule.
 */
#include "nats_server.h"

#include <qtbus_nats.h>
#include <nats/nats.h>

static ns_server server;
static qtbus_bus *plain; /* no bridge, no hook: asked for the engine's verdicts */

/* ---- what the trace hooks saw ----------------------------------------------------- */

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static int seen_misuse;        /* MISUSE records since seen_reset() */
static char seen_function[64]; /* the last one's function */
static int seen_status;
static char seen_errmsg[400]; /* qtbus_errmsg() when it was made */
static int seen_edge_drops;   /* "dropped a message on qtbus.k.": expected ones (the
                                    * subject is cut in the message: its kind tells) */
static int seen_other_drops;  /* any other drop: a refused import that was registered */
static char seen_other_why[400];

static void hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind != QTBUS_TRACE_MISUSE) return;
    pthread_mutex_lock(&seen_lock);
    seen_misuse++;
    snprintf(seen_function, sizeof seen_function, "%s", r->function);
    seen_status = r->status;
    snprintf(seen_errmsg, sizeof seen_errmsg, "%s", qtbus_errmsg());
    if (strstr(seen_errmsg, "qtbus_nats_import: dropped a message on qtbus.k.") == seen_errmsg) {
        seen_edge_drops++;
    } else if (strstr(seen_errmsg, "dropped a message")) {
        seen_other_drops++;
        snprintf(seen_other_why, sizeof seen_other_why, "%s", seen_errmsg);
    }
    pthread_mutex_unlock(&seen_lock);
}

static void seen_reset(void)
{
    pthread_mutex_lock(&seen_lock);
    seen_misuse = 0;
    seen_function[0] = '\0';
    seen_status = 0;
    seen_errmsg[0] = '\0';
    pthread_mutex_unlock(&seen_lock);
}

static int seen_get(int *counter)
{
    pthread_mutex_lock(&seen_lock);
    int n = *counter;
    pthread_mutex_unlock(&seen_lock);
    return n;
}

/* ---- received events ------------------------------------------------------------- */

static pthread_mutex_t got_lock = PTHREAD_MUTEX_INITIALIZER;
static int got_count;
static char got_type[256], got_subtype[256];

static void receive(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    pthread_mutex_lock(&got_lock);
    snprintf(got_type, sizeof got_type, "%s", qtbus_event_type(e));
    snprintf(got_subtype, sizeof got_subtype, "%s", qtbus_event_subtype(e) ? qtbus_event_subtype(e) : "");
    got_count++;
    pthread_mutex_unlock(&got_lock);
}

static int got(void)
{
    pthread_mutex_lock(&got_lock);
    int n = got_count;
    pthread_mutex_unlock(&got_lock);
    return n;
}

/* ---- the calls and the engine's verdict ------------------------------------------ */

/* Where a name goes: the type of each call, and the subtype of import_subtype. */
enum { EXPORT_TYPE, IMPORT_TYPE, IMPORT_SUBTYPE_TYPE, IMPORT_SUBTYPE_SUBTYPE, SITES };
static const char *const site_function[SITES] = {"qtbus_nats_export", "qtbus_nats_import", "qtbus_nats_import_subtype",
                                                 "qtbus_nats_import_subtype"};

static int call(int site, qtbus_nats *bridge, const char *name)
{
    switch (site) {
    case EXPORT_TYPE: return qtbus_nats_export(bridge, name);
    case IMPORT_TYPE: return qtbus_nats_import(bridge, name);
    case IMPORT_SUBTYPE_TYPE: return qtbus_nats_import_subtype(bridge, name, "S");
    default: return qtbus_nats_import_subtype(bridge, "T", name);
    }
}

/* The engine's reason for refusing `name` as a type (or a subtype) into out, or 0 when
 * the engine accepts it.  NULL as a subtype means "none" to the engine but is no
 * subtype to import: its reason is the engine's wording for a NULL name. */
static int engine_refuses(int subtype, const char *name, char *out, size_t size)
{
    if (subtype && !name) {
        snprintf(out, size, "the subtype is NULL");
        return 1;
    }
    int rc = subtype ? qtbus_subscriber_count(plain, "T", name) : qtbus_subscriber_count(plain, name, NULL);
    if (rc >= 0) return 0;
    CHECK_EQ_INT(rc, QTBUS_EINVAL);
    static const char prefix[] = "qtbus_subscriber_count: ";
    const char *m = qtbus_errmsg();
    CHECK_MSG(strncmp(m, prefix, sizeof prefix - 1) == 0, "engine errmsg: %s", m);
    snprintf(out, size, "%s", m + sizeof prefix - 1);
    return 1;
}

/* A name as the bridge writes it (qtbus_nats.h, SUBJECTS): as a subtype, one token, or
 * (`type`) as a type's tokens, '.' between them and "_" for an empty one. */
static void encode(const char *name, char *out, bool type)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)name;; p++) {
        bool token_end = !*p || (type && *p == '.');
        if (token_end && type && (p == (const unsigned char *)name || p[-1] == '.')) out[n++] = '_';
        if (!*p) break;
        if (token_end) {
            out[n++] = '.';
        } else if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-') {
            out[n++] = (char)*p;
        } else {
            out[n++] = '_';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    out[n] = '\0';
}

static void count_one(const qtbus_sub_info *info, void *userdata)
{
    (void)info;
    (void)userdata;
}

typedef struct bad_name {
    const char *label;
    const char *name;
    const char *problem;
} bad_name;

int main(void)
{
    ns_start(&server);
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    plain = qtbus_bus_create();
    CHECK(a && b && plain);
    CHECK_EQ_INT(qtbus_trace_set(a, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(b, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);

    /* 0. The prefix is a NATS subject, not a qtbus name (qtbus_nats.h): printable ASCII
     * tokens, so invalid UTF-8 is refused with the rest; no bridge comes out. */
    {
        char p256[257], p257[258];
        memset(p256, 'p', 256);
        p256[256] = '\0';
        memset(p257, 'p', 257);
        p257[257] = '\0';
        const char *const refused[] = {
            "", p257, "\xff", "qtbus\xc3", "\xce\x94", "a b", "a\tb", "a\x7f", "a.", ".a", "a..b", "a.*", "a.>", "a*b",
        };
        for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
            qtbus_nats *bridge = (qtbus_nats *)1;
            qtbus_nats_options o = {.url = server.url, .prefix = refused[i]};
            seen_reset();
            CHECK_MSG(qtbus_nats_connect(a, &o, &bridge) == QTBUS_EINVAL, "prefix %zu accepted", i);
            CHECK(bridge == NULL);
            CHECK_MSG(strstr(qtbus_errmsg(), "qtbus_nats_connect: options->prefix ") == qtbus_errmsg(), "errmsg: %s",
                      qtbus_errmsg());
            CHECK_EQ_INT(seen_get(&seen_misuse), 1);
            CHECK_EQ_STR(seen_function, "qtbus_nats_connect");
        }
        const char *const accepted[] = {p256, "a", "acme.prod", "$x.y-z_1"};
        for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
            qtbus_nats *bridge = NULL;
            qtbus_nats_options o = {.url = server.url, .prefix = accepted[i]};
            CHECK_EQ_INT(qtbus_nats_connect(a, &o, &bridge), QTBUS_OK);
            CHECK_EQ_INT(qtbus_nats_close(bridge), QTBUS_OK);
        }
    }

    qtbus_nats *ba = ns_bridge(&server, a, 0, 0), *bb = ns_bridge(&server, b, 0, 0);

    char n256[257], n255cut[256];
    memset(n256, 'n', 256);
    n256[256] = '\0';
    memset(n255cut, 'n', 254); /* 255 bytes, the last a lead byte with nothing after it */
    n255cut[254] = '\xc3';
    n255cut[255] = '\0';
    const char *const not_utf8 = "is not valid UTF-8";
    const bad_name bad[] = {
        {"NULL", NULL, "is NULL"},
        {"empty", "", "is empty"},
        {"256 bytes", n256, "is longer than 255 bytes"},
        {"a lone 0xFF", "\xff", not_utf8},
        {"a lone continuation byte", "\x80", not_utf8},
        {"valid, then 0xFF", "Order\xff", not_utf8},
        {"a 2-byte sequence cut short", "caf\xc3", not_utf8},
        {"a 3-byte sequence cut short (U+20AC)", "\xe2\x82", not_utf8},
        {"a 4-byte sequence cut short (U+1F680)", "\xf0\x9f\x9a", not_utf8},
        {"255 bytes ending in a cut sequence", n255cut, not_utf8},
        {"a lead followed by ASCII", "\xc3(", not_utf8},
        {"overlong '/' in 2 bytes", "\xc0\xaf", not_utf8},
        {"overlong NUL in 2 bytes", "\xc0\x80", not_utf8},
        {"overlong '/' in 3 bytes", "\xe0\x80\xaf", not_utf8},
        {"overlong U+20AC in 4 bytes", "\xf0\x82\x82\xac", not_utf8},
        {"the surrogate U+D800", "\xed\xa0\x80", not_utf8},
        {"the surrogate U+DFFF", "\xed\xbf\xbf", not_utf8},
        {"a surrogate pair in CESU-8 (U+1F680)", "\xed\xa0\xbd\xed\xba\x80", not_utf8},
        {"U+110000, beyond Unicode", "\xf4\x90\x80\x80", not_utf8},
        {"the lead 0xF5", "\xf5\x80\x80\x80", not_utf8},
        {"a 5-byte form", "\xf8\x88\x80\x80\x80", not_utf8},
    };
    enum { BAD = sizeof bad / sizeof bad[0] };

    /* 1. Each invalid name at each place: QTBUS_EINVAL, the engine's reason under the
     * call's name, one MISUSE record. */
    for (int i = 0; i < BAD; i++) {
        for (int site = 0; site < SITES; site++) {
            const char *fn = site_function[site];
            qtbus_nats *bridge = site == EXPORT_TYPE ? ba : bb;
            char reason[300], expected[400], errmsg[400];
            CHECK_MSG(engine_refuses(site == IMPORT_SUBTYPE_SUBTYPE, bad[i].name, reason, sizeof reason),
                      "the engine accepts %s", bad[i].label);
            snprintf(expected, sizeof expected, "%s: %s", fn, reason);
            seen_reset();
            int rc = call(site, bridge, bad[i].name);
            snprintf(errmsg, sizeof errmsg, "%s", qtbus_errmsg());
            CHECK_MSG(rc == QTBUS_EINVAL, "%s, %s as %s: %d %s (errmsg: %s)", fn, bad[i].label,
                      site == IMPORT_SUBTYPE_SUBTYPE ? "subtype" : "type", rc, qtbus_strerror(rc), errmsg);
            CHECK_MSG(strcmp(errmsg, expected) == 0, "%s, %s: errmsg \"%s\", expected \"%s\"", fn, bad[i].label, errmsg,
                      expected);
            CHECK_MSG(strstr(errmsg, site == IMPORT_SUBTYPE_SUBTYPE ? ": the subtype " : ": the type name ") != NULL &&
                          strstr(errmsg, bad[i].problem) != NULL,
                      "%s, %s: errmsg \"%s\"", fn, bad[i].label, errmsg);
            CHECK_MSG(seen_get(&seen_misuse) == 1, "%s, %s: %d MISUSE records (the last: %s)", fn, bad[i].label,
                      seen_get(&seen_misuse), seen_function);
            CHECK_EQ_STR(seen_function, fn);
            CHECK_EQ_INT(seen_status, QTBUS_EINVAL);
            CHECK_EQ_STR(seen_errmsg, errmsg);
        }
        if (i == 3) printf("e.g. %s\n", qtbus_errmsg());
    }
    /* The export refusals left no subscription on the bus. */
    CHECK_EQ_INT(qtbus_bus_foreach(a, count_one, NULL), 0);
    CHECK_EQ_INT(qtbus_bus_foreach(b, count_one, NULL), 0);

    /* 2. Valid names still work on the same bridges, and valid names at the edges of
     * UTF-8 are accepted by every call and cross. */
    char n255[256], n255multi[256];
    memset(n255, 'v', 255);
    n255[255] = '\0';
    memset(n255multi, 'v', 253); /* 255 bytes ending in U+00E9 */
    memcpy(n255multi + 253, "\xc3\xa9", 3);
    const char *const edge[] = {
        "a",
        n255,
        n255multi,
        "\xc2\x80",         /* U+0080, the first 2-byte */
        "\xdf\xbf",         /* U+07FF, the last 2-byte */
        "\xe0\xa0\x80",     /* U+0800, the first 3-byte */
        "\xed\x9f\xbf",     /* U+D7FF, before the surrogates */
        "\xee\x80\x80",     /* U+E000, after them */
        "\xef\xbf\xbf",     /* U+FFFF */
        "\xf0\x90\x80\x80", /* U+10000, the first 4-byte */
        "\xf4\x8f\xbf\xbf", /* U+10FFFF, the last scalar */
        "_",                /* the encoding's "no subtype", as a name */
    };
    enum { EDGE = sizeof edge / sizeof edge[0] };
    CHECK_EQ_INT(qtbus_subscribe(b, "Edge", NULL, receive, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_export(ba, "Edge"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "Edge"), QTBUS_OK);
    seen_reset();
    for (int i = 0; i < EDGE; i++) {
        char reason[300];
        CHECK_MSG(!engine_refuses(0, edge[i], reason, sizeof reason) &&
                      !engine_refuses(1, edge[i], reason, sizeof reason),
                  "the engine refuses edge name %d: %s", i, reason);
        for (int site = IMPORT_TYPE; site < SITES; site++)
            CHECK_EQ_INT(call(site, bb, edge[i]), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(ba, edge[i]), QTBUS_OK);
    }
    /* No wait: an import returns once the server has its subscription. */
    for (int i = 0; i < EDGE; i++) {
        qtbus_event_desc d = {.type = "Edge", .subtype = edge[i]};
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
        CHECK_WAIT(got() == i + 1, TU_WAIT_MS);
        CHECK_EQ_STR(got_type, "Edge");
        CHECK_EQ_STR(got_subtype, edge[i]);
    }
    CHECK_EQ_INT(seen_get(&seen_misuse), 0);

    /* 3. Nothing reached the server: a raw publish on the subject each refused import
     * would have subscribed to reaches no bridge.  Then, on the imported type "Edge",
     * the invalid UTF-8 subtypes (as sticky events: the kind tells them apart) are
     * dropped on receipt by the same rule.  The last message, a valid one, arrives
     * after all of them (one publisher's order); closing the bridge then dispatches,
     * or reports, whatever it had received. */
    {
        natsConnection *raw = NULL;
        CHECK_EQ_INT(natsConnection_ConnectTo(&raw, server.url), NATS_OK);
        int published = 0, edge_published = 0;
        for (int i = 0; i < BAD; i++) {
            if (!bad[i].name || !*bad[i].name) continue; /* no subject has an empty token */
            char enc[256 * 3 + 1], enc_type[256 * 3 + 1], subject[256 * 3 + 64];
            encode(bad[i].name, enc, false);
            encode(bad[i].name, enc_type, true);
            snprintf(subject, sizeof subject, "qtbus.e._.%s", enc_type); /* import(type) */
            CHECK_EQ_INT(natsConnection_PublishString(raw, subject, "x"), NATS_OK);
            snprintf(subject, sizeof subject, "qtbus.e.S.%s", enc_type); /* import_subtype(type, "S") */
            CHECK_EQ_INT(natsConnection_PublishString(raw, subject, "x"), NATS_OK);
            snprintf(subject, sizeof subject, "qtbus.e.%s.T", enc); /* import_subtype("T", subtype) */
            CHECK_EQ_INT(natsConnection_PublishString(raw, subject, "x"), NATS_OK);
            published += 3;
            if (bad[i].problem == not_utf8 && strlen(bad[i].name) <= 255) {
                snprintf(subject, sizeof subject, "qtbus.k.%s.Edge", enc);
                CHECK_EQ_INT(natsConnection_PublishString(raw, subject, "x"), NATS_OK);
                edge_published++;
            }
        }
        CHECK_EQ_INT(natsConnection_PublishString(raw, "qtbus.e.last.Edge", "x"), NATS_OK);
        CHECK_EQ_INT(natsConnection_Flush(raw), NATS_OK);
        CHECK_WAIT(got() == EDGE + 1, TU_WAIT_MS);
        CHECK_EQ_STR(got_subtype, "last");
        CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
        bb = NULL;
        CHECK_MSG(seen_get(&seen_other_drops) == 0, "a refused import was registered: %s", seen_other_why);
        CHECK_EQ_INT(seen_get(&seen_edge_drops), edge_published);
        CHECK_EQ_INT(got(), EDGE + 1);
        printf("raw: %d subjects of refused imports reached nobody; %d invalid received subtypes dropped\n", published,
               edge_published);
        natsConnection_Destroy(raw);
    }

    /* 4. The bridge's rule is the engine's: names of 1 to 4 bytes made of every lead
     * byte and every kind of following byte (ASCII, each continuation byte, other
     * leads), as each place.  Exports of the accepted ones are local subscriptions, so
     * all of them are made; imports are checked on the refused ones (the accepted edge
     * ones were imported above). */
    {
        qtbus_bus *s = qtbus_bus_create();
        CHECK(s != NULL);
        qtbus_nats *bs = ns_bridge(&server, s, 0, 0);
        unsigned char after[80];
        int after_count = 0;
        after[after_count++] = 0x01;
        after[after_count++] = 0x41;
        after[after_count++] = 0x7F;
        for (int c = 0x80; c <= 0xBF; c++)
            after[after_count++] = (unsigned char)c;
        after[after_count++] = 0xC0;
        after[after_count++] = 0xC2;
        after[after_count++] = 0xE0;
        after[after_count++] = 0xF0;
        after[after_count++] = 0xFF;
        static const unsigned char last[] = {0x41, 0x80, 0xBF, 0xC0};
        int names = 0, accepted = 0;
        for (int length = 1; length <= 4; length++) {
            int lead_from = length == 1 ? 0x01 : length == 2 ? 0x80 : length == 3 ? 0xE0 : 0xF0;
            int seconds = length == 1 ? 1 : after_count;
            int lasts = length <= 2 ? 1 : 4;
            for (int lead = lead_from; lead <= 0xFF; lead++) {
                for (int j = 0; j < seconds; j++) {
                    for (int k = 0; k < lasts; k++) {
                        unsigned char name[5] = {(unsigned char)lead, 0, 0, 0, 0};
                        if (length >= 2) name[1] = after[j];
                        if (length == 3) name[2] = last[k];
                        if (length == 4) {
                            name[2] = 0x80;
                            name[3] = last[k];
                        }
                        const char *text = (const char *)name;
                        names++;
                        for (int site = 0; site < SITES; site++) {
                            char reason[300], expected[400];
                            int refused = engine_refuses(site == IMPORT_SUBTYPE_SUBTYPE, text, reason, sizeof reason);
                            if (!refused && site != EXPORT_TYPE) continue;
                            int rc = call(site, bs, text);
                            CHECK_MSG(rc == (refused ? QTBUS_EINVAL : QTBUS_OK),
                                      "%s of %02x %02x %02x %02x: %d, the engine %s it", site_function[site], name[0],
                                      name[1], name[2], name[3], rc, refused ? "refuses" : "accepts");
                            if (!refused) {
                                accepted++;
                                continue;
                            }
                            snprintf(expected, sizeof expected, "%s: %s", site_function[site], reason);
                            CHECK_EQ_STR(qtbus_errmsg(), expected);
                        }
                    }
                }
            }
        }
        printf("sweep: %d names, %d accepted by the engine and the bridge alike\n", names, accepted);
        CHECK(accepted > 4000 && names - accepted > 10000); /* both kinds, many of each */
        CHECK_EQ_INT(qtbus_bus_foreach(s, count_one, NULL), accepted);
        CHECK_EQ_INT(qtbus_nats_close(bs), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(s), QTBUS_OK);
    }

    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(a, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(b, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(plain), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_names: passed\n");
    return 0;
}
