/* SPDX-License-Identifier: MIT */
/*
 * test_json: qtbus_dispatch_json and QTBUS_SUB_JSON.
 *
 * Users rely on: a JSON event arriving as type QTBUS_JSON_TYPE, subtype = its name,
 * data = the text, NUL-terminated with the NUL not counted (so it can be handed to a
 * JSON parser as a C string); text that is not JSON (RFC 8259, UTF-8) being refused
 * with QTBUS_EJSON before anyone sees it; the QTBUS_SUB_JSON macro subscribing to one
 * name on the shared bus.
 */
#include "test_util.h"

typedef struct jseen {
    int calls;
    char type[32];
    char subtype[32];
    char *text; /* malloc'ed copy of the data */
    size_t size;
    int nul_terminated;
} jseen;

static void json_handler(const qtbus_event *ev, void *userdata)
{
    jseen *s = (jseen *)userdata;
    s->calls++;
    snprintf(s->type, sizeof s->type, "%s", qtbus_event_type(ev));
    const char *st = qtbus_event_subtype(ev);
    snprintf(s->subtype, sizeof s->subtype, "%s", st ? st : "(none)");
    size_t size = 0;
    const char *data = (const char *)qtbus_event_data(ev, &size);
    CHECK(data != NULL);
    free(s->text);
    s->text = (char *)malloc(size + 1);
    CHECK(s->text != NULL);
    memcpy(s->text, data, size);
    s->text[size] = '\0';
    s->size = size;
    /* Only the library's own JSON text promises a NUL after the data. */
    if (strcmp(qtbus_event_type(ev), QTBUS_JSON_TYPE) == 0) s->nul_terminated = data[size] == '\0';
}

/* Valid JSON texts (top-level scalars included, RFC 8259). */
static const char *const valid[] = {
    "{\"a\":1}",
    "{}",
    "[]",
    "0",
    "-0",
    "1",
    "-12.5e+10",
    "3.0E-2",
    "true",
    "false",
    "null",
    "\"\"",
    "\"plain string\"",
    "\"escapes \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\ud83d\\ude00\"",
    "\"UTF-8: \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"",
    " \t\r\n[1, 2.5, \"x\", true, false, null, {\"k\": [ {} ]}] \n",
    "{\"nested\": {\"deeper\": {\"deepest\": [[[[[[[[[[1]]]]]]]]]]}}}",
    "{\"dup\": 1, \"dup\": 2}",
};

