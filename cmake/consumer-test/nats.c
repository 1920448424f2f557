/* SPDX-License-Identifier: MIT */
/* Links libqtbus-nats through qtbus::nats alone (libqtbus comes with it) and calls it:
 * a server that is not there is a clear QTBUS_EIO, no server needed. */
#include <qtbus_nats.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_nats *bridge;
    qtbus_nats_options options = {.url = "nats://127.0.0.1:1"};
    int status = qtbus_nats_connect(bus, &options, &bridge);
    printf("qtbus_nats_connect: %s (%s)\n", qtbus_strerror(status), qtbus_errmsg());
    qtbus_bus_destroy(bus);
    return status == QTBUS_EIO && strstr(qtbus_errmsg(), "nats://127.0.0.1:1") ? 0 : 1;
}
