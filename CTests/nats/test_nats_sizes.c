/* SPDX-License-Identifier: MIT */
/*
 * test_nats_sizes.c -- qtbus_nats_options and qtbus_nats_stats grow (qtbus.h, STRUCTS
 * THAT GROW; qtbus_nats.h):
 *   - options from a newer header whose extra fields are zero connect; a set field this
 *     library does not know is QTBUS_EINVAL (not ignored), so is a size below 0.2.0's,
 *     for connect, connect_with and attach alike, before any server is asked;
 *   - stats into a newer header's struct: the known counts, zeros beyond; 0.2.0's entry
 *     point writes its 40 bytes only; a size below them is QTBUS_EINVAL, nothing written.
 */
#include "nats_server.h"

#include <qtbus_nats.h>

static ns_server server;

typedef struct {
    qtbus_nats_options known;
    uint64_t later[2];
} newer_options;

int main(void)
{
    ns_start(&server);
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_nats *bridge = NULL;

    newer_options o;
    memset(&o, 0, sizeof o);
    o.known.url = server.url;
    o.later[1] = 7; /* an option this library cannot honour */
    CHECK_EQ_INT(qtbus_nats_connect_sized(bus, &o.known, sizeof o, &bridge), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "qtbus_nats_connect") != NULL);
    CHECK(strstr(qtbus_errmsg(), "does not know") != NULL);
    CHECK(bridge == NULL);
    CHECK_EQ_INT(qtbus_nats_connect_with_sized(bus, NULL, &o.known, sizeof o, &bridge), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_nats_attach_sized(bus, NULL, &o.known, sizeof o, &bridge), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_nats_connect_sized(bus, &o.known, 8, &bridge), QTBUS_EINVAL);
    CHECK(strstr(qtbus_errmsg(), "smaller than any version") != NULL);
    /* NULL options stay what they were: refused by the function itself. */
    CHECK_EQ_INT(qtbus_nats_connect(bus, NULL, &bridge), QTBUS_EINVAL);

    o.later[1] = 0;
    CHECK_EQ_INT(qtbus_nats_connect_sized(bus, &o.known, sizeof o, &bridge), QTBUS_OK);
    CHECK(bridge != NULL);

    struct {
        qtbus_nats_stats known;
        uint64_t later[2];
    } stats;
    memset(&stats, 0xAB, sizeof stats);
    CHECK_EQ_INT(qtbus_nats_stats_get_sized(bridge, &stats.known, sizeof stats), QTBUS_OK);
    CHECK_EQ_U64(stats.known.published, 0);
    CHECK_EQ_U64(stats.later[0], 0);
    CHECK_EQ_U64(stats.later[1], 0);
    memset(&stats, 0xAB, sizeof stats);
    CHECK_EQ_INT((qtbus_nats_stats_get)(bridge, &stats.known), QTBUS_OK);
    CHECK_EQ_U64(stats.known.received, 0);
    CHECK_EQ_U64(stats.later[0], 0xABABABABABABABABull);
    CHECK_EQ_INT(qtbus_nats_stats_get_sized(bridge, &stats.known, 39), QTBUS_EINVAL);
    CHECK_EQ_U64(stats.later[0], 0xABABABABABABABABull);
    qtbus_nats_stats plain;
    CHECK_EQ_INT(qtbus_nats_stats_get(bridge, &plain), QTBUS_OK);

    CHECK_EQ_INT(qtbus_nats_close(bridge), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_sizes: ok\n");
    return 0;
}
