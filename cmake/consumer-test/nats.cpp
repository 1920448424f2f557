// SPDX-License-Identifier: MIT
// The C++ consumer of the bridge: qtbus_nats.hpp through qtbus::nats alone, which brings
// libqtbus-nats, libqtbus and both headers' directory.  No server is needed: one that is
// not there is a qtbus::error with QTBUS_EIO and the url in what().
#include <qtbus_nats.hpp>

#include <cstring>
#include <iostream>

int main()
{
    qtbus::bus bus;
    try {
        qtbus::nats::bridge bridge(bus, "nats://127.0.0.1:1");
    } catch (const qtbus::error &e) {
        std::cout << "qtbus::nats::bridge: " << e.what() << "\n";
        return e.status() == QTBUS_EIO && std::strstr(e.what(), "nats://127.0.0.1:1") ? 0 : 1;
    }
    return 1;
}
