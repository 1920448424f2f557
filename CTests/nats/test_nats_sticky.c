/* SPDX-License-Identifier: MIT */
/*
 * test_nats_sticky.c -- sticky events across processes with JetStream: a publisher
 * dispatches sticky events and goes away; a bridge that imports the type later gets
 * the last one of each subtype, in the order they were dispatched, and its bus keeps
 * them for REPLAY subscribers; then new ones live, each once.  Plain events are not
 * kept.  A server without JetStream is a clear error at connect.
 */
#include "nats_server.h"

#include <qtbus_nats.h>

static ns_server server;

typedef struct seen {
    pthread_mutex_t lock;
    int count;
    char log[512];
} seen;

static void record(const qtbus_event *e, void *userdata)
{
    seen *s = userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(e, &size);
    pthread_mutex_lock(&s->lock);
    size_t n = strlen(s->log);
    snprintf(s->log + n, sizeof s->log - n, "%s%s=%.*s%s", n ? " " : "", qtbus_event_subtype(e), (int)size, data,
             qtbus_event_flags(e) & QTBUS_EVENT_STICKY ? "" : "(plain)");
    s->count++;
    pthread_mutex_unlock(&s->lock);
}

static int count(seen *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->count;
    pthread_mutex_unlock(&s->lock);
    return n;
}

static void dispatch(qtbus_bus *bus, const char *subtype, const char *value, uint32_t flags)
{
    qtbus_event_desc d = {.type = "Config", .subtype = subtype, .data = value, .size = strlen(value), .flags = flags};
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
}

int main(void)
{
    /* No JetStream on the server: refused at connect, saying so. */
    {
        static ns_server plain = {.no_jetstream = 1};
        ns_start(&plain);
        qtbus_bus *bus = qtbus_bus_create();
        qtbus_nats *bridge = (qtbus_nats *)1;
        qtbus_nats_options o = {.url = plain.url, .jetstream = 1};
        CHECK_EQ_INT(qtbus_nats_connect(bus, &o, &bridge), QTBUS_EIO);
        CHECK(bridge == NULL);
        printf("no JetStream: %s\n", qtbus_errmsg());
        CHECK(strstr(qtbus_errmsg(), "options->jetstream") != NULL);
        CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
        ns_stop(&plain);
    }

    ns_start(&server);

    /* The publisher: dispatches, then is gone before anyone imports. */
    {
        qtbus_bus *bus = qtbus_bus_create();
        qtbus_nats *bridge = ns_bridge(&server, bus, 0, 1);
        CHECK_EQ_INT(qtbus_nats_export(bridge, "Config"), QTBUS_OK);
        dispatch(bus, "db", "v1", QTBUS_EVENT_STICKY);
        dispatch(bus, "cache", "c1", QTBUS_EVENT_STICKY);
        dispatch(bus, "db", "v2", QTBUS_EVENT_STICKY); /* replaces db=v1 */
        dispatch(bus, "log", "x", 0);                  /* plain: not kept */
        dispatch(bus, "mode", "m1", QTBUS_EVENT_STICKY);
        CHECK_EQ_INT(qtbus_nats_close(bridge), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    }

    /* Later: the kept ones, last per subtype, in dispatch order; the bus keeps them. */
    qtbus_bus *late = qtbus_bus_create();
    qtbus_nats *bl = ns_bridge(&server, late, 0, 1);
    static seen live = {.lock = PTHREAD_MUTEX_INITIALIZER};
    CHECK_EQ_INT(qtbus_subscribe(late, "Config", NULL, record, &live, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bl, "Config"), QTBUS_OK);
    CHECK_WAIT(count(&live) == 3, TU_WAIT_MS);
    tu_sleep_ms(200);
    printf("imported later: %s\n", live.log);
    CHECK_EQ_STR(live.log, "cache=c1 db=v2 mode=m1");
    static seen replay = {.lock = PTHREAD_MUTEX_INITIALIZER};
    qtbus_sub_options o = {.flags = QTBUS_SUB_REPLAY};
    CHECK_EQ_INT(qtbus_subscribe(late, "Config", &o, record, &replay, NULL, NULL), QTBUS_OK);
    CHECK_EQ_STR(replay.log, "cache=c1 db=v2 mode=m1");

    /* A subtype import sees only its subtype's kept event. */
    qtbus_bus *narrow = qtbus_bus_create();
    qtbus_nats *bn = ns_bridge(&server, narrow, 0, 1);
    static seen only_db = {.lock = PTHREAD_MUTEX_INITIALIZER};
    CHECK_EQ_INT(qtbus_subscribe(narrow, "Config", NULL, record, &only_db, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import_subtype(bn, "Config", "db"), QTBUS_OK);
    CHECK_WAIT(count(&only_db) == 1, TU_WAIT_MS);

    /* Live, after the replay: a new sticky and a plain event, each received once. */
    qtbus_bus *pub = qtbus_bus_create();
    qtbus_nats *bp = ns_bridge(&server, pub, 0, 1);
    CHECK_EQ_INT(qtbus_nats_export(bp, "Config"), QTBUS_OK);
    dispatch(pub, "db", "v3", QTBUS_EVENT_STICKY);
    dispatch(pub, "log", "y", 0);
    CHECK_WAIT(count(&live) == 5, TU_WAIT_MS);
    CHECK_WAIT(count(&only_db) == 2, TU_WAIT_MS);
    tu_sleep_ms(300);
    printf("then live: %s\n", live.log);
    CHECK_EQ_INT(count(&live), 5);
    CHECK(strstr(live.log, "db=v3") != NULL && strstr(live.log, "log=y(plain)") != NULL);
    CHECK_EQ_STR(only_db.log, "db=v2 db=v3");

    CHECK_EQ_INT(qtbus_nats_close(bp), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bn), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bl), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(pub), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(narrow), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(late), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_sticky: passed\n");
    return 0;
}
