/* SPDX-License-Identifier: MIT */
/*
 * test_nats_restart_stats.c -- the bridge's counters across a server restart
 * (test_nats_restart tests what crosses it).
 *   - A server restart: qtbus_nats_stats_get() shows reconnects 1, and published and
 *     received as many as crossed.
 */
#include "nats_secure.h"

static void restart_case(void)
{
    ns_server server = {.no_jetstream = 1};
    ns_start(&server);
    qtbus_nats *ba = ns_bridge(&server, bus_a, 0, 0), *bb = ns_bridge(&server, bus_b, 0, 0);
    CHECK_EQ_INT(qtbus_nats_export(ba, "Tick"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "Tick"), QTBUS_OK);
    static inbox box = INBOX;
    qtbus_token token = listen_on(bus_b, "Tick", &box);
    for (int i = 0; i < 100; i++)
        CHECK_EQ_INT(send_text(bus_a, "Tick", "before"), 1);
    CHECK_WAIT(atomic_load(&box.count) == 100, TU_WAIT_MS);
    qtbus_nats_stats sa, sb;
    CHECK_EQ_INT(qtbus_nats_stats_get(ba, &sa), QTBUS_OK);
    CHECK_WAIT(qtbus_nats_stats_get(bb, &sb) == QTBUS_OK && sb.pending == 0, TU_WAIT_MS);
    print_stats("before the restart, a", &sa);
    print_stats("before the restart, b", &sb);
    CHECK_EQ_U64(sa.published, 100);
    CHECK_EQ_U64(sb.received, 100);
    CHECK_EQ_U64(sa.reconnects + sb.reconnects + sa.dropped + sb.dropped, 0);

    ns_kill(&server);
    CHECK_WAIT(!qtbus_nats_is_connected(ba) && !qtbus_nats_is_connected(bb), TU_WAIT_MS);
    ns_restart(&server);
    CHECK_WAIT(qtbus_nats_is_connected(ba) && qtbus_nats_is_connected(bb), TU_WAIT_MS);
    int sent = cross_when_up("Tick", &box, 100);
    CHECK_EQ_INT(qtbus_nats_stats_get(ba, &sa), QTBUS_OK);
    /* Closing a flushes what it published; b's thread then has dispatched everything. */
    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_WAIT(qtbus_nats_stats_get(bb, &sb) == QTBUS_OK && sb.pending == 0, TU_WAIT_MS);
    CHECK_IDLE(bus_b);
    tu_sleep_ms(50);
    int crossed = atomic_load(&box.count);
    CHECK_EQ_INT(qtbus_nats_stats_get(bb, &sb), QTBUS_OK);
    print_stats("after the restart, a", &sa);
    print_stats("after the restart, b", &sb);
    printf("%-34s a dispatched 100 before the restart and %d after it, b's handler got %d\n", "  what crossed:", sent,
           crossed);
    CHECK_EQ_U64(sa.published, (uint64_t)(100 + sent));
    CHECK_EQ_U64(sa.dropped, 0);
    CHECK_EQ_U64(sa.reconnects, 1);
    CHECK_EQ_U64(sb.received, (uint64_t)crossed);
    CHECK_EQ_U64(sb.dropped, 0);
    CHECK_EQ_U64(sb.pending, 0);
    CHECK_EQ_U64(sb.reconnects, 1);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    ns_stop(&server);
}

int main(void)
{
    secure_begin();
    restart_case();
    secure_end("test_nats_restart_stats");
    return 0;
}
