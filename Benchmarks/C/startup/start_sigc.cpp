// SPDX-License-Identifier: MIT
// Start-up of a C++ program with libsigc++ 3 linked: one signal, one emission.
#include <sigc++/sigc++.h>

static int calls;
static void on_ping() { calls++; }

int main()
{
    sigc::signal<void()> ping;
    ping.connect(sigc::ptr_fun(&on_ping));
    ping.emit();
    return calls == 1 ? 0 : 1;
}
