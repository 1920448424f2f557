// SPDX-License-Identifier: MIT
// The C++ consumer: qtbus.hpp comes with the qtbus::qtbus target's include directory.
#include <qtbus.hpp>

int main()
{
    qtbus::bus bus;
    int calls = 0;
    qtbus::subscription s = bus.subscribe("Consumer", [&calls] { calls++; });
    return bus.dispatch("Consumer") == 1 && calls == 1 ? 0 : 1;
}
