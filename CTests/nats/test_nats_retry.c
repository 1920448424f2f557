/* SPDX-License-Identifier: MIT */
/*
 * test_nats_retry.c -- the bridge connecting before its server is up, through
 * qtbus_nats_connect_with() and nats.c's own setters.
 *   - Retry on failed connect (_SetRetryOnFailedConnect) with no server yet.  With a
 *     connected callback, nats.c's way to ask for it asynchronously: the connect
 *     returns QTBUS_OK at once, the bridges export and import, the server starts on
 *     that port, and events cross.  With none (NULL), nats.c retries inside the
 *     connect: it returns once the server is up, or QTBUS_EIO when MaxReconnect tries
 *     are spent, with nothing left running.
 */
#include "nats_secure.h"

/* nats.c's connected callback: with one, a connect with no server up returns at once. */
static atomic_int connected_calls;
static void on_connected(natsConnection *nc, void *closure)
{
    (void)nc;
    (void)closure;
    atomic_fetch_add(&connected_calls, 1);
}

/* No server yet, retry on failed connect with a connected callback: the connects
 * return QTBUS_OK at once, the bridges export and import, and events cross once the
 * server is up. */
static void retry_case(void)
{
    ns_server server = {.no_jetstream = 1};
    ns_prepare(&server); /* a port, nobody listening on it */
    CHECK(!ns_accepts(server.port));
    natsOptions *oa = options_for(server.url), *ob = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetRetryOnFailedConnect(oa, true, on_connected, NULL), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetRetryOnFailedConnect(ob, true, on_connected, NULL), NATS_OK);
    qtbus_nats *ba = NULL, *bb = NULL;
    int64_t start = tu_now_ms();
    CHECK_EQ_INT(qtbus_nats_connect_with(bus_a, oa, &defaults, &ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_connect_with(bus_b, ob, &defaults, &bb), QTBUS_OK);
    int64_t took = tu_now_ms() - start;
    CHECK(ba != NULL && bb != NULL);
    CHECK_EQ_INT(qtbus_nats_is_connected(ba), 0);
    CHECK_EQ_INT(qtbus_nats_is_connected(bb), 0);
    CHECK_MSG(took < 1000, "two connects with no server took %lld ms", (long long)took);
    printf("%-34s both connects QTBUS_OK in %lld ms, not connected yet (port %d)\n",
           "retry, callback, no server:", (long long)took, server.port);

    CHECK_EQ_INT(qtbus_nats_export(ba, "Early"), QTBUS_OK);
    atomic_store(&misuse, 0);
    start = tu_now_ms();
    int rc = qtbus_nats_import(bb, "Early");
    took = tu_now_ms() - start;
    printf("%-34s %s in %lld ms%s%s\n", "retry, import before the server:", tu_status_name(rc), (long long)took,
           rc == QTBUS_OK ? "" : ": ", rc == QTBUS_OK ? "" : qtbus_errmsg());
    /* The header: while not connected, an import returns QTBUS_OK at once and its
     * subscription is sent when the connection is made. */
    CHECK_EQ_INT(rc, QTBUS_OK);
    CHECK_MSG(took < 1000, "an import with no server took %lld ms", (long long)took);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    static inbox box = INBOX;
    qtbus_token token = listen_on(bus_b, "Early", &box);
    /* Dispatched while no server is up: it waits in ba's reconnect buffer. */
    CHECK_EQ_INT(send_text(bus_a, "Early", "before the server"), 1);

    ns_spawn(&server);
    CHECK_WAIT(qtbus_nats_is_connected(ba) && qtbus_nats_is_connected(bb), TU_WAIT_MS);
    CHECK_WAIT(atomic_load(&connected_calls) == 2, TU_WAIT_MS);
    /* ba's buffered event and bb's subscription race to the new server: the buffered
     * one may or may not reach bb.  What is dispatched from now on crosses. */
    int early = atomic_load(&box.count);
    int sent = cross_when_up("Early", &box, 10);
    printf("%-34s both connected (the connected callback ran %d times); the event from before %s; %d dispatched "
           "after, %d crossed\n",
           "retry, server started:", atomic_load(&connected_calls),
           early ? "crossed too" : "did not cross (it raced b's subscription)", sent, atomic_load(&box.count) - early);
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    natsOptions_Destroy(oa);
    natsOptions_Destroy(ob);
    ns_stop(&server);
}

/* Starts the server after a pause, on its own thread, which also stops it when told:
 * ns_spawn's child has PR_SET_PDEATHSIG, which follows the thread that forked it, not
 * the process, so that thread lives as long as the server; and the server's pid is
 * that thread's alone. */
typedef struct starter {
    ns_server *server;
    atomic_int stop;
} starter;

static void *start_later(void *p)
{
    starter *st = p;
    tu_sleep_ms(500);
    ns_spawn(st->server);
    while (!atomic_load(&st->stop))
        tu_sleep_ms(5);
    ns_stop(st->server);
    return NULL;
}

/* Retry on failed connect without a connected callback, as nats.c does it: the
 * connect itself retries, ReconnectWait apart, until a server is up (QTBUS_OK) or its
 * MaxReconnect tries are spent (QTBUS_EIO). */
static void retry_blocking_case(void)
{
    ns_server server = {.no_jetstream = 1};
    ns_prepare(&server);
    natsOptions *o = options_for(server.url);
    CHECK_EQ_INT(natsOptions_SetRetryOnFailedConnect(o, true, NULL, NULL), NATS_OK);
    CHECK_EQ_INT(natsOptions_SetMaxReconnect(o, 5), NATS_OK);
    CHECK(refused("retry, no callback, 5 tries", o, "No server available for connection") >= 400);

    /* Tries for ever: the connect returns once the server is up, 500 ms later. */
    CHECK_EQ_INT(natsOptions_SetMaxReconnect(o, -1), NATS_OK);
    pthread_t thread;
    starter st = {.server = &server};
    CHECK_EQ_INT(pthread_create(&thread, NULL, start_later, &st), 0);
    qtbus_nats *bridge = NULL;
    int64_t start = tu_now_ms();
    int rc = qtbus_nats_connect_with(bus_a, o, &defaults, &bridge);
    int64_t took = tu_now_ms() - start;
    CHECK_MSG(rc == QTBUS_OK, "%s", qtbus_errmsg());
    CHECK(took >= 400);
    CHECK_EQ_INT(qtbus_nats_is_connected(bridge), 1);
    qtbus_nats *receiver = ns_bridge(&server, bus_b, 0, 0);
    CHECK_EQ_INT(qtbus_nats_export(bridge, "Later"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(receiver, "Later"), QTBUS_OK);
    static inbox box = INBOX;
    qtbus_token token = listen_on(bus_b, "Later", &box);
    CHECK_EQ_INT(send_text(bus_a, "Later", "later"), 1);
    CHECK_WAIT(atomic_load(&box.count) == 1, TU_WAIT_MS);
    printf("%-34s QTBUS_OK after %lld ms, when the server came up; an event crossed\n",
           "retry, no callback, server later:", (long long)took);
    CHECK_EQ_INT(qtbus_nats_close(bridge), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(receiver), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    natsOptions_Destroy(o);
    atomic_store(&st.stop, 1); /* the starter stops the server */
    pthread_join(thread, NULL);
}

int main(void)
{
    secure_begin();
    retry_case();
    retry_blocking_case();
    secure_end("test_nats_retry");
    return 0;
}
