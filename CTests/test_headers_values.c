/* SPDX-License-Identifier: MIT */
/*
 * test_headers_values: a header's value is 0 to 4,096 bytes of valid UTF-8 (RFC 3629)
 * without CR or LF.
 *
 * Users rely on: the empty value and a 4,096-byte one accepted, 4,097 bytes refused;
 * every well-formed sequence accepted (up to U+10FFFF, tab and other controls
 * included), and overlong forms, surrogates, code points above U+10FFFF, stray and
 * missing continuation bytes, CR and LF refused; a NULL value refused; each refusal
 * QTBUS_EINVAL with qtbus_errmsg() naming qtbus_dispatch and the reason, nothing
 * delivered, the event's object not taken; the value delivered byte for byte.
 */
#include "test_util.h"
#include "test_headers.h"

static qtbus_bus *bus;
static th_snap snap;
static atomic_int released;

static int dispatch_value(const char *value)
{
    qtbus_header h[] = {{"v", value}};
    qtbus_event_desc d = th_desc("T", h, 1);
    d.object = &released;
    d.object_release = tu_count_release;
    return qtbus_dispatch(bus, &d);
}

static void refused(const char *value, const char *what)
{
    int taken = atomic_load(&snap.taken), before = atomic_load(&released);
    CHECK_MSG(dispatch_value(value) == QTBUS_EINVAL, "%s was accepted", what);
    TH_CHECK_ERRMSG("qtbus_dispatch");
    CHECK_EQ_INT(atomic_load(&snap.taken), taken);
    CHECK_EQ_INT(atomic_load(&released), before);
}

static void accepted(const char *value, const char *what)
{
    int taken = atomic_load(&snap.taken);
    CHECK_MSG(dispatch_value(value) == 1, "%s was refused: %s", what, qtbus_errmsg());
    CHECK_EQ_INT(atomic_load(&snap.taken), taken + 1);
    CHECK_EQ_STR(th_value(&snap, "v"), value);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, th_snap_handler, &snap, NULL, NULL), QTBUS_OK);

    accepted("", "the empty value");
    accepted(TH_TP, "a traceparent");
    accepted("a\tb", "a tab");
    accepted("\x01\x1f\x7f", "controls other than CR and LF");
    accepted("caf\xc3\xa9", "U+00E9");
    accepted("\xe2\x82\xac", "U+20AC");
    accepted("\xef\xbf\xbf", "U+FFFF");
    accepted("\xf0\x9f\x98\x80", "U+1F600");
    accepted("\xf4\x8f\xbf\xbf", "U+10FFFF");
    accepted("\xed\x9f\xbf", "U+D7FF, below the surrogates");
    accepted("\xee\x80\x80", "U+E000, above the surrogates");

    refused(NULL, "NULL");
    refused("a\rb", "CR");
    refused("a\nb", "LF");
    refused("a\r\n", "CR LF");
    refused("\x80", "a stray continuation byte");
    refused("\xbf", "a stray continuation byte");
    refused("\xc3", "a lead byte at the end");
    refused("\xc3x", "a lead byte without its continuation");
    refused("\xe2\x82", "a truncated 3-byte sequence");
    refused("\xf0\x9f\x98", "a truncated 4-byte sequence");
    refused("\xc0\x80", "an overlong NUL");
    refused("\xc1\xbf", "an overlong 2-byte form");
    refused("\xe0\x80\x80", "an overlong 3-byte form");
    refused("\xe0\x9f\xbf", "an overlong 3-byte form (U+07FF)");
    refused("\xf0\x80\x80\x80", "an overlong 4-byte form");
    refused("\xf0\x8f\xbf\xbf", "an overlong 4-byte form (U+FFFF)");
    refused("\xed\xa0\x80", "a surrogate (U+D800)");
    refused("\xed\xbf\xbf", "a surrogate (U+DFFF)");
    refused("\xf4\x90\x80\x80", "U+110000");
    refused("\xf5\x80\x80\x80", "a lead byte F5");
    refused("\xf8\x88\x80\x80\x80", "a 5-byte form");
    refused("\xfe", "FE");
    refused("\xff", "FF");

    static char value[TH_MAX_VALUE + 2];
    memset(value, 'v', TH_MAX_VALUE);
    value[TH_MAX_VALUE] = '\0';
    accepted(value, "4,096 bytes");
    /* The bound is in bytes, not characters: 4,096 bytes that end in a 2-byte one. */
    value[TH_MAX_VALUE - 2] = '\xc3';
    value[TH_MAX_VALUE - 1] = '\xa9';
    accepted(value, "4,096 bytes ending in U+00E9");
    value[TH_MAX_VALUE] = 'v';
    value[TH_MAX_VALUE + 1] = '\0';
    refused(value, "4,097 bytes");

    qtbus_bus_destroy(bus);
    th_snap_clear(&snap);
    printf("test_headers_values: UTF-8 without CR/LF up to 4096 bytes, the rest refused\n");
    return 0;
}
