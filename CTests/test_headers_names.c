/* SPDX-License-Identifier: MIT */
/*
 * test_headers_names: a header's name is 1 to 64 bytes of RFC 9110 token characters,
 * not starting "Qtbus-" in any letter case (the NATS bridge's own), compared exactly.
 *
 * Users rely on: every token character accepted and every other byte refused; the
 * length bounds; a refusal being QTBUS_EINVAL with qtbus_errmsg() naming qtbus_dispatch
 * and the reason, nothing delivered and the event's object not taken; the name's case
 * kept (traceparent and Traceparent are two headers).
 */
#include "test_util.h"
#include "test_headers.h"

static qtbus_bus *bus;
static tu_rec rec;
static atomic_int released;

static int dispatch_named(const char *name)
{
    qtbus_header h[] = {{name, "v"}};
    qtbus_event_desc d = th_desc("T", h, 1);
    d.object = &released;
    d.object_release = tu_count_release;
    return qtbus_dispatch(bus, &d);
}

static void refused(const char *name)
{
    int calls = atomic_load(&rec.calls), before = atomic_load(&released);
    CHECK_EQ_INT(dispatch_named(name), QTBUS_EINVAL);
    TH_CHECK_ERRMSG("qtbus_dispatch");
    CHECK_EQ_INT(atomic_load(&rec.calls), calls);
    CHECK_EQ_INT(atomic_load(&released), before); /* the object is not taken */
}

static void accepted(const char *name)
{
    int calls = atomic_load(&rec.calls);
    CHECK_EQ_INT(dispatch_named(name), 1);
    CHECK_EQ_INT(atomic_load(&rec.calls), calls + 1);
}

int main(void)
{
    bus = qtbus_bus_create();
    tu_rec_init(&rec);
    qtbus_token token;
    CHECK_EQ_INT(tu_sub_rec(bus, "T", NULL, &rec, &token), QTBUS_OK);

    static const char specials[] = "!#$%&'*+-.^_`|~";
    for (int c = 1; c < 256; c++) {
        char name[3] = {'x', (char)c, '\0'};
        bool token_char =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr(specials, c) != NULL;
        if (token_char) {
            accepted(name);
        } else {
            refused(name);
        }
    }
    accepted("traceparent");
    accepted("X-Request-Id");
    accepted("Qtbus"); /* only the prefix with its dash is the bridge's */
    accepted("Qtbusx-a");
    accepted("x-Qtbus-a");

    char name[TH_MAX_NAME + 2];
    memset(name, 'n', sizeof name);
    name[TH_MAX_NAME] = '\0';
    accepted(name);
    name[TH_MAX_NAME] = 'n';
    name[TH_MAX_NAME + 1] = '\0';
    refused(name);
    refused("");
    refused(NULL);

    refused("Qtbus-Origin");
    refused("Qtbus-");
    refused("qtbus-origin");
    refused("QTBUS-REQUEST");
    refused("qTbUs-x");

    /* Case is kept: the two names are two headers, and a lookup finds only its own. */
    th_snap snap = {0};
    CHECK_EQ_INT(qtbus_subscribe(bus, "C", NULL, th_snap_handler, &snap, NULL, NULL), QTBUS_OK);
    qtbus_header h[] = {{"traceparent", "a"}, {"Traceparent", "b"}};
    qtbus_event_desc d = th_desc("C", h, 2);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    TH_CHECK_EXACT(&snap, {"traceparent", "a"}, {"Traceparent", "b"});
    th_snap_clear(&snap);

    qtbus_token_dispose(token);
    qtbus_bus_destroy(bus);
    CHECK_REC_SANE(&rec);
    printf("test_headers_names: token characters accepted, 255 other bytes and Qtbus- refused\n");
    return 0;
}
