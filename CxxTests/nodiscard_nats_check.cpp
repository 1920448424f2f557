// SPDX-License-Identifier: MIT
// nodiscard_nats_check: qtbus::nats::bridge is [[nodiscard]] as qtbus.hpp's owning
// handles are (compile_check.cmake): the control keeps the bridge and compiles; the case
// BRIDGE drops one made by a function returning it by value, which must fail under
// -Werror on its marked line.  Compiled only (-fsyntax-only), never run.
#include <qtbus_nats.hpp>

static qtbus::nats::bridge make_bridge(qtbus::bus_ref bus) { return qtbus::nats::bridge(bus, "nats://127.0.0.1:4222"); }

int main()
{
    qtbus::bus bus;
#ifdef QTBUS_DROP_BRIDGE
    make_bridge(bus); // drop: BRIDGE
#else
    qtbus::nats::bridge kept = make_bridge(bus); // drop: BRIDGE
#endif
    return 0;
}
