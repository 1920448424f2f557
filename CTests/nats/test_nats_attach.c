/* SPDX-License-Identifier: MIT */
/*
 * test_nats_attach.c -- qtbus_nats_attach() on a connection of the test's own.
 *   - qtbus_nats_attach() on a connection of the test's own, which echoes (nats.c's
 *     default): a bridge that exports and imports a type over it dispatches no event
 *     twice and publishes none again, events cross both ways, and qtbus_nats_close()
 *     leaves the connection open and usable (a publish on it still reaches the other
 *     bridge); the test destroys it.
 */
#include "nats_secure.h"

static void attach_case(void)
{
    ns_server server = {.no_jetstream = 1};
    ns_start(&server);
    /* nats.c's defaults: echo on, so the server sends this connection what it publishes. */
    natsConnection *conn = NULL;
    CHECK_EQ_INT(natsConnection_ConnectTo(&conn, server.url), NATS_OK);
    qtbus_nats *ba = NULL;
    /* A server with headers (nats-server 2.2 or later): natsConnection_HasHeaderSupport
     * says so with NATS_OK, which the bridge once read as "no" (fixed in d2c936a). */
    CHECK_EQ_INT(natsConnection_HasHeaderSupport(conn), NATS_OK);
    int rc = qtbus_nats_attach(bus_a, conn, &defaults, &ba);
    CHECK_MSG(rc == QTBUS_OK, "qtbus_nats_attach on a server with headers: %s %s", tu_status_name(rc), qtbus_errmsg());
    qtbus_nats *bb = ns_bridge(&server, bus_b, 0, 0);
    qtbus_nats *bridges[] = {ba, bb};
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(qtbus_nats_export(bridges[i], "Echo"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bridges[i], "Echo"), QTBUS_OK);
    }
    static inbox on_a = INBOX, on_b = INBOX;
    qtbus_token ta = listen_on(bus_a, "Echo", &on_a), tb = listen_on(bus_b, "Echo", &on_b);

    /* a -> b.  The server echoes it to a's connection too: a drops it (its own). */
    CHECK_EQ_INT(send_text(bus_a, "Echo", "from a"), 2); /* the handler and the export */
    CHECK_WAIT(atomic_load(&on_b.count) == 1 && last_is(&on_b, "from a"), TU_WAIT_MS);
    /* b -> a.  b published it after the echo was on its way to a, on the same
     * connection: once it is dispatched, an echo not dropped would have been too. */
    CHECK_EQ_INT(send_text(bus_b, "Echo", "from b"), 2);
    CHECK_WAIT(last_is(&on_a, "from b"), TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&on_a.count), 2); /* its own, once; b's */
    /* a dispatched b's event from NATS, and does not publish it again: b gets a's next
     * one after its own two, nothing between. */
    CHECK_EQ_INT(send_text(bus_a, "Echo", "from a again"), 2);
    CHECK_WAIT(last_is(&on_b, "from a again"), TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&on_b.count), 3);
    qtbus_nats_stats sa;
    CHECK_EQ_INT(qtbus_nats_stats_get(ba, &sa), QTBUS_OK);
    print_stats("attached, a", &sa);
    CHECK_EQ_U64(sa.published, 2);
    CHECK_EQ_U64(sa.received, 1); /* b's; the echoes of its own two are not counted */
    CHECK_EQ_U64(sa.dropped, 0);
    CHECK_EQ_INT(atomic_load(&on_a.count), 3); /* its own two, once each; b's */
    printf("%-34s a's handler got %d (its own 2 events once each, b's 1), b's got %d (its own 1, a's 2): no echo, "
           "no loop\n",
           "attached, echo on:", atomic_load(&on_a.count), atomic_load(&on_b.count));

    /* Closed: the connection is still the application's, open, and works. */
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(natsConnection_Status(conn), NATS_CONN_STATUS_CONNECTED);
    CHECK(!natsConnection_IsClosed(conn));
    CHECK_EQ_INT(natsConnection_PublishString(conn, "qtbus.e._.Echo", "plain, after close"), NATS_OK);
    CHECK_EQ_INT(natsConnection_FlushTimeout(conn, TU_WAIT_MS), NATS_OK);
    CHECK_WAIT(last_is(&on_b, "plain, after close"), TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&on_a.count), 3); /* a's bridge is gone: nothing more for a */
    printf("%-34s the connection is still connected; a publish on it reached b (\"plain, after close\")\n",
           "attached, after qtbus_nats_close:");
    natsConnection_Destroy(conn);

    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(ta), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(tb), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    ns_stop(&server);
}

int main(void)
{
    secure_begin();
    attach_case();
    secure_end("test_nats_attach");
    return 0;
}
