// SPDX-License-Identifier: MIT
// Start-up of a C++ program using Boost.Signals2 (header-only): one signal, one emission.
#include <boost/signals2/signal.hpp>

static int calls;
static void on_ping() { calls++; }

int main()
{
    boost::signals2::signal<void()> ping;
    ping.connect(&on_ping);
    ping();
    return calls == 1 ? 0 : 1;
}
