/* SPDX-License-Identifier: MIT */
/*
 * test_dispatch_names.c -- qtbus_dispatch by name, where the name's address says
 * nothing.  The engine keeps, per thread, the type it last dispatched by name, keyed
 * by the caller's pointer and the bus's serial, and takes it only when the name's
 * bytes match too (Dispatch/LastTypeByName.swift, dispatchNamed; docs/perf-notes.md, "The
 * last type by name"); that cache, or any other shortcut, must keep these true:
 *   - one buffer reused for other names (longer, shorter, a prefix) reaches each
 *     name's own handlers;
 *   - a bus destroyed and another made (often at the same address) never reaches the
 *     old bus's entries;
 *   - qtbus_event_type() is the very pointer the dispatch was given (libqtbus-nats
 *     tells its own imported events by it);
 *   - a name with a bad subtype, flags or data is refused, and says why;
 *   - more names than a small cache would hold, alternated, and four threads at once,
 *     each reach exactly their handlers.
 */
#include "test_util.h"

static _Thread_local const char *seen_type;
static atomic_int hits[8];

static void count(const qtbus_event *e, void *userdata)
{
    seen_type = qtbus_event_type(e);
    atomic_fetch_add(&hits[(intptr_t)userdata], 1);
}

static int sub(qtbus_bus *bus, const char *type, intptr_t slot)
{
    return qtbus_subscribe(bus, type, NULL, count, (void *)slot, NULL, NULL);
}

static void reset(void)
{
    for (int i = 0; i < 8; i++)
        atomic_store(&hits[i], 0);
}

enum { THREADS = 4, ROUNDS = 20000 };
static qtbus_bus *shared_bus;
static void dispatcher(int index, void *ctx)
{
    (void)ctx;
    /* Each thread alternates its own buffer between two names and a literal. */
    char buf[16];
    for (int i = 0; i < ROUNDS; i++) {
        strcpy(buf, (i + index) % 2 ? "Alpha" : "Beta");
        qtbus_event_desc d = {.type = buf};
        CHECK_EQ_INT(qtbus_dispatch(shared_bus, &d), 1);
        qtbus_event_desc g = {.type = "Gamma"};
        CHECK_EQ_INT(qtbus_dispatch(shared_bus, &g), 1);
    }
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK_EQ_INT(sub(bus, "Login", 0), QTBUS_OK);
    CHECK_EQ_INT(sub(bus, "LoginFailed", 1), QTBUS_OK);
    CHECK_EQ_INT(sub(bus, "Log", 2), QTBUS_OK);

    /* One buffer, three names: each dispatch reaches its own name's handler. */
    char buf[32];
    qtbus_event_desc d = {.type = buf};
    for (int round = 0; round < 3; round++) {
        strcpy(buf, "Login");
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK(seen_type == buf);
        strcpy(buf, "LoginFailed");
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        strcpy(buf, "Log");
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        strcpy(buf, "Logout"); /* nobody's */
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
        strcpy(buf, "Lo");
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
    }
    CHECK_EQ_INT(atomic_load(&hits[0]), 3);
    CHECK_EQ_INT(atomic_load(&hits[1]), 3);
    CHECK_EQ_INT(atomic_load(&hits[2]), 3);

    /* A remembered name with a bad subtype, flags or data is refused, and says why. */
    strcpy(buf, "Login");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    qtbus_event_desc bad = {.type = buf, .subtype = ""};
    CHECK_EQ_INT(qtbus_dispatch(bus, &bad), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "subtype") != NULL);
    bad = (qtbus_event_desc){.type = buf, .flags = 0x40};
    CHECK_EQ_INT(qtbus_dispatch(bus, &bad), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "flag") != NULL);
    bad = (qtbus_event_desc){.type = buf, .size = 4};
    CHECK_EQ_INT(qtbus_dispatch(bus, &bad), QTBUS_EINVAL);
    CHECK_EQ_INT(atomic_load(&hits[0]), 4);

    /* A bus destroyed and another made: the remembered entry was the old bus's. */
    reset();
    for (int i = 0; i < 50; i++) {
        qtbus_bus *b = qtbus_bus_create();
        CHECK_EQ_INT(sub(b, "Login", 3), QTBUS_OK);
        qtbus_event_desc e = {.type = "Login"};
        CHECK_EQ_INT(qtbus_dispatch(b, &e), 1);
        CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
        b = qtbus_bus_create();
        /* Same literal, maybe the same bus address: nobody subscribed here. */
        CHECK_EQ_INT(qtbus_dispatch(b, &e), 0);
        CHECK_EQ_INT(sub(b, "Login", 4), QTBUS_OK);
        CHECK_EQ_INT(qtbus_dispatch(b, &e), 1);
        CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    }
    CHECK_EQ_INT(atomic_load(&hits[3]), 50);
    CHECK_EQ_INT(atomic_load(&hits[4]), 50);

    /* More names than the cache's ways, alternated. */
    reset();
    static const char *names[] = {"N0", "N1", "N2", "N3", "N4", "N5", "N6", "N7"};
    for (int i = 0; i < 8; i++)
        CHECK_EQ_INT(sub(bus, names[i], i), QTBUS_OK);
    for (int round = 0; round < 100; round++) {
        for (int i = 0; i < 8; i++) {
            qtbus_event_desc e = {.type = names[(i * 3 + round) % 8]};
            CHECK_EQ_INT(qtbus_dispatch(bus, &e), 1);
            CHECK(seen_type == e.type);
        }
    }
    for (int i = 0; i < 8; i++)
        CHECK_EQ_INT(atomic_load(&hits[i]), 100);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);

    /* Four threads, each with its own cache, on one bus. */
    reset();
    shared_bus = qtbus_bus_create();
    CHECK_EQ_INT(sub(shared_bus, "Alpha", 0), QTBUS_OK);
    CHECK_EQ_INT(sub(shared_bus, "Beta", 1), QTBUS_OK);
    CHECK_EQ_INT(sub(shared_bus, "Gamma", 2), QTBUS_OK);
    tu_run_threads(THREADS, dispatcher, NULL);
    CHECK_EQ_INT(atomic_load(&hits[0]) + atomic_load(&hits[1]), THREADS * ROUNDS);
    CHECK_EQ_INT(atomic_load(&hits[0]), THREADS * ROUNDS / 2);
    CHECK_EQ_INT(atomic_load(&hits[2]), THREADS * ROUNDS);
    CHECK_EQ_INT(qtbus_bus_destroy(shared_bus), QTBUS_OK);

    printf("test_dispatch_names: passed\n");
    return 0;
}
