/* SPDX-License-Identifier: MIT */
/*
 * test_dispatch_basic: subscribe, dispatch, what a handler sees, what dispatch returns.
 *
 * Users rely on: subscribe giving QTBUS_OK and a live token; the handler receiving the
 * exact bytes and size (binary data, embedded NULs), the type and subtype, and the
 * object pointer; qtbus_dispatch returning how many subscriptions it reached;
 * qtbus_subscriber_count agreeing; a dispatch's object released exactly once.
 */
#include "test_util.h"

/* What one handler call saw, copied while the event view is valid. */
typedef struct seen {
    int calls;
    char type[64];
    char subtype[64];
    int has_subtype;
    unsigned char data[64];
    size_t size;
    int data_is_null;
    size_t size_without_out; /* qtbus_event_data(ev, NULL) must work too */
    void *object;
    atomic_int *object_releases; /* the object's release counter, read during the call */
    int releases_during_call;
} seen;

static void copy_handler(const qtbus_event *ev, void *userdata)
{
    seen *s = (seen *)userdata;
    s->calls++;
    const char *type = qtbus_event_type(ev);
    const char *subtype = qtbus_event_subtype(ev);
    CHECK(type != NULL);
    snprintf(s->type, sizeof s->type, "%s", type);
    s->has_subtype = subtype != NULL;
    snprintf(s->subtype, sizeof s->subtype, "%s", subtype ? subtype : "");
    size_t size = 12345;
    const void *data = qtbus_event_data(ev, &size);
    s->size = size;
    s->data_is_null = data == NULL;
    CHECK(size <= sizeof s->data);
    if (data) memcpy(s->data, data, size);
    s->size_without_out = qtbus_event_data(ev, NULL) == data;
    s->object = qtbus_event_object(ev);
    if (s->object_releases) s->releases_during_call = atomic_load(s->object_releases);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    CHECK(qtbus_shared() != NULL);
    CHECK(qtbus_shared() == qtbus_shared());
    CHECK(bus != qtbus_shared());

    /* Subscribe: OK, a non-zero live token, counted. */
    seen s;
    memset(&s, 0, sizeof s);
    qtbus_token t = {0};
    CHECK_EQ_INT(qtbus_subscribe(bus, "Basic", NULL, copy_handler, &s, NULL, &t), QTBUS_OK);
    CHECK(t.id != 0);
    CHECK_EQ_INT(qtbus_token_is_active(t), 1);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Basic", NULL), 1);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Basic", "any"), 1);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Other", NULL), 0);

    /* Binary data with an embedded NUL arrives byte for byte, size included. */
    static const unsigned char bytes[11] = {'h', 'e', 'l', 'l', 'o', 0, 'w', 0xff, 0x80, 1, 0};
    qtbus_event_desc d = tu_event("Basic", NULL);
    d.data = bytes;
    d.size = sizeof bytes;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(s.calls, 1);
    CHECK_EQ_STR(s.type, "Basic");
    CHECK_EQ_INT(s.has_subtype, 0);
    CHECK_EQ_INT(s.size, sizeof bytes);
    CHECK_EQ_INT(s.data_is_null, 0);
    CHECK(memcmp(s.data, bytes, sizeof bytes) == 0);
    CHECK_EQ_INT(s.size_without_out, 1);
    CHECK(s.object == NULL);

    /* Subtype accessor. */
    d = tu_event("Basic", "alice");
    d.data = "x";
    d.size = 1;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(s.calls, 2);
    CHECK_EQ_INT(s.has_subtype, 1);
    CHECK_EQ_STR(s.subtype, "alice");
    CHECK_EQ_INT(s.size, 1);
    CHECK_EQ_INT(s.data[0], 'x');

    /* No data: NULL bytes and size 0; size 0 with a pointer is also "no bytes". */
    d = tu_event("Basic", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(s.calls, 3);
    CHECK_EQ_INT(s.size, 0);
    CHECK_EQ_INT(s.data_is_null, 1);
    d.data = bytes;
    d.size = 0;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(s.calls, 4);
    CHECK_EQ_INT(s.size, 0);
    CHECK_EQ_INT(s.data_is_null, 1);

    /* The object reaches the handler, and is released exactly once, after the last
     * (here: synchronous) delivery -- not during it. */
    atomic_int object_releases;
    atomic_init(&object_releases, 0);
    s.object_releases = &object_releases;
    s.releases_during_call = -1;
    d = tu_event("Basic", NULL);
    d.object = &object_releases;
    d.object_release = tu_count_release;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(s.calls, 5);
    CHECK(s.object == &object_releases);
    CHECK_EQ_INT(s.releases_during_call, 0);
    CHECK_EQ_INT(atomic_load(&object_releases), 1);
    s.object_releases = NULL;

    /* Nobody receives it: the object is released at once, dispatch returns 0. */
    atomic_int lonely_releases;
    atomic_init(&lonely_releases, 0);
    d = tu_event("Nobody", NULL);
    d.object = &lonely_releases;
    d.object_release = tu_count_release;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
    CHECK_EQ_INT(atomic_load(&lonely_releases), 1);
    /* An object without a release hook is fine. */
    d.object_release = NULL;
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);

    /* Return value = subscriptions reached: add two more (options NULL and all-zero
     * options mean the same thing); each is called once per dispatch. */
    tu_rec r1, r2;
    tu_rec_init(&r1);
    tu_rec_init(&r2);
    qtbus_sub_options zero = tu_options();
    qtbus_token t1 = {0}, t2 = {0};
    CHECK_EQ_INT(tu_sub_rec(bus, "Basic", NULL, &r1, &t1), QTBUS_OK);
    CHECK_EQ_INT(tu_sub_rec(bus, "Basic", &zero, &r2, &t2), QTBUS_OK);
    CHECK(t1.id != 0 && t2.id != 0 && t1.id != t2.id && t1.id != t.id && t2.id != t.id);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Basic", NULL), 3);
    d = tu_event("Basic", NULL);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 3);
    CHECK_EQ_INT(s.calls, 15);
    CHECK_EQ_INT(atomic_load(&r1.calls), 10);
    CHECK_EQ_INT(atomic_load(&r2.calls), 10);

    /* Disposing one: it is no longer reached, the count drops, its release ran. */
    CHECK_EQ_INT(qtbus_token_dispose(t1), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&r1.releases), 1);
    CHECK_EQ_INT(qtbus_token_is_active(t1), 0);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Basic", NULL), 2);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
    CHECK_EQ_INT(atomic_load(&r1.calls), 10);
    CHECK_EQ_INT(atomic_load(&r2.calls), 11);

    /* A type nobody subscribed to. */
    d = tu_event("Unheard", "x");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);

    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Basic", NULL), 0);
    d = tu_event("Basic", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
    CHECK_EQ_INT(s.calls, 16);
    CHECK_REC_SANE(&r1);
    CHECK_REC_SANE(&r2);
    CHECK_EQ_INT(atomic_load(&r2.releases), 1);

    /* The same on the shared bus (and it is not destroyed). */
    tu_rec rs;
    tu_rec_init(&rs);
    qtbus_token ts = {0};
    CHECK_EQ_INT(tu_sub_rec(qtbus_shared(), "BasicShared", NULL, &rs, &ts), QTBUS_OK);
    d = tu_event("BasicShared", NULL);
    CHECK_EQ_INT(qtbus_dispatch(qtbus_shared(), &d), 1);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0); /* buses are separate */
    CHECK_EQ_INT(atomic_load(&rs.calls), 1);
    CHECK_EQ_INT(qtbus_token_dispose(ts), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&rs.releases), 1);

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_dispatch_basic: passed (%d handler calls)\n", s.calls);
    return 0;
}
