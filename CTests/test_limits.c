/* SPDX-License-Identifier: MIT */
/*
 * test_limits: the limits qtbus.h states, at and one past each.
 *
 * Users rely on: a subscription naming QTBUS_MAX_SUBTYPES subtypes working and one
 * naming more being QTBUS_EINVAL with nothing subscribed; JSON nested
 * QTBUS_JSON_MAX_DEPTH levels being delivered and one level more being QTBUS_EJSON
 * with nothing delivered.
 */
#include "test_util.h"

static int calls;

static void count_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    calls++;
}

/* `depth` nested arrays: "[[...]]". */
static char *nested(size_t depth)
{
    char *s = malloc(2 * depth + 1);
    CHECK(s != NULL);
    memset(s, '[', depth);
    memset(s + depth, ']', depth);
    s[2 * depth] = '\0';
    return s;
}

int main(void)
{
    CHECK_EQ_INT(QTBUS_MAX_SUBTYPES, 4096);
    CHECK_EQ_INT(QTBUS_JSON_MAX_DEPTH, 10000);
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);

    /* ---- subtypes per subscription ---- */
    size_t n = QTBUS_MAX_SUBTYPES + 1;
    char(*names)[16] = calloc(n, sizeof *names);
    const char **list = calloc(n, sizeof *list);
    CHECK(names != NULL && list != NULL);
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "s%zu", i);
        list[i] = names[i];
    }
    qtbus_sub_options o = tu_options();
    o.subtypes = list;
    o.subtype_count = n;
    qtbus_token t = {7};
    CHECK_EQ_INT(qtbus_subscribe(bus, "Many", &o, count_handler, NULL, NULL, &t), QTBUS_EINVAL);
    CHECK_EQ_U64(t.id, 0);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Many", NULL), 0);

    o.subtype_count = QTBUS_MAX_SUBTYPES;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Many", &o, count_handler, NULL, NULL, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Many", NULL), 1);
    qtbus_event_desc last = {.type = "Many", .subtype = names[QTBUS_MAX_SUBTYPES - 1]};
    CHECK_EQ_INT(qtbus_dispatch(bus, &last), 1);
    qtbus_event_desc beyond = {.type = "Many", .subtype = names[QTBUS_MAX_SUBTYPES]};
    CHECK_EQ_INT(qtbus_dispatch(bus, &beyond), 0);
    CHECK_EQ_INT(calls, 1);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);

    /* ---- JSON nesting ---- */
    calls = 0;
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_JSON_TYPE, NULL, count_handler, NULL, NULL, &t), QTBUS_OK);
    char *at = nested(QTBUS_JSON_MAX_DEPTH);
    char *past = nested(QTBUS_JSON_MAX_DEPTH + 1);
    CHECK_EQ_INT(qtbus_dispatch_json(bus, "deep", at), 1);
    CHECK_EQ_INT(qtbus_dispatch_json(bus, "deep", past), QTBUS_EJSON);
    CHECK_EQ_INT(calls, 1);

    free(at);
    free(past);
    free(names);
    free(list);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_limits: subtypes and JSON depth at and past their limits\n");
    return 0;
}
