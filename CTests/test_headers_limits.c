/* SPDX-License-Identifier: MIT */
/*
 * test_headers_limits: at most 32 headers and 16,384 bytes of names and values together
 * per event, counted on what the dispatch was given after merging a repeated name;
 * inherited headers do not count.
 *
 * Users rely on: 32 headers accepted and 33 refused; 16,384 bytes accepted and 16,385
 * refused; 33 given with one name twice accepted (32 after the merge), and the bytes of
 * a value a later one replaced not counted; a handler's event with traceparent,
 * tracestate and baggage letting a dispatch inside it give 32 others (35 delivered);
 * headers NULL with a count refused, a count of 0 being no headers; each refusal
 * QTBUS_EINVAL naming qtbus_dispatch, nothing delivered.
 */
#include "test_util.h"
#include "test_headers.h"

static qtbus_bus *bus;
static th_snap snap;

static char names[40][8];
static qtbus_header many[40];

/* `n` headers h0..h(n-1), each value `value`. */
static const qtbus_header *numbered(size_t n, const char *value)
{
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "h%zu", i);
        many[i] = (qtbus_header){names[i], value};
    }
    return many;
}

static int dispatch(const qtbus_header *h, size_t n)
{
    qtbus_event_desc d = th_desc("T", h, n);
    return qtbus_dispatch(bus, &d);
}

static void refused(const qtbus_header *h, size_t n)
{
    int taken = atomic_load(&snap.taken);
    CHECK_EQ_INT(dispatch(h, n), QTBUS_EINVAL);
    TH_CHECK_ERRMSG("qtbus_dispatch");
    CHECK_EQ_INT(atomic_load(&snap.taken), taken);
}

/* Inside a handler of an event with the three inherited names: 32 more of its own. */
static atomic_int inner_status;
static void dispatch_32_inside(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    qtbus_event_desc d = th_desc("T", numbered(32, "x"), 32);
    atomic_store(&inner_status, qtbus_dispatch(bus, &d));
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, th_snap_handler, &snap, NULL, NULL), QTBUS_OK);

    CHECK_EQ_INT(dispatch(numbered(TH_MAX_HEADERS, "x"), TH_MAX_HEADERS), 1);
    CHECK_EQ_INT(snap.count, TH_MAX_HEADERS);
    refused(numbered(TH_MAX_HEADERS + 1, "x"), TH_MAX_HEADERS + 1);

    /* 33 given, one name twice: 32 after the merge. */
    numbered(TH_MAX_HEADERS + 1, "x");
    many[TH_MAX_HEADERS] = (qtbus_header){"h0", "y"};
    CHECK_EQ_INT(dispatch(many, TH_MAX_HEADERS + 1), 1);
    CHECK_EQ_INT(snap.count, TH_MAX_HEADERS);
    CHECK_EQ_STR(th_value(&snap, "h0"), "y");

    /* Bytes: four headers of 2-byte names ("h0".."h3") and values that fill 16,384. */
    static char big[4][TH_MAX_VALUE + 1];
    size_t each = TH_MAX_VALUE - 2; /* 4 * (2 + 4094) = 16,384 */
    for (int i = 0; i < 4; i++) {
        memset(big[i], 'a' + i, each);
        big[i][each] = '\0';
    }
    qtbus_header full[5] = {{"h0", big[0]}, {"h1", big[1]}, {"h2", big[2]}, {"h3", big[3]}};
    CHECK_EQ_INT(dispatch(full, 4), 1);
    CHECK_EQ_INT(snap.count, 4);
    full[4] = (qtbus_header){"z", ""}; /* one byte more */
    refused(full, 5);
    big[3][each] = 'd';
    big[3][each + 1] = '\0';
    refused(full, 4);
    big[3][each] = '\0';

    /* A value replaced by a later one of its name does not count: 16,384 after the
     * merge, 16,384 + 4,094 before it. */
    qtbus_header replaced[5] = {{"h0", big[0]}, {"h1", big[1]}, {"h2", big[2]}, {"h3", big[3]}, {"h0", big[0]}};
    CHECK_EQ_INT(dispatch(replaced, 5), 1);
    CHECK_EQ_INT(snap.count, 4);

    /* Inherited headers do not count. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "Outer", NULL, dispatch_32_inside, NULL, NULL, NULL), QTBUS_OK);
    qtbus_header context[] = {{"traceparent", TH_TP}, {"tracestate", TH_TS}, {"baggage", TH_BAG}};
    qtbus_event_desc outer = th_desc("Outer", context, 3);
    CHECK_EQ_INT(qtbus_dispatch(bus, &outer), 1);
    CHECK_EQ_INT(atomic_load(&inner_status), 1);
    CHECK_EQ_INT(snap.count, TH_MAX_HEADERS + 3);
    CHECK_EQ_STR(th_value(&snap, "traceparent"), TH_TP);

    /* NULL headers: only with a count of 0. */
    refused(NULL, 1);
    CHECK_EQ_INT(dispatch(NULL, 0), 1);
    TH_CHECK_NONE(&snap);

    qtbus_bus_destroy(bus);
    th_snap_clear(&snap);
    printf("test_headers_limits: 32 headers, 16384 bytes, after the merge, inherited ones apart\n");
    return 0;
}