/* Not JSON: each must be QTBUS_EJSON and deliver nothing. */
static const char *const invalid[] = {
    "",    /* empty */
    "   ", /* only whitespace */
    "{",   /* unterminated */
    "[1, 2",
    "[1,]", /* trailing comma */
    "{\"a\":1,}",
    "{\"a\" 1}", /* missing colon */
    "{a:1}",     /* unquoted key */
    "{1:2}",
    "'single'", /* wrong quotes */
    "01",       /* leading zero */
    "1.",       /* no fraction digits */
    ".5",
    "+1",
    "1e",
    "0x10",
    "NaN",
    "Infinity",
    "tru",
    "nul",
    "True",
    "\"unterminated",
    "\"tab\tinside\"", /* unescaped control character */
    "\"nl\ninside\"",
    "\"bad escape \\x41\"",
    "\"short \\u12\"",
    "[1] [2]", /* two values */
    "1 2",
    "{} x",
    "// comment\n1",
    "/* c */ 1",
    "\"\xff\"",             /* invalid UTF-8 */
    "\"\xc3\x28\"",         /* bad continuation */
    "\"\xc0\xaf\"",         /* overlong */
    "\"\xed\xa0\x80\"",     /* UTF-16 surrogate encoded in UTF-8 */
    "\"\xf4\x90\x80\x80\"", /* beyond U+10FFFF */
    "\"trunc \xe2\x82\"",
    "[\"ok\", \x80]",
};

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    CHECK_EQ_STR(QTBUS_JSON_TYPE, "QTJsonEvent");

    /* One subscription for the name "cfg", one for every JSON event, one for lost
     * events (an invalid text must not even become a lost event). */
    jseen cfg, any, lost;
    memset(&cfg, 0, sizeof cfg);
    memset(&any, 0, sizeof any);
    memset(&lost, 0, sizeof lost);
    const char *cfg_name[] = {"cfg"};
    qtbus_sub_options o = tu_options();
    o.subtypes = cfg_name;
    o.subtype_count = 1;
    qtbus_token tc, ta, tl;
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_JSON_TYPE, &o, json_handler, &cfg, NULL, &tc), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_JSON_TYPE, NULL, json_handler, &any, NULL, &ta), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, NULL, json_handler, &lost, NULL, &tl), QTBUS_OK);

    int n_valid = 0;
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++) {
        int rc = qtbus_dispatch_json(bus, "cfg", valid[i]);
        CHECK_MSG(rc == 2, "valid JSON #%zu <%s>: dispatch_json returned %d (%s)", i, valid[i], rc, qtbus_strerror(rc));
        CHECK_EQ_INT(cfg.calls, n_valid + 1);
        CHECK_EQ_INT(any.calls, n_valid + 1);
        CHECK_EQ_STR(cfg.type, QTBUS_JSON_TYPE);
        CHECK_EQ_STR(cfg.subtype, "cfg");
        CHECK_EQ_STR(cfg.text, valid[i]);
        CHECK_EQ_INT(cfg.size, strlen(valid[i]));
        CHECK_EQ_INT(cfg.nul_terminated, 1);
        n_valid++;
    }

    /* Another name: only the whole-type subscription. */
    CHECK_EQ_INT(qtbus_dispatch_json(bus, "other", "[1,2,3]"), 1);
    CHECK_EQ_INT(cfg.calls, n_valid);
    CHECK_EQ_INT(any.calls, n_valid + 1);
    CHECK_EQ_STR(any.subtype, "other");
    CHECK_EQ_STR(any.text, "[1,2,3]");

    /* A large text (~200 KB) arrives whole. */
    {
        size_t n = 40000;
        char *big = (char *)malloc(n * 5 + 3);
        CHECK(big != NULL);
        char *p = big;
        *p++ = '[';
        for (size_t i = 0; i < n; i++) {
            memcpy(p, i + 1 < n ? "1234," : "1234", i + 1 < n ? 5 : 4);
            p += i + 1 < n ? 5 : 4;
        }
        *p++ = ']';
        *p = '\0';
        CHECK_EQ_INT(qtbus_dispatch_json(bus, "cfg", big), 2);
        CHECK_EQ_INT(cfg.size, strlen(big));
        CHECK(strcmp(cfg.text, big) == 0);
        CHECK_EQ_INT(cfg.nul_terminated, 1);
        free(big);
    }

    int cfg_calls = cfg.calls, any_calls = any.calls;
    int n_invalid = 0;
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        int rc = qtbus_dispatch_json(bus, "cfg", invalid[i]);
        CHECK_MSG(rc == QTBUS_EJSON, "invalid JSON #%zu <%s>: dispatch_json returned %d (%s)", i, invalid[i], rc,
                  qtbus_strerror(rc));
        n_invalid++;
    }
    /* A deep but unclosed nesting, and a text ending in a lone backslash. */
    {
        char deep[2001];
        memset(deep, '[', 2000);
        deep[2000] = '\0';
        CHECK_EQ_INT(qtbus_dispatch_json(bus, "cfg", deep), QTBUS_EJSON);
        CHECK_EQ_INT(qtbus_dispatch_json(bus, "cfg", "\"abc\\"), QTBUS_EJSON);
        n_invalid += 2;
    }
    CHECK_EQ_INT(cfg.calls, cfg_calls);
    CHECK_EQ_INT(any.calls, any_calls);
    CHECK_EQ_INT(lost.calls, 0);

    /* JSON nobody receives is an ordinary lost event. */
    CHECK_EQ_INT(qtbus_token_dispose(ta), QTBUS_OK);
    qtbus_dispatch_json(bus, "nobody", "{}");
    CHECK_EQ_INT(lost.calls, 1);
    CHECK_EQ_STR(lost.subtype, QTBUS_JSON_TYPE);
    CHECK_EQ_STR(lost.text, "{}");

    /* Bad arguments are EINVAL (not EJSON). */
    CHECK_EQ_INT(qtbus_dispatch_json(bus, "cfg", NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_dispatch_json(bus, NULL, "{}"), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_dispatch_json(bus, "", "{}"), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_dispatch_json(NULL, "cfg", "{}"), QTBUS_EINVAL);
    CHECK_EQ_INT(cfg.calls, cfg_calls);

    CHECK_EQ_INT(qtbus_token_dispose(tc), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(tl), QTBUS_OK);

    /* QTBUS_SUB_JSON: the shared bus, one name, the token in a bag. */
    {
        jseen m;
        memset(&m, 0, sizeof m);
        qtbus_bag bag;
        CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
        CHECK_EQ_INT(QTBUS_SUB_JSON(bag, "macro.name", json_handler, &m), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscriber_count(qtbus_shared(), QTBUS_JSON_TYPE, "macro.name"), 1);
        CHECK_EQ_INT(qtbus_dispatch_json(qtbus_shared(), "macro.name", "{\"ok\":true}"), 1);
        CHECK_EQ_INT(m.calls, 1);
        CHECK_EQ_STR(m.subtype, "macro.name");
        CHECK_EQ_STR(m.text, "{\"ok\":true}");
        CHECK_EQ_INT(qtbus_dispatch_json(qtbus_shared(), "macro.other", "1"), 0);
        CHECK_EQ_INT(qtbus_dispatch_json(bus, "macro.name", "1"), 0); /* other bus */
        CHECK_EQ_INT(m.calls, 1);
        CHECK_EQ_INT(qtbus_dispatch_json(qtbus_shared(), "macro.name", "{bad"), QTBUS_EJSON);
        CHECK_EQ_INT(m.calls, 1);
        CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscriber_count(qtbus_shared(), QTBUS_JSON_TYPE, "macro.name"), 0);
        CHECK_EQ_INT(qtbus_dispatch_json(qtbus_shared(), "macro.name", "1"), 0);
        CHECK_EQ_INT(m.calls, 1);
        free(m.text);
    }

    free(cfg.text);
    free(any.text);
    free(lost.text);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_json: %d valid, %d invalid texts checked\n", n_valid, n_invalid);
    return 0;
}
