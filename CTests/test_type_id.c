/* SPDX-License-Identifier: MIT */
/*
 * test_type_id.c -- type ids (qtbus_type_lookup, qtbus_dispatch_id): a dispatch by id
 * is a dispatch by name (subtypes, sticky, object, stop, queues, no-subscriber), ids are
 * stable and bound to their bus, bad ones are refused without a crash, and the table
 * grows while other threads dispatch by id.
 */
#include "test_util.h"

static atomic_int calls, subtype_calls, released_objects;
static char last_data[16];

static void on_tick(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(e, &size);
    if (size && size < sizeof last_data) {
        memcpy(last_data, data, size);
        last_data[size] = '\0';
    }
    CHECK_EQ_STR(qtbus_event_type(e), "Tick");
    atomic_fetch_add(&calls, 1);
}

static void on_subtype(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    CHECK_EQ_STR(qtbus_event_subtype(e), "fast");
    atomic_fetch_add(&subtype_calls, 1);
}

static void release_object(void *object)
{
    (void)object;
    atomic_fetch_add(&released_objects, 1);
}

static atomic_int nobody_calls, pattern_calls;
static void on_nobody(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    CHECK_EQ_STR(qtbus_event_subtype(e), "Tick");
    atomic_fetch_add(&nobody_calls, 1);
}
static void on_pattern(const qtbus_event *e, void *userdata)
{
    (void)e;
    (void)userdata;
    atomic_fetch_add(&pattern_calls, 1);
}

enum { THREADS = 4, TYPES = 3000 };
static qtbus_bus *stress_bus;
static qtbus_type_id stress_id;
static atomic_int stop, stress_calls;
static void on_stress(const qtbus_event *e, void *userdata)
{
    (void)e;
    (void)userdata;
    atomic_fetch_add(&stress_calls, 1);
}
static void dispatcher(int index, void *ctx)
{
    (void)index;
    (void)ctx;
    qtbus_event_desc d = {0};
    for (unsigned n = 1; !atomic_load(&stop); n++) {
        CHECK_EQ_INT(qtbus_dispatch_id(stress_bus, stress_id, &d), 1);
        /* Under valgrind, which runs one thread at a time, four spinning dispatchers left
         * the looking-up thread a fifth of the time: 75 to 240 s for this test. */
        if (n % 1024 == 0) sched_yield();
    }
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create(), *other = qtbus_bus_create();
    CHECK(bus && other);

    qtbus_type_id tick, again, other_tick;
    CHECK_EQ_INT(qtbus_type_lookup(bus, "Tick", &tick), QTBUS_OK);
    CHECK(tick.id != 0);
    CHECK_EQ_INT(qtbus_type_lookup(bus, "Tick", &again), QTBUS_OK);
    CHECK_EQ_U64(again.id, tick.id);
    CHECK_EQ_INT(qtbus_type_lookup(other, "Tick", &other_tick), QTBUS_OK);
    CHECK(other_tick.id != tick.id);
    /* Looking a type up subscribes nothing: a dispatch by id reaches nobody yet. */
    qtbus_event_desc plain = {.data = "a", .size = 1};
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Tick", NULL), 0);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &plain), 0);

    qtbus_token t1, t2;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Tick", NULL, on_tick, NULL, NULL, &t1), QTBUS_OK);
    qtbus_sub_options fast = {.subtypes = (const char *const[]){"fast"}, .subtype_count = 1, .priority = 5};
    CHECK_EQ_INT(qtbus_subscribe(bus, "Tick", &fast, on_subtype, NULL, NULL, &t2), QTBUS_OK);

    /* As by name: data, subtypes, object release, the type name seen by handlers;
     * event->type is not read, whatever it says. */
    plain.type = "Ignored";
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &plain), 1);
    CHECK_EQ_STR(last_data, "a");
    qtbus_event_desc sub = {
        .subtype = "fast", .data = "b", .size = 1, .object = &calls, .object_release = release_object};
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &sub), 2);
    CHECK_EQ_INT(atomic_load(&subtype_calls), 1);
    CHECK_EQ_INT(atomic_load(&released_objects), 1);
    CHECK_EQ_INT(atomic_load(&calls), 2);

    /* Sticky by id: kept for a REPLAY subscriber as by name. */
    qtbus_event_desc sticky = {.data = "k", .size = 1, .flags = QTBUS_EVENT_STICKY};
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &sticky), 1);
    qtbus_sub_options replay = {.flags = QTBUS_SUB_REPLAY};
    qtbus_token t3;
    int before = atomic_load(&calls);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Tick", &replay, on_tick, NULL, NULL, &t3), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&calls), before + 1);
    CHECK_EQ_STR(last_data, "k");

    /* Bad ids and bad events: refused, nothing delivered, the reason said. */
    before = atomic_load(&calls);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, other_tick, &plain), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "qtbus_dispatch_id: the type id 0x") != NULL);
    CHECK(strstr(qtbus_errmsg(), "was made by another bus") != NULL);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, (qtbus_type_id){0}, &plain), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_dispatch_id: the type id is 0 (none)");
    CHECK_EQ_INT(qtbus_dispatch_id(bus, (qtbus_type_id){tick.id + 1000}, &plain), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "was never made by qtbus_type_lookup") != NULL);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, (qtbus_type_id){~0ull}, &plain), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_dispatch_id(NULL, tick, &plain), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, NULL), QTBUS_EINVAL);
    qtbus_event_desc bad = {.size = 3};
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &bad), QTBUS_EINVAL);
    bad = (qtbus_event_desc){.flags = QTBUS_EVENT_REQUEST};
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &bad), QTBUS_EINVAL);
    bad = (qtbus_event_desc){.subtype = ""};
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &bad), QTBUS_EINVAL);
    CHECK_EQ_INT(atomic_load(&calls), before);
    qtbus_type_id none = {9};
    CHECK_EQ_INT(qtbus_type_lookup(bus, "", &none), QTBUS_EINVAL);
    CHECK_EQ_U64(none.id, 0);
    CHECK_EQ_INT(qtbus_type_lookup(bus, "\xff", &none), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_type_lookup(NULL, "Tick", &none), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_type_lookup(bus, "Tick", NULL), QTBUS_EINVAL);

    /* An id of a destroyed bus, used on a new one: refused. */
    CHECK_EQ_INT(qtbus_bus_destroy(other), QTBUS_OK);
    qtbus_bus *fresh = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_dispatch_id(fresh, other_tick, &plain), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_bus_destroy(fresh), QTBUS_OK);

    CHECK_EQ_INT(qtbus_token_dispose(t1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t3), QTBUS_OK);

    /* Nobody subscribed any more (the no-subscriber path): the object is let go at
     * once; a QTNoSubscriberEvent listener hears of the event, and a pattern reaches it. */
    int released = atomic_load(&released_objects);
    qtbus_event_desc lone = {.data = "z", .size = 1, .object = &calls, .object_release = release_object};
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &lone), 0);
    CHECK_EQ_INT(atomic_load(&released_objects), released + 1);
    qtbus_token nobody;
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, NULL, on_nobody, NULL, NULL, &nobody), QTBUS_OK);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &lone), 0);
    CHECK_EQ_INT(atomic_load(&nobody_calls), 1);
    CHECK_EQ_INT(atomic_load(&released_objects), released + 2);
    CHECK_EQ_INT(qtbus_token_dispose(nobody), QTBUS_OK);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &lone), 0);
    CHECK_EQ_INT(atomic_load(&nobody_calls), 1);
    qtbus_sub_options every = {.flags = QTBUS_SUB_PATTERN};
    qtbus_token pattern;
    CHECK_EQ_INT(qtbus_subscribe(bus, ">", &every, on_pattern, NULL, NULL, &pattern), QTBUS_OK);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, tick, &lone), 1);
    CHECK_EQ_INT(atomic_load(&pattern_calls), 1);
    CHECK_EQ_INT(atomic_load(&released_objects), released + 4);
    CHECK_EQ_INT(qtbus_token_dispose(pattern), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);

    /* The table grows (and is replaced) while four threads dispatch by id. */
    stress_bus = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_type_lookup(stress_bus, "Stress", &stress_id), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(stress_bus, "Stress", NULL, on_stress, NULL, NULL, NULL), QTBUS_OK);
    tu_threads threads;
    tu_threads_start(&threads, THREADS, dispatcher, NULL);
    qtbus_type_id ids[64];
    /* The lookups must overlap the dispatches, also where threads run one at a time
     * (valgrind): wait for the dispatchers to have started, then for progress now and
     * then. */
    CHECK_WAIT(atomic_load(&stress_calls) > 0, TU_WAIT_MS);
    for (int i = 0; i < TYPES; i++) {
        if (i % 500 == 0) {
            int seen = atomic_load(&stress_calls);
            CHECK_WAIT(atomic_load(&stress_calls) > seen, TU_WAIT_MS);
        }
        char name[32];
        snprintf(name, sizeof name, "T%d", i);
        qtbus_type_id id;
        CHECK_EQ_INT(qtbus_type_lookup(stress_bus, name, &id), QTBUS_OK);
        if (i < 64) ids[i] = id;
    }
    atomic_store(&stop, 1);
    tu_threads_join(&threads);
    for (int i = 0; i < 64; i++) {
        char name[32];
        snprintf(name, sizeof name, "T%d", i);
        qtbus_type_id id;
        CHECK_EQ_INT(qtbus_type_lookup(stress_bus, name, &id), QTBUS_OK);
        CHECK_EQ_U64(id.id, ids[i].id);
        qtbus_event_desc d = {0};
        CHECK_EQ_INT(qtbus_dispatch_id(stress_bus, id, &d), 0);
    }
    printf("test_type_id: %d dispatches by id on 4 threads while %d types were looked up\n", atomic_load(&stress_calls),
           TYPES);
    CHECK(atomic_load(&stress_calls) > 0);
    CHECK_EQ_INT(qtbus_bus_destroy(stress_bus), QTBUS_OK);
    printf("test_type_id: passed\n");
    return 0;
}
